"""Schedule templates: the numeric schedule of one shape of units built once and reused for
every deployment with that shape (the weights change, the graph and its cycles do not), equal
bit for bit to :func:`rlmcost.placement.schedule.period` and
:func:`~rlmcost.placement.schedule.stage_spans` of the same units. Split from
:mod:`rlmcost.placement.schedule` by purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from rlmcost.algorithms.kinds import Stage
from rlmcost.frozen import dataclass
from rlmcost.memo import enabled, table
from rlmcost.placement.cycle_means import means_function as _means_function
from rlmcost.placement.schedule import (
    Cycle,
    Edge,
    Link,
    Period,
    _critical,
    _edges,
    _simple_cycles,
    _stage_order,
    freeze_links,
)

Shape = tuple[tuple[str, str, "Stage | None", bool], ...]
"""Units less their weights: (key, resource, stage, barrier) each, in order."""


@dataclass(frozen=True)
class Template:
    """The numeric schedule of one shape of units (:data:`Shape`), staleness and links: all
    that does not depend on the weights, built once (:func:`template`). Its :meth:`period`
    and :meth:`stage_spans` of weights given in the units' order are :func:`period` and
    :func:`stage_spans` of the units with those weights, computed the same way (the same
    sums in the same order), so the numbers are equal bit for bit."""

    keys: tuple[str, ...]
    graph: tuple[Edge, ...]
    cycles: tuple[Cycle, ...]
    ranked: tuple[Cycle, ...]  # the cycles in the order ``_critical`` prefers among equals
    ranked_means: Callable[[Sequence[Any]], list[Any]]  # their means, in that order
    position: tuple[int, ...]  # cycle i's place in ``ranked``
    spans: tuple[tuple[Stage, tuple[tuple[int, ...], ...]], ...]
    resource_of: Mapping[str, str]
    span_sums: Callable[[Sequence[Any]], dict[Stage, Any]]  # the spans, :func:`_spans_function`
    largest: Callable[[Sequence[Any]], Any]  # the largest mean, over :func:`undominated`
    largest3: Callable[..., tuple[Any, Any, Any]]  # ``largest`` of three vectors at once

    def means(self, weights: Sequence[Any]) -> list[Any]:
        """Every cycle's mean, in :attr:`cycles` order."""
        ranked = self.ranked_means(weights)
        return [ranked[p] for p in self.position]

    def period(self, weights: Sequence[Any]) -> Period:
        """:func:`period` of numeric ``weights`` (one per unit, in order). For weights >= 0
        of one type (all floats or all ints, none NaN, as schedule weights are) the means
        in :attr:`ranked` order, where the first mean equal to the largest is the cycle
        ``_critical`` picks among the cycles of that mean (the smallest shift, then the
        last keys, then the first found): the same cycle and number, without the tie-break's
        sort; other weights take ``_critical`` itself. Kept (:meth:`_recall`)."""
        return self._recall("period", weights)

    def value(self, weights: Sequence[Any]) -> Any:
        """``period(weights).value``: the largest cycle mean (equal means are equal numbers,
        all sums starting from 0, so the tie-break of :meth:`period` does not change it),
        over the cycles no other dominates (:func:`undominated`: the same number for weights
        >= 0 of one type, all floats or all ints, as schedule weights are; others take every
        cycle). Kept (:meth:`_recall`)."""
        return self._recall("value", weights)

    def values3(self, a: Sequence[Any], b: Sequence[Any], c: Sequence[Any]) -> tuple[Any, ...]:
        """``(value(a), value(b), value(c))``, the same numbers: where all three are floats
        >= 0, one call of :attr:`largest3` (``largest``'s lines once per vector), computed
        afresh (finding three kept values cost more than it saved: 81 % of them were not
        kept in the planner's sweep), ``value(a)`` then kept as :meth:`value` keeps it (an
        overlapped loop's in-turn comparison reads it); otherwise :meth:`value` each."""
        weights = (a, b, c)
        if not enabled() or not all(set(map(type, w)) == _FLOATS and min(w) >= 0
                                    for w in weights):  # fmt: skip
            return tuple(self.value(w) for w in weights)
        out = self.largest3(a, b, c)
        if len(KEPT) >= MAX_KEPT:
            KEPT.clear()
        KEPT[(id(self), "value", False, tuple(a))] = (self, out[0])
        return out

    def _recall(self, what: str, weights: Sequence[Any]) -> Any:
        """:meth:`period` or :meth:`value` (``what``) of ``weights``, kept (:data:`KEPT`) per
        template by the weights' values where they are all ints or all floats (an equal tuple
        of one type gives the same sums; the planner sweep's 3,264 deployments weigh their
        depths 22 ways and their bounds 1,520; none kept inside
        :func:`rlmcost.memo.plain`)."""
        kinds = set(map(type, weights))
        one = kinds == _FLOATS or kinds == _INTS
        if not one or not enabled():
            return self._period(weights, kinds) if what == "period" else \
                self._value(weights, kinds)  # fmt: skip
        key = (id(self), what, kinds == _INTS, tuple(weights))
        hit = KEPT.get(key)
        if hit is not None and hit[0] is self:
            return hit[1]
        out = self._period(weights, kinds) if what == "period" else \
            self._value(weights, kinds)  # fmt: skip
        if len(KEPT) >= MAX_KEPT:
            KEPT.clear()
        KEPT[key] = (self, out)
        return out

    def _period(self, weights: Sequence[Any], kinds: set[type]) -> Period:
        if (kinds == _FLOATS or kinds == _INTS) and min(weights) >= 0 and _no_nan(weights):
            means = self.ranked_means(weights)
            i = means.index(max(means))
            return Period(means[i], self.ranked[i], self.cycles)
        return _critical(self.cycles, self.means(weights))

    def _value(self, weights: Sequence[Any], kinds: set[type]) -> Any:
        if (kinds == _FLOATS or kinds == _INTS) and min(weights) >= 0:
            return self.largest(weights)
        return max(self.means(weights))

    def stage_spans(self, weights: Sequence[Any]) -> dict[Stage, Any]:
        """:func:`stage_spans` of numeric ``weights`` (one per unit, in order)."""
        return self.span_sums(weights)


