"""Megatron-core's MoE token permutation without TE's fusion (``moe_permute_fusion`` off).

With ``moe_permute_fusion`` on, Transformer Engine's fused permute and unpermute run one kernel
each way (``te.pytorch.permutation``; TE PR 1373, the mask-based kernels), priced in
:mod:`~rlmcost.perf.step_pass` as two memory-bound kernels of 2 x rows x d x b bytes each
(rows = the rank's token copies, ``T k ETP / P_t``; b = the activation dtype's bytes). With it
off (Megatron-core's default: ``moe_permute_fusion: bool = False`` in
megatron/core/transformer/transformer_config.py, NVIDIA/Megatron-LM @6a6cd47883 2025-06-18
through @d98e8a64dd), ``permute`` and ``unpermute`` in megatron/core/transformer/moe/
moe_utils.py (the same commits; the all-to-all dispatcher calls them without probabilities at
the un-permutation, the experts' activation applies them) launch PyTorch kernels one by one,
for n tokens, E experts, rows = n k copies:

* forward, ``permute``: ``routing_map.bool().T.contiguous()`` (n E bytes read and written),
  ``reshape(-1).argsort(descending=True, stable=True)`` over n E bool keys with int64 values
  (priced as the index fill, 8 n E, and one 8-bit radix pass reading and writing keys and
  values, 2 x 9 n E; a choice: PyTorch's sort does not print its passes; at @6a6cd47883 the
  dropless path takes ``token_indices.masked_select(routing_map)`` instead, priced as the sort
  alike, under 1 % of the unfused extra at Qwen3-235B-A22B's shape), ``% num_tokens`` on
  the kept indices (16 rows), ``probs.T.contiguous()`` of the fp32 probabilities (8 n E) and
  their gather (16 rows), then ``tokens.index_select`` (the fused kernel's bytes, already
  priced); ``unpermute``: ``torch.zeros`` of the output (n d b) and ``scatter_add_`` of the rows
  x d copies into it, an atomic add per element;
* backward: ``scatter_add_``'s gradient is a gather (the fused kernel's bytes, priced);
  ``index_select``'s is ``zeros(n, d).index_add_`` (PyTorch's ``index_select_backward``): n d b
  zeros and rows x d atomic adds; the probabilities' gather backward zero-fills and
  index-puts (4 n E + 16 rows) and the transposes copy back (8 n E).

The atomic adds replace the fused kernels' plain reads and writes: each side's extra time is
the atomic kernel's minus what the step pass prices for the fused kernel it replaces (2 rows d b
forward, twice that backward, the step pass's backward rule). **The atomic rate**
:data:`ATOMIC_SCATTER_ADD_HBM_FRACTION` is measured: pytorch/pytorch PR 175760 (2026-02-25,
"Vectorize indexFuncLargeIndex for contiguous tensors") times ``index_add_`` of a bf16 [4M, 128]
tensor along dim 0 on H100 at 4719 us before its change (``indexFuncLargeIndex``, the kernel
the rows' PyTorch ran; 2230 us after, a later PyTorch); counting 3 b bytes per element (source
read, destination read and write), 4M x 128 elements in 4719 us move 0.194 (4 x 10^6 rows) to
0.204 (4 x 2^20) of the H100 SXM's 3.35 TB/s. ``scatter_add_`` with an expanded index takes
the same per-element atomic add (a choice: no H100 figure for it was found); other devices are
taken at the same fraction of their HBM bandwidth (an assumption). The extra kernels' launch
gaps count as the step pass's memory-bound kernels do. The host work of the extra launches is
not added to the MoE host floor (:mod:`~rlmcost.perf.moe_host`, itself a fused run's).

Applies to every dispatcher alike: the all-gather, all-to-all and flex (DeepEP) ones each call
``permute`` and ``unpermute`` with ``fused=moe_permute_fusion`` (token_dispatcher.py
@6a6cd47883, lines 281-308, 592-793 and 1111-1128); the bookkeeping is counted over the rank's
own n tokens and all E experts (a choice; the all-gather dispatcher's local map is n_group x
E_local, a small share either way). ``sort_chunks_by_idxs`` (the local experts' second
permutation after the all-to-all, fused or not): :mod:`~rlmcost.perf.moe_sort_chunks`.
Under a capacity factor the atomic adds run over the copies kept, or padded to capacity
(:func:`~rlmcost.perf.moe_ffn.permuted_rows`, as the fused pair's bytes); the bookkeeping (the
sort over the whole routing map, the index math) stays at the dropless count (a choice: a small
share of the bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.frozen import dataclass
from rlmcost.perf.rl_constants import Constant

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StepContext

ATOMIC_SCATTER_ADD_HBM_FRACTION = Constant(
    4e6 * 128 * 6 / 4719e-6 / 3.35e12, 4e6 * 128 * 6 / 4719e-6 / 3.35e12,
    4 * 2**20 * 128 * 6 / 4719e-6 / 3.35e12,
    "pytorch/pytorch PR 175760: bf16 index_add_ [4M, 128] dim 0, 4719 us on H100 (baseline)",
)  # fmt: skip
"""Fraction of HBM bandwidth an atomic scatter-add reaches, 3 b bytes per element (module doc)."""

UNFUSED_PERMUTE_NOTE = (
    "MoE permutation unfused (moe_permute_fusion off): Megatron-core's argsort, index_select "
    "and scatter_add_ kernels, each atomic scatter-add (forward scatter_add_, backward "
    f"index_add_) at {ATOMIC_SCATTER_ADD_HBM_FRACTION.value:.3f} of HBM bandwidth (PyTorch PR "
    "175760's H100 index_add_; rlmcost.perf.moe_permute)"
)
"""The output's note on the unfused permutation (a MoE trainer's ``moe_permute_fusion`` off)."""

PROBS_BYTES = 4
"""Bytes per routing probability at the permutation, taken as fp32 (a choice: they are in the
router's dtype, 2 B by default, 8 B under NeMo RL's fp64 router; under 2 % of the bytes)."""


@dataclass(frozen=True)
class UnfusedPermute:
    """The unfused kernels' traffic beyond the fused pair, one MoE layer on one rank."""

    fwd_bytes: int  # memory-bound bytes forward: transposes, sort, index math, zeros
    bwd_bytes: int  # backward: zeros, the probabilities' gather backward, transposes back
    atomic_elements: int  # rows x d atomic adds, forward (scatter_add_) and backward (index_add_)
    fwd_kernels: int = 8  # transpose, index fill, sort, %, probs transpose, gather, zeros, scatter
    bwd_kernels: int = 4  # zeros, index_add_, probs zeros and index_put_


