"""verl's dynamic batching replayed on sequence lengths (exact ints; deterministic).

verl (``actor.use_dynamic_bsz``) splits each rank's mini-batch (the update, dp_actor.py
``update_policy``) or its whole batch (``compute_log_prob``) into micro-batches by the tokens the
sequences really hold: verl/utils/seqlen_balancing.py ``rearrange_micro_batches`` at b25bb7d4f
(unchanged in substance from v0.4 to v0.6.0) sums ``attention_mask`` per sequence, takes
``min(sequences, ceil(total / max_token_len))`` micro-batches, the maximum over the data-parallel
ranks (``dist.all_reduce(..., MAX)``, ``same_micro_num_in_dp``), and partitions the sequences into
that many sets of near-equal token sums by ``get_seqlen_balanced_partitions`` (Karmarkar-Karp's
largest differencing method, ``karmarkar_karp`` with ``equal_size=False``; ported here with its
tie-breaks). ``max_token_len`` is ``ppo_max_token_len_per_gpu`` (or the log-prob one) times the
Ulysses degree (dp_actor.py lines 328 and 396 at b25bb7d4f). verl adds no micro-batch when a
partition exceeds ``max_token_len`` (it only asserts that the padded width fits), so the largest
partition, which sets the memory peak, can hold more than the budget.

From commit 62221fa13 (2025-10-23, v0.6.1 and v0.7.0) verl balances the workload
``24576 s + s^2`` per sequence instead of its tokens (``calculate_workload``); the count is the
same, the partitions differ little. Replayed here: the token balance the validated runs' commit
(b25bb7d4f) runs.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

if TYPE_CHECKING:
    from collections.abc import Sequence

SOURCE = (
    "verl verl/utils/seqlen_balancing.py @b25bb7d4f rearrange_micro_batches, "
    "get_seqlen_balanced_partitions, karmarkar_karp; verl/workers/actor/dp_actor.py "
    "update_policy / compute_log_prob (max_token_len x ulysses_sequence_parallel_size)"
)


class _Set:
    """One partition of ``karmarkar_karp``: its sum and (index, value) items; ordered by sum,
    then item count, then the items (verl's ``Set.__lt__``)."""

    __slots__ = ("items", "sum")

    def __init__(self) -> None:
        self.sum = 0
        self.items: list[tuple[int, int]] = []

    def key(self) -> tuple[int, int, list[tuple[int, int]]]:
        return self.sum, len(self.items), self.items

    def __lt__(self, other: _Set) -> bool:
        return self.key() < other.key()


class _State:
    """A partial k-way partition (verl's ``State``): its non-empty sets in decreasing order (the
    k - len(sets) empty ones, smallest of all, implied after them); the heap pops the largest
    spread first, ties broken by the larger first set."""

    __slots__ = ("sets", "spread")

    def __init__(self, sets: list[_Set], k: int) -> None:
        self.sets = sorted(sets, reverse=True)  # stable; no two non-empty sets compare equal
        self.spread = self.sets[0].sum - (self.sets[-1].sum if len(sets) == k else 0)

    def __lt__(self, other: _State) -> bool:
        if self.spread != other.spread:
            return self.spread > other.spread
        return other.sets[0] < self.sets[0]


def karmarkar_karp(values: Sequence[int], k: int) -> list[list[int]]:
    """The ``k`` partitions (indices into ``values``, each sorted) verl's ``karmarkar_karp``
    (``equal_size=False``) and ``get_seqlen_balanced_partitions`` return, largest set first.

    Each value starts as a state of one set holding it and k - 1 empty sets; the two states of
    largest spread are merged, set i of the first with set k - 1 - i of the second, until one
    remains. The empty sets are left implicit (the same partitions, in time independent of k).

    >>> karmarkar_karp([8, 7, 6, 5, 4], 2)  # sums 16 and 14 (the optimum is 15 and 15)
    [[1, 3, 4], [0, 2]]
    """
    if k < 1 or len(values) < k or min(values, default=0) < 1:
        raise SpecError(f"{len(values)} sequences cannot be balanced into {k} micro-batches")
    heap: list[_State] = []
    for v, i in sorted((v, i) for i, v in enumerate(values)):
        first = _Set()
        first.items.append((i, v))
        first.sum = v
        heapq.heappush(heap, _State([first], k))
    while len(heap) > 1:
        a, b = heapq.heappop(heap), heapq.heappop(heap)
        ma, mb = len(a.sets), len(b.sets)
        sets = a.sets
        for i in range(max(0, k - mb), ma):  # a's set i takes b's set k - 1 - i
            theirs = b.sets[k - 1 - i]
            sets[i].items.extend(theirs.items)
            sets[i].sum += theirs.sum
        sets += [b.sets[k - 1 - i] for i in range(max(ma, k - mb), k)]  # beside a's empties
        heapq.heappush(heap, _State(sets, k))
    if len(heap[0].sets) < k:
        raise SpecError(f"{len(values)} sequences leave an empty micro-batch of {k}")
    return [sorted(i for i, _ in s.items) for s in heap[0].sets]


@dataclass(frozen=True)
class Split:
    """A rank's ``sequences`` as verl's dynamic batching splits them: ``parts`` micro-batches,
    ``tokens`` and ``pairs`` (sum of squared lengths) in all, the largest micro-batch's
    ``largest_tokens`` in ``largest_sequences`` sequences, and the most sequences a micro-batch
    holds (``most_sequences``: the largest once every sequence is padded to one width)."""

    parts: int
    sequences: int
    tokens: int
    pairs: int
    largest_tokens: int
    largest_sequences: int
    most_sequences: int


def micro_batch_split(lengths: Sequence[int], max_token_len: int) -> Split:
    """verl's ``rearrange_micro_batches`` on one rank's sequences of ``lengths`` tokens under
    ``max_token_len`` tokens per micro-batch (the per-GPU budget x the Ulysses degree; module
    docstring): ``min(n, ceil(total / max_token_len))`` Karmarkar-Karp partitions.

    >>> s = micro_batch_split([8, 7, 6, 5, 4], 12)  # ceil(30 / 12) = 3: {7, 4}, {6, 5}, {8}
    >>> (s.parts, s.tokens, s.pairs, s.largest_tokens, s.largest_sequences)
    (3, 30, 190, 11, 2)
    """
    if max_token_len < 1 or not lengths or min(lengths) < 1:
        raise SpecError("dynamic batching needs a positive token budget and sequence lengths")
    total = sum(lengths)
    k = min(len(lengths), -(-total // max_token_len))
    parts = karmarkar_karp(lengths, k)
    top = max(parts, key=lambda p: (sum(lengths[i] for i in p), len(p)))
    return Split(k, len(lengths), total, sum(x * x for x in lengths),
                 sum(lengths[i] for i in top), len(top), max(len(p) for p in parts))  # fmt: skip