_FLOATS, _INTS = {float}, {int}  # weights of one type (Template.value)
KEPT: dict[tuple[Any, ...], tuple[Template, Any]] = table()
"""Templates' periods and values by the weights' values (``Template._recall``; the template
kept beside its value, so that its id is not reused); emptied by
:func:`rlmcost.memo.clear_all`."""
MAX_KEPT = 65536
"""Periods and values kept before the table starts over."""


def _no_nan(weights: Sequence[Any]) -> bool:
    """No NaN among ``weights`` (>= 0 but for a NaN, which ``min`` may pass over): their sum
    is then a number (additions of numbers >= 0 give no NaN, and a NaN stays one)."""
    total = sum(weights)
    return bool(total == total)


def _tie_order(cycles: Sequence[Cycle]) -> tuple[int, ...]:
    """The cycles' indices in the order ``schedule._critical`` prefers among cycles of one
    mean (``max`` by (-shift, keys), the first of equals): the smallest shift, then the last
    keys, equals in their order (a stable sort, descending)."""
    return tuple(sorted(range(len(cycles)), key=lambda i: (-cycles[i].shift, cycles[i].keys),
                        reverse=True))  # fmt: skip


@lru_cache(maxsize=4096)
def template(shape: Shape, staleness: int, links: tuple[Link, ...] = ()) -> Template:
    """The :class:`Template` of ``shape`` (:func:`edges`' graph, its simple cycles, the
    stages' parts), kept per shape."""
    keys = tuple(k for k, _, _, _ in shape)
    graph = _edges(shape, staleness, freeze_links(links))
    cycles = _simple_cycles(keys, graph)
    last = {k: i for i, k in enumerate(keys)}  # a repeated key weighs as its last unit
    index = {k: str(i) for k, i in last.items()}
    order = _tie_order(cycles)
    ranked = tuple(cycles[i] for i in order)
    position = [0] * len(order)
    for place, i in enumerate(order):
        position[i] = place
    parts: dict[Stage, dict[str, list[int]]] = {}
    for i, (_, resource, stage, _) in enumerate(shape):
        if stage is not None:
            parts.setdefault(stage, {}).setdefault(resource, []).append(i)
    spans = tuple((stage, tuple(tuple(p) for p in parts[stage].values()))
                  for stage in sorted(parts, key=_stage_order))  # fmt: skip
    tops = undominated(cycles)
    largest = _means_function(keys, tops, index, largest=True)
    return Template(keys, graph, cycles, ranked, _means_function(keys, ranked, index),
                    tuple(position), spans, {k: r for k, r, _, _ in shape},
                    _spans_function(spans), largest,
                    _means_function(keys, tops, index, largest=True, vectors=3))  # fmt: skip


