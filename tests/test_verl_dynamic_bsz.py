"""verl's dynamic batching replayed on the lengths (rlmcost.perf.verl_balancing,
rlmcost.placement.dynamic_bsz). Reference: volcengine/verl b25bb7d4f
verl/utils/seqlen_balancing.py (karmarkar_karp, rearrange_micro_batches)."""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.perf.rl_step import Packed
from rlmcost.perf.verl_balancing import Split, karmarkar_karp, micro_batch_split
from rlmcost.placement.dynamic_bsz import rank_share, split_packed


def test_karmarkar_karp_hand_traced():
    """verl's karmarkar_karp([8, 7, 6, 5, 4], 2, equal_size=False), traced by hand: states
    {4} {5} {6} {7} {8} (spreads 4..8); merge 8 with 7 -> [8 | 7] (spread 1); 6 with 5 ->
    [6 | 5] (1); {4} (spread 4) with [8 | 7] (spread 1, the larger first set beats [6 | 5]):
    {4} + {7} = 11, {} + {8} = 8 -> [11 | 8] (3); [11 | 8] with [6 | 5]: 11 + 5 = 16,
    8 + 6 = 14. Indices: 4, 7, 5 are items 4, 1, 3. Not the optimum 15 | 15."""
    assert karmarkar_karp([8, 7, 6, 5, 4], 2) == [[1, 3, 4], [0, 2]]
    # k = 3: [8 | 7 | 6] then 5 and 4 go to the smaller sets: {7, 4}, {6, 5}, {8}
    assert karmarkar_karp([8, 7, 6, 5, 4], 3) == [[1, 4], [2, 3], [0]]


def test_micro_batch_count_and_largest():
    """rearrange_micro_batches: min(n, ceil(total / max_token_len)) partitions; verl adds none
    when a partition exceeds the budget (here 13 > 12 would need a fourth), so the largest can
    hold more than the budget."""
    s = micro_batch_split([9, 8, 7, 6, 3], 12)  # 33 tokens -> 3: {9, 3}, {8}, {7, 6}
    assert (s.parts, s.tokens, s.largest_tokens, s.largest_sequences) == (3, 33, 13, 2)
    assert s.largest_tokens > 12
    # a sequence longer than the budget: still ceil(total / budget) parts, never more than n
    one = micro_batch_split([50, 1], 10)
    assert (one.parts, one.largest_tokens, one.largest_sequences) == (2, 50, 1)


def test_long_tail_splits_into_more_micro_batches_than_the_mean():
    """A rank's share with one long sequence: 7 x 1,000 + 20,000 = 27,000 tokens under
    10,000 take 3 micro-batches, the long one alone (20,000 tokens, above the budget), where
    eight sequences at the mean 3,375 would fill 3 micro-batches of at most 3 sequences."""
    s = micro_batch_split([1000] * 7 + [20_000], 10_000)
    assert (s.parts, s.largest_tokens, s.largest_sequences) == (3, 20_000, 1)


def test_rank_share_is_the_heaviest_stride():
    assert rank_share(list(range(1, 13)), 4) == (3, 6, 9, 12)
    assert rank_share([5, 1], 3) == (1, 5, 5)  # fewer lengths than the share: tiled


def test_split_packed_keeps_count_and_tokens():
    """Each micro-batch M = ceil(tokens / parts); k = round(M tokens / pairs) sequences of
    ceil(M / k): 2 ranks x 3 parts, 30 tokens and 190 pairs -> M = 10, k = 2 of 5 tokens;
    padded to a width of 9 every sequence costs 9 tokens: 45 tokens, M = 15, k = 2 of 8."""
    s = Split(3, 5, 30, 190, 11, 2, 2)
    assert split_packed(s, 2, 1) == (Packed(12, 5), 2)
    assert split_packed(s, 1, 4, width=9) == (Packed(24, 8), 2)


def test_bad_input_is_a_spec_error():
    with pytest.raises(SpecError):
        micro_batch_split([], 10)
    with pytest.raises(SpecError):
        karmarkar_karp([1, 2], 3)
