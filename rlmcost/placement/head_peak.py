"""The log-prob head's peak in a training step as a framework's code holds it.

Two facts of PyTorch autograd, read per framework (:class:`~rlmcost.frameworks.preset_model.
Behaviour`):

* ``low_memory_train_copies``: the ``positions x V`` buffers (activation dtype) alive at the
  head's backward. rlmcost's default is 2 (the logits and their gradient,
  :func:`~rlmcost.deployment.terms.logits_peak_bytes`). verl (verl/workers/actor/dp_actor.py
  ``_forward_micro_batch`` @b25bb7d4f) divides the logits by the temperature in place on a view
  (``logits_rmpad = output.logits.squeeze(0); logits_rmpad.div_(temperature)``) and then runs
  flash-attn's triton ``cross_entropy_loss`` with ``inplace_backward=True``
  (verl/utils/torch_functional.py ``logprobs_from_logits_flash_attn``), which writes the
  gradient into the saved logits. The in-place op on a view makes the base's grad_fn a
  ``CopySlices`` (torch/csrc/autograd/functions/tensor.cpp ``CopySlices::apply_impl``): while
  its input gradient is alive it allocates ``result`` (the gradient in the base's geometry),
  clones the slice for the wrapped ``DivBackward0``, which allocates the quotient: 4 buffers
  at once. Measured on PyTorch 2.13 (CPU), live tensor bytes tracked per dispatched op:
  forward 1 buffer, backward 4 (tests/test_verl_update_memory.py).
* ``logits_freed_before_layers``: the framework keeps no reference to the logits outside the
  autograd graph, so they are freed by the head's backward, which autograd runs before the
  last decoder layer's; under full checkpointing the layer rebuilt during its backward
  (:func:`rlmcost.parallel.activations.saved_bytes_per_token_layer` without checkpointing) is
  then never beside them: the transients peak at the larger of the two, not their sum
  (verl: ``_forward_micro_batch`` returns only the entropy and the log-probs).
* ``grads_freed_after_update``, within the update: verl's ``update_policy`` calls
  ``actor_optimizer.zero_grad()`` (set_to_none, PyTorch >= 2.0) at the start of every
  mini-batch (verl/workers/actor/dp_actor.py @c62e7ac7b line 273, the 70 B tuning examples'
  commit; @b178a3cd5 line 560), so a mini-batch's first micro-batch starts its backward with
  no gradient at all; FSDP reduce-scatters each unit's gradient into its shard after the
  unit's backward (torch/distributed/fsdp ``_post_backward_hook``), while that unit's saved
  input is freed. When a rank's mini-batch is one micro-batch (:func:`grads_after_head`) the
  head's peak holds no gradient shard, and the backward's later states hold at most the
  gradients, one layer's input and its rebuilt activations.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import saved_bytes
from rlmcost.frameworks.preset_model import Behaviour
from rlmcost.parallel.breakdown import DataShare, MemoryBreakdown
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.specs.workload import Workload


def hf_trainer(beh: Behaviour | None, layout: Layout) -> bool:
    """The framework trains ``layout`` with its Hugging Face (FSDP) worker, whose code the
    two facts above describe: it has no Megatron-core backend, or the layout has no TP, PP or
    EP (``Behaviour.megatron_colocated``: verl's Megatron workers compute the log-probs with
    Megatron's vocab-parallel kernels), or, where the framework picks its worker by the ZeRO
    stage (``Behaviour.hf_trainer == "zero3"``: NeMo RL's DTensor policy under ZeRO-3, TP
    included, its Megatron-core policy otherwise; ``pass_options.runs_hf_model``), ZeRO-3."""
    if beh is not None and beh.hf_trainer == "zero3":
        return layout.zero is ZeroStage.OS_G_P
    return beh is not None and not (beh.megatron_colocated
                                    and max(layout.tp, layout.pp, layout.ep) > 1)


def train_copies(beh: Behaviour | None, layout: Layout) -> int:
    """``Behaviour.low_memory_train_copies`` for its FSDP trainer (:func:`hf_trainer`), else 2."""
    return beh.low_memory_train_copies if beh is not None and hf_trainer(beh, layout) else 2


def rebuilt_layer_bytes(arch: object, layout: Layout, tokens: int, workload: Workload,
                        fused_glu: bool = False) -> int:  # fmt: skip
    """One decoder layer's saved activations for ``tokens`` positions without checkpointing
    (the larger of a dense and a MoE layer where the model has both), as
    ``parallel.memory`` adds it under full checkpointing (rounded down), with the trainer's
    gated FFN as its kernels keep it (``fused_glu``: :func:`~rlmcost.placement.glu_kernel.
    fused_glu`, the choice ``parallel.memory`` is given)."""
    a = arch_numbers(arch)
    kinds = [False] + ([True] if a.n_experts else [])
    x = workload.activation_dtype.bytes
    per = max(Fraction(saved_bytes(a, layout.tp, layout.sp, Checkpointing.NONE, m, x, fused_glu))
              for m in kinds)  # fmt: skip
    return int(tokens * per)


def head_apart(
    m: MemoryBreakdown, beh: Behaviour | None, arch: object, layout: Layout, tokens: int,
    workload: Workload, fused_glu: bool = False,
) -> MemoryBreakdown:  # fmt: skip
    """``m`` (a training rank's breakdown with its logits peak) with the rebuilt layer taken
    out of its activations up to the logits peak, where the framework frees the logits before
    the layers' backward (module doc): activations + logits = kept + max(rebuilt, logits)
    (``fused_glu``: :func:`rebuilt_layer_bytes`')."""
    if beh is None or not beh.logits_freed_before_layers or not m.logits \
            or layout.ckpt is not Checkpointing.FULL or not hf_trainer(beh, layout):  # fmt: skip
        return m
    rebuilt = rebuilt_layer_bytes(arch, layout, tokens, workload, fused_glu)
    apart = min(rebuilt, m.logits, m.activations)
    return replace(m, activations=m.activations - apart)


def grads_after_head(
    m: MemoryBreakdown, beh: Behaviour | None, arch: object, layout: Layout, share: DataShare,
    workload: Workload, fused_glu: bool = False,
) -> MemoryBreakdown:  # fmt: skip
    """``m`` (a training rank's breakdown at the head's backward, :func:`head_apart` applied)
    without its gradient shard where the framework's FSDP trainer sets the gradients to None
    at each mini-batch (``Behaviour.grads_freed_after_update``, module doc), the rank's
    mini-batch is one micro-batch (``share.micro_batches``: the update's data share is one
    mini-batch's) and the layout shards the gradients per unit (ZeRO-3 / FSDP full or hybrid
    shard). The backward's peak is then the head's (activations + logits, no gradient) unless
    the whole gradient shard with one layer's input and its rebuilt activations, the end of
    the backward, is larger: then ``m`` unchanged (every term at once, an upper bound).
    Several micro-batches: the later ones hold the earlier ones' gradients, ``m`` unchanged.
    ``fused_glu``: :func:`rebuilt_layer_bytes`'."""
    if beh is None or not beh.grads_freed_after_update or not m.gradients \
            or share.micro_batches != 1 or layout.zero != ZeroStage.OS_G_P \
            or not hf_trainer(beh, layout):  # fmt: skip
        return m
    tokens = share.tokens_per_micro_batch
    one_input = m.activations // max(1, int(arch_numbers(arch).n_layers))
    end = m.gradients + rebuilt_layer_bytes(arch, layout, tokens, workload, fused_glu) \
        + one_input
    if end > m.activations + m.logits:
        return m
    return replace(m, gradients=0)