def unfused_permute_bytes(tokens: int, top_k: int, experts: int, d: int, x: int) -> UnfusedPermute:
    """Bytes of the unfused permutation beyond the fused pair (module docstring); ``tokens``
    the rank's tokens, ``x`` the activation dtype's bytes.

    >>> u = unfused_permute_bytes(8192, 8, 128, 2048, 2)
    >>> u.fwd_bytes, u.bwd_bytes, u.atomic_elements
    (73400320, 47185920, 134217728)
    """
    rows, ne = tokens * top_k, tokens * experts
    fwd = 2 * ne + (8 * ne + 2 * 9 * ne) + 16 * rows + 2 * PROBS_BYTES * ne + 16 * rows
    fwd += tokens * d * x  # zeros for the scatter_add_ output
    bwd = tokens * d * x + PROBS_BYTES * ne + 16 * rows + 2 * PROBS_BYTES * ne
    return UnfusedPermute(fwd, bwd, rows * d)


def unfused_permute_s(c: StepContext, moe: bool) -> tuple[float, float]:
    """Extra (forward, backward) seconds of one MoE layer's permutation when
    ``moe_permute_fusion`` is off (0, 0 when on, or for a dense layer: ``moe`` false)."""
    if c.options.moe_permute_fusion or not moe:
        return 0.0, 0.0
    arch, lay, dev = c.arch, c.layout, c.device
    x, d, k = c.workload.activation_dtype.bytes, int(arch.expert_width), int(arch.top_k)
    n = c.tokens * lay.expert_tp // lay.tp  # the rank's tokens, as the step pass
    u = unfused_permute_bytes(n, k, int(arch.n_experts), d, x)
    from rlmcost.perf.moe_ffn import permuted_rows

    rows = permuted_rows(c)  # the copies permuted, kept ones under a capacity (moe_ffn)
    rate = dev.hardware.hbm_bandwidth_bytes_per_s * ATOMIC_SCATTER_ADD_HBM_FRACTION.value
    atomic_s = 3 * x * rows * d / rate
    fwd = dev.elementwise_s(u.fwd_bytes, u.fwd_kernels) + atomic_s - dev.memory_s(2 * rows * d * x)
    bwd = dev.elementwise_s(u.bwd_bytes, u.bwd_kernels) + atomic_s - dev.memory_s(4 * rows * d * x)
    return max(0.0, fwd), max(0.0, bwd)
