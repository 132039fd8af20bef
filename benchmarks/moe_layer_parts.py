"""rlmcost's seconds per part of one Megatron-core MoE layer (forward, backward) for the
``validate`` ModelZoo rows and NeMo RL v0.3's Qwen3-30B-A3B trainer (the moetrain check,
rlmcost.perf.moe_ffn 'Checked'). Prints; asserts nothing.

    PYTHONPATH=$PWD python benchmarks/moe_layer_parts.py [ROW_ID ...]
"""

from __future__ import annotations

import sys
from dataclasses import replace

from rlmcost.parallel.breakdown import DataShare
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import PipelineStage
from rlmcost.perf import validate as v
from rlmcost.perf.efficiency import Device
from rlmcost.perf.moe_ffn import routed_experts
from rlmcost.perf.moe_imbalance import EP_RANK_IMBALANCE_RATIO
from rlmcost.perf.step_pass import StagePass, StepContext, StepOptions, gemm_fwd_bwd_s, stage_pass
from rlmcost.specs import get_hardware
from rlmcost.specs.workload import Workload


def layer_parts(c: StepContext) -> tuple[StagePass, tuple[float, float]]:
    """One MoE layer's pass (the stage with the layer minus the stage without) and its routed
    experts' GEMM seconds (forward, backward)."""
    one, none = PipelineStage(0, 1, 0, 1), PipelineStage(0, 1, 0, 0)
    a, b = stage_pass(c, one), stage_pass(c, none)
    out = StagePass()
    for side in ("fwd", "bwd"):
        for k in set(getattr(a, side)) | set(getattr(b, side)):
            getattr(out, side)[k] = getattr(a, side)[k] - getattr(b, side)[k]
    ex = [0.0, 0.0]

    def gemm(m: int, n: int, k: int, batch: int = 1, linear: bool = True) -> None:
        f, bw = gemm_fwd_bwd_s(c.device, m, n, k, batch)
        ex[0], ex[1] = ex[0] + f, ex[1] + bw

    scratch = StagePass()
    routed_experts(replace(c, options=replace(c.options, router_fp64=False)), gemm, scratch)
    router = gemm_fwd_bwd_s(c.device, c.tokens, int(c.arch.n_experts), int(c.arch.d_model))
    return out, (ex[0] - router[0], ex[1] - router[1])


def show(tag: str, c: StepContext) -> None:
    out, experts = layer_parts(c)
    lay = c.layout
    print(f"  {tag}: {c.tokens} tokens/rank/micro-batch, TP {lay.tp} EP {lay.ep} ETP "
          f"{lay.expert_tp} CP {lay.cp}, busiest-rank factor {c.options.moe_rank_imbalance}")
    for k in sorted(set(out.fwd) | set(out.bwd)):
        if out.fwd[k] or out.bwd[k]:
            print(f"    {k:12s} fwd {out.fwd[k] * 1e3:7.3f} ms  bwd {out.bwd[k] * 1e3:7.3f} ms")
    print(f"    {'(experts)':12s} fwd {experts[0] * 1e3:7.3f} ms  bwd {experts[1] * 1e3:7.3f} ms"
          "  (inside gemm)")
    print(f"    total        {out.total_s * 1e3:7.3f} ms")


def context_of(row: dict) -> StepContext:
    """The step context ``validate`` builds for a pre-training row (its first micro-batch)."""
    captured: list[StepContext] = []
    original = v.train_step_time

    def spy(arch, layout, sequences, seq, hw, workload, options, **kw):  # type: ignore[no-untyped-def]
        from rlmcost.parallel.breakdown import data_share

        share = data_share(layout, sequences, seq)
        device = Device(hw, workload.compute_dtype, kw.get("profile"))
        captured.append(StepContext.of(arch, layout, seq, share, device, options, workload))
        return original(arch, layout, sequences, seq, hw, workload, options, **kw)

    v.train_step_time = spy  # type: ignore[assignment]
    try:
        v.predict_row(row)
    finally:
        v.train_step_time = original  # type: ignore[assignment]
    return captured[0]


def main(ids: list[str]) -> None:
    table = v.load_table()
    for row in table["rows"]:
        if (ids and row["id"] in ids) or (not ids and row["source"] == "megatron_moe_modelzoo"):
            r = v.predict_row(row)
            print(f"\n{row['id']}: published {row['published']}, predicted {r.predicted:.2f} "
                  f"({r.error * 100:+.1f} %)")
            show("MoE layer", context_of(row))
    if ids:
        return
    arch = v._arch({"name": "qwen3-30b-a3b", "seq": 4096})
    lay = Layout(dp=32, tp=2, sp=True, ep=8, etp=1)
    opts = StepOptions(router_fp64=True, moe_rank_imbalance=EP_RANK_IMBALANCE_RATIO.value)
    for mb in (1, 4):
        share = DataShare(sequences=mb, micro_batch=mb, micro_batches=1, tokens_per_sequence=4096)
        c = StepContext.of(arch, lay, 4096, share, Device(get_hardware("h100-sxm")), opts,
                           Workload())  # fmt: skip
        print(f"\nNeMo RL v0.3 Qwen3-30B-A3B trainer's layer, {mb} x 4096 tokens per micro-batch")
        show("MoE layer", c)


if __name__ == "__main__":
    main(sys.argv[1:])
