"""FSDP1's ``backward_prefetch``: when each layer's backward all-gather runs on the GPU.

ZeRO-3 as PyTorch FSDP1 (``FULL_SHARD``) all-gathers each wrapped layer's flat parameter again
before its backward and reduce-scatters its gradient after it. Source: torch/distributed/fsdp/
_runtime_utils.py of the torch 2.0 era (pytorch/pytorch @00ae0bc91, ``_unshard``, ``_reshard``,
``_pre_backward_hook``, ``_post_backward_hook``; the late-2022 version with ``_State`` orders
the post-backward hook the same way) and the rate limiter of ``limit_all_gathers``
(``_limiter_utils.py``: ``_FreeEventQueue``, at most 2 all-gathers in flight):

* **Streams.** All-gathers are issued from FSDP's ``unshard`` stream, which never waits for
  the compute stream in the backward; reduce-scatters from ``post_backward``, which first waits
  for the compute stream (the gradient). Both go through one process group, so NCCL runs them
  on one stream in issue order (FSDP's ``BackwardPrefetch`` docstring, torch/distributed/fsdp/
  api.py: "any collectives, even if issued from different streams, contend for the same
  per-device NCCL stream"). Layer i's backward waits for its all-gather
  (``current_stream().wait_stream(unshard)`` in its pre-backward hook).
* ``pre`` (``BACKWARD_PRE``, PyTorch's default; FSDP2 prefetches the same way): layer i's
  pre-backward hook issues layer i-1's all-gather.
* ``post`` (``BACKWARD_POST``, Composer's default: composer/trainer/dist_strategy.py
  ``set_fsdp_default`` @v0.16.4 line 135): layer i's post-backward hook frees i's parameters,
  issues layer i-1's all-gather, then i's reduce-scatter, so the all-gather precedes the
  reduce-scatter on the NCCL stream (pytorch/pytorch PR 87917's docstring: "the next
  all-gather is reordered to be before the current reduce-scatter"). The hook runs when the
  CPU has queued layer i's backward kernels, not when they have run; with ``limit_all_gathers``
  the CPU first waits (in the steady state: one free event recorded per post-backward hook, one
  dequeued per all-gather) for the free event of layer i+1, its backward done on the GPU. So on the
  GPU the all-gather of i-1 starts when layer i+1's backward ends, behind the reduce-scatter of
  i+1, and runs beside layer i's backward: per layer the NCCL stream has r + a seconds of
  collectives to run beside c seconds of compute, as under ``pre`` (max(c, r + a), the
  collectives' contention with the compute counted as for every hidden collective:
  :mod:`~rlmcost.perf.overlap_contention`). PyTorch's docs' "overlaps the current
  reduce-scatter and the next gradient computation" is the CPU's issue order; the price here is
  the GPU's, so ``post`` prices as ``pre``. Assumes the CPU issues a layer's kernels faster
  than the GPU runs them (the CPU is one layer ahead).
* ``none``: layer i's all-gather is issued on demand in its own pre-backward hook, after layer
  i+1's reduce-scatter on the NCCL stream; that reduce-scatter waits for layer i+1's gradient
  and layer i's backward waits for the all-gather: per layer c + r + a, nothing running beside
  the collectives (exposed, no contention). Traces: pytorch/pytorch issue 64803 ("next
  layer's computation is blocked by all_gather and all_gather is blocked by reduce_scatter"),
  PR 70235.

Not priced: ``post``'s lower peak memory (one unsharded layer fewer); the first layer of each
backward, gathered on demand under all three.

**The post-backward hook's kernels** (:func:`fsdp1_post_backward_bytes`,
``StepOptions.fsdp1_post_backward``). Before each layer's reduce-scatter FSDP1 runs, on its
``post_backward`` stream, over the layer's whole unsharded gradient (torch 2.0's
``_post_backward_hook`` in torch/distributed/fsdp/_runtime_utils.py: ``flat_param.grad.to(
handle._reduce_dtype)`` where the gradient's dtype is not the reduce dtype, then the default
communication hook, torch/distributed/algorithms/_comm_hooks/default_hooks.py
``reduce_scatter_hook``: ``grad.div_(gradient_predivide_factor)`` before
``_reduce_scatter_base`` when the factor is above 1, which ``_get_gradient_predivide_factor``
makes it for every world size from 2: the largest power of 2 f with world % f == 0 and
world / f > f, or its double). Under a MixedPrecision of bf16 parameters and fp32 reduction
(Composer's 'DEFAULT' from v0.16.4: composer/trainer/mosaic_fsdp_utils.py
``get_mixed_precision``, reduce_dtype float32 since PR 2628, 2023-10-10) that is a cast (2 + 4
bytes per parameter) and an in-place divide (4 + 4), 14 bytes per parameter of the layer per
micro-batch; with the reduction in the parameters' bf16 (Composer's 'DEFAULT' from v0.14.0 to
v0.16.3 leaves reduce_dtype None, which FSDP1 reads as the parameter dtype:
torch/distributed/fsdp/flat_param.py ``FlatParamHandle._init_param_reduce_dtypes`` in torch
2.0 / 2.1; the llm-foundry rows' runs) no cast, the divide only (2 + 2) (FSDP1
reduce-scatters every micro-batch, as rlmcost's ZeRO-3 does). Priced serial with the
backward's compute (an assumption: the hook's kernels launch full grids that take the SMs as
the compute stream's kernels free them; the reduce-scatter itself is the overlapped
collective above). Not priced: the post-divide of the shard, the shard's accumulation and
the shard's fp32 -> bf16 cast before each all-gather (``_use_low_precision_shard``: 6 bytes
per parameter of the 1 / P shard, under a tenth of the hook's at P = 8).
"""

