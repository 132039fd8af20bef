"""Eager decode steps of MoE models (``rlmcost.perf.eager_launch``).

Reference numbers: vLLM issue 45709 (vllm-project/vllm, 2026-06-15), Qwen3-30B-A3B at TP 4,
max-concurrency 8: TPOT 33.92 ms eager, 10.03 ms with CUDA graphs (full-and-piecewise), 35.20
ms compile-only; Qwen/Qwen3-30B-A3B config.json: 48 layers, every one MoE (decoder_sparse_step
1, no mlp_only_layers)."""

from __future__ import annotations

import pytest

from rlmcost import evaluate
from rlmcost.perf.eager_launch import EAGER_MOE_LAYER_S, eager_launch_s
from rlmcost.perf.rl_constants import EAGER_LAUNCH_S_PER_LAYER
from rlmcost.reports.estimate import estimate
from rlmcost.specs import get_model


def test_moe_layer_figure_is_the_issues_eager_minus_graph_tpot_per_layer() -> None:
    # (33.92 - 10.03) ms over 48 MoE layers; compile-only (35.20) bounds it above
    assert EAGER_MOE_LAYER_S.value == pytest.approx(23.89e-3 / 48)
    assert EAGER_MOE_LAYER_S.high == pytest.approx(25.17e-3 / 48)
    assert EAGER_MOE_LAYER_S.value > EAGER_LAUNCH_S_PER_LAYER.high


def test_dense_and_moe_layers_are_priced_apart() -> None:
    qwen_moe = get_model("qwen3-30b-a3b").arch()
    assert int(qwen_moe.n_moe_layers) == 48
    assert eager_launch_s(qwen_moe) == pytest.approx(48 * EAGER_MOE_LAYER_S.value)
    llama = get_model("llama-3.1-8b").arch()  # 32 dense layers: the dense estimate only
    assert eager_launch_s(llama) == pytest.approx(32 * EAGER_LAUNCH_S_PER_LAYER.value)


def _generation(e):  # noqa: ANN001, ANN202
    for g in e.evaluation.groups:
        for j in g.jobs:
            if j.task.kind.value == "generate":
                return j
    raise AssertionError("no generation job")


def test_eager_moe_engine_decodes_slower_by_the_moe_launch_time() -> None:
    # vLLM TP 4 replicas of 256 sequences: every decode step is the engine's (above the
    # roofline bound, which a one-sequence replica of a MoE model would set instead)
    kw = dict(gpus=8, batch=64, group=8, response_len=1024, length_dist="lognormal:300,0.8,1024")
    graphs = estimate("grpo", "qwen3-30b-a3b", hardware="h100-sxm", **kw)
    graphs = evaluate(graphs.run.replace(deployment={"engine": {"tp": 4}}))
    eager = evaluate(graphs.run.replace(deployment={"engine": {"eager": True}}))
    t0, t1 = _generation(graphs).timeline, _generation(eager).timeline
    assert t0.steps == t1.steps and t0.slots == 256
    # each decode step pays 48 MoE layers x EAGER_MOE_LAYER_S more, 5x the dense estimate's
    extra = t0.steps * 48 * EAGER_MOE_LAYER_S.value
    assert t1.predicted_decode_s - t0.predicted_decode_s == pytest.approx(extra, rel=1e-6)
