"""Megatron-core's second MoE permutation: the all-to-all dispatcher's sort by local expert.

After the EP all-to-all a rank holds its tokens grouped by source rank, each group split by
local expert ([EP x TP chunks] x [local experts]); the grouped GEMM wants them grouped by
local expert. So ``MoEAlltoAllTokenDispatcher`` runs, whenever ``num_local_experts > 1``,
"Permutation 2: Sort tokens by local expert" in ``dispatch_postprocess`` and "Unpermutation 2:
Unsort tokens by local expert" in ``combine_preprocess`` (megatron/core/transformer/moe/
token_dispatcher.py at NVIDIA/Megatron-LM cba6b0ed, lines 711-746 and 754-780, the
Megatron-Bridge r0.2.0 submodule; the same at d98e8a64dd, lines 753-820), each a
``sort_chunks_by_idxs`` over every row the rank received (moe_utils.py @cba6b0ed). With
``moe_permute_fusion`` it is TransformerEngine's ``moe_sort_chunks_by_index`` (the dispatch
side ``..._with_probs``, carrying the routing probabilities along): ``_moe_chunk_sort``
(transformer_engine/pytorch/permutation.py @v2.9) builds an int32 row map
(``make_chunk_sort_map``, one kernel writing 4 bytes a row) and moves the rows by it
(``sort_chunks_by_map``, reading the map); its backward is one ``sort_chunks_by_map`` of the
gradient by the same map (``is_forward=False``): the same row bytes, the map read. Per sort of
R rows of width d, x-byte activations, p-byte probabilities:

* forward: 2 R d x (+ 2 R p with the probabilities) + 4 R (map written) + 4 R (map read),
  2 kernels;
* backward: 2 R d x (+ 2 R p) + 4 R, 1 kernel.

A permutation's backward moves what its forward moves (it is the inverse permutation), not the
step pass's 2 x rule for kernels that read a saved input. Without the fusion the same sort is
``torch.split`` + ``torch.cat`` (and ``cat``'s backward a ``cat`` of the gradients): the same
row bytes without the map, priced alike (a choice: the map is 8 of 2 d x + 8 bytes a row, under
0.3 % at d >= 1024). Under a capacity with padding Megatron-core transposes the padded
[EP x TP, local, capacity] block with ``.contiguous()`` instead: the same bytes over the
padded rows. R is the rank's received rows as its grouped GEMM sees them
(:func:`~rlmcost.perf.moe_ffn.routed_experts`: the busiest rank's, capped or padded).

Applies to the ``alltoall`` dispatcher only (:class:`~rlmcost.perf.ep_dispatch.EpDispatcher`):
the flex (DeepEP, HybridEP) dispatcher permutes the received tokens once by their routing map
(``get_permuted_hidden_states_by_experts``, the same file), the all-gather dispatcher once by
the local map. Priced where EP > 1 (a choice: at EP 1 Megatron-core's sort still copies the
rows in their own order, but rlmcost's default dispatcher at EP 1 also stands for trainers
without Megatron-core's dispatcher). The probabilities are taken at
:data:`~rlmcost.perf.moe_permute.PROBS_BYTES` as the fused pair's are. Bytes are exact ints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.perf.ep_dispatch import EpDispatcher
from rlmcost.perf.moe_permute import PROBS_BYTES, unfused_permute_s

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StepContext

MAP_BYTES = 4
"""Bytes per row of TE's chunk-sort map (int32; ``make_chunk_sort_map``, module docstring)."""


def sort_chunks_bytes(rows: int, d: int, x: int, probs: int) -> tuple[int, int, int, int]:
    """(forward bytes, forward kernels, backward bytes, backward kernels) of the dispatch-side
    sort (probabilities of ``probs`` bytes carried) and the combine-side un-sort together, over
    ``rows`` received rows of width ``d`` in ``x``-byte activations (module docstring).

    >>> sort_chunks_bytes(10, 4, 2, 4)
    (560, 4, 480, 2)
    """
    moved = 2 * rows * d * x
    forward = 2 * moved + 2 * rows * probs + 2 * 2 * MAP_BYTES * rows
    backward = 2 * moved + 2 * rows * probs + 2 * MAP_BYTES * rows
    return forward, 4, backward, 2


def local_sort_s(c: StepContext, moe: bool, rows: int) -> tuple[float, float]:
    """(forward, backward) seconds of one MoE layer's sort and un-sort by local expert on one
    rank receiving ``rows`` rows; (0, 0) where the dispatcher does not sort (module docstring)."""
    lay, arch = c.layout, c.arch
    local = int(arch.n_experts) // lay.ep if moe else 0
    if c.options.ep_dispatcher is not EpDispatcher.ALLTOALL or lay.ep < 2 or local < 2:
        return 0.0, 0.0
    x = c.workload.activation_dtype.bytes
    fb, fk, bb, bk = sort_chunks_bytes(rows, int(arch.expert_width), x, PROBS_BYTES)
    return c.device.elementwise_s(fb, fk), c.device.elementwise_s(bb, bk)


def dispatcher_permute_s(c: StepContext, moe: bool, rows: int) -> tuple[float, float]:
    """Extra (forward, backward) seconds of one MoE layer's token permutations beyond TE's
    fused permute / unpermute pair: the unfused kernels (:mod:`~rlmcost.perf.moe_permute`) and
    the all-to-all dispatcher's sort by local expert (:func:`local_sort_s`)."""
    uf, ub = unfused_permute_s(c, moe)
    sf, sb = local_sort_s(c, moe, rows)
    return uf + sf, ub + sb
