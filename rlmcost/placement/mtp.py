"""Multi-token prediction (MTP) trained with the policy (``TrainLayout.mtp_layers``,
``--mtp-layers``).

Megatron-core builds ``mtp_num_layers`` = D MTP modules on the policy (DeepSeek-V3 report,
arXiv 2412.19437 §2.2; megatron/core/transformer/multi_token_prediction.py at d98e8a64). Depth
k takes the hidden states of depth k-1 and the embeddings of the tokens k positions ahead, each
RMS-normed (``hnorm``, ``enorm``), concatenates them and projects 2d -> d (``eh_proj``, column
parallel), runs one Transformer layer of the model's last layer's shape (:func:`~rlmcost.perf.
speculative.mtp_arch`: MoE for DeepSeek-V3, attention + the FFN for Nemotron-H) and its final
norm, and the shared output head's logits feed a cross-entropy loss scaled by
``mtp_loss_scaling_factor / D``. With ``mtp_use_repeated_layer`` one module's weights run at
every depth (gpt_layer_specs.py builds one layer spec), the compute the same.

Work (exact ints, one add or one multiply = 1 FLOP), per depth, for the task's own sequences
and passes: the one-layer model of the block shape over the same invocation
(:func:`~rlmcost.placement.task_work.work_over_lengths`: its layer, attention at the
sequences' lengths, and the head's logits over the vocabulary) plus the projection, 2 x 2d x d
a token forward and 3 x that in training (Table III's backward = 2 x forward). Under
``mtp_detach_heads`` the output weight is detached (multi_token_prediction.py
``process_mtp_loss``): training skips the head's weight gradient, 2 d V a token.

Which passes run it: every Megatron forward of the policy outside inference mode (gpt_model.py
``_postprocess``: ``mtp_in_postprocess and not in_inference_mode``; ``process_mtp_loss`` derives
the labels from ``input_ids`` when none are given): the actor's training steps, its log-prob
forwards and the reference's (the same Megatron model with the reference weights, as NeMo RL
runs it). Not the engines' generation, and not a critic's or reward model's passes.

Time: the MTP block sits on the last pipeline stage (``mtp_on_this_rank`` without a custom
layout), so it runs in that stage's micro-batches: the step model prices it there kernel by
kernel, as the stage's own layers (:mod:`rlmcost.perf.mtp_pass`, through
:func:`mtp_step_options`: its layer's GEMMs, attention, collectives, the forward again under
full recomputation, ``MultiTokenPredictionLayer._checkpointed_forward``, a MoE layer's host
floor, :mod:`rlmcost.perf.moe_host`; the projection, the head and the loss), in training steps
and in forwards alike, and ``rlmcost train --mtp-layers`` the same. The bound is the FLOPs over
all the job's GPUs at the datasheet peak.

Memory, on the last stage's ranks (:func:`mtp_bytes`): the modules' weights (one module when
repeated, else D) with their gradients and Adam states in a training task, the layer by
differencing a two-layer and a one-layer model of the block shape in the task's own layout and
dtypes (so its TP/EP shards and ZeRO sharding are the trainer's), the projection and three
norms (hnorm, enorm, the layer's final norm) as replicated-dtype parameters; with PP > 1 and
untied embeddings the last stage builds its own embedding for the MTP block (gpt_model.py:
``if self.pre_process or self.mtp_process``), a vocabulary-parallel copy with its states. A
training step keeps, per depth, the layer's saved activations, the hnorm / enorm inputs and
the concatenated 2d (4d a token in the activation dtype, split by SP) and the loss's saved
logits (a token's vocabulary shard in the logits dtype), for the micro-batches in flight on the
last stage. A refit carries the trained modules whole (:func:`trained_mtp_params`).
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.arch import Arch
from rlmcost.choices import Head
from rlmcost.compiled.blocks import work_head_per_token
from rlmcost.compiled.memory import memory_per_stage
from rlmcost.parallel.breakdown import MemoryBreakdown, Mode, data_share
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.pipeline import in_flight_layer_microbatches
from rlmcost.parallel.zero import model_state_bytes_per_rank
from rlmcost.perf.mtp_pass import block_arch
from rlmcost.placement.breakdown_ops import with_terms
from rlmcost.placement.device_groups import Task
from rlmcost.placement.jobs import Job
from rlmcost.placement.megatron_only import check_megatron
from rlmcost.placement.task_work import work_over_lengths
from rlmcost.specs.workload import Workload
from rlmcost.timing import FORWARD

if TYPE_CHECKING:
    from rlmcost.perf.step_options import StepOptions
    from rlmcost.placement.group_cost import GroupModel

MTP_ROLES = (Role.ACTOR, Role.REFERENCE)
"""The roles whose passes run the policy's MTP block (module docstring)."""


