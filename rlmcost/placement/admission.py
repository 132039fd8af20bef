"""Admission of a replica's sequences to its decode slots: the most loaded replica's
lengths (:func:`replica_lengths`), the engines' arrival order (:func:`admission_order`) and
continuous batching into free slots (:func:`_admit`, closed-form for one length:
:func:`_waves`). Split from :mod:`rlmcost.placement.rollout` (whose module docstring
describes the model), which re-exports these names."""

from __future__ import annotations

import heapq
import random
from itertools import chain, repeat

from rlmcost.memo import memoized


def replica_lengths(lengths: tuple[int, ...], replicas: int) -> tuple[int, ...]:
    """The most loaded replica's lengths, longest first: replica r of R gets the sorted
    lengths n-1-r, n-1-r-R, ... (:mod:`~rlmcost.placement.rollout`), the first the longest.

    >>> replica_lengths((1, 2, 3, 4, 5, 6, 7), 3)
    (7, 4, 1)
    """
    ordered = sorted(lengths)
    return tuple(ordered[len(ordered) - 1 :: -replicas])  # n-1, n-1-R, ... (a slice in C)


@memoized(copy=list)
def admission_order(n: int) -> list[int]:
    """A fixed shuffle of ``n`` sequences: engines admit requests in arrival order, which does
    not know the lengths. Fisher-Yates driven by ``random.Random(0).random()``, whose sequence
    Python keeps the same across versions (kept per ``n``, a copy handed out).

    >>> sorted(admission_order(5)) == list(range(5))
    True
    """
    rng = random.Random(0)
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


def in_arrival(lengths: tuple[int, ...]) -> tuple[list[int], tuple[int, ...]]:
    """The replica's :func:`admission_order` (lengths unknown ahead; ``rollout.timeline``
    admits so too) and ``lengths`` in that order (for a static batching's batches).

    >>> in_arrival((5, 6, 7))[1] == tuple((5, 6, 7)[i] for i in admission_order(3))
    True
    """
    order = admission_order(len(lengths))
    return order, tuple(lengths[i] for i in order)


def _admit(lengths: list[int], slots: int, call: int | None = None) -> tuple[list[int], list[int]]:
    """Continuous batching: each sequence, in admission order, takes the first free slot.
    ``call``: the sequences arrive in calls of ``call``, each handed over when the previous
    one has returned (its last sequence finished). Returns (start step, slot) per sequence.

    >>> _admit([3, 1, 2, 2], 2, call=2)  # the second call waits for step 3
    ([0, 0, 3, 3], [0, 1, 1, 0])
    """
    if not call and slots >= len(lengths):  # every sequence at step 0, slot by slot
        return [0] * len(lengths), list(range(len(lengths)))
    if not call and lengths.count(lengths[0]) == len(lengths):
        return _waves(len(lengths), lengths[0], slots)
    free = [(0, s) for s in range(slots)]
    start, slot_of = [], []
    floor = last = 0  # the step the current call may start at; the latest finish so far
    for i, length in enumerate(lengths):
        if call and i and i % call == 0:
            floor = last
        t0, s = heapq.heappop(free)
        t0 = max(t0, floor)
        start.append(t0)
        slot_of.append(s)
        heapq.heappush(free, (t0 + length, s))
        last = max(last, t0 + length)
    return start, slot_of


def _waves(n: int, length: int, slots: int) -> tuple[list[int], list[int]]:
    """:func:`_admit` of ``n`` sequences of one ``length``: the heap frees the slots in their
    order at each multiple of ``length`` (ties by slot), so sequence i starts at
    ``i // slots * length`` on slot ``i % slots``, built wave by wave in C.

    >>> _waves(5, 3, 2) == _admit([3, 1, 3, 3, 3][:1] * 5, 2)
    True
    >>> _waves(5, 3, 2)
    ([0, 0, 3, 3, 6], [0, 1, 0, 1, 0])
    """
    waves = -(-n // slots)
    start = list(chain.from_iterable(repeat(w * length, slots) for w in range(waves)))
    return start[:n], (list(range(slots)) * waves)[:n]
