"""Megatron-core's EP communication overlap (``overlap_moe_expert_parallel_comm``;
rlmcost.perf.ep_overlap, validate row option ``moe_ep_overlap``)."""

from __future__ import annotations

import copy

import pytest

from rlmcost.errors import SpecError
from rlmcost.perf.ep_overlap import EP_OVERLAP_HIDDEN_SHARE
from rlmcost.perf.validate import load_table, predict_row

OVERLAP_ROWS = (  # their recipes set the overlap (the rows' assumptions cite them)
    "megatron-bridge-26.08-gb200-qwen3-30b-a3b-mxfp8",
    "megatron-bridge-26.08-gb200-qwen3-235b-a22b-mxfp8",
    "megatron-bridge-26.08-gb200-deepseek-v3-mxfp8",
    "modelzoo-h100-qwen3-235b-ep32-deepep-1f1b-overlap",
)


def _row(rid: str) -> dict:
    return copy.deepcopy(next(r for r in load_table()["rows"] if r["id"] == rid))


def _without(row: dict) -> dict:
    return dict(row, options={k: v for k, v in row["options"].items() if k != "moe_ep_overlap"})


def test_hidden_share_is_the_skill_runs_gain_over_its_communication_time():
    # Megatron-Bridge skills/nemo-mbridge-perf-expert-parallel-overlap/SKILL.md @7ded17dae:
    # 24.7138 s off, 20.9920 s on; 3,958.997 ms of communication beside compute = 36.55 %
    communication_s = 3.958997 / 0.3655
    assert EP_OVERLAP_HIDDEN_SHARE == pytest.approx((24.7138 - 20.9920) / communication_s)
    # the step's net gain is below the Nsight share of concurrent communication
    assert 0.3 < EP_OVERLAP_HIDDEN_SHARE < 0.3655


@pytest.mark.parametrize("rid", OVERLAP_ROWS)
def test_the_rows_whose_recipes_overlap_carry_the_option_and_only_ep_moves(rid):
    row = _row(rid)
    assert row["options"]["moe_ep_overlap"] is True
    on, off = predict_row(row).step, predict_row(_without(row)).step
    assert on.step_s < off.step_s
    kernels = ("gemm", "attention", "elementwise", "recompute")  # the host floor may show
    assert all(on.compute_s[k] == off.compute_s[k] for k in kernels)  # (rlmcost.perf.moe_host)
    assert on.exposed_comm_s["ep"] < off.exposed_comm_s["ep"]


def test_modelzoo_pair_ratio_matches_the_published_one():
    # yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md @e8650517d60d, H100 table:
    # Qwen3-235B-A22B DeepEP EP 32, 19.7 s; the same with '+1f1b overlap', 17.6 s
    with_overlap = _row("modelzoo-h100-qwen3-235b-ep32-deepep-1f1b-overlap")
    base = _row("modelzoo-h100-qwen3-235b-ep32-deepep")
    assert _without(with_overlap)["options"] == base["options"]  # the pair differs only there
    ratio = predict_row(with_overlap).predicted / predict_row(base).predicted
    assert ratio == pytest.approx(17.6 / 19.7, abs=0.03)


def test_the_26_08_qwen3_30b_row_is_inside_its_interval():
    # docs/performance-summary.md @067f987df, 26.08, Qwen3_30B_a3B DGX-GB200: 39936 tokens/s/GPU
    row = predict_row(_row("megatron-bridge-26.08-gb200-qwen3-30b-a3b-mxfp8"))
    assert row.inside_interval and abs(row.error) < 0.05


@pytest.mark.parametrize(
    ("change", "word"),
    [
        (lambda r: r["options"].update(ep_dispatcher="allgather"), "allgather"),
        (lambda r: r["layout"].update(ckpt="full"), "full"),
        (lambda r: r["layout"].update(ep=1), "ep > 1"),
        (lambda r: (r["layout"].update(ckpt="selective"),
                    r["options"].update(selective="modules", recompute_modules=["moe"])), "'moe'"),
        (lambda r: r["layout"].update(schedule="1f1b", virtual_stages=1), "interleaved"),
    ],
)  # fmt: skip
def test_megatron_cores_refusals_name_the_option(change, word):
    # megatron/core/transformer/transformer_config.py @cd4afffa6, overlap_moe_expert_parallel_comm
    rid = "modelzoo-h100-qwen3-235b-ep32-deepep-1f1b-overlap"
    row = _row(rid)
    change(row)
    with pytest.raises(SpecError, match="moe_ep_overlap") as e:
        predict_row(row)
    assert word in str(e.value)
