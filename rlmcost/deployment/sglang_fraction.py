"""SGLang's default ``mem_fraction_static``: the fraction it picks when none is given.

``ServerArgs._handle_gpu_memory_settings`` (sgl-project/sglang
``python/sglang/srt/server_args.py`` at v0.5.5, the first of the releases slime's and miles'
images ship) reads the device's memory ``gpu_mem`` in MiB (``get_device_memory_capacity``:
the smallest ``nvidia-smi --query-gpu=memory.total`` over the node's GPUs), sets
``chunked_prefill_size`` and ``cuda_graph_max_bs`` by its tier (:data:`SGLANG_GPU_TIERS`), and
reserves, in MiB::

    reserved = 512 + max(chunked_prefill_size, 2048) x 1.5 + cuda_graph_max_bs x 2
               + tp x pp / 8 x 1024
             [+ cuda_graph_max_bs x dp x 3 (+ cuda_graph_max_bs x dp x 1.5 past 300)
                under --enable-dp-attention]
    reserved = max(reserved, 10240) when gpu_mem > 60 x 1024
             [+ 2048 for an EAGLE / MTP draft, + 6144 for a STANDALONE draft model]
    mem_fraction_static = round((gpu_mem - reserved) / gpu_mem, 3)

rlmcost takes ``gpu_mem`` as the device's ``total_memory`` (``HardwareSpec.hbm_usable_bytes``)
in whole MiB: nvidia-smi's ``memory.total`` is the driver's larger figure (81559 MiB on an
H100 80GB HBM3 against torch's 81079), which moves the fraction by at most 0.001 after the
rounding. Not modelled: the multimodal adjustment (``adjust_mem_fraction_for_vlm``), a
``--chunked-prefill-size`` / ``--cuda-graph-max-bs`` given, NPUs' tiers, and v0.5.15's extra
reserve for prefill CUDA graphs (``len(prefill bs) x 8`` MiB, 1.5 GiB with an MLA backend, when
those graphs are on). v0.4.6.post4 (AReaL v0.3) had another rule: 0.88 at TP x PP 1, down to
0.79 at 16 on GPUs of <= 80 GiB, raised toward ``(gpu_mem - 18 GiB) / gpu_mem`` past 96 GiB;
AReaL sets its own fraction, so it is not taken here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.perf.speculative import MTP

if TYPE_CHECKING:
    from rlmcost.deployment.engine import EngineSpec

MIB = 2**20

SGLANG_GPU_TIERS = (
    (20 * 1024, 2048, 8, 8),
    (35 * 1024, 2048, 24, 80),
    (60 * 1024, 4096, 32, 160),
    (90 * 1024, 8192, 256, 512),
    (160 * 1024, 8192, 256, 512),
)
"""``(below MiB, chunked_prefill_size, cuda_graph_max_bs at TP < 4, at TP >= 4)`` of
``_handle_gpu_memory_settings`` (server_args.py @ v0.5.5): T4 / 4080; A10 / 4090; A100-40GB /
L40; H100 / A100-80GB; H20 / H200. Larger devices (B200, MI300X):
:data:`SGLANG_LARGE_GPU_TIER`."""

SGLANG_LARGE_GPU_TIER = (16384, 512, 512)
"""``(chunked_prefill_size, cuda_graph_max_bs, same)`` of devices of >= 160 GiB (B200, MI300;
server_args.py @ v0.5.5)."""

SGLANG_RESERVED_BASE_MIB = 512
"""``reserved_mem = 512``: "Constant meta data (e.g., from attention backend)" (server_args.py
@ v0.5.5 ``_handle_gpu_memory_settings``)."""

SGLANG_RESERVED_FLOOR_MIB = 10 * 1024
"""``reserved_mem = max(reserved_mem, 10 * 1024)`` on devices of more than 60 GiB
(server_args.py @ v0.5.5)."""

SGLANG_DRAFT_RESERVE_MIB = {"eagle": 2 * 1024, "standalone": 6 * 1024}
"""What a speculative draft adds to ``reserved_mem`` (server_args.py @ v0.5.5): 2 GiB for an
EAGLE / MTP draft ("eagle draft models and cuda graphs"), 6 GiB for a STANDALONE draft
model."""


def sglang_default_fraction(gpu_mib: int, tp: int, pp: int = 1, dp_attention: int = 1,
                            draft: str | None = None) -> float:
    """SGLang's ``mem_fraction_static`` when none is given (module docstring), for a device of
    ``gpu_mib`` MiB, an engine of ``tp`` x ``pp`` GPUs, ``dp_attention`` its
    ``--dp-size`` under ``--enable-dp-attention`` (1: off) and ``draft`` a key of
    :data:`SGLANG_DRAFT_RESERVE_MIB` (None: no speculative decoding).

    An H100 (81079 MiB) at TP 1: 512 + 8192 x 1.5 + 256 x 2 + 128 = 13440 MiB reserved,
    (81079 - 13440) / 81079 = 0.834; at TP 8: 512 + 12288 + 1024 + 1024 = 14848, 0.817.

    >>> sglang_default_fraction(81079, 1), sglang_default_fraction(81079, 8)
    (0.834, 0.817)
    """
    if gpu_mib <= 0 or tp < 1 or pp < 1 or dp_attention < 1:
        raise SpecError(f"SGLang's default fraction needs a device of > 0 MiB and degrees >= 1, "
                        f"got {gpu_mib} MiB, tp {tp}, pp {pp}, dp {dp_attention}")
    if draft is not None and draft not in SGLANG_DRAFT_RESERVE_MIB:
        raise SpecError(f"SGLang draft {draft!r}: one of {', '.join(SGLANG_DRAFT_RESERVE_MIB)}")
    chunk, max_bs = SGLANG_LARGE_GPU_TIER[:2]
    for below, tier_chunk, small_tp, large_tp in SGLANG_GPU_TIERS:
        if gpu_mib < below:
            chunk, max_bs = tier_chunk, small_tp if tp < 4 else large_tp
            break
    reserved = SGLANG_RESERVED_BASE_MIB + max(chunk, 2048) * 1.5 + max_bs * 2 + tp * pp / 8 * 1024
    if dp_attention > 1:
        reserved += max_bs * dp_attention * 3
        if max_bs > 300:
            reserved += max_bs * dp_attention * 1.5
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, SGLANG_RESERVED_FLOOR_MIB)
    if draft is not None:
        reserved += SGLANG_DRAFT_RESERVE_MIB[draft]
    fraction = round((gpu_mib - reserved) / gpu_mib, 3)
    if fraction <= 0:
        raise SpecError(f"SGLang reserves {reserved:.0f} MiB of a {gpu_mib} MiB device: no "
                        "memory left for weights and KV cache; give --gpu-memory-utilization")
    return fraction


def engine_sglang_fraction(engine: EngineSpec, capacity_bytes: int, tp: int, pp: int) -> float:
    """:func:`sglang_default_fraction` of an SGLang ``engine`` of ``tp`` x ``pp`` GPUs on a
    device of ``capacity_bytes``: its DP attention, and its speculative draft as SGLang runs it
    (an MTP layer as EAGLE / NEXTN, a draft model as STANDALONE)."""
    draft = None
    if engine.speculative_tokens:
        draft = "eagle" if engine.speculative_draft == MTP else "standalone"
    return sglang_default_fraction(capacity_bytes // MIB, tp, pp, engine.dp_attention, draft)
