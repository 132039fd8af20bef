"""The steady-state length of an RL iteration whose invocations run on device groups.

Semantics (seed paper §IV-B, §IV-E; Table IV ‡ and the Table IX caption):

* inside a group (or on a link) the units run one after another in a fixed order, stage by
  stage and then in the algorithm's order: depths (or times) add;
* a stage starts when the previous stage has finished on every group (the stage barrier), so
  across groups the units of one stage run concurrently: the stage takes the longest group;
* iteration j + 1's first stage starts when iteration j - k's last stage has finished, k being
  the staleness: k = 0 is the synchronous loop ("iteration k + 1 cannot generate data until
  iteration k has completed Training", §IV-E); k >= 1 lets rollout read weights k iterations
  old, so rollout and training of different iterations overlap.

Each unit's start is the max over its predecessors of (their start + their weight), with
predecessors from ``shift`` iterations earlier: a max-plus linear recurrence. Its steady-state
period, the time (or depth) per iteration, is the maximum cycle mean of the precedence graph,
max over cycles of (sum of the weights on the cycle) / (sum of the shifts) (Cohen et al. 1985,
"A linear-system-theoretic view of discrete-event processes"; Karp 1978 for the numeric case).
Three kinds of cycle matter: a group's own units (shift 1: the group is busy that long every
iteration); the chain through the stages back to the first (shift k + 1: with k = 0 this is
the sum of the stage spans, the synchronous iteration); and mixtures of both. So the
synchronous period is the sum of the stages' spans, and with k >= 1 and rollout and training
on different groups it is max(generation + assessment, training) instead of their sum.

The same code evaluates numbers (seconds, exact depths) and sympy expressions (Table IX); for
the latter :func:`period` leaves out cycles that another cycle provably dominates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

from rlmcost.algorithms.kinds import Stage
from rlmcost.frozen import dataclass
from rlmcost.placement.cycle_means import means_function as _means_function


@dataclass(frozen=True)
class Unit:
    """Something that occupies a ``resource`` (a group or a link) for ``weight`` per iteration.

    ``stage``: the stage it belongs to; None for a transfer that belongs to no stage (weight
    synchronization on a link). ``barrier``: it takes part in the stage barriers (task units do;
    resharding and offload units sit in their group's order in front of the task they serve).
    """

    key: str
    resource: str
    stage: Stage | None
    weight: Any
    barrier: bool = True


@dataclass(frozen=True)
class Edge:
    """``dst`` of iteration j may start ``src``'s weight after ``src`` of iteration j - shift."""

    src: str
    dst: str
    shift: int


@dataclass(frozen=True)
class Cycle:
    """A simple cycle of the precedence graph: its units and its total shift."""

    keys: tuple[str, ...]
    shift: int

    def mean(self, weights: Mapping[str, Any]) -> Any:
        return sum((weights[k] for k in self.keys), 0) / self.shift


_ORDER: dict[Stage | None, int] = {s: i for i, s in enumerate(Stage)}
_ORDER[None] = len(Stage)


def _stage_order(stage: Stage | None) -> int:
    return _ORDER[stage]


Link = tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""A weight synchronization: (its unit's key, the train unit it follows, the units that read
what it sends, the units that wait for it to end before their next iteration, the first and
last unit of a group that pauses for it). A paused group (the engines of a framework's refit)
runs the transfer between two of its iterations: the transfer of iteration j starts after the
group's last unit of iteration j + k (the last work begun on older weights) and its first unit
of iteration j + k + 1 after the transfer, so per iteration the group is busy with its own
units and the transfer (a cycle of shift 1)."""


def freeze_links(links: Sequence[Sequence[Any]]) -> tuple[Link, ...]:
    """``links`` as :data:`Link` tuples (missing entries: nothing waits, nothing pauses)."""
    return tuple((str(x[0]), str(x[1]), tuple(x[2]), tuple(x[3]) if len(x) > 3 else (),
                  tuple(x[4]) if len(x) > 4 else ()) for x in links)  # fmt: skip


def edges(units: Sequence[Unit], staleness: int, links: Sequence[Sequence[Any]] = ()) -> list[Edge]:
    """The precedence edges (module docstring). Units of one resource run in the given order.

    ``links`` (:data:`Link`): the readers of iteration j wait for the transfer after iteration
    j - k - 1's training; the waiters of iteration j + 1 wait for the transfer of iteration j
    (a trainer that blocks on its own refit: NeMo RL's ``async_grpo_train`` calls
    ``refit_policy_generation`` in its loop, verl's fully-async trainer ``ray.get``s
    ``sync_weights``; :mod:`rlmcost.placement.iteration`); a paused group's last unit of
    iteration j + k precedes the transfer of iteration j (a shift of -k) and the transfer its
    first unit of iteration j + k + 1.
    The edges depend on the units' keys, resources, stages and barriers, not on their
    weights, so they are memoized on those (a GPU-split search reuses them).
    """
    shape = tuple((u.key, u.resource, u.stage, u.barrier) for u in units)
    return list(_edges(shape, staleness, freeze_links(links)))


@cache
def _edges(
    shape: tuple[tuple[str, str, Stage | None, bool], ...],
    staleness: int,
    links: tuple[Link, ...],
) -> tuple[Edge, ...]:
    units = [Unit(key, resource, stage, 0, barrier) for key, resource, stage, barrier in shape]
    out: list[Edge] = []
    by_resource: dict[str, list[Unit]] = {}
    for u in units:
        by_resource.setdefault(u.resource, []).append(u)
    for seq in by_resource.values():
        for a, b in zip(seq, seq[1:], strict=False):
            out.append(Edge(a.key, b.key, 0))
        out.append(Edge(seq[-1].key, seq[0].key, 1))
    staged = [u for u in units if u.barrier and u.stage is not None]
    present = sorted({u.stage for u in staged}, key=_stage_order)
    for s, t in zip(present, present[1:], strict=False):
        for a in (u for u in staged if u.stage is s):
            for b in (u for u in staged if u.stage is t):
                out.append(Edge(a.key, b.key, 0))
    if present:
        lasts = [u for u in staged if u.stage is present[-1]]
        firsts = [u for u in staged if u.stage is present[0]]
        for a in lasts:
            for b in firsts:
                out.append(Edge(a.key, b.key, staleness + 1))
    for key, after, readers, waiters, paused in links:
        out.append(Edge(after, key, 0))
        for r in readers:
            out.append(Edge(key, r, staleness + 1))
        for w in waiters:
            out.append(Edge(key, w, 1))
        if paused:
            out.append(Edge(paused[-1], key, -staleness))
            out.append(Edge(key, paused[0], staleness + 1))
    # a resource's order edges may repeat barrier edges; keep the smallest shift per pair
    best: dict[tuple[str, str], int] = {}
    for e in out:
        best[(e.src, e.dst)] = min(best.get((e.src, e.dst), e.shift), e.shift)
    return tuple(Edge(s, d, k) for (s, d), k in best.items())


def simple_cycles(keys: Sequence[str], graph: Sequence[Edge]) -> list[Cycle]:
    """Every simple cycle, each once (rooted at its first key in ``keys`` order), with the
    smallest shift among parallel edges. Fine for the tens of units an iteration has."""
    return list(_simple_cycles(tuple(keys), tuple(graph)))


@cache
def _simple_cycles(keys: tuple[str, ...], graph: tuple[Edge, ...]) -> tuple[Cycle, ...]:
    order = {k: i for i, k in enumerate(keys)}
    succ: dict[str, list[tuple[str, int]]] = {k: [] for k in keys}
    for e in graph:
        succ[e.src].append((e.dst, e.shift))
    cycles: list[Cycle] = []
    for root in keys:
        r = order[root]
        stack: list[tuple[str, tuple[str, ...], int]] = [(root, (root,), 0)]
        while stack:
            node, path, shift = stack.pop()
            for nxt, s in succ[node]:
                if nxt == root:
                    cycles.append(Cycle(path, shift + s))
                elif order[nxt] > r and nxt not in path:
                    stack.append((nxt, (*path, nxt), shift + s))
    return tuple(c for c in cycles if c.shift > 0)


@cache
def _cycle_means(
    keys: tuple[str, ...], graph: tuple[Edge, ...]
) -> tuple[tuple[Cycle, ...], Callable[[Mapping[str, Any]], list[Any]]]:
    """The simple cycles and one function of the weights giving every cycle's
    :meth:`Cycle.mean`, computed as it computes it: ``sum((w_a, w_b, ...), 0) / shift``, the
    cycle's weights in its order. The function is written out once per graph (its source:
    one local per unit, one expression per cycle), since an iteration's schedule evaluates
    its few tens of cycles five times per deployment."""
    cycles = _simple_cycles(keys, graph)
    return cycles, _means_function(keys, cycles, {k: repr(k) for k in keys})


def _dominated(c: Cycle, others: Sequence[Cycle], bits: Mapping[str, int]) -> bool:
    """True when ``c``'s mean can never exceed the maximum of the others' (weights >= 0):
    cycles of total shift <= ``c.shift`` visit all its units (one cycle visiting a superset
    with no larger shift, or several, e.g. the groups' own cycles of shift 1 each). Then
    sum(c) <= sum of theirs <= (their shifts) x (their largest mean) <= c.shift x that mean."""
    mask = sum(bits[k] for k in c.keys)
    masks = [
        (sum(bits[k] for k in o.keys), o.shift) for o in others if o is not c and o.shift <= c.shift
    ]
    for m, shift in masks:  # one cycle: strictly wider, or as wide with a smaller shift
        if mask & ~m == 0 and (m != mask or shift < c.shift):
            return True

    def cover(left: int, budget: int) -> bool:
        if left == 0:
            return True
        low = left & -left
        return any(
            cover(left & ~m, budget - shift)
            for m, shift in masks
            if m & low and shift <= budget and shift < c.shift
        )

    return c.shift > 1 and cover(mask, c.shift)


@dataclass(frozen=True)
class Period:
    """The steady-state time (or depth) of one iteration and the cycle that sets it."""

    value: Any
    cycle: Cycle | None  # numeric: the critical cycle; symbolic: None
    cycles: tuple[Cycle, ...]


def period(units: Sequence[Unit], graph: Sequence[Edge], symbolic: bool = False) -> Period:
    """The maximum cycle mean (module docstring).

    Numeric weights: the exact max and its cycle. Symbolic weights: ``sympy.Max`` over the
    cycles no other cycle dominates.
    """
    keys = [u.key for u in units]
    weights = {u.key: u.weight for u in units}
    if not symbolic:
        return max_cycle_mean(tuple(keys), weights, tuple(graph))
    cycles = simple_cycles(keys, graph)
    import sympy as sp

    bits = {k: 1 << i for i, k in enumerate(keys)}
    kept = [c for c in cycles if not _dominated(c, cycles, bits)]
    means = list(dict.fromkeys(sp.expand(c.mean(weights)) for c in kept))
    value = sp.Max(*means, evaluate=False) if len(means) > 1 else means[0]
    return Period(value, None, tuple(kept))


def max_cycle_mean(
    keys: tuple[str, ...], weights: Mapping[str, Any], graph: tuple[Edge, ...]
) -> Period:
    """:func:`period` of numeric weights given per unit key: the largest cycle mean, among
    equals the smallest shift, then the last keys."""
    found, cycle_means = _cycle_means(keys, graph)
    return _critical(found, cycle_means(weights))


def _critical(found: tuple[Cycle, ...], means: list[Any]) -> Period:
    """The largest of the cycles' ``means``; among equals the smallest shift, then the last
    keys."""
    top = max(means)
    if top == top and means.count(top) == 1:  # a single largest (not NaN)
        i = means.index(top)
        return Period(means[i], found[i], found)
    tied = [i for i, m in enumerate(means) if m == top]
    i = tied[0] if len(tied) == 1 else max(
        tied, key=lambda i: (means[i], -found[i].shift, found[i].keys)
    )  # fmt: skip
    return Period(means[i], found[i], found)


def stage_spans(units: Sequence[Unit]) -> dict[Stage, Any]:
    """Each stage's span: the longest of the groups' sums of that stage's units (barrier units
    and the resharding or offload units in front of them)."""
    spans: dict[Stage, dict[str, Any]] = {}
    for u in units:
        if u.stage is None:
            continue
        per = spans.setdefault(u.stage, {})
        per[u.resource] = per.get(u.resource, 0) + u.weight
    out: dict[Stage, Any] = {}
    for stage in sorted(spans, key=_stage_order):
        values = list(spans[stage].values())
        if all(_is_number(v) for v in values):
            out[stage] = max(values)
        else:
            import sympy as sp

            out[stage] = sp.Max(*values, evaluate=False) if len(values) > 1 else values[0]
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) or bool(getattr(v, "is_number", False))
