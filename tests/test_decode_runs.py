"""A decode timeline's runs summed all at once with numpy (placement.decode_runs, envelope.
sums_of_max) equal the same runs summed one by one in Python to the last bit, on every
admission path; and both equal the sum over decode steps of the largest line at each step,
the definition in placement.envelope's and placement.rollout's docstrings, written out here
step by step."""

from __future__ import annotations

import dataclasses
import random
import sys
from collections import Counter
from math import fsum

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kv_replay import ARCH, COST, H100

from rlmcost.choices import Dtype
from rlmcost.perf.efficiency import Device
from rlmcost.perf.generation import Engine
from rlmcost.placement import decode_runs as dr
from rlmcost.placement.envelope import sum_of_max, sums_of_max
from rlmcost.placement.group_gate import GroupGate
from rlmcost.placement.paged import Paged
from rlmcost.placement.prefix_share import PrefixShare
from rlmcost.placement.rollout import DecodeCost, timeline
from rlmcost.placement.sglang_admit import TokenPool
from rlmcost.timing import Roofline

np = pytest.importorskip("numpy")
ENGINE = Engine(ARCH, Device(H100, Dtype.BF16), tp=1)

# few distinct values: ties, parallel lines and identical lines are common
values = st.one_of(st.sampled_from([0.0, 1.0, 2.5, -1.0, 3.0]), st.floats(-1e3, 1e3))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(values, values), min_size=3, max_size=3),
                          st.integers(1, 300)), min_size=1, max_size=20),
       st.sampled_from([3, 5]))  # fmt: skip
def test_envelope_arrays_equal_the_scalar_envelope_bit_for_bit(rows, width):
    lines = [(r * 2)[:width] for r, _ in rows]  # 3 lines, or 5 with two repeated
    ns = [n for _, n in rows]
    arrays = [(np.array([r[i][0] for r in lines]), np.array([r[i][1] for r in lines]))
              for i in range(width)]  # fmt: skip
    total, first = sums_of_max(arrays, np.array(ns, dtype=np.int64))
    for r, n, t, f in zip(lines, ns, total.tolist(), first.tolist(), strict=True):
        s, parts = sum_of_max(r, n)
        assert (t, f) == (s, sum(_series(r[0], k0, k1) for k0, k1, i in parts if i == 0))
        # Independent: the largest line at every step, summed
        steps = [max(a + b * k for a, b in r) for k in range(n)]
        assert t == pytest.approx(fsum(steps), rel=1e-12, abs=1e-9)


def _series(line, k0, k1):  # noqa: ANN001, ANN202
    a, b = line
    n = k1 - k0
    return n * a + b * (k0 + k1 - 1) * n / 2


def _both(*args):  # noqa: ANN002, ANN202
    """The timeline with every run summed by numpy, and by the Python loop."""
    saved = dr.NUMPY_RUNS
    try:
        dr.NUMPY_RUNS = (0, 0)
        vectorized = timeline.__wrapped__(*args)
        dr.NUMPY_RUNS = (10**9, 10**9)
        looped = timeline.__wrapped__(*args)
    finally:
        dr.NUMPY_RUNS = saved
    return vectorized, looped


KINDS = ["slots", "call", "gate", "paged", "paged-share", "sglang", "stream-share"]


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(1, 200), min_size=1, max_size=60),
       slots=st.integers(1, 24), prompt=st.integers(1, 600), kind=st.sampled_from(KINDS),
       with_engine=st.booleans(), gather=st.sampled_from([0.0, 2e-3]),
       per_step=st.sampled_from([1.0, 1.7]), gpus=st.sampled_from([1, 8]))  # fmt: skip
