"""NVIDIA's Megatron-MoE-ModelZoo Qwen3-235B-A22B rows in ``rlmcost validate`` and Megatron's
own FLOP count (rlmcost/perf/megatron_flops.py)."""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.perf.megatron_flops import megatron_train_flops
from rlmcost.perf.moe_imbalance import EP_RANK_IMBALANCE_RATIO
from rlmcost.perf.validate import load_table, validate
from rlmcost.specs.registry import get_model

SOURCE = "megatron_moe_modelzoo"
COMMIT = "e8650517d60d"  # yanring/Megatron-MoE-ModelZoo, best_practice/qwen3/readme.md
QWEN = get_model("qwen3-235b-a22b").arch()


def _rows() -> list[dict]:
    return [r for r in load_table()["rows"] if r["source"] == SOURCE]


def test_rows_load_with_source_commit_and_figure():
    table = load_table()
    src = table["sources"][SOURCE]
    assert COMMIT in src["title"] and src["assumptions"]
    rows = _rows()
    assert len(rows) == 14
    for r in rows:
        assert COMMIT in r["cite"] and str(r["published"]).rstrip("0").rstrip(".") in r["cite"]
        assert r["dtype"] == "bf16" and r["model"]["name"] == "qwen3-235b-a22b"
        lay = r["layout"]
        assert lay["tp"] * lay["pp"] * lay["dp"] * lay["cp"] == 256  # every row: 256 GPUs
    # the MXFP8 rows stay out, each with its reason
    assert sum("MXFP8" in e for e in src["excluded"]) == 1
    assert not any("fp8" in r["id"] for r in rows)


@pytest.mark.parametrize(
    ("step_s", "tflops"),
    # best_practice/qwen3/readme.md @COMMIT, H100 table: Step time (sec) and Per GPU TF of
    # the five BF16 Qwen3-235B rows (256 GPUs, GBS 2048, seq 4096)
    [(19.7, 245), (17.6, 276), (24.2, 200), (29.0, 167)],
)
def test_megatron_count_reproduces_the_published_step_and_tflops_pairs(step_s, tflops):
    flops = megatron_train_flops(QWEN, 2048, 4096)
    # the table's own identity: TF = F / (step x 256) within the step's 3-digit rounding
    assert flops / (step_s * 256) / 1e12 == pytest.approx(tflops, rel=0.006)


def test_megatron_count_matches_megatron_bridge_model_tflops():
    # Megatron-Bridge docs/performance-summary-archive.md @067f987df, 25.11, DGX-GB200 BF16
    # Qwen3_235B_a22B: 4916 tokens/s/GPU printed as 728 model TFLOP/s/GPU (seq 4096)
    per_token = megatron_train_flops(QWEN, 1, 4096) / 4096
    assert 4916 * per_token / 1e12 == pytest.approx(728, rel=0.001)


def test_megatron_count_terms():
    # 1 sequence of 1 token: 6 h (3 x 1536 x 8) L + 6 (h (q + 2 kv) + q h) L + 6 h V + 6 q L
    h, L, q, kv, V = 4096, 94, 8192, 512, 151936
    want = 6 * h * 3 * 1536 * 8 * L + 6 * (h * (q + 2 * kv) + q * h) * L + 6 * h * V + 6 * q * L
    assert megatron_train_flops(QWEN, 1, 1) == want
    # the attention core grows with s^2, the rest with s
    assert megatron_train_flops(QWEN, 1, 2) - 2 * megatron_train_flops(QWEN, 1, 1) == 2 * 6 * q * L


def test_megatron_count_refuses_what_it_does_not_write():
    with pytest.raises(SpecError, match="MLA"):
        megatron_train_flops(get_model("deepseek-v3").arch(), 1, 4096)
    with pytest.raises(SpecError, match="positive"):
        megatron_train_flops(QWEN, 0, 4096)


def test_errors_are_computed_in_the_sources_metric():
    rows = {r.id: r for r in validate(SOURCE).rows}
    assert len(rows) == 14
    for r in rows.values():
        assert r.error == pytest.approx(r.predicted / r.published - 1)
        if r.metric == "tflops_per_gpu_megatron":
            seq = int(r.id.split("-")[4].rstrip("k")) * 1024 if "k-cp" in r.id else 4096
            batch = 8192 if "gb200" in r.id else 256
            want = megatron_train_flops(QWEN, batch, seq) / (r.step.step_s * 256) / 1e12
            assert r.predicted == pytest.approx(want, rel=1e-12)
        else:
            assert r.metric == "step_time_s" and r.predicted == r.step.step_s


def test_dropless_rows_carry_the_rank_imbalance():
    table = {r["id"]: r for r in _rows()}
    rows = {r.id: r for r in validate(SOURCE).rows}
    for seq, cp in (("16k", 1), ("32k", 2), ("64k", 4), ("128k", 8)):
        forced = f"modelzoo-h100-qwen3-235b-{seq}-cp{cp}-forced-balance"
        dropless = f"modelzoo-h100-qwen3-235b-{seq}-cp{cp}-dropless"
        assert table[dropless]["options"]["moe_rank_imbalance"] == EP_RANK_IMBALANCE_RATIO.value
        assert "moe_rank_imbalance" not in table[forced]["options"]
        # the busiest EP rank sets the pace: the dropless prediction is slower
        assert rows[dropless].step.step_s > rows[forced].step.step_s
        assert rows[dropless].step.compute_s["gemm"] > rows[forced].step.compute_s["gemm"]


