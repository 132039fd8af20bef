"""Training memory where a trainer allocates its own way: torchtitan's (PyTorch's) choices.

The terms of :mod:`rlmcost.parallel.memory` (and its compiled twin) that a ``Layout`` field
switches from rlmcost's convention to a trainer's, each in plain integers (exact; bytes in the
dtype each says):

* ``Layout.op_sac`` (``--ckpt selective --selective every-second-mm``): torchtitan's op-level
  selective activation checkpointing (``selective_ac_option = "op"``;
  torchtitan/parallelisms/parallelize_llama.py @9dec370 ``_save_list`` and
  ``_custom_policy``, run by ``torch.utils.checkpoint.create_selective_checkpoint_contexts``)
  keeps, per layer and token, the checkpoint's input and the outputs of the ops it must save:
  the odd ``aten.mm`` of the block (``wq``, ``wv``, ``w1``, ``w2`` in torchtitan's order
  ``wq wk wv wo w1 w3 w2``; ``wq``, ``wv``, ``w1`` for a two-projection FFN), SDPA's outputs
  (the attention output and its fp32 log-sum-exp) and, under SP, both reduce-scatters' outputs;
  everything else is recomputed in the backward (:func:`op_sac_bytes_per_token_layer`). The
  rebuilt rest of one layer for one micro-batch is the backward's transient, as under full
  recomputation. tests/test_framework_memory.py measures the saved bytes of a transformers
  Llama layer under that policy on CPU (live storages), independent of this count.
* ``Layout.loss_upcast`` (``--loss-logits upcast``): the loss
  ``F.cross_entropy(pred.flatten(0, 1).float(), labels)`` (torchtitan train.py @9dec370
  ``loss_fn``) holds at its peak, the start of the backward, the fp32 log-softmax it saved,
  that output's gradient and the gradient of its fp32 input, 3 x 4 bytes per logit (the
  forward's peak, the logits, their fp32 copy and the log-softmax, is 2 + 4 + 4); under PP the
  schedule keeps the stage's output for its backward too (torch/distributed/pipelining/
  stage.py ``fwd_cache``), + the activation dtype's bytes (:func:`upcast_loss_bytes`).
  rlmcost's default counts one fp32 copy (``Workload.logits_dtype``).
  Under TP (P_t > 1) torchtitan runs it as loss parallel (``loss_parallel()``, its default,
  ``ParallelDims.loss_parallel_enabled`` @9dec370; the head ``ColwiseParallel(input_layouts=
  Shard(1), output_layouts=Shard(-1))``, parallelize_llama.py): torch's DTensor handlers
  (torch/distributed/tensor/parallel/loss.py, read at torch 2.13: ``_log_softmax``,
  ``_nll_loss_and_log_softmax_backward``, which returns ``(grad_input + torch.exp(x)) *
  grad_output``) hold at the backward's peak the saved log-softmax, the zero-filled gradient,
  its ``exp`` and their sum, 4 x 4 bytes per logit (the forward: the input, ``shifted``, its
  ``exp`` / the result, x + 3 x 4).
* ``Layout.loss_compiled`` (``--loss-logits compiled``): the same loss under
  ``torch.compile`` (torchtitan/components/loss.py @e7c0cae ``build_cross_entropy_loss``:
  ``torch.compile(loss_fn)`` with ``--training.compile``): Inductor fuses the upcast, the
  log-softmax and the loss, saves for the backward the x-byte logits (the graph's input) and
  two fp32 numbers per position (the row max and log-sum-exp), and its backward writes the
  logits' gradient in the activation dtype from one fused kernel with one more fp32 per
  position: 2 x per logit, 3 x 4 per position (:func:`compiled_loss_bytes`;
  tests/test_framework_memory.py reads the buffers Inductor allocates on CPU).
* Either loss flag: the head keeps its input, the final norm's output, for its weight
  gradient, all of it on every TP rank (the head's ``ColwiseParallel(input_layouts=
  Shard(1))`` all-gathers the SP-sharded sequence and ``aten.mm`` saves the gathered copy),
  x d bytes per token of the last stage (:func:`head_input_bytes_per_token`); rlmcost's
  default counts the final norm's input only.
* ``Layout.pp_fsdp_gathered`` (``--pp-fsdp-gathered``, ZeRO-3 under PP): FSDP2 inside
  ``torch.distributed.pipelining`` as torchtitan runs it: ``reshard_after_forward = False``
  for every block and the root when PP is on (parallelize_llama.py @9dec370 ``apply_fsdp``),
  and the stage's ``set_reshard_after_backward(False)`` / ``set_requires_gradient_sync(False)``
  until its last backward (torch/distributed/pipelining/stage.py ``backward_maybe_with_
  nosync``): the stage's parameters stay gathered in the weight dtype across its
  micro-batches, and its unsharded gradients accumulate in FSDP2's reduce dtype
  (``FSDPParam.to_accumulated_grad_if_needed``), fp32 (:data:`FSDP_REDUCE_BYTES`)
  (:func:`pp_gathered_bytes`). rlmcost's ZeRO-3 holds two gathered units.
* ``Layout.pp_stage_buffers`` (``--pp-stage-buffers``, PP > 1): what ``torch.distributed.
  pipelining``'s ``PipelineStage`` keeps per micro-batch beyond the layers' saved activations
  (:func:`pp_stage_buffer_counts`): each stage's output of every micro-batch (the last stage's:
  its logits) until the next step, one receive buffer per micro-batch for its input, their
  gradients and one receive buffer per micro-batch for its output's gradient.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.parallel.pipeline import in_flight_layer_microbatches

FP32_BYTES = 4
"""Bytes of an fp32 element: the loss's upcast logits and log-softmax (``.float()``,
torchtitan train.py @9dec370) and SDPA's log-sum-exp (``logsumexp``, float32 in
aten/src/ATen/native/transformers/attention.cpp's flash kernels)."""