def mtp_depths(g: Any, task: Task) -> int:
    """D for ``task``: the trainer's ``mtp_layers`` for a training or forward pass of the
    policy or its reference (module docstring; the model's compute, in an ideal deployment
    too), else 0."""
    if task.kind not in (Kind.TRAIN, Kind.FORWARD) or task.role not in MTP_ROLES:
        return 0
    layout = g.train_layout() if task.kind is Kind.TRAIN else g._forward_layout()
    if layout.mtp_layers:  # a Hugging Face model builds no MTP block
        check_megatron(g.s.deployment, layout, "--mtp-layers is Megatron-core's multi-token "
                       "prediction")  # fmt: skip
    return int(layout.mtp_layers)


def _tokens(g: GroupModel, task: Task, lengths: list[int] | tuple[int, ...]) -> int:
    """Tokens the task's passes run (prompt and response of each sequence, times the passes
    of a training task or the prefixes of a forward)."""
    inv = task.invocation
    reps = g._int(inv.passes if task.kind is Kind.TRAIN else inv.prefixes)
    return reps * (int(g.s.values["S"]) * len(lengths) + sum(lengths))


def mtp_flops(g: GroupModel, task: Task) -> int:
    """FLOPs of the MTP block in ``task`` (its work, module docstring); 0 without MTP."""
    depths = mtp_depths(g, task)
    if not depths:
        return 0
    arch = g.s.arch(task.role)
    block = block_arch(arch)
    lengths = g.lengths(task)
    tokens = _tokens(g, task, lengths)
    d = int(arch.d_model)
    one = work_over_lengths(task, block, g.s.values, lengths, g.s.counting)
    train = task.kind is Kind.TRAIN
    per_depth = one + (3 if train else 1) * 4 * d * d * tokens
    if train and g.train_layout().mtp_detach_heads:  # the output weight's gradient, 2 d V a
        per_depth -= work_head_per_token(block, Head.LM) * tokens  # token, not computed
    return depths * per_depth


def with_mtp(g: GroupModel, task: Task, job: Job) -> Job:
    """``job`` with the MTP block's FLOPs in its work and their roofline seconds in its bound
    (module docstring); its predicted seconds are the step model's, which runs the block in
    the last stage's micro-batches (:func:`mtp_step_options`, :mod:`rlmcost.perf.mtp_pass`)."""
    flops = mtp_flops(g, task)
    if not flops:
        return job
    from dataclasses import replace

    extra = g.roofline(job.layout.n_gpus, task).phase(flops * g.load_factor(task), 0, FORWARD)
    time = job.time + extra
    return replace(job, work_flops=job.work_flops + flops, time=time,
                   predicted_s=max(job.predicted_s, time.bound_s),
                   predicted_ideal_s=max(job.predicted_ideal_s, time.bound_s))  # fmt: skip


def mtp_step_options(g: GroupModel, task: Task, options: StepOptions | None
                     ) -> StepOptions | None:  # fmt: skip
    """``options`` for the step model's passes of ``task``, with the policy's MTP depths where
    its passes run the block (:func:`mtp_depths`; ``StepOptions.mtp_layers``)."""
    depths = mtp_depths(g, task)
    if not depths:
        return options
    from dataclasses import replace

    from rlmcost.perf.step_options import StepOptions

    detach = bool(g.train_layout().mtp_detach_heads)
    return replace(options or StepOptions(), mtp_layers=depths, mtp_detach_heads=detach)