def test_numpy_runs_equal_the_python_runs_on_every_admission_path(
    lengths, slots, prompt, kind, with_engine, gather, per_step, gpus
):
    cost = dataclasses.replace(COST, gather_s=gather, tokens_per_step=per_step)
    call = gate = pool = None
    if kind == "call":
        call = max(1, len(lengths) // 3)
    elif kind == "gate":
        gate = GroupGate(2, max(1, slots // 2), 20)
    elif kind.startswith("paged"):
        share = PrefixShare(4, 16) if kind == "paged-share" else None
        pool = Paged(slots * (prompt + 100), 16, share=share)
    elif kind == "sglang":
        pool = TokenPool(slots * (prompt + 100), max(lengths))
    elif kind == "stream-share":
        pool = PrefixShare(4, 1, False)
    args = (ARCH, prompt, tuple(lengths), slots, cost, Roofline(H100, gpus, Dtype.BF16),
            ENGINE if with_engine else None, call, pool, gate)  # fmt: skip
    vectorized, looped = _both(*args)
    assert vectorized == looped  # every field, every run's floats to the last bit


def test_a_long_rollout_takes_the_numpy_form_by_default_and_equals_the_loop():
    rng = random.Random(7)
    lengths = tuple(sorted(rng.randint(1, 3000) for _ in range(1500)))
    args = (ARCH, 500, lengths, 64, COST, Roofline(H100, 1, Dtype.BF16), ENGINE, None,
            Paged(64 * 1500, 16))  # fmt: skip
    default = timeline.__wrapped__(*args)
    assert "numpy" in sys.modules and len(default.runs) > dr.NUMPY_RUNS[1]  # the numpy form
    assert default == _both(*args)[1]


def _stepwise(change, context_change, cost, roofline):  # noqa: ANN001, ANN202
    """Per decode step: in flight and the contexts' sum tracked one step at a time, the step's
    compute, memory and link seconds, its bound the largest (rollout's docstring)."""
    rc = roofline.gpus * roofline.peak_flops_per_s
    rb = roofline.hardware.hbm_bandwidth_bytes_per_s
    active = context = 0
    bounds, computes, runs = [], [], []
    steps = sorted(change.keys() | context_change.keys())
    for b0, b1 in zip(steps, steps[1:], strict=False):
        active += change[b0]
        context += context_change[b0]
        if not active:  # nothing in flight: no decode step
            continue
        run = []
        for _ in range(b0, b1):
            c = (active * cost.f0 + cost.f1 * context) / rc
            m = (cost.weight_bytes + cost.kv_bytes_per_token * context) / rb
            run.append(max(c, m, cost.gather_s))
            computes.append(c)
            context += active
        bounds += run
        runs.append(fsum(run))
    return fsum(computes), fsum(bounds), runs


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 400), st.integers(1, 5000)),
                min_size=1, max_size=40),
       st.sampled_from([0.0, 5e-3]), st.sampled_from([1, 4]))  # fmt: skip
def test_numpy_runs_equal_the_sum_over_steps(events, gather, gpus):
    # sequences of (start step, response tokens, prompt) written as their changes
    change: Counter[int] = Counter()
    context_change: Counter[int] = Counter()
    for start, tokens, prompt in events:
        change[start] += 1
        change[start + tokens] -= 1
        context_change[start] += prompt + 1
        context_change[start + tokens] -= prompt + 1 + tokens
    cost = dataclasses.replace(COST, gather_s=gather)
    roofline = Roofline(H100, gpus, Dtype.BF16)
    runs, totals = dr.decode_runs(change, context_change, {}, roofline, cost, None, True)
    compute, bound, per_run = _stepwise(change, context_change, cost, roofline)
    assert totals[0] == pytest.approx(compute, rel=1e-12)
    assert totals[2] == pytest.approx(bound, rel=1e-12)
    assert [r.bound_s for r in runs] == pytest.approx(per_run, rel=1e-12)
    assert runs[-1].end_s == pytest.approx(bound, rel=1e-12)  # no prefills: the clock


def test_flops_past_int64_fall_back_to_exact_python_integers():
    huge = DecodeCost(f0=2**61, f1=2**40, prefill_flops=10**12, weight_bytes=1e9,
                      kv_bytes_per_token=1e5)  # fmt: skip
    change, context_change = Counter({0: 3, 10: -3}), Counter({0: 3000, 10: -3030})
    roofline = Roofline(H100, 1, Dtype.BF16)
    forced = dr.decode_runs(change, context_change, {}, roofline, huge, None, True)
    assert forced == dr.decode_runs(change, context_change, {}, roofline, huge, None, False)
