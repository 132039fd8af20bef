"""Predicted RL iteration time: the engine's decode step by hand, packing, the forward and
training jobs, and the invariants of prediction versus bound through the schedule."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rlmcost.choices import Dtype, Head
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.memory import Mode, memory_per_rank
from rlmcost.perf.efficiency import KERNEL_GAP_S, Device, default_profile
from rlmcost.perf.generation import STEP_OVERHEAD_S, VLLM_HOST_S_PER_SEQUENCE, Engine
from rlmcost.perf.rl_constants import VLLM_DECODE_HBM_FRACTION
from rlmcost.perf.rl_step import forward_time, packed, train_time
from rlmcost.placement.rollout import decode_flops
from rlmcost.reports.placement import placement_estimate
from rlmcost.specs import Workload, get_hardware, get_model

H100 = get_hardware("h100-sxm")
LLAMA8 = get_model("llama-3.1-8b").arch()


def test_decode_step_with_tp_all_reduce_by_hand() -> None:
    """One decode step of Llama-3.1-8B on two H100s (TP 2), one sequence at 1000 cached
    tokens, derived term by term.

    Every GEMM has one row, so it streams its [k, n] weight (GEMV): memory-bound, time = bytes
    of A, B, C / (HBM x VLLM_DECODE_HBM_FRACTION, the engine's weight-streaming bandwidth; other
    memory-bound kernels stream at HBM x 0.9) + one launch gap (NVIDIA "Matrix Multiplication
    Background User's Guide": a GEMM with arithmetic intensity below the device's FLOP:byte
    ratio is memory bound; here compute would be 16 x 3.015e12 / 703e12 = 7 % of memory: the
    16-row padded GEMV kernel at the sustained 0.711 x 989 TFLOP/s). All-reduces are ring or tree
    alpha-beta (Thakur, Rabenseifner and Gropp 2005 §4; NCCL), NVLink 450 GB/s x 0.8 bus
    efficiency, 2 us latency per step; ring wins for two ranks (tree sends 2M, ring M)."""
    eng = Engine(LLAMA8, Device(H100, Dtype.BF16), tp=2)
    step = eng.decode_step(1, 1000)
    prof = default_profile("h100-sxm")
    bw = 3.35e12 * prof.hbm_efficiency  # achieved HBM bytes/s
    gap = KERNEL_GAP_S
    L, d, q, kv, ff, v = 32, 4096, 2048, 512, 7168, 128256 // 2  # per TP rank

    def gemv(n: int, k: int) -> float:  # [1, k] x [k, n], bf16
        return (k + k * n + n) * 2 / (3.35e12 * VLLM_DECODE_HBM_FRACTION.value) + gap

    gemms = L * (gemv(q + 2 * kv, d) + gemv(d, q) + gemv(2 * ff, d) + gemv(d, ff))
    # paged attention reads 2 (K, V) x 512 x 2 bytes per cached token per layer
    attention = 1000 * 2 * kv * 2 * L / bw + L * gap
    # norms 2 x 2d, residual adds 2 x 3d, SwiGLU 3 ff, RoPE 2 (q + kv), bf16, 6 kernels
    per_token = 2 * 2 * d * 2 + 2 * 3 * d * 2 + 3 * ff * 2 + 2 * (q + kv) * 2
    elementwise = L * (per_token / bw + 6 * gap)
    link_bw = 450e9 * 0.8
    all_reduce = 2 * 2e-6 + 2 * (1 / 2) * (d * 2) / link_bw  # ring, 2 ranks, [1, d] bf16
    tp = (2 * L + 1) * all_reduce
    head = gemv(v, d) + 3 * 128256 * 4 / bw + 3 * gap  # LM head shard + fp32 sampler passes
    head += 2e-6 + (1 / 2) * (v * 2 * 2) / link_bw  # all-gather of the [1, V] bf16 logits
    # Source: the hand derivation above (guide, Thakur et al. 2005), term by term
    assert step.gemm_s == pytest.approx(gemms, rel=1e-9)
    assert step.attention_s == pytest.approx(attention, rel=1e-9)
    assert step.elementwise_s == pytest.approx(elementwise, rel=1e-9)
    assert step.tp_comm_s == pytest.approx(tp, rel=1e-9)
    assert step.head_s == pytest.approx(head, rel=1e-9)
    assert step.total_s == pytest.approx(
        gemms + attention + elementwise + tp + head + STEP_OVERHEAD_S
        + VLLM_HOST_S_PER_SEQUENCE.value, rel=1e-9  # one sequence in flight
    )


@settings(max_examples=40, deadline=None)
@given(
    active=st.integers(1, 512),
    extra=st.integers(0, 4000),
    tp=st.sampled_from([1, 2, 4, 8]),
)
def test_decode_step_at_least_the_roofline_less_the_embedding(
    active: int, extra: int, tp: int
) -> None:
    """A decode step's kernels do the bound's FLOPs and read its bytes except the input
    embedding table, of which they gather rows (rlmcost.perf.generation docstring)."""
    context = active * (1 + extra)
    eng = Engine(LLAMA8, Device(H100, Dtype.BF16), tp=tp)
    f0, f1 = decode_flops(LLAMA8)
    flops = (active * f0 + f1 * context) / tp
    one = memory_per_rank(LLAMA8, Layout(tp=tp), Mode.GENERATE, 1, 4096, Workload())
    embedding = -(-int(LLAMA8.vocab) // tp) * int(LLAMA8.d_model) * 2
    nbytes = one.weights - embedding + one.kv_cache / 4096 * context
    bound = max(flops / H100.peak(Dtype.BF16), nbytes / H100.hbm_bandwidth_bytes_per_s)
    # Source: roofline (Williams et al. 2009) with datasheet peaks, less the embedding table
    assert eng.decode_step(active, context).total_s >= bound


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=1, max_size=60))
def test_packing_keeps_tokens_and_attention_pairs(lengths: list[int]) -> None:
    p = packed(lengths)
    # Source: the packing rule n' L >= sum x, n' L^2 >= sum x^2 (rl_step docstring)
    assert p.sequences * p.seq_len >= sum(lengths)
    assert p.sequences * p.seq_len**2 >= sum(x * x for x in lengths)
    assert p.sequences <= len(lengths) + 1


def test_forward_and_training_jobs() -> None:
    """A training step does a forward and a backward (about 2x the forward's GEMM FLOPs), so
    it takes between 2x and 4x a forward of the same batch (no recomputation); a value head
    skips the d x V head."""
    lay = Layout(dp=8)
    fwd = forward_time(LLAMA8, lay, 64, 2048, H100)
    train = train_time(LLAMA8, lay, 64, 2048, H100)
    # Source: backward = data- and weight-gradient GEMMs, 2x the forward's (Narayanan et al.
    # 2021 §5.1: training FLOPs = 3 x forward)
    assert 2 * fwd.time_s < train.step_s < 4 * fwd.time_s
    value = forward_time(LLAMA8, lay, 64, 2048, H100, head=Head.VALUE)
    assert value.time_s < fwd.time_s
    assert train_time(LLAMA8, lay, 64, 2048, H100, head=Head.VALUE).step_s < train.step_s


KW = dict(batch=8, prompt_len=256, response_len=512)
ALGS = st.sampled_from(["ppo", "grpo", "rlvr", "dpo"])
PLACEMENTS = st.sampled_from([None, "disaggregated", "fusion", "async", "hybrid"])


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    alg=ALGS,
    placement=PLACEMENTS,
    sigma=st.sampled_from([0.0, 0.4, 0.8]),
    gpus=st.sampled_from([4, 8]),
    framework=st.sampled_from(["none", "nemo-rl", "verl", "openrlhf", "trl", "slime"]),
)
def test_prediction_at_least_the_bound(
    alg: str, placement: str | None, sigma: float, gpus: int, framework: str
) -> None:
    if alg == "dpo" and placement in ("async", "fusion"):
        return  # offline: no generation to overlap
    dist = f"lognormal:300,{sigma},512" if sigma else None
    # every framework preset (the deployments users get), not only rlmcost's bare layout;
    # slime trains with Megatron's distributed optimizer (ZeRO 1, no ZeRO 3)
    zero = {"zero": 1} if framework == "slime" else {}
    try:
        e = placement_estimate(alg, "llama-2-7b", placement=placement, gpus=gpus,
                               length_dist=dist, framework=framework, **zero, **KW)  # fmt: skip
    except SpecError as exc:  # a placement the GPUs cannot hold at the preset's TP is refused
        assert "needs at least" in str(exc), exc  # (PPO disaggregated on 4 GPUs at TP 2)
        assume(False)
    # Source: each job's prediction >= its bound, and the period and stage spans are
    # monotone in the units' weights (max-plus algebra; iteration.py docstring)
    for g in e.groups:
        for j in g.jobs:
            assert j.predicted_s >= j.time_s
    for s in e.stages.values():
        assert s.time_s >= s.time_lower_bound_s * (1 - 1e-12)
    for p in e.phases:  # each phase the output prints beside its bound
        assert p.time_s >= p.time_lower_bound_s * (1 - 1e-12), p.name
    assert e.iteration_time_s >= e.iteration_time_lower_bound_s * (1 - 1e-12)
    assert 0 < e.mfu < 1
    assert e.tokens_per_s_per_gpu > 0


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sigma=st.sampled_from([0.0, 0.5, 0.9]),
    k=st.integers(1, 3),
    alg=st.sampled_from(["grpo", "rlvr"]),
)
def test_async_not_longer_than_synchronous(sigma: float, k: int, alg: str) -> None:
    groups = (
        "rollout=4,actor+reference=4"  # the default deployment scores GRPO with a verifier
    )
    dist = f"lognormal:300,{sigma},512" if sigma else None
    sync = placement_estimate(alg, "llama-2-7b", groups=groups, length_dist=dist, **KW)
    stale = placement_estimate(
        alg, "llama-2-7b", placement="async", groups=groups, staleness=k, length_dist=dist, **KW
    )
    # Source: a larger staleness removes precedence constraints (schedule.py: max cycle mean)
    assert stale.iteration_time_s <= sync.iteration_time_s * (1 + 1e-12)
    assert stale.iteration_time_lower_bound_s <= sync.iteration_time_lower_bound_s * (1 + 1e-12)


def test_generation_tail_sets_the_predicted_time() -> None:
    """Same mean length, a longer tail: the synchronous batch waits for its longest sequence,
    so the predicted generation grows."""
    fixed = placement_estimate("grpo", "llama-2-7b", gpus=8, length_dist="lognormal:300,0,2048",
                                batch=8, prompt_len=256, response_len=2048)  # fmt: skip
    tail = placement_estimate("grpo", "llama-2-7b", gpus=8, length_dist="lognormal:300,1,2048",
                               batch=8, prompt_len=256, response_len=2048)  # fmt: skip

    def gen(e):  # noqa: ANN001, ANN202
        return next(j for g in e.groups for j in g.jobs if j.timeline is not None)

    # Source: continuous batching ends with the longest sequence (Orca / vLLM scheduling)
    assert gen(tail).predicted_s > 1.5 * gen(fixed).predicted_s
    assert max(gen(tail).timeline.lengths) > 2 * max(gen(fixed).timeline.lengths)


def test_phase_names_as_frameworks_print_them() -> None:
    e = placement_estimate("ppo", "llama-2-7b", gpus=8, **KW)
    names = [p.name for p in e.phases]
    # Source: verl's timing_s/* keys (gen, ref, values, reward, update_critic, update_actor)
    for name in ("generation", "reference", "values", "reward", "update actor", "update critic"):
        assert name in names
    keys = {p.name: p.key for p in e.phases}
    assert keys["generation"] == "timing_s/gen"
    assert math.isclose(
        sum(p.time_s for p in e.phases), e.iteration_time_s, rel_tol=1e-9
    )  # one group, synchronous: the phases add up to the iteration


def test_rl_validation_rows_print_with_errors() -> None:
    from rlmcost.perf.validate import validate

    v = validate("nemo_rl_v0.4")
    assert len(v.rl_rows) == 3
    for r in v.rl_rows:
        # Source: NeMo RL v0.4 performance table (published.json); error = predicted / pub - 1
        assert r.predicted_s >= r.lower_bound_s
        assert math.isfinite(r.error)
        assert r.error == pytest.approx(r.predicted_s / r.published_s - 1)
    assert v.rl_summary()["nemo_rl_v0.4"]["rows"] == 3