FSDP_REDUCE_BYTES = 4
"""Bytes of FSDP2's reduce dtype in which a stage's unsharded gradients accumulate under PP:
torchtitan's ``--training.mixed_precision_reduce`` default ``float32`` (torchtitan/
config_manager.py @9dec370, its only choice), applied by FSDP2's
``to_accumulated_grad_if_needed`` (torch/distributed/fsdp/_fully_shard/_fsdp_param.py)."""


def check_op_sac(moe: bool, mla: bool, other: bool) -> None:
    """torchtitan's op-level SAC is defined here for dense MHA/GQA blocks (its Llama at
    9dec370; :func:`rlmcost.perf.selective_ac.recomputed_mms` refuses the rest too)."""
    if moe or mla or other:
        raise SpecError("selective every-second-mm (torchtitan's op-level SAC) memory is "
                        "defined for dense blocks of MHA / GQA attention; use --ckpt full or "
                        "--selective attention-core")  # fmt: skip


def op_sac_bytes_per_token_layer(
    d: int, q: int, kv: int, d_ff: int, heads: int, gated: bool, tp: int, sp: bool, x: int
) -> Fraction:
    """Bytes one token's dense layer keeps on a TP rank under torchtitan's op-level SAC
    (module docstring): the input (d, / P_t under SP), the outputs of ``wq`` (q / P_t),
    ``wv`` (kv / P_t), ``w1`` (d_ff / P_t) and of a gated FFN's ``w2`` (the row-parallel
    GEMM's local output, d wide before its reduction), SDPA's output (q / P_t) and fp32
    log-sum-exp (heads / P_t), and under SP with P_t > 1 the two reduce-scatters' (d / P_t
    each); ``x`` bytes an activation element. ``q``, ``kv``: the query and key widths.

    >>> op_sac_bytes_per_token_layer(4096, 4096, 1024, 14336, 32, True, 1, False, 2)
    Fraction(63616, 1)
    """
    t = Fraction(1, tp)
    elems = (d * t if sp else d) + (q + kv + q + d_ff) * t + (d if gated else 0)
    if sp and tp > 1:
        elems += 2 * d * t
    return x * elems + FP32_BYTES * heads * t


def upcast_loss_bytes(tokens: int, vocab_per_rank: int, pp: int, x: int, tp: int = 1) -> int:
    """Peak bytes of ``F.cross_entropy(logits.float(), labels)`` over ``tokens`` positions of
    ``vocab_per_rank`` logits (module docstring): 3 fp32 per logit, or the forward's x + 2 fp32
    where that is more; under TP (``tp`` > 1, loss parallel) 4 fp32, or x + 3 fp32; under PP
    (``pp`` > 1) + the x-byte stage output the schedule keeps.

    >>> upcast_loss_bytes(1, 10, 1, 2), upcast_loss_bytes(1, 10, 2, 2)
    (120, 140)
    >>> upcast_loss_bytes(1, 10, 1, 2, tp=8)
    160
    """
    if tp > 1:
        per_logit = max(4 * FP32_BYTES, x + 3 * FP32_BYTES)
    else:
        per_logit = max(3 * FP32_BYTES, x + 2 * FP32_BYTES)
    per_logit += x if pp > 1 else 0
    return tokens * vocab_per_rank * per_logit


