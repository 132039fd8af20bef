"""The runs of a decode timeline and their sums (:func:`rlmcost.placement.rollout.timeline`).

Between two admissions or finishes the same sequences are in flight (a :class:`Run`); which
steps those are, how many are in flight and their contexts' sum at a run's first step follow
from the admission schedule's integer step counters alone, before any time is known: the
in-flight count and the context sum change at the bounds by fixed amounts (``change``,
``context_change``), and within a run the contexts grow by the number in flight per step.
Every run's sums are then independent of the others', and the replica's clock is their
running total with each admission step's prefill before it.

Two forms, equal to the last bit (tests/test_decode_runs.py):

* run by run in Python (:func:`_run_sums`, the sums of a run like an earlier one reused);
* at the datasheet peak with many runs (at least :data:`NUMPY_RUNS`), all runs at once with
  numpy: the lines of every run as arrays, their upper envelopes
  (:func:`rlmcost.placement.envelope.sums_of_max`, the same operations in the same order as
  :func:`~rlmcost.placement.envelope.sum_of_max`), the clock and the totals as cumulative sums
  (``numpy.cumsum`` adds left to right, as the loop does). A measured efficiency profile
  depends on each step's size and stays step by step in Python.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from math import fsum
from typing import TYPE_CHECKING, Any, NamedTuple

from rlmcost.frozen import dataclass
from rlmcost.placement.envelope import line_sum, sum_of_max, sums_of_max
from rlmcost.timing import Peak

if TYPE_CHECKING:
    from rlmcost.perf.generation import Engine
    from rlmcost.placement.rollout import DecodeCost
    from rlmcost.timing import Roofline

NUMPY_RUNS = (16384, 128)
"""Runs from which a timeline's sums are taken with numpy: while numpy is not loaded, the runs
the Python loop has summed in this process (:data:`_LOOPED`) plus this timeline's (import it
once the loop has spent about what the import costs); once it is, this timeline's. Measured (CPU
seconds, CPython 3.11.7, numpy 2, the 2-core development machine, December 2026, Llama-3.1-8B
on H100s): importing numpy 0.13 s; the Python loop 11-18 us per run (``grpo -m 8b --gpus 16 -B
100000``: one paged timeline of 8,321 runs, 0.14-0.16 s), the numpy form 2-4 us per run
(mostly making the :class:`Run` tuples; that timeline 0.035 s) plus 0.3 ms per call, 1 ms
with an engine's prediction (even at 64 runs, ahead at 256). The numeric queries that
tests/test_compiled_invocation.py keeps free of numpy have at most 832 runs."""

NUMPY_SEGMENTS = 65536
"""Segments of a timeline from which its changes by step (:func:`segment_bounds`) and its
prefill phases (:mod:`rlmcost.placement.prefills`) are summed with numpy while numpy is not
loaded yet (once it is, from 64). Measured (CPU seconds, CPython 3.11.7, numpy 2, the 2-core
development machine under load, December 2026, a 69,198-segment replay of ``grpo -m 8b --gpus
16 -B 512 -K 16 -T 8192 --placement async``): the changes by step 0.87 us per segment in
dictionaries, 0.23 us with numpy; the prefill phases 2.0 and 0.57 us; importing numpy 0.13 s:
ahead from about 60,000 segments."""

_LOOPED = [0]  # runs summed by the Python loop at the datasheet peak in this process

INT64_SAFE = 2**62
"""The largest FLOP count per step the numpy form computes in int64 (a larger one, or a
context sum as large, falls back to Python's exact integers)."""


class Run(NamedTuple):
    """Decode steps ``first`` .. ``last`` (1-based, the replica's clock) with the same
    ``active`` sequences in flight: no admission or finish inside. Their contexts sum to
    ``context`` at step ``first`` and grow by ``active`` per step. A named tuple: a long
    rollout makes one per admission or finish (a frozen dataclass takes 3 us to make, this
    0.5 us)."""

    first: int
    last: int
    active: int
    context: int
    bound_s: float  # sum of the steps' roofline bounds
    idle_s: float  # sum of bound - compute: compute seconds left unused
    end_s: float  # the replica's time when the run's last step ends (prefills included)


class Runs(NamedTuple):
    """The runs of a timeline column by column (:class:`Run`'s fields, one tuple each): what
    :func:`bound_runs` makes, and :meth:`rows` the :class:`Run` tuples, made when a report
    reads them (a replay under KV pressure has 10^4 - 10^5 runs per timeline)."""

    first: tuple[int, ...]
    last: tuple[int, ...]
    active: tuple[int, ...]
    context: tuple[int, ...]
    bound_s: tuple[float, ...]
    idle_s: tuple[float, ...]
    end_s: tuple[float, ...]

    def rows(self) -> list[Run]:
        return list(map(Run._make, zip(*self, strict=True)))


class Bounds(NamedTuple):
    """The steps after which the in-flight count or the contexts' sum changes (ascending; a
    step with no net change still ends a run), with the changes there: Python lists, or int64
    arrays (:func:`segment_bounds` of many segments)."""

    steps: Any
    change: Any
    context_change: Any


def bounds_of(change: Counter[int], context_change: Counter[int]) -> Bounds:
    """:class:`Bounds` of the changes by step."""
    steps = sorted(change.keys() | context_change.keys())
    return Bounds(steps, [change[x] for x in steps], [context_change[x] for x in steps])


def use_numpy(segments: int) -> bool:
    """Whether a timeline's segments are summed with numpy (:data:`NUMPY_SEGMENTS`)."""
    return segments >= NUMPY_SEGMENTS or (segments > 64 and "numpy" in sys.modules)


def segment_bounds(starts: Sequence[int], ends: Sequence[int], contexts: Sequence[int]
                   ) -> Bounds:  # fmt: skip
    """:class:`Bounds` of segments by their columns (``Segment.start``, ``end``, ``context``):
    one more in flight after its start step, its first decode attending ``context`` + 1
    positions; one less after its end step, less ``context`` + 1 + its steps. With numpy
    (sorted once, summed per step in int64) from :data:`NUMPY_SEGMENTS` segments or when numpy
    is loaded, where the contexts stay far inside int64; else dictionaries in Python."""
    k = len(starts)
    top = max(contexts) + max(ends) + 1 if k else 0
    if use_numpy(k) and top * 2 * k < INT64_SAFE:
        import numpy as np

        st, en, cx = (np.array(x, dtype=np.int64) for x in (starts, ends, contexts))
        step = np.concatenate([st, en])
        order = np.argsort(step, kind="stable")
        step = step[order]
        first = np.flatnonzero(np.concatenate([[True], step[1:] != step[:-1]]))
        ones = np.ones(k, dtype=np.int64)
        in_flight = np.add.reduceat(np.concatenate([ones, -ones])[order], first)
        grown = np.concatenate([cx + 1, -(cx + 1 + en - st)])
        return Bounds(step[first], in_flight, np.add.reduceat(grown[order], first))
    change: dict[int, int] = {}
    context: dict[int, int] = {}
    for s0, s1, c in zip(starts, ends, contexts, strict=True):
        change[s0] = change.get(s0, 0) + 1
        change[s1] = change.get(s1, 0) - 1
        context[s0] = context.get(s0, 0) + c + 1
        context[s1] = context.get(s1, 0) - (c + 1 + s1 - s0)
    steps = sorted(change)
    return Bounds(steps, list(map(change.__getitem__, steps)),
                  list(map(context.__getitem__, steps)))  # fmt: skip


@dataclass(frozen=True)
class _RunSums:
    compute_s: float
    memory_s: float
    bound_s: float
    compute_bound_s: float
    predicted_s: float


def _peak_lines(roofline: Roofline, cost: DecodeCost, active: Any, context: Any) -> tuple[
    tuple[Any, Any], tuple[Any, Any], tuple[float, float]
]:  # fmt: skip
    """The compute, memory and link lines ``(value at k = 0, slope per step)`` of a run's decode
    steps at the datasheet peak (:func:`_run_sums`): ``active`` and ``context`` Python ints for
    one run or int64 arrays for all (:func:`_numpy_runs`), the same operations either way."""
    g = cost.tokens_per_step  # tokens per engine step (speculative decoding; else 1)
    rc = roofline.gpus * roofline.peak_flops_per_s * g
    rb = roofline.hardware.hbm_bandwidth_bytes_per_s * g
    kv = cost.kv_bytes_per_token
    compute = ((active * cost.f0 + cost.f1 * context) / rc, cost.f1 * active / rc)
    memory = ((cost.weight_bytes + kv * context) / rb, kv * active / rb)
    return compute, memory, (cost.gather_s / g, 0.0)


def _run_sums(
    roofline: Roofline, cost: DecodeCost, engine: Engine | None, active: int, context: int, n: int
) -> _RunSums:
    """Sums over the ``n`` decode steps of a run (``active`` in flight, contexts summing to
    ``context`` + ``active`` k at its k-th step).

    At the datasheet peak every per-step time is linear in k (FLOPs a f0 + f1 c, bytes
    weights + kv c, the engine's step fixed(a) + s c; each over ``cost.tokens_per_step``),
    so the bound and the prediction are sums
    of upper envelopes of lines, in closed form (:mod:`rlmcost.placement.envelope`). A
    measured efficiency profile depends on each step's size, so it is summed step by step."""
    g = cost.tokens_per_step  # tokens per engine step (speculative decoding; else 1)
    if isinstance(roofline.efficiency, Peak):
        compute, memory, link = _peak_lines(roofline, cost, active, context)
        bound_s, parts = sum_of_max([compute, memory, link], n)
        compute_bound = sum(line_sum(compute, k0, k1) for k0, k1, i in parts if i == 0)
        predicted = bound_s
        if engine is not None:
            fixed, per_token = engine.decode_step_parts(active)
            step = (fixed + per_token * context, per_token * active)
            launch = (engine.launch_floor_s(active), 0.0)  # eager launches, streamed host floor
            predicted = sum_of_max([step, launch, compute, memory, link], n)[0]
        return _RunSums(
            line_sum(compute, 0, n), line_sum(memory, 0, n), bound_s, compute_bound, predicted
        )
    contexts = [context + active * k for k in range(n)]
    flops = [float(active) * cost.f0 + cost.f1 * float(c) for c in contexts]
    mem = [cost.weight_bytes + cost.kv_bytes_per_token * float(c) for c in contexts]
    compute_l, memory_l = roofline.seconds(flops, mem)
    if g != 1.0:
        compute_l, memory_l = [c / g for c in compute_l], [m / g for m in memory_l]
    bound = [max(c, m, cost.gather_s / g) for c, m in zip(compute_l, memory_l, strict=True)]
    pred = bound
    if engine is not None:
        pred = [
            max(engine.decode_step_s(active, c), b) for c, b in zip(contexts, bound, strict=True)
        ]
    return _RunSums(
        fsum(compute_l),
        fsum(memory_l),
        fsum(bound),
        fsum(b for c, b in zip(compute_l, bound, strict=True) if c >= b),
        fsum(pred),
    )


def decode_runs(
    change: Counter[int],
    context_change: Counter[int],
    prefill_before: dict[int, float],
    roofline: Roofline,
    cost: DecodeCost,
    engine: Engine | None,
    vectorize: bool | None = None,
) -> tuple[list[Run], list[float]]:
    """:func:`bound_runs` of the changes by step (``change``: in flight, ``context_change``:
    the contexts' sum, after each step), its runs as :class:`Run` tuples."""
    runs, totals = bound_runs(bounds_of(change, context_change), prefill_before, roofline, cost,
                              engine, vectorize)  # fmt: skip
    return runs.rows(), totals


def bound_runs(
    bounds: Bounds,
    prefill_before: dict[int, float],
    roofline: Roofline,
    cost: DecodeCost,
    engine: Engine | None,
    vectorize: bool | None = None,
) -> tuple[Runs, list[float]]:
    """The runs between the bounds (:class:`Bounds`), with each admission step's prefill
    seconds (``prefill_before``) on the clock, and the totals over the runs (compute, memory,
    bound, compute-bound, predicted seconds). ``vectorize``: numpy (True), Python (False), or
    by the number of runs (None: from :data:`NUMPY_RUNS` at the datasheet peak)."""
    n_bounds = len(bounds.steps)
    peak = isinstance(roofline.efficiency, Peak)
    if vectorize is None:
        loaded = "numpy" in sys.modules
        vectorize = peak and (0 if loaded else _LOOPED[0]) + n_bounds > NUMPY_RUNS[loaded]
    if vectorize and peak:
        out = _numpy_runs(bounds, prefill_before, roofline, cost, engine)
        if out is not None:
            return out
    if peak:
        _LOOPED[0] += n_bounds
    steps, changes, context_changes = (x if isinstance(x, list) else x.tolist() for x in bounds)
    cols: list[list[Any]] = [[] for _ in Runs._fields]
    first, last, in_flight, contexts, bound, idle, end = cols
    seen: dict[tuple[int, int, int], _RunSums] = {}
    totals = [0.0] * 5
    active, context, clock = 0, 0, 0.0
    for b0, b1, dc, dx in zip(steps, steps[1:], changes, context_changes, strict=False):
        active += dc
        context += dx  # the contexts' sum at step b0 + 1
        if active == 0:
            continue
        n_steps = b1 - b0
        sums = seen.get((active, context, n_steps))
        if sums is None:
            sums = seen[active, context, n_steps] = _run_sums(roofline, cost, engine, active,
                                                              context, n_steps)  # fmt: skip
        clock += prefill_before.get(b0, 0.0) + sums.bound_s
        first.append(b0 + 1)
        last.append(b1)
        in_flight.append(active)
        contexts.append(context)
        bound.append(sums.bound_s)
        idle.append(sums.bound_s - sums.compute_s)
        end.append(clock)
        for i, v in enumerate((sums.compute_s, sums.memory_s, sums.bound_s, sums.compute_bound_s,
                               sums.predicted_s)):  # fmt: skip
            totals[i] += v
        context += active * n_steps  # every in-flight sequence attended one more position
    return Runs(*map(tuple, cols)), totals


def _numpy_runs(
    bounds: Bounds,
    prefill_before: dict[int, float],
    roofline: Roofline,
    cost: DecodeCost,
    engine: Engine | None,
) -> tuple[Runs, list[float]] | None:
    """:func:`bound_runs` at the datasheet peak, all runs at once (module docstring); None
    where a step's FLOPs or contexts could leave int64 (the Python form then)."""
    import numpy as np

    b = np.asarray(bounds.steps, dtype=np.int64)
    active = np.cumsum(np.asarray(bounds.change[:-1], dtype=np.int64))
    n = np.diff(b)
    # the contexts' sum at each run's first step: the changes so far, plus every earlier
    # run's growth (its in-flight count per step)
    context = np.cumsum(np.asarray(bounds.context_change[:-1], dtype=np.int64))
    grown = np.cumsum(active * n)
    context[1:] += grown[:-1]
    keep = active != 0
    active, context, n, b0 = active[keep], context[keep], n[keep], b[:-1][keep]
    top_context = int((context + active * n).max())
    if int(active.max()) * cost.f0 + cost.f1 * top_context >= INT64_SAFE or top_context >= 2**53:
        return None
    compute, memory, link = _peak_lines(roofline, cost, active, context)
    bound, compute_bound = sums_of_max([compute, memory, link], n)
    predicted = bound
    if engine is not None:
        distinct, where = np.unique(active, return_inverse=True)
        parts = [engine.decode_step_parts(int(a)) for a in distinct]
        fixed = np.array([f for f, _ in parts])[where]
        per_token = np.array([s for _, s in parts])[where]
        launch = np.array([engine.launch_floor_s(int(a)) for a in distinct])[where]
        step = (fixed + per_token * context, per_token * active)
        predicted = sums_of_max([step, (launch, 0.0), compute, memory, link], n)[0]
    compute_s = n * compute[0] + compute[1] * (n - 1) * n / 2  # line_sum(compute, 0, n)
    memory_s = n * memory[0] + memory[1] * (n - 1) * n / 2
    # each admission step's prefill before its run (every one starts a run: a sequence
    # enters there)
    before = np.zeros(len(b0))
    if prefill_before:
        at = np.fromiter(prefill_before.keys(), dtype=np.int64, count=len(prefill_before))
        where_at = np.minimum(np.searchsorted(b0, at), len(b0) - 1)
        hit = b0[where_at] == at
        before[where_at[hit]] = np.fromiter(prefill_before.values(), dtype=np.float64,
                                            count=len(prefill_before))[hit]  # fmt: skip
    clock = np.cumsum(before + bound)
    runs = Runs(*(tuple(x.tolist()) for x in (b0 + 1, b0 + n, active, context, bound,
                                              bound - compute_s, clock)))  # fmt: skip
    totals = [float(np.cumsum(x)[-1]) for x in (compute_s, memory_s, bound, compute_bound,
                                                predicted)]  # fmt: skip
    return runs, totals