def test_h100_table_rows_run_megatrons_unfused_cross_entropy():
    # the H100 table came in 8017e11 (2025-05-27), when model_configs/benchmarking/
    # Qwen3-235B-A22B.yaml had no --cross-entropy-loss-fusion (store_true in Megatron-LM's
    # arguments.py at the rows' main(1e057005)); it arrived in 274316a (2025-08-20), before the
    # long-context table (b0b92ff) and the GB200 rows
    from copy import deepcopy

    from rlmcost.perf.validate import predict_row

    table = _rows()
    for r in table:
        head = r["options"].get("logprob_head")
        want = "megatron-vocab-parallel-ce" if r["metric"] == "step_time_s" else None
        assert head == want, r["id"]
    (pp32,) = [r for r in table if r["id"] == "modelzoo-h100-qwen3-235b-ep8-pp32-a2a"]
    fused = deepcopy(pp32)
    del fused["options"]["logprob_head"]
    # one layer per virtual stage: the last rank's loss chunk (fp32 logits of 151936 / TP 2
    # entries per token, 38 + 14 bytes each) outweighs a layer's and sets the pace
    slow, fast = predict_row(pp32).step, predict_row(fused).step
    assert slow.slowest_stage == fast.slowest_stage == 31
    assert slow.step_s > 1.1 * fast.step_s


def test_expert_tp_of_the_row_reaches_the_layout():
    # EP 32 with TP 2 over DP 16 is only valid with expert TP 1 (--expert-tensor-parallel-size
    # 1 in the source's yaml): ETP x EP = 32 divides TP x DP = 32
    (r,) = [r for r in validate(SOURCE).rows if r.id == "modelzoo-h100-qwen3-235b-ep32-deepep"]
    assert r.step.gpus == 256 and r.step.exposed_comm_s["ep"] > 0


def test_megatron_recompute_modules_rerun_their_forward():
    from dataclasses import replace

    from rlmcost.parallel.layout import Checkpointing, Layout
    from rlmcost.perf.selective_ac import SelectiveRecompute
    from rlmcost.perf.step_pass import StepOptions
    from rlmcost.perf.train_step import train_step_time
    from rlmcost.specs import Workload, get_hardware

    hw, w = get_hardware("h100-sxm"), Workload()
    lay = Layout(tp=4, pp=8, dp=8, ep=8, etp=1, sp=True, ckpt=Checkpointing.SELECTIVE)
    mods = StepOptions(selective=SelectiveRecompute.MODULES)

    def rec(*names: str) -> float:
        step = train_step_time(QWEN, lay, 256, 4096, hw, w, replace(mods, recompute_modules=names))
        return step.compute_s["recompute"]

    none, norm, act = rec(), rec("layernorm"), rec("moe_act")
    moe, attn = rec("moe"), rec("core_attn")
    assert none == 0.0 < norm and 0.0 < act < moe
    # the MoE layer's rerun holds its activation: asking for both does not count it twice
    assert rec("moe", "moe_act") == pytest.approx(moe)
    assert rec("layernorm", "moe") == pytest.approx(norm + moe)
    # Megatron's default ["core_attn"] is the Korthikanti selective recomputation
    default = train_step_time(QWEN, lay, 256, 4096, hw, w, StepOptions())
    assert attn == pytest.approx(default.compute_s["recompute"])
    # MLA's up-projections (mla_up_proj) on a model without MLA: Megatron-core's
    # TransformerConfig.__post_init__ raises "mla_up_proj in recompute_modules is only supported
    # with multi_latent_attention" (megatron/core/transformer/transformer_config.py @d98e8a64)
    with pytest.raises(SpecError, match="mla_up_proj needs multi-head latent attention"):
        rec("mla_up_proj")
    with pytest.raises(SpecError, match="not priced"):
        rec("mlp_gdn")  # not one of Megatron-core's modules rlmcost prices


def _implied_imbalance(seq: str, cp: int) -> float:
    """The EP-rank imbalance gamma at which rlmcost's step grows from the forced-balance row's
    by the published forced / dropless TFLOPS ratio (the step is linear in gamma: the busiest
    rank's expert GEMM rows and all-to-all bytes)."""
    import copy

    from rlmcost.perf.validate import predict_row

    rows = {r["id"]: r for r in _rows()}
    forced = rows[f"modelzoo-h100-qwen3-235b-{seq}-cp{cp}-forced-balance"]
    dropless = rows[f"modelzoo-h100-qwen3-235b-{seq}-cp{cp}-dropless"]

    def step(gamma: float) -> float:
        r = copy.deepcopy(forced)
        r["options"]["moe_rank_imbalance"] = gamma
        return predict_row(r).step.step_s

    ratio = forced["published"] / dropless["published"]
    s1, s2 = step(1.0), step(2.0)
    return 1 + (ratio - 1) * s1 / (s2 - s1)


def test_dropless_rows_imply_one_imbalance_inside_the_published_range():
    # best_practice/qwen3/readme.md @COMMIT 'Long Context': forced balance / dropless TFLOPS
    # 295/237, 335/277, 368/320, 389/357 at 16k-128k with CP 1-8: the same 4096 tokens per
    # EP rank and micro-batch in every row; the penalty shrinks with the attention's share
    gammas = [_implied_imbalance(s, cp) for s, cp in (("16k", 1), ("32k", 2), ("64k", 4),
                                                      ("128k", 8))]  # fmt: skip
    low, high = EP_RANK_IMBALANCE_RATIO.low, EP_RANK_IMBALANCE_RATIO.high
    assert all(low < g < high for g in gammas)  # UltraEP's 1.30-4.01 (perf.moe_imbalance)
    # one imbalance explains all four rows within 5 % (1.52-1.59 at this commit): the
    # dropless penalty is the MoE part's, per micro-batch, as rlmcost prices it
    assert max(gammas) / min(gammas) < 1.05
