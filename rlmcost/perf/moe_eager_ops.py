"""Megatron-core's eager (unfused) kernels around the grouped expert GEMMs: the clamped GLU's
clamp and concatenation, and the second projection's bias applied per local expert.

GPT-OSS (Megatron-Bridge ``GPTOSSProvider``, src/megatron/bridge/models/gpt_oss/
gpt_oss_provider.py @046518960, the 25.11 container's r0.2.0 branch: ``add_bias_linear``,
``activation_func`` quick-GELU, ``glu_linear_offset`` 1.0, ``bias_activation_fusion``,
``activation_func_clamp_value`` 7.0) runs its experts through Megatron-core's
``TEGroupedMLP`` (megatron/core/transformer/moe/experts.py at the submodule commit cba6b0ed,
3rdparty/Megatron-LM of that branch). Two parts of it are eager PyTorch kernels beside the
fused ones rlmcost already prices (the grouped GEMMs; the activation as one fused kernel):

* **Clamp and concatenation** (:func:`clamp_cat_bytes`): with a clamp value,
  ``weighted_bias_quick_geglu_impl`` (megatron/core/fusions/fused_bias_geglu.py @cba6b0ed)
  splits the first projection's output [N, 2 d_e] into halves, clamps the gated half from
  above and the linear half on both sides and concatenates them *before* the fused (compiled)
  activation: three kernels over the whole tensor, each reading and writing its elements
  (8 h x bytes, h = N d_e elements per half, x the activation dtype's bytes). Autograd's
  backward (PyTorch torch/csrc/autograd/FunctionsManual.cpp ``clamp_backward``): the
  max-only half ``where(self <= max, grad, zero)``, the two-sided half
  ``where((self >= min).logical_and_(self <= max), grad, zero)``, each building its 0-d zero
  (``scalar_tensor``: one fill), then the chunk's backward concatenates the halves' gradients:
  3 h x + 2 h (glu half: compare reads h x and writes h bool bytes; ``where`` reads the mask
  and the gradient and writes h x) + 4 h x + 6 h (linear half: two compares, the in-place
  ``logical_and_``, ``where``) + 4 h x (concatenation) = 11 h x + 8 h bytes, 9 kernels. The
  clamp runs inside ``bias_act_func``, the function ``--recompute-modules moe_act`` reruns
  (experts.py @cba6b0ed, ``activation_checkpoint.checkpoint(bias_act_func, ...)``), so its
  forward counts in the ``moe_act`` module (:mod:`~rlmcost.perf.selective_ac`).
* **Second projection's bias** (:func:`fc2_bias_bytes`): ``linear_fc2`` is a TE
  ``GroupedLinear`` with ``skip_bias_add=True``, so ``TEGroupedMLP._apply_bias`` adds each
  local expert's bias, weighted by the token's routing probability, in a Python loop:
  ``torch.cat([t + b * p for t, b, p in zip(split(out), biases, split(probs))])``. Per expert
  of n rows and output width d: ``b * p`` writes n d x (reading n x and d x), the add reads
  2 n d x and writes n d x; the concatenation reads and writes N d x: 6 N d x + N x +
  E_l d x bytes, 2 E_l + 1 kernels forward (E_l local experts). Backward: the multiply's two
  gradients, each a broadcast multiply and a reduction (``g * p`` summed over rows for the
  bias: 3 n d x + n x + d x; ``g * b`` summed over the width for the probability:
  3 n d x + n x + d x), then the splits' backward concatenates the per-expert gradients of
  the output (2 N d x) and of the probabilities (2 N x): 8 N d x + 4 N x + 2 E_l d x bytes,
  4 E_l + 2 kernels. The first projection's bias is TE's (``skip_bias_add=False``): the
  grouped GEMM's cuBLAS bias epilogue forward and the weight-gradient GEMM's bias-gradient
  epilogue backward (transformer_engine/pytorch/module/grouped_linear.py, TE v2.9, the
  container's TE: Megatron-Bridge docs/releases/software-versions.md @046518960), no kernel
  of its own.

Choices (stated in the rows that use them): the routing probabilities in the activation dtype
(``moe_router_dtype`` unset in the provider and the perf configs: megatron/core/transformer/
moe/router.py @cba6b0ed computes the logits in the input's dtype), so the final ``.to(dtype)``
copies nothing; the clamp's kernels are priced as Megatron-core runs them for a gated (3
projection) FFN only. Bytes are exact ints for the given dtype sizes; the time is the
profile's memory-bound rate (:meth:`~rlmcost.perf.efficiency.Device.elementwise_s`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass, StepContext

BOOL_BYTES = 1  # a comparison's mask (torch.bool)


def clamp_cat_bytes(rows: int, width: int, x: int) -> tuple[int, int, int, int]:
    """(forward bytes, forward kernels, backward bytes, backward kernels) of the clamp and
    concatenation before Megatron-core's fused clamped GLU, over ``rows`` x 2 ``width``
    elements of ``x`` bytes (module docstring).

    >>> clamp_cat_bytes(2, 3, 2)
    (96, 3, 180, 9)
    """
    h = rows * width  # elements per half
    forward = 8 * h * x
    glu = 3 * h * x + 2 * h * BOOL_BYTES  # le, where
    linear = 4 * h * x + 6 * h * BOOL_BYTES  # ge, le, logical_and_, where
    return forward, 3, glu + linear + 4 * h * x, 9


def fc2_bias_bytes(rows: int, width: int, local: int, x: int) -> tuple[int, int, int, int]:
    """(forward bytes, forward kernels, backward bytes, backward kernels) of
    ``TEGroupedMLP._apply_bias`` over ``rows`` token copies of output ``width`` on ``local``
    experts, ``x``-byte activations and probabilities (module docstring).

    >>> fc2_bias_bytes(4, 3, 2, 2)
    (164, 5, 248, 10)
    """
    forward = 6 * rows * width * x + rows * x + local * width * x
    backward = 8 * rows * width * x + 4 * rows * x + 2 * local * width * x
    return forward, 2 * local + 1, backward, 4 * local + 2


def price_expert_eager_ops(c: StepContext, rows: int, local: int, de: int, out: StagePass) -> None:
    """Add the rank's eager expert kernels (module docstring) to ``out``: ``rows`` token
    copies on ``local`` experts of per-rank width ``de``; the clamp's forward also to the
    ``moe_act`` module Megatron-core reruns."""
    arch, dev, x = c.arch, c.device, c.workload.activation_dtype.bytes
    if c.options.moe_act_clamp and arch.ffn_kind.projections == 3:
        fb, fk, bb, bk = clamp_cat_bytes(rows, de, x)
        f = dev.elementwise_s(fb, fk)
        out.fwd["elementwise"] += f
        out.bwd["elementwise"] += dev.elementwise_s(bb, bk)
        out.modules["moe_act"] += f
    if arch.mlp_bias and not c.options.hf_eager:
        fb, fk, bb, bk = fc2_bias_bytes(rows, int(arch.expert_width), local, x)
        out.fwd["elementwise"] += dev.elementwise_s(fb, fk)
        out.bwd["elementwise"] += dev.elementwise_s(bb, bk)