def compiled_loss_bytes(tokens: int, vocab_per_rank: int, x: int) -> int:
    """Peak bytes of ``torch.compile(F.cross_entropy(logits.float(), labels))`` (module
    docstring): the saved x-byte logits and the backward's x-byte gradient per logit, three
    fp32 per position (the saved row max and log-sum-exp, the backward's row sum); under PP the
    saved logits are the stage output the schedule keeps, no second copy.

    >>> compiled_loss_bytes(1, 10, 2)
    52
    """
    return tokens * (vocab_per_rank * 2 * x + 3 * FP32_BYTES)


def head_input_bytes_per_token(d: int, x: int) -> int:
    """Bytes per token the head keeps of its input under torchtitan's loss flags (module
    docstring): the final norm's output, all-gathered under SP, ``d`` elements of ``x`` bytes."""
    return d * x


def loss_bytes(layout: Any, positions: int, vocab_per_rank: int, x: int) -> int | None:
    """The last stage's loss bytes under a ``Layout``'s loss flag (:func:`upcast_loss_bytes`,
    :func:`compiled_loss_bytes`), None without one (rlmcost's one copy in the logits dtype),
    after :func:`check_loss_flags`."""
    check_loss_flags(layout.loss_upcast, layout.loss_compiled, layout.tp)
    if layout.loss_upcast:
        return upcast_loss_bytes(positions, vocab_per_rank, layout.pp, x, layout.tp)
    if layout.loss_compiled:
        return compiled_loss_bytes(positions, vocab_per_rank, x)
    return None


def check_loss_flags(upcast: bool, compiled: bool, tp: int) -> None:
    """One loss flag at a time; the compiled loss is priced without loss parallel (P_t = 1)."""
    if upcast and compiled:
        raise SpecError("loss_upcast and loss_compiled are two descriptions of the loss; "
                        "set one (--loss-logits upcast or compiled)")
    if compiled and tp > 1:
        raise SpecError("--loss-logits compiled is torch.compile's cross-entropy on a whole "
                        f"vocabulary; under --tp {tp} torchtitan runs loss parallel, priced by "
                        "--loss-logits upcast")


def pp_gathered_bytes(stage_params: int, w: int) -> int:
    """Bytes of a stage's ``stage_params`` parameter elements on a rank held unsharded under
    FSDP2 inside torch's pipelining (module docstring): gathered in the ``w``-byte weight
    dtype, their gradients accumulated in :data:`FSDP_REDUCE_BYTES`."""
    return stage_params * (w + FSDP_REDUCE_BYTES)


def check_pp_gathered(pp: int, zero3: bool) -> None:
    """``pp_fsdp_gathered`` describes FSDP2 (ZeRO-3) inside a pipeline (PP > 1)."""
    if pp < 2 or not zero3:
        raise SpecError("--pp-fsdp-gathered is FSDP2 inside torch's pipelining: it needs "
                        f"--pp > 1 and --zero 3 (have pp={pp}, zero 3: {zero3})")  # fmt: skip


def op_sac_of(a: Any, tp: int, sp: bool, x: int) -> Fraction:
    """:func:`op_sac_bytes_per_token_layer` of a compiled ``ArchNumbers`` (or any object with
    its field names), after :func:`check_op_sac`."""
    check_op_sac(bool(a.moe), bool(a.mla), bool(a.linear_layers or a.ffn_free_layers))
    return op_sac_bytes_per_token_layer(
        int(a.d_model), int(a.n_heads * a.head_dim), int(a.n_kv_heads * a.head_dim),
        int(a.d_ff), int(a.n_heads), not a.ffn_kind_plain, tp, sp, x)  # fmt: skip


def op_sac_of_arch(arch: Any, tp: int, sp: bool, x: int) -> Fraction:
    """:func:`op_sac_bytes_per_token_layer` of a numeric ``Arch`` (its dense layer on a TP rank),
    after :func:`check_op_sac`."""
    n = int(arch.n_layers)
    check_op_sac(bool(arch.n_experts), arch.is_mla,
                 bool(int(arch.linear_layers_of(n)) or int(arch.ffn_free_layers_of(n))))
    return op_sac_bytes_per_token_layer(
        int(arch.d_model), int(arch.q_width), int(arch.kv_width), int(arch.d_ff),
        int(arch.n_heads), arch.ffn_kind.projections == 3, tp, sp, x)  # fmt: skip