def beside_layer_params(d: int, tp: int = 1) -> int:
    """Parameters of one MTP module beside its layer on a rank of ``tp``: ``eh_proj``'s column
    shard of [2d -> d] and three replicated norms (hnorm, enorm, the layer's final norm).

    >>> beside_layer_params(4096), beside_layer_params(4096, 4)
    (33566720, 8400896)
    """
    return -(-2 * d * d // tp) + 3 * d


def mtp_bytes(
    g: Any, task: Task, layout: Layout, sequences: int, seq_len: int, workload: Workload,
) -> MemoryBreakdown | None:  # fmt: skip
    """The MTP block's bytes on a last-stage rank of ``task`` in ``layout`` (module
    docstring: weights in a forward; weights, gradients, Adam states and saved activations in
    training); None without MTP."""
    depths = mtp_depths(g, task)
    if not depths:
        return None
    repeated = bool(g.train_layout().mtp_repeated)
    return block_bytes(g.s.arch(task.role), layout, depths, repeated, task.kind is Kind.TRAIN,
                       sequences, seq_len, workload)  # fmt: skip


def block_bytes(arch: Arch, layout: Layout, depths: int, repeated: bool, train: bool,
                sequences: int, seq_len: int, workload: Workload) -> MemoryBreakdown:  # fmt: skip
    """The bytes of ``depths`` MTP depths of ``arch`` on a last-stage rank of ``layout``
    (module docstring; one module's weights when ``repeated``), in training or a forward;
    the RL trainers' (:func:`mtp_bytes`) and ``rlmcost train``'s."""
    block = block_arch(arch)
    mode = Mode.TRAIN if train else Mode.FORWARD
    one_stage = layout.one_stage()
    one, two = (memory_per_stage(block.with_(n_layers=n), one_stage, mode, sequences, seq_len,
                                 workload)[0] for n in (1, 2))  # fmt: skip
    modules = 1 if repeated else depths
    d, tp = int(arch.d_model), layout.tp
    vocab_shard = -(-int(arch.vocab) // tp)
    extra = modules * beside_layer_params(d, tp)
    if layout.pp > 1 and not arch.tie_embeddings:
        extra += vocab_shard * d  # the last stage's own embedding
    stored = (workload.param_dtype or workload.weight_dtype) if train else workload.weight_dtype
    states = model_state_bytes_per_rank(extra, layout.zero, layout.zero_group, stored, train,
                                        workload.grad_dtype)  # fmt: skip
    weights = modules * (two.weights - one.weights) + states.weights
    if not train:
        return MemoryBreakdown(weights, 0, 0, 0, 0, 0, 0)
    share = data_share(layout, sequences, seq_len)
    x = workload.activation_dtype.bytes
    per_token = Fraction(4 * d * x, tp if layout.sp else 1) + vocab_shard * \
        workload.logits_dtype.bytes  # fmt: skip
    in_flight = in_flight_layer_microbatches(layout.schedule, layout.pp - 1, layout.pp,
                                             share.micro_batches, layout.virtual_stages)
    kept = depths * ((two.activations - one.activations)
                     + ceil(in_flight * share.tokens_per_micro_batch * per_token))
    return MemoryBreakdown(
        weights, modules * (two.gradients - one.gradients) + states.gradients,
        modules * (two.optimizer - one.optimizer) + states.optimizer, kept, 0, 0, 0,
    )


def with_mtp_bytes(g: Any, task: Task, per_stage: list[MemoryBreakdown], layout: Layout,
                   sequences: int, seq_len: int, workload: Workload) -> list[MemoryBreakdown]:
    """``per_stage`` with :func:`mtp_bytes` added to the last stage's terms."""
    add = mtp_bytes(g, task, layout, sequences, seq_len, workload)
    return per_stage if add is None else with_block(per_stage, add)


def with_block(per_stage: list[MemoryBreakdown], add: MemoryBreakdown) -> list[MemoryBreakdown]:
    """``per_stage`` with the MTP block's bytes ``add`` on the last stage."""
    last = per_stage[-1]
    return [*per_stage[:-1], with_terms(
        last, weights=last.weights + add.weights, gradients=last.gradients + add.gradients,
        optimizer=last.optimizer + add.optimizer, activations=last.activations + add.activations,
    )]  # fmt: skip


def trained_mtp_params(setup: Any, role: Role, group: str) -> int:
    """Parameters of the MTP modules the trainer of ``group`` trains for ``role`` (the policy's
    alone; one module when repeated), unsharded: each a layer of the block shape (a two-layer
    less a one-layer model), its [2d -> d] projection and three norms. A refit carries them: the
    trainer exports its whole model, the engines' MTP drafter loads them (NeMo RL
    ``_mtp_weights_from_refit`` when the policy trains MTP, vllm_backend.py @7ea279abf; slime
    refits every trained parameter)."""
    from rlmcost.compiled.blocks import params
    from rlmcost.placement.group_train import group_trainer

    if role is not Role.ACTOR:
        return 0
    train = group_trainer(setup.deployment, group)
    if not train.mtp_layers:
        return 0
    arch = setup.arch(role)
    block, d = block_arch(arch), int(arch.d_model)
    modules = 1 if train.mtp_repeated else train.mtp_layers
    return modules * (params(block.with_(n_layers=2)) - params(block) + beside_layer_params(d))