from __future__ import annotations

from enum import StrEnum

from rlmcost.perf.overlap_contention import overlapped_extra_s


class BackwardPrefetch(StrEnum):
    """FSDP1's ``backward_prefetch`` (torch.distributed.fsdp.BackwardPrefetch)."""

    PRE = "pre"  # BACKWARD_PRE: PyTorch's default and FSDP2's behaviour
    POST = "post"  # BACKWARD_POST: Composer's default (dist_strategy.py @v0.16.4:135)
    NONE = "none"  # backward_prefetch=None: gathered on demand, behind the reduce-scatter


PREFETCH_NOTES = {
    BackwardPrefetch.POST: "FSDP1 backward_prefetch post (BACKWARD_POST): priced as pre; the "
    "next all-gather still runs beside the current layer's backward on the GPU "
    "(rlmcost.perf.fsdp_prefetch)",
    BackwardPrefetch.NONE: "FSDP1 backward_prefetch none: each layer's backward all-gather "
    "waits behind the previous layer's reduce-scatter; both exposed (rlmcost.perf.fsdp_prefetch)",
}
"""The modelling choice a step states when ZeRO-3 runs with a prefetch other than ``pre``."""


def gradient_predivide_factor(world: int) -> int:
    """FSDP1's pre-divide factor of a reduce-scatter over ``world`` ranks (torch
    ``_get_gradient_predivide_factor``; module docstring).

    >>> [gradient_predivide_factor(n) for n in (1, 2, 8, 32, 64)]
    [1, 2, 4, 8, 8]
    """
    factor = 1
    while world % factor == 0 and world / factor > factor:
        factor *= 2
    return factor


def fsdp1_post_backward_bytes(params: int, param_bytes: int, reduce_bytes: int, world: int) -> int:
    """HBM bytes FSDP1's post-backward hook moves per micro-batch over ``params`` unsharded
    parameters reduce-scattered over ``world`` ranks: the gradient's cast to the reduce dtype
    where it differs, and the pre-divide in that dtype (module docstring).

    >>> fsdp1_post_backward_bytes(1_000, 2, 4, 8)  # bf16 gradients, fp32 reduce: 6 + 8
    14000
    >>> fsdp1_post_backward_bytes(1_000, 2, 2, 8)  # pure bf16: the divide only
    4000
    """
    cast = (param_bytes + reduce_bytes) * params if reduce_bytes != param_bytes else 0
    divide = 2 * reduce_bytes * params if gradient_predivide_factor(world) > 1 else 0
    return cast + divide


def zero3_backward_extra_s(
    gather_s: float, reduce_s: float, compute_s: float, prefetch: BackwardPrefetch,
    slowdown: float,
) -> float:
    """Seconds a ZeRO-3 backward pass of ``compute_s`` takes beyond its compute, with
    ``gather_s`` of all-gathers and ``reduce_s`` of reduce-scatters (module docstring).

    >>> zero3_backward_extra_s(2.0, 3.0, 10.0, BackwardPrefetch.NONE, 0.189)  # serial
    5.0
    >>> a = zero3_backward_extra_s(2.0, 3.0, 10.0, BackwardPrefetch.POST, 0.189)
    >>> a == zero3_backward_extra_s(2.0, 3.0, 10.0, BackwardPrefetch.PRE, 0.189)
    True
    >>> round(a, 4)  # hidden: the contention share of the collectives
    0.7948
    """  # fmt: skip
    if prefetch is BackwardPrefetch.NONE:
        return gather_s + reduce_s
    return overlapped_extra_s(gather_s + reduce_s, compute_s, slowdown)
