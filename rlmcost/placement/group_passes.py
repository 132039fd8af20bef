"""The teacher-forced passes of a device group (forwards and training steps): the sequences
packed as the pass runs them and the pass models' predictions (:mod:`rlmcost.perf.rl_step`:
per-kernel efficiency, exposed communication, bubbles, the optimizer) in the layout a token
budget gives packed sequences, NeMo RL's padding of packed micro-batches under pipeline
parallelism (:func:`pp_padded`, :mod:`rlmcost.perf.nemo_rl_packing`), a framework's swap of the
reference into the policy's model and its per-sequence loss calls under packing
(:mod:`rlmcost.perf.policy_worker`). Split from :mod:`rlmcost.placement.group_jobs` by
purpose."""

from __future__ import annotations

from dataclasses import replace

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.choices import Head
from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import tp_shard
from rlmcost.perf.efficiency import Device
from rlmcost.perf.nemo_rl_packing import chunks_of, padded_share
from rlmcost.perf.policy_worker import packed_loss_s, reference_swap_s
from rlmcost.perf.rl_step import (
    Packed,
    forward_time,
    packed_counts,
    train_logprob_head_s,
    train_time,
)
from rlmcost.perf.step_pass import StepOptions
from rlmcost.placement.device_groups import Task
from rlmcost.placement.dynamic_bsz import padded_width, split_of, split_packed
from rlmcost.placement.fp8_train import fp8_options
from rlmcost.placement.group_cost import GroupModel
from rlmcost.placement.group_key import per_query
from rlmcost.placement.group_train import group_deployment, group_trainer, kind_spec
from rlmcost.placement.lengths import from_runs
from rlmcost.placement.model_dropout import train_dropout
from rlmcost.placement.mtp import mtp_step_options
from rlmcost.placement.pass_options import step_options
from rlmcost.placement.prefix_grouper import grouped_packed
from rlmcost.placement.reference_swap import reference_swap_bytes


def packed_lengths(g: GroupModel, task: Task) -> tuple[int, ...]:
    """Token counts (prompt + response) of the task's sequences, one per sequence (PRM
    prefixes count as whole sequences)."""
    return packing(g, task)[0]


def packing(g: GroupModel, task: Task) -> tuple[tuple[int, ...], Packed, int, int]:
    """:func:`packed_lengths`, their packed equivalent (``rl_step.packed``), their sum and
    their largest, the last three from the (length, how many) runs of equal lengths (exact
    ints: the cost follows the distinct lengths, not the sequences); kept per group and task,
    and for every deployment of the query (they depend on the query and the invocation
    alone: its lengths, prompt, response and batch)."""
    key = ("packed", task.index)
    if key not in g.kept:
        g.kept[key] = per_query(g.s, ("packed", task.invocation, task.kind),
                                lambda: _packing_of(g, task))  # fmt: skip
    return g.kept[key]


def _packing_of(g: GroupModel, task: Task) -> tuple[tuple[int, ...], Packed, int, int]:
    inv = task.invocation
    n = len(g.lengths(task))
    prompt = g._int_at(inv.prompt, g.longest(task))
    times = g.batch(task) // n if task.kind is Kind.FORWARD else 1  # PRM prefixes
    if inv.response == "T":
        pairs = tuple((prompt + t, m) for t, m in g.length_runs(task))
    else:
        pairs = ((g.seq_len(task), n),)
    # the sequences themselves, in the lengths' order, the whole batch ``times`` over;
    # shared by the query's tasks of the same lengths
    lengths = per_query(g.s, ("packed lengths", pairs, times), lambda: from_runs(pairs) * times)
    counts = [(x, m * times) for x, m in pairs]
    return lengths, packed_counts(counts), sum(x * m for x, m in counts), max(pairs)[0]


