"""Branch and bound over the RL candidates of a whole GPU budget (step 2 of
:mod:`rlmcost.plan.rl`).

Every candidate of every GPU count of the budget is screened at once
(:func:`rlmcost.plan.screen.screen`): those whose memory bound exceeds the device's HBM are
pruned (they cannot fit). The survivors are taken in the order of their objective's bound
(the time bound, or the GPUs, GPU-hours or throughput it implies) and evaluated exactly in
batches; a candidate is skipped, never evaluated, when its objective bound is worse than
the k-th best exact row found so far (rows that :func:`collapse` merges count once): it
cannot be among the top k. Since every exact row is at least its bound, the top k are those
of evaluating every survivor; the Pareto front is over the rows evaluated (the notes say
so). With engines apart, a candidate is skipped likewise by its engines' floor once a
candidate with the same engines has been evaluated: their predicted units, or their
generation plus the refit (:mod:`rlmcost.plan.engine_floor`; the order stays the screen's),
where that floor is also no faster than the fastest fitting row found on as many GPUs or
fewer (so the floor changes neither the top k nor the Pareto front over GPUs and time).
A KeyboardInterrupt (Ctrl-C) ends the loop: the rows found so far stand, with a note saying
the search was interrupted.

Past the top k, each topology (GPUs, family, groups: :attr:`RLCandidate.topology`) without a
fitting row yet has up to :data:`PER_TOPOLOGY_TRIES` of its candidates evaluated, the leanest
by the memory bound first (the likeliest to fit), one try of every topology per round (on
Dask the results of a round are then mostly back before the next is drawn), so the plan can
list a fitting deployment of every topology the users of each framework run (OpenRLHF's role
groups, engines apart, ...), not only the top k.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlmcost.plan.kinds import Objective
from rlmcost.plan.search import Counts, sort_key

if TYPE_CHECKING:
    from rlmcost.plan.distributed import Progress, Runner
    from rlmcost.plan.rl_candidates import RLCandidate, RLSpace
    from rlmcost.plan.rl_screened import Screened
    from rlmcost.run.spec import Run

PER_TOPOLOGY_TRIES = 4
"""Candidates of a topology still without a fitting row evaluated past the top k (its leanest
by the memory bound first): a fitting row of each topology that has one, bounded in cost."""


def slot_key(item: tuple[Any, ...]) -> tuple[int, str, int]:
    """A (position, candidate, ...)'s affinity on Dask (:class:`~rlmcost.plan.tasks.Slots`: the
    same key, the worker that kept its group estimates): its GPU count, its family with the
    overlap left out, and the trainer's TP. A group's estimate is keyed on the group, its
    GPUs and its own layout, not on the placement's staleness
    (:mod:`rlmcost.placement.group_key`: a synchronous and an overlapped deployment of the
    same groups share their estimates), so ``roles`` and ``async-roles`` on one GPU count
    meet the same estimates; the trainer's TP splits a count's candidates into parts of
    similar size whose trainer groups share nothing. Measured on the 2,562 candidates
    PPO Llama-3.1-70B on 16..64 A100s evaluates (``benchmarks/bench_plan.py``'s query, one
    process each, the group estimates computed and the Python calls counted, deterministic):
    by GPU count and family, 4 workers compute 2,471 group estimates and 1.34x the calls of
    one process (1,768 estimates); by this key 1,791 and 1.14x, the largest worker 27 % of
    the calls."""
    c = item[1]
    return c.gpus, c.family.removeprefix("async-"), c.tp


@dataclass
class _State:
    kth: tuple[Any, ...] = (float("inf"), float("inf"))  # the k-th best row's key so far
    pos: int = 0  # candidates of the order drawn (evaluated or skipped)

SAME_TIME = ("gpus", "family", "placement", "groups", "staleness", "tp", "pp", "cp", "ep", "sp",
             "zero", "ckpt", "micro_batch", "offload", "gpu_memory_utilization", "time_s")
"""What two rows share when :func:`collapse` merges them: all but the engine's TP and a
Megatron engine's KV pool (``kv_buffer_gib``)."""


@dataclass
class Found:
    """What a search found: counts, fitting rows, the families that never fit, notes."""

    counts: Counts
    rows: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    per_topology: dict[str, dict[str, Any]] = field(default_factory=dict)  # best fitting row
    interrupted: bool = False  # Ctrl-C ended the search: what follows should not start


