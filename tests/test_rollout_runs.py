"""The decode timeline, summed run by run in closed form (rollout.timeline at the datasheet
peak), equals the same timeline summed decode step by decode step, and a brute-force
continuous-batching simulation written out here."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost.choices import Dtype
from rlmcost.perf.efficiency import Device
from rlmcost.perf.generation import Engine
from rlmcost.placement.rollout import DecodeCost, admission_order, timeline
from rlmcost.specs import get_hardware, get_model
from rlmcost.timing import Roofline

ARCH = get_model("llama-3.1-8b").arch()
H100 = get_hardware("h100-sxm")


@dataclass(frozen=True)
class UnitProfile:
    """Efficiency 1 everywhere, but not the Peak object: the timeline sums it step by step."""

    name: str = "unit profile"

    def compute(self, flops_per_device: float, kernel: str = "gemm") -> float:
        return 1.0

    def bandwidth(self, bytes_per_device: float, kernel: str = "decode") -> float:
        return 1.0


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


costs = st.builds(
    DecodeCost,
    f0=st.integers(10**9, 10**11),
    f1=st.integers(10**4, 10**7),
    prefill_flops=st.integers(10**11, 10**13),
    weight_bytes=st.floats(1e8, 2e10),
    kv_bytes_per_token=st.floats(1e3, 5e5),
    gather_s=st.sampled_from([0.0, 1e-3, 2e-2]),
)


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 400), min_size=1, max_size=40),
    slots=st.integers(1, 48),
    prompt=st.integers(1, 2000),
    cost=costs,
    gpus=st.sampled_from([1, 2, 8]),
    with_engine=st.booleans(),
)
def test_closed_form_runs_equal_the_step_by_step_sums(
    lengths, slots, prompt, cost, gpus, with_engine
):
    engine = Engine(ARCH, Device(H100, Dtype.BF16), tp=gpus) if with_engine else None
    closed = timeline(ARCH, prompt, tuple(lengths), slots, cost, Roofline(H100, gpus, Dtype.BF16),
                      engine)  # fmt: skip
    stepwise = timeline(ARCH, prompt, tuple(lengths), slots, cost,
                        Roofline(H100, gpus, Dtype.BF16, UnitProfile()), engine)  # fmt: skip
    # Independent: the same model summed per decode step (the profile path).
    for field in ("compute_s", "memory_s", "bound_s", "compute_bound_s"):
        assert _close(getattr(closed.time, field), getattr(stepwise.time, field)), field
    assert _close(closed.predicted_s, stepwise.predicted_s)
    assert all(_close(a, b) for a, b in zip(closed.finish_s, stepwise.finish_s, strict=True))
    assert [r.idle_s for r in closed.runs] == pytest.approx([r.idle_s for r in stepwise.runs])


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 300), min_size=1, max_size=30),
    slots=st.integers(1, 40),
    prompt=st.integers(1, 500),
    cost=costs,
)
def test_timeline_equals_a_brute_force_continuous_batching_simulation(lengths, slots, prompt, cost):
    roof = Roofline(H100, 1, Dtype.BF16)
    tl = timeline(ARCH, prompt, tuple(lengths), slots, cost, roof)
    # Independent: decode step by step; every step advances all in-flight sequences by one
    # token, a finished sequence's slot takes the next in admission order (vLLM's scheduler).
    queue = [lengths[i] for i in admission_order(len(lengths))]
    k = min(slots, len(queue))
    in_flight = [[r, 0] for r in queue[:k]]  # [response length, tokens so far]
    waiting = queue[k:]
    clock = bound_sum = 0.0
    steps = 0
    admitted = k
    while in_flight:
        if admitted:  # this step's admissions run their prefill first
            flops = admitted * cost.prefill_flops
            nbytes = cost.weight_bytes + cost.kv_bytes_per_token * prompt * admitted
            c, m = roof.seconds([flops], [nbytes], ("prefill", "prefill"))
            clock += max(c[0], m[0], cost.gather_s)
        contexts = sum(prompt + done + 1 for _, done in in_flight)
        c, m = roof.seconds([len(in_flight) * cost.f0 + cost.f1 * contexts],
                            [cost.weight_bytes + cost.kv_bytes_per_token * contexts])  # fmt: skip
        step = max(c[0], m[0], cost.gather_s)
        clock += step
        bound_sum += step
        steps += 1
        for seq in in_flight:
            seq[1] += 1
        in_flight = [s for s in in_flight if s[1] < s[0]]
        admitted = min(slots - len(in_flight), len(waiting))
        in_flight += [[r, 0] for r in waiting[:admitted]]
        waiting = waiting[admitted:]
    assert tl.steps == steps
    assert _close(tl.runs[-1].end_s, clock)
    assert _close(sum(r.bound_s for r in tl.runs), bound_sum)


def test_a_fixed_length_batch_in_waves_is_one_run_per_wave():
    # 10 sequences of 100 tokens, 4 slots: waves of 4, 4, 2 -> three runs of 100 steps
    cost = DecodeCost(f0=10**10, f1=10**5, prefill_flops=10**12, weight_bytes=1e10,
                      kv_bytes_per_token=1e5)  # fmt: skip
    tl = timeline(ARCH, 50, (100,) * 10, 4, cost, Roofline(H100, 1, Dtype.BF16))
    assert [(r.first, r.last, r.active) for r in tl.runs] == [(1, 100, 4), (101, 200, 4),
                                                              (201, 300, 2)]  # fmt: skip
    # contexts at a wave's first step: every sequence attends its prompt and its first token
    assert [r.context for r in tl.runs] == [4 * 51, 4 * 51, 2 * 51]
    assert tl.waves == 3 and tl.steps == 300

