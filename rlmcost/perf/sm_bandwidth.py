"""What a Hopper part's SMs can draw from HBM: the H20's streaming bandwidth (issue 18).

A memory-bound kernel keeps a bounded number of bytes in flight per SM, so the bandwidth it
draws is about ``SMs x bytes in flight / latency`` (Little's law) until the HBM itself
saturates. The H20 has the H100's SM (a cut GH100 die: 78 SMs, ``efficiency.py``) and more HBM
bandwidth (4.0 TB/s against 3.35): per SM it must draw 51 GB/s to reach its datasheet figure,
twice an H100 SXM's 25 GB/s. Whether 78 Hopper SMs can was measured on an H100 SXM 80GB HBM3
(PyTorch 2.11.0+cu130, Triton 3.6) with ``benchmarks/bench_decode_gemv.py``: a Triton kernel sums
a 2 GiB bf16 buffer with a persistent grid of ``n`` programs, one per SM, over block sizes 4096
to 32768 elements and 8 to 32 warps; the best of the sweep (:data:`HOPPER_SM_READ_BYTES_PER_S`):

====  ==========  =============
SMs   TB/s read   GB/s per SM
====  ==========  =============
 39     1.502         38.5
 66     2.222         33.7
 78     2.425         31.1
132     2.904         22.0  (0.87 of 3.35 TB/s: the HBM bound, as PyTorch's own kernels)
====  ==========  =============

(a second run of the committed script: 2.444 TB/s on 78 SMs, 2.914 on 132, within 1 %.)
So 78 Hopper SMs drew 2.43 TB/s, 0.61 of the H20's 4.0 TB/s (:data:`H20_STREAM_EFFICIENCY`),
where an H100's whole die reaches the 0.87-0.91 the Hopper profiles take
(:mod:`~rlmcost.perf.elementwise_bw`). The per-SM rate falls as more SMs share the H100's HBM
(38.5 GB/s at 39 SMs, 31.1 at 78); the H20's faster HBM is less loaded at 78 SMs, so its SMs
may draw up to the 39-SM rate: 78 x 38.5 = 3.0 TB/s, 0.75 (:data:`H20_STREAM_HIGH`). The
value is the measurement at the H20's own SM count (an assumption: the H20's HBM3 latency is
the H100's; no published H20 copy figure was found). The kernel runs one program per SM, at
most 32 warps: half the 64 warps a Hopper SM can hold, so a kernel with more warps resident per
SM may keep more bytes in flight and draw more (unmeasured; the high end covers it). The other
Hopper parts keep their figure: 132 SMs draw at least 0.87 of an H100's bandwidth (above) and
4.3 TB/s, 0.9, of an H200's (a device-to-device copy on an H200 through PyTorch, read plus
written bytes).

The same run's cuBLAS batch-1 ``torch.nn.functional.linear`` of Qwen3-8B and -32B's decode
shapes streamed 2.80-2.83 TB/s (0.84 of 3.35) on all 132 SMs, kernel
``nvjet_sm90_tst_256x8_64x6_2x1_v_bz_TNT`` (cuBLAS 13; the benchmark prints both figures).
"""

from __future__ import annotations

HOPPER_SM_READ_BYTES_PER_S: dict[int, float] = {
    39: 1.502e12,
    66: 2.222e12,
    78: 2.425e12,
    132: 2.904e12,
}
"""SMs -> bytes/s a persistent streaming read drew on an H100 SXM with its grid held to that many
SMs (``benchmarks/bench_decode_gemv.py``; module docstring)."""

H20_SMS = 78
H20_HBM_BYTES_PER_S = 4_000_000_000_000
"""The H20's SM count and datasheet HBM3 bandwidth (the registry's ``h20``; a test keeps them
equal)."""

H20_STREAM_EFFICIENCY = round(HOPPER_SM_READ_BYTES_PER_S[H20_SMS] / H20_HBM_BYTES_PER_S, 2)
"""0.61: what 78 Hopper SMs drew (2.43 TB/s) over the H20's 4.0 TB/s."""

H20_STREAM_HIGH = round(H20_SMS * HOPPER_SM_READ_BYTES_PER_S[39] / 39 / H20_HBM_BYTES_PER_S, 2)
"""0.75: 78 SMs at the least-loaded per-SM rate measured (39 SMs: 38.5 GB/s each)."""

H20_STREAM_SOURCE = (
    f"78 Hopper SMs (an H100 SXM's streaming read with its grid held to 78 SMs, "
    f"benchmarks/bench_decode_gemv.py) drew 2.43 TB/s = {H20_STREAM_EFFICIENCY} of the H20's "
    f"4.0 TB/s (Little's law: bytes in flight per SM; up to {H20_STREAM_HIGH} at the "
    "least-loaded per-SM rate); the H20's HBM3 latency taken as the H100's (assumption)"
)