def packed_layout(g: GroupModel, task: Task, seq: int) -> Layout:
    """The task's layout with a token budget's micro-batch recomputed for packed
    sequences of ``seq`` tokens (under :func:`pp_padded`, its micro-batches: the rank's bins)."""
    layout = g.layouts[task.index]
    dep = g.s.deployment
    if dep.ideal:
        return layout
    padded = replayed(g, task)
    if padded is not None:
        return layout.with_(micro_batch=padded[1])
    spec = kind_spec(dep, g.group.name, task.kind)
    budget = None if spec is None else spec.token_budget(g.seq_len(task))
    if budget is None:
        return layout
    return layout.with_(micro_batch=max(1, budget // -(-seq // layout.cp)))


def pass_packing(g: GroupModel, task: Task) -> Packed:
    """The packed sequences the task's pass computes: :func:`replayed`'s where it applies,
    else the real tokens' packed equivalent (:func:`packing`), or every sequence at the padded
    width where the layout keeps the padding (:func:`padded_width`)."""
    padded = replayed(g, task)
    if padded is not None:
        return padded[0]
    width = padded_width(g, task)
    return packing(g, task)[1] if width is None else Packed(len(packing(g, task)[0]), width)


def replayed(g: GroupModel, task: Task) -> tuple[Packed, int] | None:
    """The packed equivalent of the task's micro-batches as its framework forms them from the
    lengths, and its sequences per micro-batch: NeMo RL's padded bins (:func:`pp_padded`) or
    verl's dynamic batching (:mod:`rlmcost.placement.dynamic_bsz`: its micro-batch count and
    tokens on the heaviest rank, every mini-batch alike) or verl's PrefixGrouper rows
    (:mod:`rlmcost.placement.prefix_grouper`); None where none applies."""
    rows = grouped_packed(g, task)
    if rows is not None:
        return rows
    padded = pp_padded(g, task)
    if padded is not None:
        return padded
    split = split_of(g, task, packing(g, task)[0], g.batch(task))
    if split is None:
        return None
    steps = g.mini_batches(task)
    return split_packed(split, g.layouts[task.index].dp, steps, padded_width(g, task))


def pp_padded(g: GroupModel, task: Task) -> tuple[Packed, int] | None:
    """The padded packed equivalent of a forward or training task whose framework pads every
    packed micro-batch to the rank's largest under pipeline parallelism
    (``Behaviour.pp_pads_packed_bins``: NeMo RL's Megatron worker,
    :mod:`rlmcost.perf.nemo_rl_packing`), and the sequences per micro-batch that give the
    rank its bin count; None where it does not apply (no such framework, PP = 1, no packing).

    NeMo RL's packing is replayed on the task's lengths (prompt + response): bin capacity the
    per-GPU token budget x P_c (``train_mb_tokens`` / ``logprob_mb_tokens``, packed before
    context parallelism splits them), P_d shards, one chunk per optimizer step of an epoch
    (``train_global_batch_size``; the quantile lengths dealt by stride,
    :func:`~rlmcost.perf.nemo_rl_packing.chunks_of`) or the whole batch for a forward. The
    slowest rank runs B micro-batches (its bins over the chunks) of P padded tokens and Q
    squared sequence lengths in all: each micro-batch is M = ceil(P / B) tokens, k =
    round(M P / Q) sequences (at least 1) of ``ceil(M / k)`` tokens, so the rank's tokens
    and micro-batches are NeMo RL's and its attention pairs k (M / k)^2 = Q / B per
    micro-batch to the rounding of k; B k sequences per rank, P_d times over."""
    dep = g.s.deployment
    beh = None if dep.ideal else behaviour(dep.framework)
    layout = g.layouts[task.index]
    if beh is None or not beh.pp_pads_packed_bins or layout.pp < 2:
        return None
    spec = kind_spec(dep, g.group.name, task.kind)
    budget = None if spec is None or not spec.packing else spec.token_budget(g.seq_len(task))
    if budget is None:
        return None
    chunks = g.mini_batches(task)
    lengths, dp, capacity = packing(g, task)[0], layout.dp, budget * layout.cp
    key = ("pp-padded", task.invocation, task.kind, dp, capacity, chunks)
    return per_query(g.s, key, lambda: _padded(lengths, capacity, dp, chunks))


def _padded(lengths: tuple[int, ...], capacity: int, dp: int, chunks: int
            ) -> tuple[Packed, int]:  # fmt: skip
    shares = [padded_share(c, capacity, dp) for c in chunks_of(lengths, chunks)]
    tokens = sum(s.tokens for s in shares)
    bins = sum(s.bins for s in shares)
    top = -(-tokens // bins)  # a micro-batch: the chunks' largest bins, on average
    pairs = sum(s.pairs for s in shares)
    k = max(1, (2 * top * tokens + pairs) // (2 * pairs))  # sequences per bin, rounded
    return Packed(dp * bins * k, -(-top // k)), k


def _options(g: GroupModel):  # noqa: ANN202 - StepOptions | None
    """The pass options of the group's jobs (its own trainer settings: ``group_train``), kept
    per group model (every forward and update of the group, and a step's log-prob head, read
    them)."""
    try:
        return g.kept[("pass options",)]
    except KeyError:
        dep = group_deployment(g.s.deployment, g.group.name)
        out = fp8_options(dep, step_options(dep))  # an FP8 trainer's (placement.fp8_train)
        g.kept["pass options",] = out
        return out


def _train_options(g: GroupModel, task: Task):  # noqa: ANN202 - StepOptions | None
    """:func:`_options` with the trained model's config dropout, hidden and attention apart,
    where its training steps run it (:mod:`rlmcost.placement.model_dropout`; forwards run in
    eval mode, without)."""
    spec = g.s.specs[task.role]
    if not (spec.hidden_dropout or spec.attention_dropout):
        return _options(g)
    try:
        return g.kept[("train options", task.role)]
    except KeyError:
        out = _options(g)
        hidden, attention = train_dropout(group_deployment(g.s.deployment, g.group.name), spec)
        if hidden or attention:  # the model's own nn.Dropout kernels (perf.dropout)
            out = replace(out or StepOptions(), hidden_dropout=hidden,
                          attention_dropout=attention, dropout_add_fused=False)
        g.kept["train options", task.role] = out
        return out


def predict_forward(g: GroupModel, task: Task):  # noqa: ANN201 - rl_step.ForwardTime
    p = pass_packing(g, task)
    return forward_time(
        g.s.arch(task.role), packed_layout(g, task, p.seq_len), p.sequences,
        p.seq_len, g.s.hardware, g.s.workload, task.invocation.model_head,
        mtp_step_options(g, task, _options(g)),  # the policy's MTP block (placement.mtp)
    )  # fmt: skip


def predict_train(g: GroupModel, task: Task):  # noqa: ANN201 - (StepTime, Packed per step)
    """One optimizer step's prediction and the packed sequences it runs."""
    inv = task.invocation
    steps = g._int(inv.steps)
    p = pass_packing(g, task)
    per_step = replace(p, sequences=-(-p.sequences // steps))
    step = train_time(
        g.s.arch(task.role), packed_layout(g, task, p.seq_len), per_step.sequences,
        p.seq_len, g.s.hardware, g.s.workload, inv.model_head,
        mtp_step_options(g, task, _train_options(g, task)),  # the policy's MTP (placement.mtp)
    )  # fmt: skip
    return step, per_step


def train_head_s(g: GroupModel, task: Task, per_step: Packed) -> float:
    """One optimizer step's log-softmax over fp32 logits (of its compute)."""
    return train_logprob_head_s(
        g.s.arch(task.role), packed_layout(g, task, per_step.seq_len), per_step.sequences,
        per_step.seq_len, g.s.hardware, g.s.workload, task.invocation.model_head,
        _options(g),
    )  # fmt: skip


def reference_swap_s_of(g: GroupModel, task: Task) -> float:
    """Seconds the reference forward ``task`` waits for its weights to be swapped into the
    policy's model through host memory (``Behaviour.reference_swap``: NeMo RL's
    ``use_reference_model``, :func:`~rlmcost.perf.policy_worker.reference_swap_s`) when the
    group also trains the actor: the rank's model state as the policy worker holds it
    (:func:`~rlmcost.placement.reference_swap.reference_swap_bytes`: the DTensor worker's fp32
    FSDP2 shard, the Megatron worker's bf16 parameters of its TP x PP shard)."""
    if task.role is not Role.REFERENCE:
        return 0.0
    state = reference_swap_bytes(g)
    return reference_swap_s(state, g.s.host_bytes_per_s) if state else 0.0


def per_sequence_loss(g: GroupModel, task: Task) -> bool:
    """Whether the training ``task`` calls its loss once per packed sequence: a framework whose
    trainer does (``Behaviour.packed_loss_per_sequence``: NeMo RL's
    ``SequencePackingLossWrapper``) training an LM head under sequence packing without
    ``TrainLayout.fused_loss`` (:mod:`rlmcost.perf.policy_worker`)."""
    dep = g.s.deployment
    beh = None if dep.ideal else behaviour(dep.framework)
    train = group_trainer(dep, g.group.name)
    return (beh is not None and beh.packed_loss_per_sequence and task.kind is Kind.TRAIN
            and task.invocation.model_head is Head.LM and train.packing
            and not train.fused_loss)  # fmt: skip


def packed_loss_s_of(g: GroupModel, task: Task, micro_batches: int) -> float:
    """Seconds one optimizer step of ``task`` spends in its per-sequence loss calls
    (:func:`~rlmcost.perf.policy_worker.packed_loss_s`; 0 where :func:`per_sequence_loss` is
    false): the step's own sequences and tokens (not their packed equivalents) over the data-
    and context-parallel ranks, in ``micro_batches`` micro-batches, on the last pipeline stage
    (where the loss runs; added to the step, the other stages waiting on it)."""
    if not per_sequence_loss(g, task):
        return 0.0
    (lengths, _, total, _), layout = packing(g, task), g.layouts[task.index]
    steps = g._int(task.invocation.steps)
    sequences = -(-len(lengths) // (steps * layout.dp))
    tokens = -(-total // (steps * layout.dp * layout.cp))  # sum(lengths), kept
    arch = g.s.arch(task.role)
    device = Device(g.s.hardware, g.workload(task).compute_dtype)
    vocab = int(tp_shard(arch, layout.tp).vocab)
    return packed_loss_s(device, sequences, micro_batches, tokens, vocab)
