"""Megatron-core's unfused RoPE: the eager kernels of ``_apply_rotary_pos_emb_bshd`` on q and k.

Megatron-core applies rotary embeddings either with TE's fused kernel (``apply_rope_fusion``)
or with the eager PyTorch function ``_apply_rotary_pos_emb_bshd`` (megatron/core/models/common/
embeddings/rope_utils.py at NVIDIA/Megatron-LM cba6b0ed, Megatron-Bridge r0.2.0's
3rdparty submodule, the 25.11 container's). The fused kernel is priced by
:mod:`~rlmcost.perf.step_pass` as one pass over q and k. GPT-OSS runs the eager one:

* its provider sets ``position_embedding_type = "yarn"`` (Megatron-Bridge src/megatron/bridge/
  models/gpt_oss/gpt_oss_provider.py @046518960), and ``GPTModelProvider.provide`` turns
  ``apply_rope_fusion`` off for every type but ``"rope"`` (``validate_rope_fusion_compatibility``,
  src/megatron/bridge/utils/fusions.py @046518960), after the performance scripts' common
  overrides had set it on (scripts/performance/utils/helpers.py ``set_common_perf_overrides``);
* even fused, ``apply_rotary_pos_emb`` takes the unfused path when ``mscale != 1``
  (rope_utils.py @cba6b0ed: "mscale=... is not supported by TE's fused RoPE"), and YaRN's
  concentration factor with ``yarn_mscale`` unset is 0.1 ln(32) + 1 = 1.35
  (yarn_rotary_pos_embedding.py ``_yarn_get_concentration_factor``, scaling factor 32).

**The kernels** (:func:`unfused_rope_bytes`), per call on a tensor of E elements of x bytes
(q [s, b, h, d], then k [s, b, g, d]; the rotary part is the whole head, d = head_dim, so
``t_pass`` is empty) and the fp32 frequencies [s, 1, 1, d] (F = s d elements, the sequence's
positions, shared by the micro-batch's sequences):

* forward: ``cos``, ``* mscale``, ``.to(x)`` and the same for ``sin`` on the frequencies
  (2 (5 x 4 + x) F bytes, 6 kernels); ``t * cos_`` (E x + F x read, E x written);
  ``_rotate_half``'s ``-x2`` (E x / 2 each way) and ``cat`` (E x each way); ``* sin_`` (as
  ``* cos_``); the add (2 E x read, E x written); ``torch.cat((t, t_pass))`` with the empty
  ``t_pass`` (E x each way): 12 E x + 2 F x + 2 (20 + x) F bytes, 12 kernels;
* backward (autograd): ``grad * sin_``, the ``neg`` of its first half and the ``cat`` of the
  chunk's two gradients, ``grad * cos_``, their sum, then ``t_pass``'s ``slice_backward``
  (a zero-filled tensor of t's shape, E x written) added to it: 14 E x + 2 F x bytes,
  7 kernels.

Both counts are what ``torch.utils._python_dispatch.TorchDispatchMode`` records for that
function, copied from Megatron-core, forward and backward (tests/test_megatron_rope.py).
Priced at the profile's memory-bound rate (:meth:`~rlmcost.perf.efficiency.Device.
elementwise_s`), in place of the fused pass, on every layer (sliding-window layers rotate
too). Only where a row says so (``StepOptions.rope_unfused``): other Megatron-core rows keep
the fused pass they ran (``apply_rope_fusion`` with plain RoPE).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass, StepContext

FP32 = 4  # the rotary frequencies' bytes (YarnRotaryEmbedding computes them in fp32)


def unfused_rope_bytes(elements: int, positions: int, rot_dim: int,
                       x: int) -> tuple[int, int, int, int]:  # fmt: skip
    """(forward bytes, forward kernels, backward bytes, backward kernels) of one
    ``_apply_rotary_pos_emb_bshd`` call on ``elements`` elements of ``x`` bytes over
    ``positions`` positions of ``rot_dim`` rotary channels (module docstring).

    >>> unfused_rope_bytes(2 * 4 * 16 * 64, 16, 64, 2)  # s 16, b 2, 4 heads of 64, bf16
    (245760, 12, 233472, 7)
    """
    e, f = elements * x, positions * rot_dim
    tables = 2 * (5 * FP32 + x) * f  # cos/sin, * mscale, .to(x)
    forward = 12 * e + 2 * f * x + tables
    backward = 14 * e + 2 * f * x
    return forward, 12, backward, 7


def price_unfused_rope(c: StepContext, q_width: int, kv_width: int, out: StagePass) -> None:
    """Add one layer's unfused RoPE on q (``q_width`` per token on the rank) and k
    (``kv_width``) for the rank's micro-batch to ``out`` (module docstring)."""
    x, d, s = c.workload.activation_dtype.bytes, int(c.arch.head_dim), c.positions
    for width in (q_width, kv_width):
        fb, fk, bb, bk = unfused_rope_bytes(c.tokens * width, s, d, x)
        out.fwd["elementwise"] += c.device.elementwise_s(fb, fk)
        out.bwd["elementwise"] += c.device.elementwise_s(bb, bk)
