"""Dropout in a training step, attention and hidden apart (``StepOptions.attention_dropout``,
``hidden_dropout``, ``dropout_add_fused``), each priced where it acts.

* **Attention dropout** (on the attention probabilities: Megatron-LM's ``--attention-dropout``,
  transformers' ``attention_dropout`` / GPT-2's ``attn_pdrop``). In a fused kernel
  (FlashAttention-2, SDPA's flash and efficient backends) the mask is drawn inside the kernel
  from a Philox seed and offset, saved instead of a mask and drawn again in the backward
  (flash-attention ``csrc/flash_attn/src/flash_fwd_kernel.h``, the ``Is_dropout`` path): no
  kernel and no byte of its own; what it costs is the kernel: FlashAttention-3 has no dropout, so
  a run with attention dropout takes a pre-FA3 kernel on Hopper
  (:meth:`~rlmcost.perf.efficiency.Device.flash_attention_s`). With the scores in HBM
  (``materialized``: Megatron-LM before fused attention, transformers' ``eager`` attention)
  it is ATen's ``native_dropout`` over the ``b h s^2 / P_t`` probabilities, one kernel each way
  (:func:`attention_dropout_bytes`). It sits before the attention's output projection, so it
  changes nothing of where the checkpoint's early stop ends the rerun (later ops still save):
  tests/test_dropout_split.py counts that with torch's FLOP counter on a transformers
  ``OPTDecoderLayer``.
* **Hidden dropout** (after the attention's and the FFN's output projections, before the
  residual adds: Megatron-LM's ``--hidden-dropout``, OPT's ``dropout``, GPT-2's and Phi-3's
  ``resid_pdrop``), two per layer. Megatron-LM fuses it into the add (``bias_dropout_add``,
  ``megatron/core/fusions/fused_bias_dropout.py``): the add kernel also writes the 1-byte mask,
  priced as the mask's byte per element on each add (:mod:`~rlmcost.perf.step_pass`, the backward
  at twice, its rule for memory-bound kernels). A Hugging Face model calls
  ``nn.functional.dropout`` on its own (``modeling_opt.py`` ``OPTDecoderLayer.forward``,
  ``modeling_gpt2.py``, ``modeling_phi3.py``), which on CUDA is ATen's ``native_dropout``
  (``aten/src/ATen/native/Dropout.cpp`` ``dropout``: the fused kernel for CUDA inputs): one
  kernel reading the input and writing the output and a ``bool`` mask, ``2 x + 1`` bytes per
  element, and in the backward ``native_dropout_backward`` reading the gradient and the mask and
  writing the input's gradient, ``2 x + 1`` again (``tools/autograd/derivatives.yaml``: the mask,
  ``result1``, is what it saves) (:func:`eager_hidden_dropout_bytes`, ``dropout_add_fused``
  False). Its mask is saved after the output projections, so under the non-reentrant
  checkpoint's early stop the rerun runs through the down projection
  (:func:`~rlmcost.perf.ckpt_early_stop.skips_down_projection`).

Memory: the training rows' convention leaves the masks out (:mod:`rlmcost.parallel.activations`:
Korthikanti et al.'s count less them); on the RL side a Hugging Face model's hidden masks, ``2 d``
bytes per token and layer, are added to its training activations
(:mod:`rlmcost.placement.dropout_memory`); the fused attention kernels save none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass, StepContext

MASK_BYTES = 1
"""Bytes per element of a saved dropout mask: ``native_dropout``'s ``bool`` mask (and Megatron's
``bias_dropout_add``, whose mask is ``torch.bernoulli`` of a bool-typed ``dropout`` call)."""

HIDDEN_DROPOUTS_PER_LAYER = 2
"""After the attention's output projection and after the FFN's down projection."""


def attention_dropout_bytes(scores: int, x: int) -> int:
    """Bytes one ``native_dropout`` over ``scores`` probabilities of ``x`` bytes moves, forward
    (read, write, the mask) and again backward (gradient in, mask, gradient out).

    >>> attention_dropout_bytes(1_000, 2)
    5000
    """
    return scores * (2 * x + MASK_BYTES)


def eager_hidden_dropout_bytes(tokens: int, width: int, x: int) -> tuple[int, int]:
    """(bytes, kernels) of a layer's two eager hidden dropouts over ``tokens`` x ``width``
    elements of ``x`` bytes, each way (module docstring: forward and backward move the same).

    >>> eager_hidden_dropout_bytes(10, 64, 2)  # 2 x 10 x 64 x (2 x 2 + 1)
    (6400, 2)
    """
    return HIDDEN_DROPOUTS_PER_LAYER * tokens * width * (2 * x + MASK_BYTES), \
        HIDDEN_DROPOUTS_PER_LAYER  # fmt: skip


def fused_mask_bytes(tokens: int, width: int, dropout: bool) -> int:
    """Forward bytes the fused dropout-add's masks add to a layer's two residual adds (the
    backward: twice, step_pass's rule); 0 without the hidden dropout."""
    return HIDDEN_DROPOUTS_PER_LAYER * tokens * width * MASK_BYTES if dropout else 0


def add_eager_dropout(c: StepContext, out: StagePass, width: int) -> None:
    """Add a layer's two eager hidden dropout kernels (``hidden_dropout`` with
    ``dropout_add_fused`` off) over ``width``-wide activations to ``out``, forward and
    backward alike (module docstring)."""
    opt = c.options
    if not opt.hidden_dropout or opt.dropout_add_fused:
        return
    moved, kernels = eager_hidden_dropout_bytes(c.tokens, width, c.workload.activation_dtype.bytes)
    s = c.device.elementwise_s(moved, kernels)
    out.fwd["elementwise"] += s
    out.bwd["elementwise"] += s
