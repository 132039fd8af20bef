"""A batch priced by its distinct lengths gives what the per-sequence forms give: response
lengths come ascending (so runs of equal lengths find them by bisection), the packed
sequences and their sums built run by run, a one-length rollout admitted wave by wave. Each
number is checked against a per-sequence form written out here (a heap of free slots, the
sums over every sequence)."""

from __future__ import annotations

import heapq
from dataclasses import fields

from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost.choices import Dtype
from rlmcost.perf.efficiency import Device
from rlmcost.perf.generation import Engine
from rlmcost.perf.rl_step import length_counts, packed_counts
from rlmcost.placement.admission import _admit, _waves
from rlmcost.placement.lengths import from_runs, parse_length_dist, runs
from rlmcost.placement.rollout import DecodeCost, timeline
from rlmcost.specs import get_hardware, get_model
from rlmcost.timing import Roofline

ARCH = get_model("llama-3.1-8b").arch()
H100 = get_hardware("h100-sxm")


def test_every_distribution_gives_ascending_lengths(tmp_path):
    path = tmp_path / "lengths.txt"
    path.write_text("900 12 40 40 3000 7\n")
    spellings = ["fixed", "reasoning", "uniform:3,900", "lognormal:1000,0.8",
                 "lognormal:1000,0.8,8192", "lognormal:3000,0.7,4096,0.1", f"file:{path}"]
    for spelling in spellings:
        dist = parse_length_dist(spelling)
        for n, t in ((1, 1024), (7, 4096), (1000, 32768)):
            out = dist.lengths(n, t)
            # runs() and GroupSizes.longest rely on this order
            assert list(out) == sorted(out), spelling


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=200), st.integers(0, 5000))
def test_runs_rebuild_the_shifted_lengths(values, by):
    lengths = tuple(sorted(values))
    pairs = runs(lengths)
    assert from_runs(pairs, by) == tuple(by + t for t in lengths)  # per sequence
    assert sorted(pairs) == sorted(length_counts(lengths))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 9000), min_size=1, max_size=300))
def test_packed_counts_are_the_per_sequence_sums(lengths):
    p = packed_counts(length_counts(lengths))
    s1, s2 = sum(lengths), sum(x * x for x in lengths)  # every sequence, written out
    seq = -(-s2 // s1)
    assert (p.sequences, p.seq_len) == (-(-s1 // seq), seq)


def _heap_admit(n: int, length: int, slots: int) -> tuple[list[int], list[int]]:
    """Continuous batching with a heap of (free at, slot), sequence by sequence."""
    free = [(0, s) for s in range(slots)]
    start, slot_of = [], []
    for _ in range(n):
        t0, s = heapq.heappop(free)
        start.append(t0)
        slot_of.append(s)
        heapq.heappush(free, (t0 + length, s))
    return start, slot_of


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 300), st.integers(1, 50), st.integers(1, 40))
def test_waves_are_the_heap_admission(n, length, slots):
    assert _waves(n, length, slots) == _heap_admit(n, length, slots)
    if slots < n:
        assert _admit([length] * n, slots) == _heap_admit(n, length, slots)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 120), length=st.integers(1, 300), slots=st.integers(1, 50),
       prompt=st.integers(1, 2000), with_engine=st.booleans())
def test_one_length_timeline_equals_the_segment_replay(n, length, slots, prompt, with_engine):
    cost = DecodeCost(f0=3 * 10**10, f1=2 * 10**6, prefill_flops=4 * 10**12,
                      weight_bytes=1.6e10, kv_bytes_per_token=1.3e5)
    engine = Engine(ARCH, Device(H100, Dtype.BF16), tp=1) if with_engine else None
    roof = Roofline(H100, 1, Dtype.BF16)
    waves = timeline(ARCH, prompt, (length,) * n, slots, cost, roof, engine)
    # a call of all n sequences admits the same way through the per-segment path
    segments = timeline(ARCH, prompt, (length,) * n, slots, cost, roof, engine, n)
    for f in fields(waves):
        assert getattr(waves, f.name) == getattr(segments, f.name), f.name
