"""Micro-batches of the sequences' own lengths under a framework's dynamic batching.

verl (``use_dynamic_bsz`` with ``use_remove_padding``) splits each rank's batch by the tokens
it really holds: verl/utils/seqlen_balancing.py ``rearrange_micro_batches`` @b25bb7d4f sums
``attention_mask`` per sequence (the unpadded lengths), takes ``ceil(total / max_token_len)``
micro-batches and balances the sequences over them (``get_seqlen_balanced_partitions``,
Karmarkar-Karp); ``max_token_len`` is ``ppo_max_token_len_per_gpu`` (or the log-prob one)
times the Ulysses degree (verl/workers/actor/dp_actor.py ``update_policy`` per mini-batch,
``compute_log_prob`` over the rank's whole batch), and after ``ulysses_pad_and_slice_inputs``
each GPU of the group holds 1 / sp of a micro-batch's tokens. rlmcost's plain token budget
fills each micro-batch with sequences at the padded maximum length instead
(:meth:`~rlmcost.placement.group_own.GroupTasks._apply_token_budget`), which for long caps
and short mean responses prices micro-batches many times what the run holds.

A fixed ``ppo_micro_batch_size_per_gpu`` (no dynamic batching) holds that many sequences,
each at its own length after ``unpad_input`` (``use_remove_padding``, rlmcost's convention of
unpadded S + T sequences).

Modelling choice (stated in the output): the rank's sequences at the mean of the task's
response lengths (:mod:`rlmcost.placement.lengths`), so N = sequences x (prompt + mean
response) tokens in ``ceil(N / (budget x P_c))`` balanced micro-batches, the largest of
``ceil(sequences / parts)`` such sequences (equal items: at most one mean sequence above the
balanced share N / parts that varied lengths approach); a mini-batch whose long responses
cluster above the mean holds more (not priced). Where the budget holds few maximum-length
sequences this prices more than the plain budget does (the real lengths fill it).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil
from typing import Any

from rlmcost.algorithms.kinds import Kind
from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.layout import Layout
from rlmcost.placement.device_groups import Task


@dataclass(frozen=True)
class Packed:
    """The memory model's inputs for one task: ``layout`` with ``micro_batch`` sequences of
    ``seq_len`` tokens (the mean context) per micro-batch, and how many micro-batches the
    rank's ``sequences`` make."""

    layout: Layout
    seq_len: int
    micro_batches: int


def packed(layout: Layout, budget: int, sequences: int, prompt: int,
           responses: tuple[int, ...]) -> Packed:  # fmt: skip
    """verl's balanced micro-batches (module doc) of a rank's share of ``sequences`` (split over
    ``layout.dp``) at ``prompt`` + the mean of ``responses`` tokens each, under ``budget``
    tokens per GPU of a ``layout.cp``-GPU sequence-parallel group.

    >>> p = packed(Layout(dp=8, cp=4), 61_440, 512, 200, (1000,) * 8)
    >>> (p.layout.micro_batch, p.seq_len, p.micro_batches)
    (64, 1200, 1)
    """
    per_rank = -(-sequences // layout.dp)
    mean = ceil(prompt + Fraction(sum(responses), len(responses)))
    parts = min(per_rank, -(-per_rank * mean // (budget * layout.cp)))
    return Packed(layout.with_(micro_batch=-(-per_rank // parts)), mean, parts)


def memory_inputs(g: Any, task: Task, sequences: int) -> tuple[Layout, int]:
    """The layout and sequence length a group ``g`` (a ``GroupTasks``) prices ``task``'s own
    memory with: the task's, or under a framework that packs the sequences' own lengths
    (``Behaviour.budget_packs_lengths``) a forward's or update's :func:`packed` micro-batch."""
    layout, seq = g.layouts[task.index], g.seq_len(task)
    dep = g.s.deployment
    beh = behaviour(dep.framework)
    if dep.ideal or beh is None or not beh.budget_packs_lengths:
        return layout, seq
    spec = {Kind.TRAIN: dep.train, Kind.FORWARD: dep.forward_layout()}.get(task.kind)
    if spec is None or spec.packing:
        return layout, seq
    prompt, responses = seq - g.longest(task), g.lengths(task)
    if spec.max_tokens_per_gpu is None:  # micro_batch sequences, each at its own length
        return layout, ceil(prompt + Fraction(sum(responses), len(responses)))
    p = packed(layout, spec.max_tokens_per_gpu, sequences, prompt, responses)
    return p.layout, p.seq_len
