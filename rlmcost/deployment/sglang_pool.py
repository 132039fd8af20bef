"""SGLang's KV-cache pool as SGLang sizes it, bytes per GPU.

SGLang has no profile run. ``ModelRunner`` (sgl-project/sglang
``python/sglang/srt/model_executor/model_runner.py``; the same arithmetic from v0.3 through
v0.4.6.post4, the release AReaL v0.3 pins, to v0.5's ``model_runner_kv_cache_mixin.py`` and
``pool_configurator.py`` ``profile_available_bytes``, the releases slime's and miles' images
ship, v0.5.5-v0.5.15) measures, in GiB (``get_available_gpu_memory``:
``torch.cuda.mem_get_info`` after ``empty_cache``, the minimum over the engine's ranks):

* ``total_gpu_memory``: the free memory once ``init_torch_distributed`` has run, that is the
  device less the CUDA context and what the process group's set-up allocates (NCCL
  communicators, custom all-reduce buffers; logged as "Init torch distributed ends. mem
  usage=X GB");
* ``available_gpu_memory``: the free memory once the weights are loaded;

and keeps ``rest_memory = available_gpu_memory - total_gpu_memory * (1 -
mem_fraction_static)`` for the pool: ``mem_fraction_static x total - weights``. The activations,
the sampler and the CUDA graphs (captured after the pool) live in the ``1 -
mem_fraction_static`` left over; none of them is subtracted from the pool. Its token slots are
``rest_memory // cell_size``, ``cell_size`` one token's K and V on the GPU (KV heads / attention
TP x head dim x layers x 2 x the KV dtype's bytes): :func:`~rlmcost.deployment.terms.
pool_tokens` at page size 1.

Not modelled: ``--max-total-tokens`` (a cap below the pool), page sizes above 1 (the pool is
then rounded down to whole pages), hybrid SWA / Mamba pools, a speculative draft model's share,
and memory other processes hold on the device when the engine starts (a colocated trainer that
has not released its memory shrinks ``total_gpu_memory``).
"""

from __future__ import annotations

from math import floor

from rlmcost.errors import SpecError

GIB = 2**30

SGLANG_DIST_INIT_BYTES = 2 * GIB
"""What SGLang's ``init_torch_distributed`` takes on each GPU of an engine of several GPUs:
its log's "Init torch distributed ends. mem usage=2.01 GB" (1.77-2.01 GB over the eight ranks;
SGLang's GB is 2^30 bytes, ``get_available_gpu_memory``) in sgl-project/sglang PR 11716
(2025-10-16, TP 8 on H200: "Load weight begin. avail mem=137.29 GB" on a 139.8 GiB device, the
CUDA context and these 2.0 GB below it). SGLang takes the minimum free memory over the ranks, so
the largest rank's figure counts. On one GPU nothing is set up: "mem usage=0.00 GB" (PR 11032,
2025-09-28, TP 1). One log, one TP size; :data:`SGLANG_DIST_INIT_RANGE` is its spread."""

SGLANG_DIST_INIT_RANGE = (int(1.77 * GIB), int(2.01 * GIB))
"""The eight ranks' "Init torch distributed ends" figures of PR 11716 (``SGLANG_DIST_INIT_BYTES``
's source), low and high, bytes: ``rlmcost validate --memory``'s interval of an SGLang row."""


def dist_init_bytes(gpus: int) -> int:
    """What ``init_torch_distributed`` takes on each GPU of an engine of ``gpus`` GPUs:
    :data:`SGLANG_DIST_INIT_BYTES` on several, 0 on one.

    >>> dist_init_bytes(1), dist_init_bytes(4) == 2 * 2**30
    (0, True)
    """
    if gpus < 1:
        raise SpecError(f"an SGLang engine spans >= 1 GPU, got {gpus}")
    return SGLANG_DIST_INIT_BYTES if gpus > 1 else 0


def total_gpu_bytes(capacity: int, cuda_context: int, gpus: int) -> int:
    """SGLang's ``total_gpu_memory`` in bytes: the device's ``capacity`` less the CUDA context
    and :func:`dist_init_bytes` (module docstring).

    >>> total_gpu_bytes(80 * 2**30, 2**29, 1) == 79.5 * 2**30
    True
    """
    return capacity - cuda_context - dist_init_bytes(gpus)


def sglang_pool_bytes(fraction: float, total: int, weights: int) -> int:
    """``rest_memory`` in bytes: ``mem_fraction_static x total_gpu_memory`` less the weights
    loaded since (module docstring); negative when they do not fit.

    Qwen3-235B-A22B-FP8 on 4 H100 (79.18 GiB each), ``--mem-fraction-static 0.93``, 54.77 GiB
    of weights per GPU: 0.93 x (79.18 - 0.5 - 2) GiB - 54.77 GiB = 16.54 GiB.

    >>> round(sglang_pool_bytes(0.93, int((79.18 - 2.5) * 2**30), int(54.77 * 2**30)) / 2**30, 2)
    16.54
    """
    if not 0 < fraction <= 1:
        raise SpecError(f"SGLang's --mem-fraction-static lies in (0, 1], got {fraction:g}")
    return floor(fraction * total) - weights
