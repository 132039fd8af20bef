"""verl's dynamic batching replayed on the lengths (rlmcost.perf.verl_balancing,
rlmcost.placement.dynamic_bsz). Reference: volcengine/verl b25bb7d4f
verl/utils/seqlen_balancing.py (karmarkar_karp, rearrange_micro_batches)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from verl_rows import QWEN_DAPO

from rlmcost.algorithms.kinds import Kind
from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.verl import import_verl
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


# --- use_remove_padding ----------------------------------------------------------------------

_QWEN_DAPO = QWEN_DAPO


def _passes(argv: list[str]) -> tuple[dict[Kind, float], Any]:
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    jobs = [j for g in est.groups for j in g.jobs]
    times = {j.task.invocation.kind: j.predicted_s for j in jobs}
    (train,) = [j for j in jobs if j.task.invocation.kind is Kind.TRAIN]
    return times, train.memory


def test_padded_equals_unpadded_at_one_length():
    """With every response at the cap there is no padding: --padded changes nothing."""
    fixed = [*_QWEN_DAPO[:-6], "--response-len", "4096", "--hardware", "h20", "--gpus", "32"]
    assert _passes(fixed) == _passes([*fixed, "--padded"])


def test_padded_prices_the_width():
    """verl without use_remove_padding (dp_actor.py _forward_micro_batch, "not using rmpad"):
    the update's largest micro-batch is the heaviest rank's 64 sequences (one partition under
    61,440 x 4 tokens), each at 200 + 28,672 tokens, ceil(28,872 / 4) = 7,218 per GPU of the
    Ulysses group: the head's 4 logits buffers of 64 x 7,218 x 152,064 x 2 B; and the passes
    take longer than unpadded."""
    argv = [*_QWEN_DAPO, "--length-dist", "lognormal:1000,0.67,28672,0.025"]
    plain, _ = _passes(argv)
    padded, memory = _passes([*argv, "--padded"])
    assert memory.logits == 4 * 64 * 7218 * 152_064 * 2
    assert padded[Kind.TRAIN] > plain[Kind.TRAIN] and padded[Kind.FORWARD] > plain[Kind.FORWARD]


@pytest.mark.parametrize(("overrides", "padded"), [
    ([], False),  # verl_grpo.yaml sets use_remove_padding true
    (["actor_rollout_ref.model.use_remove_padding=false"], True),
    (["actor_rollout_ref.model.use_remove_padding=false", "actor_rollout_ref.actor.strategy="
      "megatron"], False),  # Megatron packs either way (gptmodel_forward pack_seqs=True)
])  # fmt: skip
def test_importer_reads_use_remove_padding(overrides: list[str], padded: bool):
    q = import_verl(Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml", overrides)
    assert ("--padded" in q.argv()) is padded


def test_padded_round_trips_through_the_command():
    """A Run's command (rlmcost.run.command.to_command) repeats --padded, and only when set."""
    from rlmcost.run.command import to_command

    argv = ["--framework", "verl", "--model", "qwen2.5-7b", "--gpus", "8"]
    run = run_from_argv("grpo", [*argv, "--padded"])
    assert run.deployment.train.padded and "--padded" in to_command(run)
    assert "--padded" not in to_command(run_from_argv("grpo", argv))


def test_the_choice_is_stated():
    """The replay and its share (a modelling choice) are stated in the output's notes."""
    from rlmcost.deployment.spec import Deployment
    from rlmcost.placement.pass_options import worker_notes

    notes = " ".join(worker_notes(Deployment(framework="verl"), kl=False))
    assert "Karmarkar-Karp" in notes and "heaviest rank's share" in notes
    assert "padded sequences" in " ".join(
        worker_notes(Deployment(framework="verl", train={"padded": True}), kl=False))
    assert "padded sequences" not in notes
