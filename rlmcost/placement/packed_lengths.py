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

Under a token budget the rank's micro-batches are verl's own, replayed on the lengths
(:mod:`rlmcost.placement.dynamic_bsz`, :mod:`rlmcost.perf.verl_balancing`): the largest
Karmarkar-Karp partition of the heaviest rank's share sets the memory, as ``largest_sequences``
sequences of its mean length (without ``use_remove_padding``, ``TrainLayout.padded``: the
partition of most sequences, each at the padded width, prompt + longest response). A fixed
micro-batch (modelling choice, stated in the output)
holds sequences at the prompt + the mean of the task's response lengths
(:mod:`rlmcost.placement.lengths`); one whose long responses cluster holds more (not priced).
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil
from typing import Any

from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.layout import Layout
from rlmcost.placement.act_offload_job import offloads
from rlmcost.placement.device_groups import Task
from rlmcost.placement.dynamic_bsz import split_of
from rlmcost.placement.group_train import kind_spec
from rlmcost.placement.prefix_grouper import memory_rows


def memory_inputs(g: Any, task: Task, sequences: int) -> tuple[Layout, int]:
    """:func:`_memory_inputs`, an update's layout marked where its trainer offloads the saved
    activations (``TrainLayout.activation_offload``: :mod:`rlmcost.parallel.act_offload`;
    the forwards save none)."""
    layout, seq = _memory_inputs(g, task, sequences)
    return (layout.with_(act_offload=True) if offloads(g, task) else layout), seq


def _memory_inputs(g: Any, task: Task, sequences: int) -> tuple[Layout, int]:
    """The layout and sequence length a group ``g`` (a ``GroupTasks``) prices ``task``'s own
    memory with: the task's, or under a framework that packs the sequences' own lengths
    (``Behaviour.budget_packs_lengths``) a forward's or update's largest micro-batch as its
    dynamic batching forms it from the rank's lengths (:mod:`rlmcost.placement.dynamic_bsz`),
    or a fixed micro-batch of sequences at the mean length."""
    rows = memory_rows(g, task)  # verl's PrefixGrouper: its rows (placement.prefix_grouper)
    if rows is not None:
        return rows
    layout, seq = g.layouts[task.index], g.seq_len(task)
    dep = g.s.deployment
    beh = behaviour(dep.framework)
    if dep.ideal or beh is None or not beh.budget_packs_lengths:
        return layout, seq
    spec = kind_spec(dep, g.group.name, task.kind)
    if spec is None or spec.packing:
        return layout, seq
    prompt, responses = seq - g.longest(task), g.lengths(task)
    if spec.max_tokens_per_gpu is None:  # micro_batch sequences, each at its own length
        return layout, seq if spec.padded else ceil(prompt + Fraction(sum(responses),
                                                                     len(responses)))
    split = split_of(g, task, tuple(prompt + t for t in responses), sequences)
    assert split is not None
    if spec.padded:  # the micro-batch of most sequences, each at the padded width
        return layout.with_(micro_batch=split.most_sequences), seq
    n = split.largest_sequences
    return layout.with_(micro_batch=n), -(-split.largest_tokens // n)
