"""NeMo RL's non-colocated refit: a packed, double-buffered NCCL broadcast of the full model from
trainer rank 0 over one group of every trainer and engine rank (rlmcost.perf.packed_refit).

References: NVIDIA-NeMo/RL pull request 1379 (non-colocated refit with the overlapped packed
broadcast: DeepSeek-V3 14 s, Qwen3-235B-A22B 5.5 s); parameter counts 671e9 (DeepSeek-V3) and
235e9 (Qwen3-235B-A22B), 2 bytes each in bf16; NeMo RL nemo_rl/utils/packed_tensor.py at
v0.5.0-v0.7.0 (``src=0``, one group, no per-node split).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.packed_refit import packed_refit_s
from rlmcost.perf.refit import Refit, refit_s

DSV3_BF16_BYTES = 671 * 10**9 * 2
QWEN3_235B_BF16_BYTES = 235 * 10**9 * 2


def test_packed_refit_reproduces_nemo_rl_pr_1379():
    # NeMo RL PR 1379: DeepSeek-V3 34 s -> 14 s, Qwen3-235B-A22B 13 s -> 5.5 s
    assert packed_refit_s(DSV3_BF16_BYTES) == pytest.approx(14.0, rel=0.02)
    assert packed_refit_s(QWEN3_235B_BF16_BYTES) == pytest.approx(5.5, rel=0.02)
    for n in (DSV3_BF16_BYTES, QWEN3_235B_BF16_BYTES):
        assert packed_refit_s(n, "low") <= packed_refit_s(n) <= packed_refit_s(n, "high")
    assert packed_refit_s(0) == 0.0


def test_packed_refit_ignores_nodes_and_engine_shards():
    """One pipelined broadcast of the whole model: no per-node lanes, no separate load."""
    one = refit_s(Refit.PACKED_NCCL, DSV3_BF16_BYTES)
    assert one == packed_refit_s(DSV3_BF16_BYTES)
    assert refit_s(Refit.PACKED_NCCL, DSV3_BF16_BYTES, engine_shard_bytes=10**11,
                   cross_node=True) == one  # fmt: skip
    # the generic NCCL broadcast prices the same bytes on one cross-node lane far slower
    assert refit_s(Refit.NCCL, DSV3_BF16_BYTES, cross_node=True) > 10 * one


def test_nemo_rl_refits_apart_by_packed_broadcast_others_by_nccl():
    """NeMo RL's non-colocated refit is the packed broadcast; OpenRLHF and slime keep theirs."""
    assert behaviour("nemo-rl").apart == Refit.PACKED_NCCL
    assert behaviour("openrlhf").apart == Refit.NCCL
    assert behaviour("slime").apart == Refit.NCCL


RUN = ["rlvr", "--framework", "nemo-rl", "--model", "qwen3-30b-a3b", "--no-kl", "--ep", "8",
       "--rollout-tp", "2", "--offload", "", "--no-sleep", "--placement", "async",
       "--staleness", "1", "--batch", "16", "--group", "8", "--prompt-len", "128",
       "--response-len", "512", "--hardware", "h100-sxm"]  # fmt: skip


def _weight_sync_s(rollout: int, actor: int) -> float:
    groups = f"rollout={rollout}[tp=2],actor={actor}"
    res = CliRunner().invoke(app, [*RUN, "--groups", groups, "--gpus", str(rollout + actor),
                                   "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    return next(p["time_s"] for p in out["phases"] if p["name"] == "weight sync")


def test_nemo_rl_async_weight_sync_is_the_packed_refit_at_any_scale():
    """A NeMo RL async run's weight sync is packed_refit_s of the bf16 model on 1+1 or 4+4
    nodes alike (the broadcast is pipelined through one group)."""
    small, large = _weight_sync_s(8, 8), _weight_sync_s(32, 32)
    assert small == pytest.approx(large, rel=1e-9)
    # Qwen3-30B-A3B: 30.5e9 parameters (Hugging Face config), about 61 GB in bf16
    assert small == pytest.approx(packed_refit_s(61 * 10**9), rel=0.02)


def test_fp8_requant_counts_the_cast_chain_over_the_whole_model():
    """NeMo RL's FP8 load_weights (nemo_rl/models/generation/vllm/quantization/fp8.py at
    v0.7.0) runs cast_tensor_to_fp8_blockwise over every received full weight: 49 B of HBM
    traffic per parameter (packed_refit docstring), so DeepSeek-V3 (671e9 parameters) on an
    H100 (3.35 TB/s) takes several seconds per refit, in the 5.5-15 s per rank NeMo RL PR 4217
    reports for a ~790 GB model, and twice the parameters take twice the time."""
    from rlmcost.perf.packed_refit import NEMO_RL_FP8_REQUANT_BYTES_PER_PARAM, fp8_requant_s
    from rlmcost.specs.registry import get_hardware

    h100 = get_hardware("h100-sxm")
    dsv3 = fp8_requant_s(671 * 10**9, h100)
    floor = 671 * 10**9 * NEMO_RL_FP8_REQUANT_BYTES_PER_PARAM / h100.hbm_bandwidth_bytes_per_s
    assert floor <= dsv3 <= 1.5 * floor
    assert 5.5 <= dsv3 <= 15.0
    assert fp8_requant_s(2 * 671 * 10**9, h100) == pytest.approx(2 * dsv3)


def test_an_fp8_engine_adds_the_requant_to_nemo_rl_refit():
    """--rollout-dtype fp8: the weight sync grows by fp8_requant_s of the model's parameters
    (the broadcast itself stays bf16, the trainer's dtype)."""
    from rlmcost.perf.packed_refit import fp8_requant_s
    from rlmcost.specs.registry import get_hardware

    def sync(extra: list[str]) -> float:
        res = CliRunner().invoke(app, [*RUN, "--groups", "rollout=8[tp=2],actor=8", "--gpus",
                                       "16", *extra, "--json"])  # fmt: skip
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        return next(p["time_s"] for p in out["phases"] if p["name"] == "weight sync")

    added = sync(["--rollout-dtype", "fp8"]) - sync([])
    # Qwen3-30B-A3B: 30.5e9 parameters (Hugging Face config)
    assert added == pytest.approx(fp8_requant_s(30_500_000_000, get_hardware("h100-sxm")),
                                  rel=0.02)  # fmt: skip
