"""A framework's dynamic batching replayed on the task's lengths: verl's ``rearrange_micro_batches``
(:mod:`rlmcost.perf.verl_balancing`) on one rank's share of the sequences, for the time of its
update and log-prob forwards and the memory of its largest micro-batch
(``Behaviour.budget_packs_lengths``; verl only).

A rank's share (modelling choice, stated in the output): the task's quantile lengths (prompt +
response, :mod:`rlmcost.placement.lengths`) dealt by stride over the mini-batches and the
data-parallel ranks (as :func:`rlmcost.perf.nemo_rl_packing.chunks_of` deals them), each share
spanning the whole distribution. The heaviest share (every length at least the others'; about
one longest sequence above the mean share) is replayed: the slowest rank sets each mini-batch
(the gradients are reduced every micro-batch and the optimizer steps together), verl takes the
largest micro-batch count over the ranks (``all_reduce(MAX)``), and its largest micro-batch is
the memory peak. A mini-batch whose long responses cluster holds more (not priced; verl's
``balance_batch`` evens out each rank's whole step, not its mini-batches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.rl_step import Packed
from rlmcost.placement.group_key import per_query
from rlmcost.placement.group_train import kind_spec

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rlmcost.perf.verl_balancing import Split
    from rlmcost.placement.device_groups import Task


def rank_share(lengths: Sequence[int], per_rank: int) -> tuple[int, ...]:
    """The heaviest of the stride shares of ``per_rank`` sequences that ``lengths`` (tiled where
    fewer) deal into (module docstring), ascending.

    >>> rank_share([1, 2, 3, 4, 5, 6], 2)  # shares (1, 4), (2, 5), (3, 6)
    (3, 6)
    """
    pool = sorted(lengths)
    if len(pool) < per_rank:
        pool = sorted(list(lengths) * -(-per_rank // len(lengths)))
    chunks = len(pool) // per_rank
    return tuple(pool[chunks - 1::chunks][-per_rank:])


def split_of(g: Any, task: Task, lengths: Sequence[int], sequences: int) -> Split | None:
    """verl's micro-batches of one rank's share (:func:`rank_share`) of ``sequences`` sequences
    (the task's batch: a mini-batch for the update, the whole batch for a forward) of a group
    ``g`` whose framework replays them (``Behaviour.budget_packs_lengths``) under a token budget
    (``max_tokens_per_gpu``, no ``packing``); ``lengths`` are the task's (prompt + response).
    None where it does not apply (the paper's ideal run, another framework, no budget)."""
    dep = g.s.deployment
    beh = None if dep.ideal else behaviour(dep.framework)
    if beh is None or not beh.budget_packs_lengths:
        return None
    spec = kind_spec(dep, g.group.name, task.kind)
    if spec is None or spec.packing or spec.max_tokens_per_gpu is None:
        return None
    layout = g.layouts[task.index]
    per_rank = -(-sequences // layout.dp)
    budget = spec.max_tokens_per_gpu * layout.cp
    key = ("verl-split", task.invocation, task.kind, per_rank, budget)
    from rlmcost.perf.verl_balancing import micro_batch_split  # verl only: start-up stays light

    return per_query(g.s, key, lambda: micro_batch_split(rank_share(lengths, per_rank), budget))


def padded_width(g: Any, task: Task) -> int | None:
    """The width every sequence of a forward or training ``task`` is padded to when its layout
    keeps the padding (``TrainLayout.padded``: verl's FSDP workers without
    ``use_remove_padding``, dp_actor.py ``_forward_micro_batch``'s branch "not using rmpad",
    which runs the model on the whole ``(batch, prompt + response)`` tensors): the prompt + the
    longest response (``g.seq_len``); None where unpadded (and in the paper's ideal run)."""
    dep = g.s.deployment
    spec = kind_spec(dep, g.group.name, task.kind)
    if dep.ideal or spec is None or not spec.padded:
        return None
    return int(g.seq_len(task))


def split_packed(split: Split, dp: int, steps: int, width: int | None = None) -> tuple[Packed, int]:
    """The packed equivalent of ``steps`` splits (one per mini-batch) on each of ``dp`` ranks,
    and its sequences per micro-batch: each micro-batch M = ceil(tokens / parts) tokens of
    k = round(M tokens / pairs) sequences (at least 1) of ceil(M / k) tokens, so the rank runs
    verl's micro-batch count and tokens, and its attention pairs k (M / k)^2 = pairs / parts
    per micro-batch to the rounding of k (as :func:`rlmcost.placement.group_passes.pp_padded`
    prices NeMo RL's bins). ``width``: every sequence padded to that many tokens (verl without
    ``use_remove_padding``), its tokens and attention pairs priced at the width (an upper
    bound on the attention: FlashAttention-2 through the Hugging Face mask unpads inside the
    attention).

    >>> from rlmcost.perf.verl_balancing import Split
    >>> split_packed(Split(3, 5, 30, 190, 11, 2, 2), 2, 1)  # M = 10, k = round(300 / 190) = 2
    (Packed(sequences=12, seq_len=5), 2)
    """
    tokens, pairs = split.tokens, split.pairs
    if width is not None:
        tokens, pairs = split.sequences * width, split.sequences * width * width
    return equivalent_packed(tokens, pairs, split.parts, dp, steps)


def equivalent_packed(tokens: int, pairs: int, parts: int, dp: int, steps: int
                      ) -> tuple[Packed, int]:  # fmt: skip
    """The packed equivalent of one rank's ``parts`` micro-batches holding ``tokens`` tokens
    and ``pairs`` squared sequence lengths in all, on ``dp`` ranks over ``steps`` steps
    (:func:`split_packed`), and its sequences per micro-batch.

    >>> equivalent_packed(30, 190, 3, 2, 1)
    (Packed(sequences=12, seq_len=5), 2)
    """
    top = -(-tokens // parts)
    k = max(1, (2 * top * tokens + pairs) // (2 * pairs))
    return Packed(steps * dp * parts * k, -(-top // k)), k