def collapse(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """``rows`` (ranked) with those that differ only in the engine's TP or KV pool and have the
    same predicted time merged into one, at the first one's place, the smallest engine TP (a
    Megatron engine in the trainer's layout, 0, first), then the smallest pool kept; and how
    many were merged away."""
    out: list[dict[str, Any]] = []
    where: dict[tuple, int] = {}
    for r in rows:
        sig = signature(r)
        if sig in where:
            i = where[sig]
            if _engine_size(r) < _engine_size(out[i]):
                out[i] = r
            continue
        where[sig] = len(out)
        out.append(r)
    return out, len(rows) - len(out)


def _engine_size(row: dict[str, Any]) -> tuple[int, float]:
    """What :func:`collapse` keeps the smallest of: the engine's TP, then its KV pool."""
    return row["rollout_tp"] or 0, row.get("kv_buffer_gib") or 0.0


def signature(row: dict[str, Any]) -> tuple[Any, ...]:
    """What :func:`collapse` compares: the row's :data:`SAME_TIME` fields."""
    return tuple(row.get(k) for k in SAME_TIME)


class Ranking:
    """The exact rows found so far, kept sorted by (objective key, position in the order) as
    they arrive (one insertion each, not a sort of all rows per chunk), and the key of the
    ``top``-th row once :func:`collapse`'s merges are counted once: branch and bound's
    incumbent. Rows merged by :func:`collapse` share their time and GPUs, hence their key, so
    the ``top``-th distinct signature in this order is the ``top``-th row of
    ``collapse(ranked rows)``."""

    def __init__(self, key: Any, top: int) -> None:
        self.key, self.top = key, top
        self._rows: list[tuple[tuple[Any, ...], int, tuple[Any, ...]]] = []

    def add(self, position: int, row: dict[str, Any]) -> None:
        import bisect

        bisect.insort(self._rows, (self.key(row), position, signature(row)))

    def kth(self) -> tuple[Any, ...] | None:
        """The ``top``-th distinct row's key, None while fewer rows are known."""
        seen: set[tuple[Any, ...]] = set()
        for k, _, sig in self._rows:
            if sig not in seen:
                seen.add(sig)
                if len(seen) == self.top:
                    return k
        return None


def bound_keys(obj: Objective, gpus: Any, time_lb: Any, tokens: Any) -> tuple[Any, Any]:
    """Per candidate, the least (primary, secondary) sort key ``sort_key(obj)`` of its row can
    have, from its time bound (``tokens``: trained tokens per iteration); (-inf, -inf), never
    skipped, for an objective without a bound here."""
    import numpy as np

    g = gpus.astype(np.float64)
    if obj is Objective.TIME:
        return time_lb, g
    if obj is Objective.GPUS:
        return g, time_lb
    if obj is Objective.GPU_HOURS:
        return time_lb * g / 3600.0, g
    if obj is Objective.THROUGHPUT:
        with np.errstate(divide="ignore"):
            return np.where(time_lb > 0, -tokens / (time_lb * g), -np.inf), g
    low = np.full(g.shape, -np.inf)
    return low, low


def branch_and_bound(base: Run, space: RLSpace, budget: Sequence[int], run: Runner,
                     obj: Objective, top: int, progress: Progress | None,
                     ahead: tuple[Screened | None, Callable[[], None] | None] = (None, None),
                     ) -> Found:  # fmt: skip
    """The fitting rows that decide the top ``top`` and the Pareto front of ``budget``
    (module docstring), with the counts and the families that never fit. ``ahead``: this
    search's screen if it was computed already (:func:`rlmcost.plan.rl_screened.screened`),
    and what the client does while the workers finish this search's last tasks (the next
    search's screen, ``Runner.stream``'s ``meanwhile``)."""
    from rlmcost.plan.rl_screened import screened

    s = ahead[0] if ahead[0] is not None else screened(base, space, budget, obj)
    if s.todo is not None:
        _search(s.found, base, s.cands, s.todo, s.order, s.bounds, run, obj, top, progress,
                s.hbm, ahead[1])  # fmt: skip
    return s.found


def _search(found: Found, base: Run, cands: list[RLCandidate], todo: Any, order: Any,
            bounds: tuple[Any, Any, Any, Any, Any], run: Runner, obj: Objective, top: int,
            progress: Progress | None, hbm: int,
            meanwhile: Callable[[], None] | None = None) -> None:  # fmt: skip
    """The loop of :func:`branch_and_bound` over the survivors ``todo`` in ``order``
    (``bounds``: their time bounds, objective bound keys, memory bounds and engines' floors,
    :class:`~rlmcost.plan.engine_floor.EngineFloors`)."""
    from rlmcost.plan.floor_tasks import SKIPPED, Seen, evaluate_checked, search_token
    from rlmcost.plan.rl import _failed
    from rlmcost.plan.rl_rows import SourcedRow
    from rlmcost.plan.tasks import BARRIER

    counts, key = found.counts, sort_key(obj)
    _, prim, sec, memory, floors = bounds
    state = _State()
    ranking = Ranking(key, top)
    unknown: set[str] = set()  # families with skipped candidates: fit not known
    n = len(order)
    rows: list[tuple[int, dict[str, Any]]] = []  # (position in the order, row)
    fit: set[str] = set()  # families with a fitting row
    covered: set[str] = set()  # topologies with a fitting row
    skipped: list[int] = []  # positions past the top k's bound, not evaluated (yet)
    fastest: dict[int, float] = {}  # GPUs -> the fastest fitting row's time (the front)

    token = search_token()  # names this search's state on the workers (floor_tasks.Own)

    def seen() -> Seen:  # the state a task carries to its worker (floor_tasks)
        return Seen(obj, state.kth, dict(fastest), dict(floors.learned), token, top)

    def cand(p: int) -> RLCandidate:
        return cands[int(todo[int(order[p])])]

    def draws() -> Any:
        """The next (position, candidate) to evaluate, drawn against the incumbent at the
        time: first in the order of the bound while it can reach the top k; then, per
        topology still without a fitting row, its leanest candidates by the memory bound
        (module docstring)."""
        while state.pos < n:
            j = int(order[state.pos])
            if (prim[j], sec[j]) > state.kth:  # so are all after it (order by bound)
                skipped.extend(range(state.pos, n))
                state.pos = n
                break
            state.pos += 1
            front_s = min((t for g, t in fastest.items() if g <= cand(state.pos - 1).gpus),
                          default=float("inf"))  # the front's time at its GPU count so far
            if floors.beyond(j, state.kth, front_s):  # its engines' floor: past both too
                skipped.append(state.pos - 1)
                continue
            bound = float(prim[j]), float(sec[j])  # a worker checks it too, and the floor
            yield state.pos - 1, cand(state.pos - 1), floors.check(j, bound)
        yield BARRIER  # on Dask: every candidate the workers skipped is back in `skipped`
        by: dict[str, list[int]] = {}  # topology -> its skipped positions, leanest first
        for p in sorted(skipped, key=lambda p: (cand(p).topology, memory[int(order[p])], p)):
            by.setdefault(cand(p).topology, []).append(p)
        tried: set[int] = set()
        for round_ in range(PER_TOPOLOGY_TRIES):  # one try of each topology per round: on
            for topology, ps in by.items():  # workers, a round's fits are mostly known
                if round_ < len(ps) and topology not in covered:  # before the next one
                    tried.add(ps[round_])
                    yield ps[round_], cand(ps[round_]), None
        for p in skipped:
            if p not in tried:
                counts.bounded += 1
                unknown.add(cand(p).key)

    try:
        with closing(run.stream(evaluate_checked, draws(), shared=base, key=slot_key,
                                total=n, context=seen,
                                meanwhile=meanwhile)) as batches:  # fmt: skip
            for batch, results in batches:
                for (p, c, _), r in zip(batch, results, strict=True):
                    if r is SKIPPED:  # a worker's floor check (floor_tasks)
                        skipped.append(p)
                        continue
                    counts.evaluated += 1
                    floors.learn(int(order[p]), r)
                    if not r["fits"]:
                        _failed(found.failures, c.key, r, hbm)
                        continue
                    counts.fitting += 1
                    r = SourcedRow(r, base, c)  # its Run and command written if shown
                    rows.append((p, r))
                    ranking.add(p, r)
                    fit.add(c.key)
                    covered.add(c.topology)
                    fastest[c.gpus] = min(fastest.get(c.gpus, float("inf")), r["time_s"])
                    best = found.per_topology.get(c.topology)
                    if best is None or key(r) < key(best):
                        found.per_topology[c.topology] = r
                kth = ranking.kth()
                if kth is not None:
                    state.kth = kth
                if progress is not None:
                    progress(state.pos, n)
    except KeyboardInterrupt:
        found.interrupted = True
        found.notes.append(
            f"the search was interrupted (Ctrl-C) after {state.pos} of {n} candidates: the "
            "rows are the best found so far"
        )
    found.rows = [r for _, r in sorted(rows, key=lambda x: x[0])]  # the order of the bounds
    for k in unknown | fit:
        found.failures.pop(k, None)


def bounded_note(counts: Counts, obj: Objective, top: int) -> list[str]:
    """The note on the candidates branch and bound skipped (none when it skipped none)."""
    if not counts.bounded:
        return []
    return [f"branch and bound: candidates were evaluated in the order of their {obj} bound; "
            f"{counts.bounded} whose bound could not place them among the top {top} were "
            "skipped (every exact row is at least its bound: the screen's, or with engines "
            "apart the predicted units of the same engines, or their generation plus the "
            "refit, once one candidate with them was evaluated); the Pareto front is over the "
            "rows evaluated"]  # fmt: skip
