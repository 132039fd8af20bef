"""Eager decode steps (``rlmcost.perf.eager_launch``): a step lasts at least its kernels'
launches from the host, MoE layers priced apart.

Reference numbers: vLLM issue 45709 (vllm-project/vllm, 2026-06-15), Qwen3-30B-A3B at TP 4,
max-concurrency 8: TPOT 33.92 ms eager, 10.03 ms with CUDA graphs (full-and-piecewise), 35.20
ms compile-only; Qwen/Qwen3-30B-A3B config.json: 48 layers, every one MoE (decoder_sparse_step
1, no mlp_only_layers); Llama-3.1-8B config.json: 32 dense layers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rlmcost import evaluate
from rlmcost.algorithms.kinds import Kind
from rlmcost.perf.eager_launch import EAGER_MOE_LAYER_S, eager_launch_s
from rlmcost.perf.efficiency import Device
from rlmcost.perf.generation import STEP_OVERHEAD_S, VLLM_HOST_S_PER_SEQUENCE, Engine
from rlmcost.perf.rl_constants import EAGER_LAUNCH_S_PER_LAYER
from rlmcost.reports.estimate import estimate
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.workload import Workload


def test_moe_layer_figure_is_the_issues_launch_bound_eager_step_per_layer() -> None:
    # the eager step (33.92 ms, 3.4x the graphs' 10.03) is launch-bound: its launches are
    # the step less the host's serial work at 8 sequences, over 48 MoE layers
    host = STEP_OVERHEAD_S + 8 * VLLM_HOST_S_PER_SEQUENCE.value
    assert EAGER_MOE_LAYER_S.value == pytest.approx((33.92e-3 - host) / 48)
    assert EAGER_MOE_LAYER_S.low == pytest.approx((33.92e-3 - 10.03e-3) / 48)
    assert EAGER_MOE_LAYER_S.high == pytest.approx(35.20e-3 / 48)
    assert EAGER_MOE_LAYER_S.value > 4 * EAGER_LAUNCH_S_PER_LAYER.value


def test_dense_and_moe_layers_are_priced_apart() -> None:
    qwen_moe = get_model("qwen3-30b-a3b").arch()
    assert int(qwen_moe.n_moe_layers) == 48
    assert eager_launch_s(qwen_moe) == pytest.approx(48 * EAGER_MOE_LAYER_S.value)
    llama = get_model("llama-3.1-8b").arch()  # 32 dense layers: the dense estimate only
    assert eager_launch_s(llama) == pytest.approx(32 * EAGER_LAUNCH_S_PER_LAYER.value)


@pytest.mark.parametrize("active", [1, 8, 64, 256])
def test_eager_step_is_the_longer_of_gpu_work_and_launches_plus_host_work(active: int) -> None:
    arch = get_model("qwen3-30b-a3b").arch()
    dev = Device(get_hardware("h20"), Workload().compute_dtype)
    graphs = Engine(arch, dev, tp=4)
    launch = eager_launch_s(arch)
    eager = Engine(arch, dev, tp=4, options=replace(graphs.options, launch_s=launch))
    ctx = active * 3000
    g, e = graphs.decode_step_s(active, ctx), eager.decode_step_s(active, ctx)
    host = graphs.options.step_overhead_s + graphs.options.per_sequence_s * active
    gpu = g - host
    assert e == pytest.approx(max(gpu, launch) + host)
    assert e >= g


def _generation(e):  # noqa: ANN001, ANN202
    return e.evaluation.jobs_of(Kind.GENERATE)[0]


def test_eager_moe_engine_decodes_no_faster_than_its_launches() -> None:
    # vLLM TP 4 replicas of 256 sequences on H100: every decode step lasts at least the 48
    # MoE layers' launches plus the host's step overhead
    kw = dict(gpus=8, batch=64, group=8, response_len=1024, length_dist="lognormal:300,0.8,1024")
    graphs = estimate("grpo", "qwen3-30b-a3b", hardware="h100-sxm", **kw)
    graphs = evaluate(graphs.run.replace(deployment={"engine": {"tp": 4}}))
    eager = evaluate(graphs.run.replace(deployment={"engine": {"eager": True}}))
    t0, t1 = _generation(graphs).timeline, _generation(eager).timeline
    assert t0.steps == t1.steps and t0.slots == 256
    floor = t1.steps * (48 * EAGER_MOE_LAYER_S.value + STEP_OVERHEAD_S)
    assert t1.predicted_decode_s >= floor
    assert t1.predicted_decode_s > t0.predicted_decode_s


def test_layers_are_priced_by_their_launches_counted_from_vllm_code() -> None:
    # vLLM qwen3_moe.py / fused_moe.py: the measured Qwen3-MoE layer launches 18 kernels (two
    # norms; qkv, q_norm, k_norm, rotary, cache write, attention, o_proj, all-reduce; router,
    # topk_softmax, align, two fused_moe kernels, activation, moe_sum, all-reduce)
    from rlmcost.perf.eager_launch import QWEN3_MOE_LAYER_LAUNCHES, layer_launches

    qwen_moe = get_model("qwen3-30b-a3b").arch()
    assert layer_launches(qwen_moe, True) == QWEN3_MOE_LAYER_LAUNCHES == 18
    # vLLM deepseek_v2.py (MLA: q_a, kv_a, q_b and two bmm for qkv; 4 small kernels) and
    # v0.8.5 fused_moe.py grouped_topk (16 torch ops for topk_softmax), routed scaling, the
    # shared expert (gate_up, activation, down, add): 2 + 14 + 28
    dsv3 = get_model("deepseek-v3").arch()
    assert layer_launches(dsv3, True) == 44
    moe_s = EAGER_MOE_LAYER_S.value * 44 / 18
    dense_s = EAGER_LAUNCH_S_PER_LAYER.value * (2 + 14 + 4) / 12
    assert eager_launch_s(dsv3) == pytest.approx(58 * moe_s + 3 * dense_s)
    # a plain dense GQA model keeps the dense estimate per layer exactly
    llama = get_model("llama-3.1-70b").arch()
    assert eager_launch_s(llama) == pytest.approx(80 * EAGER_LAUNCH_S_PER_LAYER.value)


def test_verl_deepseek_v3_eager_tp32_rollout_is_launch_bound_near_the_published_time() -> None:
    # verl docs/perf/dpsk.md (4c7812c4): DeepSeek-V3 on 96 H20, vLLM TP 32 eager, rollout
    # 1050 s over responses up to 9632 tokens (>= 9632 decode steps): >= ~100 ms a step at the
    # tail, where few sequences are in flight; the launches of 58 MoE layers must carry it
    dsv3 = get_model("deepseek-v3").arch()
    assert 1050 / 9632 * 0.8 < eager_launch_s(dsv3) < 1050 / 9632