def pp_stage_buffer_counts(m: int, v: int, chunks: int, first: bool, last: bool) -> tuple[int, int]:
    """(hidden states, logits) of one micro-batch each that a pipeline rank holds at its peak
    under ``torch.distributed.pipelining`` beyond the saved activations of its ``chunks``
    in-flight chunk-forwards (:func:`~rlmcost.parallel.pipeline.in_flight_layer_microbatches`
    x ``v``) and the one micro-batch's logits the loss term counts; ``m`` micro-batches, ``v``
    stages on the rank (``first``: it holds the pipeline's first stage, ``last`` its last).

    Read in torch/distributed/pipelining at v2.5.1 (git a8d6afb5) and v2.6.0 (git 2236df17,
    branched from main in 2024-12), alike in these lines; not read at 1963fc8 (2024-12-23), the
    commit torchtitan's H100 runs used. stage.py ``forward_one_chunk`` appends every
    micro-batch's output to ``output_chunks``, which only ``clear_runtime_states`` empties, at
    the start of the next ``step``; the last stage's output is the head's logits (the
    schedule's ``_merge_outputs`` returns them), a hidden state on the others. A stage that
    receives allocates one receive buffer per micro-batch (``PipelineStage.
    _prepare_forward_infra``, kept from step to step) whose ``.grad`` is the input gradient
    ``_backward.stage_backward`` returns, kept until ``clear_runtime_states``; a stage that
    sends allocates one buffer per micro-batch for its output's gradient
    (``_prepare_backward_infra``). The peak is a backward with ``chunks`` micro-batches in
    flight after every forward (schedules.py ``Schedule1F1B``: ``min(m, p - s)`` warm-up
    forwards, then one backward and one forward): ``m`` outputs and gradient buffers per
    sending stage, ``m`` receive buffers per receiving stage less the in-flight chunks' inputs
    (the first layer's saved input), and the ``m v - chunks`` chunk-backwards done, each
    leaving an input gradient. Exact for 1F1B and GPipe; under interleaving the first stage's
    in-flight forwards are taken as ``min(m, chunks)`` (torch's ``ScheduleInterleaved1F1B``
    runs the first ``m / rounds`` forwards there).

    >>> pp_stage_buffer_counts(8, 1, 8, True, False)  # 1F1B, first rank: outputs, grad buffers
    (16, 0)
    >>> pp_stage_buffer_counts(8, 1, 7, False, False)  # + 1 idle receive buffer, 1 gradient
    (18, 0)
    >>> pp_stage_buffer_counts(8, 1, 1, False, True)  # last: 7 of each and 7 earlier logits
    (14, 7)
    """
    sends, receives = v - last, v - first
    fed = chunks - (min(m, chunks) if first else 0)  # in-flight inputs in receive buffers
    done = min(m * v - chunks, m * receives)  # chunk-backwards done: their input gradients
    return 2 * m * sends + m * receives - fed + done, m - 1 if last else 0


def pp_stage_buffer_bytes(layout: Any, stage: int, share: Any, d: int, vocab_per_rank: int,
                          x: int) -> tuple[int, int]:  # fmt: skip
    """(hidden-state bytes, logits bytes) of :func:`pp_stage_buffer_counts` on a rank of
    pipeline stage ``stage`` (a ``Layout``; a ``DataShare``'s micro-batches and tokens): a
    hidden state is a micro-batch's tokens x ``d`` (/ P_t under SP: torchtitan's blocks end in
    ``RowwiseParallel(output_layouts=Shard(1))``), the logits its tokens x ``vocab_per_rank``,
    both in the activation dtype's ``x`` bytes."""
    if layout.pp < 2:
        raise SpecError("--pp-stage-buffers is torch.distributed.pipelining's PipelineStage: "
                        f"it needs --pp > 1 (have pp={layout.pp})")
    v, m, tokens = layout.virtual_stages, share.micro_batches, share.tokens_per_micro_batch
    chunks = in_flight_layer_microbatches(layout.schedule, stage, layout.pp, m, v) * v
    hidden, logits = pp_stage_buffer_counts(m, v, int(chunks), stage == 0, stage == layout.pp - 1)
    per = Fraction(tokens * d * x, layout.tp if layout.sp else 1)
    return ceil(hidden * per), logits * tokens * vocab_per_rank * x