def undominated(cycles: Sequence[Cycle]) -> tuple[Cycle, ...]:
    """The cycles whose mean no other cycle's bounds, bit for bit, whatever the weights >= 0:
    a cycle goes when another one's keys hold its keys in the same order (a subsequence) with
    no larger shift (and more keys or a smaller shift). Then, summed from 0 in each cycle's
    order as :func:`~rlmcost.placement.cycle_means.means_function` sums, the other's running
    sum at each of this cycle's keys is at least this one's (IEEE 754 rounding is monotone:
    x <= y gives fl(x + w) <= fl(y + w), and fl(x + w) >= x for w >= 0; ints add exactly),
    so its sum is at least this sum, and divided by a shift no larger, its mean at least this
    mean (correctly rounded division is monotone). So the largest mean over these cycles is
    the largest over all, the same number (the planner's sweep of PPO Llama-3.1-70B on 32
    A100: 595 of 3,150 cycles in 42 templates, 3,457 of 7,912 running sums). Dominance is a
    strict order, so every cycle that goes is bounded by one that stays. Not for weights of
    mixed types: an int sum is exact where a float one rounds at each step (2**60 + 64 + 65
    rounds up as ints, down through a float 0.0), so :meth:`Template.value` takes every
    cycle then."""
    names = {k: 1 << i for i, k in enumerate(dict.fromkeys(k for c in cycles for k in c.keys))}
    masks = [sum(names[k] for k in c.keys) for c in cycles]

    def within(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
        rest = iter(long)
        return all(k in rest for k in short)  # a subsequence: in order, each key once

    out = []
    for c, mask in zip(cycles, masks, strict=True):
        if not any(
            d.shift <= c.shift and not mask & ~other
            and (len(d.keys) > len(c.keys) or d.shift < c.shift) and within(c.keys, d.keys)
            for d, other in zip(cycles, masks, strict=True)
        ):
            out.append(c)
    return tuple(out)


def _spans_function(spans: tuple[tuple[Stage, tuple[tuple[int, ...], ...]], ...]
                    ) -> Callable[[Sequence[Any]], dict[Stage, Any]]:  # fmt: skip
    """``def spans(w)``: :meth:`Template.stage_spans` written out for one template: per stage
    ``max((0 + w[i] + w[j] + ..., ...))`` over its resources' parts, the same additions in the
    same order."""
    namespace: dict[str, Any] = {}
    items = []
    for n, (stage, parts) in enumerate(spans):
        namespace[f"s{n}"] = stage
        sums = ["".join(["0", *(f" + w[{i}]" for i in part)]) for part in parts]
        items.append(f"s{n}: max(({', '.join(sums)},))")
    source = f"def spans(w):\n    return {{{', '.join(items)}}}"
    exec(compile(source, "<schedule.stage_spans>", "exec"), namespace)  # noqa: S102
    return namespace["spans"]
