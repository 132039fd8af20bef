"""NeMo RL's sequence packing replayed on sequence lengths, and the padding its Megatron worker
adds under pipeline parallelism (exact ints; deterministic).

* **Bins** (nemo_rl/data/packing/algorithms.py at v0.7.0, ``ModifiedFirstFitDecreasingPacker``,
  the default ``sequence_packing.algorithm``; Johnson & Garey 1985): items are large (> C/2),
  medium (> C/3), small (> C/6) or tiny; one bin per large item (descending), a medium item
  added to each (the largest that fits), two small items to bins without a medium one
  (backward pass: the smallest and the largest that fits with it), the remaining items fitted
  greedily, largest first, into those bins, and the leftovers packed largest first into the
  least filled of their own bins (the ``O(n log n)`` implementation, v0.6.0 on; v0.3-v0.5 used
  first fit). ``SequencePacker._adjust_bin_count`` then raises the count to at least, and a
  multiple of, the data-parallel shards, moving one sequence at a time from the fullest bins
  (by sequence count) into new ones.
* **Shards** (nemo_rl/distributed/batched_data_dict.py ``shard_by_batch_size`` with
  ``sequence_packing_args``): the batch is cut into chunks of ``batch_size`` sequences
  (training: ``train_global_batch_size``, one chunk per optimizer step; log-probs: the whole
  batch), each chunk packed to ``max_tokens_per_microbatch`` (``train_mb_tokens`` /
  ``logprob_mb_tokens``) and its bins dealt round robin to the shards (``bin_idx % shards``),
  so every shard runs the same number of micro-batches.
* **Padding under pipeline parallelism** (nemo_rl/models/megatron/data.py at v0.7.0,
  ``_get_pack_sequence_parameters_for_megatron``: "when PP is used, all sequences must have the
  same length, so we need to pad the packed sequence to the max sequence length in the batch";
  ``get_microbatch_iterator_for_packable_sequences_len`` returns the largest of the shard's bin
  lengths; at v0.5.0 in nemo_rl/models/megatron/common.py, at v0.3.0 in
  megatron_policy_worker.py "to maintain a static PP buffer"): every micro-batch of a shard is
  padded to its largest bin. ``_pack_sequences_for_megatron`` appends the padding to the bin's
  last sequence (``cu_seqlens_padded[-1] = pad_packed_seq_to``, passed as ``cu_seqlens_q``):
  attention runs over it as part of that sequence, so a bin of lengths x_1..x_m padded to M
  costs M tokens and sum_{j<m} x_j^2 + (x_m + M - sum x)^2 causal pairs (x 1/2).

Leaves out the per-sequence rounding to ``make_sequence_length_divisible_by`` (at most TP x
2 CP - 1 tokens per sequence) and the FP8 / HybridEP multiple of the packed length.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

if TYPE_CHECKING:
    from collections.abc import Sequence

SOURCE = (
    "NeMo RL v0.7.0 nemo_rl/models/megatron/data.py _get_pack_sequence_parameters_for_megatron "
    "(PP > 1: pad_packed_seq_to = the largest bin), nemo_rl/data/packing/algorithms.py "
    "ModifiedFirstFitDecreasingPacker, nemo_rl/distributed/batched_data_dict.py "
    "shard_by_batch_size"
)


def mffd_bins(lengths: Sequence[int], capacity: int, shards: int = 1) -> list[list[int]]:
    """Bins (lists of lengths, in the order they are packed) of NeMo RL's modified first fit
    decreasing with ``min_bin_count = bin_count_multiple = shards`` (module docstring). A
    length over ``capacity`` (NeMo RL refuses it) gets a bin of its own.

    >>> mffd_bins([600, 500, 300, 200, 100], 1000)
    [[600, 300, 100], [500, 200]]
    >>> mffd_bins([600, 300, 100], 1000, shards=2)
    [[600, 300], [100]]
    """
    if capacity < 1 or shards < 1 or not lengths or min(lengths) < 1:
        raise SpecError("packing needs a positive capacity, shards and sequence lengths")
    c = capacity
    large = sorted((x for x in lengths if 2 * x > c), reverse=True)
    medium = sorted(x for x in lengths if 3 * x > c >= 2 * x)  # ascending: bisect
    small = sorted(x for x in lengths if 6 * x > c >= 3 * x)
    tiny = [x for x in lengths if c >= 6 * x]
    bins = [[x] for x in large]
    sums = list(large)
    for i in range(len(bins) if medium else 0):  # phase 2: the largest medium item that fits
        j = bisect_right(medium, c - sums[i]) - 1
        if j >= 0:
            _add(bins, sums, i, medium.pop(j))
    for i in reversed(range(len(bins))):  # phase 3: two small items where no medium one is
        if len(small) < 2 or any(3 * x > c >= 2 * x for x in bins[i]):
            continue
        room = c - sums[i]
        if small[0] + small[1] > room:
            continue
        first = small.pop(0)
        second = small.pop(bisect_right(small, room - first) - 1)
        _add(bins, sums, i, first)
        _add(bins, sums, i, second)
    rest = sorted(medium + small + tiny)  # ascending here; NeMo RL's list is descending
    for i in range(len(bins)):  # phase 4: greedily, the largest remaining item that fits
        while rest and c - sums[i] >= rest[0]:
            _add(bins, sums, i, rest.pop(bisect_right(rest, c - sums[i]) - 1))
    bins.extend(_least_filled(rest[::-1], c))  # phase 5
    return _adjust_bin_count(bins, shards)


def _add(bins: list[list[int]], sums: list[int], i: int, x: int) -> None:
    bins[i].append(x)
    sums[i] += x


def _least_filled(items: Sequence[int], c: int) -> list[list[int]]:
    """Phase 5 at v0.6.0-v0.7.0: each item (largest first) into the least filled bin if it
    fits there, else a new bin; bins kept in order of their fill (``bisect`` insertion)."""
    bins: list[list[int]] = [[]]
    fills = [0]
    for x in items:
        if x <= c - fills[0]:
            b, f = bins.pop(0), fills.pop(0)
        else:
            b, f = [], 0
        b.append(x)
        at = bisect_right(fills, f + x)
        bins.insert(at, b)
        fills.insert(at, f + x)
    return [b for b in bins if b]


def _adjust_bin_count(bins: list[list[int]], shards: int) -> list[list[int]]:
    """``SequencePacker._adjust_bin_count``: at least ``shards`` bins and a multiple of it, new
    bins each taking the last sequence of the bin with the most sequences that has two or more
    (bins ranked once, by sequence count then position, largest first)."""
    target = -(-max(len(bins), shards) // shards) * shards
    if target == len(bins):
        return bins
    if sum(len(b) for b in bins) < target:
        raise SpecError(
            f"{sum(len(b) for b in bins)} sequences cannot fill {target} packed micro-batches "
            f"over {shards} data-parallel ranks; use fewer ranks or more sequences"
        )
    order = [i for _, i in sorted(((len(b), i) for i, b in enumerate(bins)), reverse=True)]
    out = [list(b) for b in bins]
    src = 0
    for _ in range(target - len(bins)):
        while len(out[order[src]]) < 2:
            src += 1
        out.append([out[order[src]].pop()])
    return out


@dataclass(frozen=True)
class PaddedShare:
    """One data-parallel rank's packed micro-batches padded to its largest bin: ``bins``
    micro-batches, ``tokens`` tokens with the padding (bins x largest bin), ``pairs`` sum of
    squared (padded) sequence lengths (causal pairs x 2), and ``real_tokens``."""

    bins: int
    tokens: int
    pairs: int
    real_tokens: int


def padded_share(lengths: Sequence[int], capacity: int, shards: int) -> PaddedShare:
    """The slowest rank's share of one chunk (the most padded tokens, then pairs) when each
    rank pads its micro-batches to its largest bin (module docstring).

    >>> padded_share([600, 500, 300, 200, 100], 1000, 1)  # bins [600, 300, 100], [500, 200 + 300]
    PaddedShare(bins=2, tokens=2000, pairs=960000, real_tokens=1700)
    """
    bins = mffd_bins(lengths, capacity, shards)
    sums = [sum(b) for b in bins]
    best = None
    for r in range(shards):
        own, fill = bins[r::shards], sums[r::shards]
        top = max(fill)
        pairs = sum(sum(x * x for x in b[:-1]) + (b[-1] + top - f) ** 2
                    for b, f in zip(own, fill, strict=True))  # fmt: skip
        share = PaddedShare(len(own), len(own) * top, pairs, sum(fill))
        if best is None or (share.tokens, share.pairs) > (best.tokens, best.pairs):
            best = share
    assert best is not None
    return best


def chunks_of(lengths: Sequence[int], chunks: int) -> list[list[int]]:
    """``lengths`` (ascending quantiles) dealt into ``chunks`` mini-batches by stride, each
    spanning the whole distribution (a modelling choice: the real mini-batches are the batch's
    prompt groups in order, with lengths drawn from the same distribution).

    >>> chunks_of([1, 2, 3, 4, 5, 6], 2)
    [[1, 3, 5], [2, 4, 6]]
    """
    if chunks < 1 or len(lengths) < chunks:
        raise SpecError(f"{len(lengths)} sequences cannot form {chunks} mini-batches")
    return [list(lengths[i::chunks]) for i in range(chunks)]

