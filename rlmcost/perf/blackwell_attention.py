"""Fused causal attention on Blackwell (B200, GB200): cuDNN's and FlashAttention-2's rates.

Source: NVIDIA/cudnn-frontend ``benchmark/sdpa_benchmark_training/artifacts/
sdpa_bf16_benchmark_results_NVIDIA_B200.csv`` at commit 0b1577c (2025-10-10, "cudnn frontend
v1.15 release notes"; its README: image ``nvcr.io/nvidia/pytorch:25.09-py3``, cuDNN 9.13.1,
PyTorch 2.9.0, FlashAttention 2.7.4). Llama-3.1-405B's attention layer (128 query heads, 8 KV
heads, head dim 128), batch 1, causal, bf16, on one B200; forward and backward timed apart
(CUDA events, median of 10 after 5 warm-up calls). Its FLOPs are rlmcost's convention
(``benchmark_bf16_sdpa.py`` ``flops``): forward ``4 b s^2 h d / 2``, backward 2.5 x that.
Three backends: PyTorch SDPA's cuDNN backend (``pyt_cudnn``: cuDNN's fused attention, the
kernel Transformer Engine's ``FusedAttention`` runs, which TE prefers over FlashAttention on
sm90 and up: TransformerEngine v2.8 ``dot_product_attention/utils.py`` "give FusedAttention
preference on Hopper+"), SDPA's flash backend (``pyt_flash_attention``, a vendored
FlashAttention-2) and the flash-attn package (``flash_attention``, FlashAttention-2; the
README: "FlashAttention-3 is currently not supported on NVIDIA's Blackwell generation GPUs").

TFLOP/s (forward, backward) at 8k / 16k / 32k tokens:

=====================  ================  ================  ================
backend                8192              16384             32768
=====================  ================  ================  ================
cuDNN 9.13.1           1171.3 / 942.5    1332.4 / 1074.8   1419.0 / 1108.7
SDPA flash (FA2)       373.4 / 298.9     394.5 / 320.0     403.7 / 330.8
flash-attn 2.7.4       399.9 / 318.0     425.1 / 336.6     435.8 / 345.6
=====================  ================  ================  ================

A forward + backward pass of 1 + 2.5 forward FLOPs runs at ``3.5 / (1 / fwd + 2.5 / bwd)``
(:func:`fwd_bwd_tflops`); over the B200's 2,250 TFLOP/s dense bf16 peak that is 0.444,
0.506, 0.526 for cuDNN (mean **0.49**, :data:`BLACKWELL_FLASH_EFFICIENCY`) and 0.141-0.163 for
FlashAttention-2 (mean of both FA2 backends **0.15**, :data:`BLACKWELL_FA2_EFFICIENCY`): the
sm80 ``mma.sync`` code, the ~35 % of an H100 that FlashAttention-3's abstract gives it,
cannot use Blackwell's tcgen05 tensor cores. Rows below 8k tokens are left out: batch 1
makes a call short (4k: 0.64 ms forward) and the CUDA-event time carries PyTorch's per-call
host time (512 tokens: 0.10 ms forward for about 0.01 ms of FLOPs), which in a training step
runs ahead of the GPU; 8k-32k is an upper bound on 4k-token sequences (cuDNN 9.17's
kernel-only times on GB200 put 4k 13 % below 8k, below).

Why cuDNN 9.13.1: ``nvcr.io/nvidia/pytorch:25.09-py3`` is Megatron-Bridge v0.2.0's base image
(``docker/Dockerfile.ci`` @v0.2.0, NeMo 25.11: the validated Megatron-Bridge rows); NeMo RL
v0.5.0 runs cuDNN 9.10.2 (``uv.lock``: nvidia-cudnn-cu12 9.10.2.21), whose B200 file of the
same benchmark (commit 9793df5, image pytorch:25.06-py3) gives 0.445 / 0.506 / 0.532, the same
0.49. Later cuDNN is faster on Blackwell: the same repository's GB200 files, timed per kernel
by the torch profiler, give 0.519 / 0.556 / 0.572 of 2,500 TFLOP/s at cuDNN 9.17.0 (commit
b372d39, 128 heads) and 0.553 / 0.589 / 0.614 at 9.19.1 (commit df73764, 64 heads), where an
H200 in that run gives 0.573 / 0.609 / 0.615. NeMo RL v0.6.0 ships cuDNN 9.19.0 and v0.7.0
9.20.0, so their attention is priced about 1.19 x too long at 8k-32k tokens (one figure per
part: the era of the validated Megatron-Bridge 25.11 and NeMo RL v0.5 rows).
FlashAttention-4 (Zadouri et al. 2026, arXiv 2603.05451, abstract) is "up to 1.3x" faster
than cuDNN 9.13 on B200, 1613 TFLOP/s forward; no validated framework runs it.

GB200 takes the B200's fraction of its own peak (an assumption: the same die, its higher
clock in its 2,500 TFLOP/s; no GB200 figure of cuDNN 9.10-9.13 is published). As on Hopper one
figure prices the forward and the backward (forward-only log-prob passes and a rollout
engine's prefill too), and a run with attention dropout takes the FlashAttention-2 figure
(:mod:`rlmcost.perf.efficiency`; cuDNN with dropout has no Blackwell figure).
"""

from __future__ import annotations

from rlmcost.errors import SpecError


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)  # statistics.mean loads statistics on every numeric query

BACKWARD_FLOPS_FACTOR = 2.5
"""The benchmark's backward FLOPs over the forward's (``benchmark_bf16_sdpa.py`` ``flops``:
``2.5 * f``), rlmcost's ``FLASH_BACKWARD_FACTOR`` (a test keeps them equal)."""

B200_BF16_PEAK_TFLOPS = 2250
"""The B200's dense bf16 peak, the registry's ``b200`` (a test keeps them equal)."""

_CUDNN_FE = "NVIDIA/cudnn-frontend@0b1577c benchmark/sdpa_benchmark_training/artifacts/"
_CSV = f"{_CUDNN_FE}sdpa_bf16_benchmark_results_NVIDIA_B200.csv"

CUDNN_913_B200_TFLOPS: dict[int, tuple[float, float]] = {
    8192: (1171.278, 942.509),
    16384: (1332.415, 1074.776),
    32768: (1419.000, 1108.688),
}
"""Sequence length -> (forward, backward) TFLOP/s of cuDNN 9.13.1 (``pyt_cudnn``) on a B200,
causal, head dim 128, 128 / 8 heads, batch 1 (the CSV's ``fwd_tflops_per_sec``,
``bwd_tflops_per_sec``; module docstring)."""

FA2_B200_TFLOPS: dict[str, dict[int, tuple[float, float]]] = {
    "pyt_flash_attention": {
        8192: (373.392, 298.867),
        16384: (394.495, 319.979),
        32768: (403.739, 330.801),
    },
    "flash_attention": {
        8192: (399.925, 318.004),
        16384: (425.128, 336.635),
        32768: (435.762, 345.634),
    },
}
"""The same rows of PyTorch 2.9.0 SDPA's flash backend and of flash-attn 2.7.4 (both
FlashAttention-2)."""


def fwd_bwd_tflops(forward: float, backward: float) -> float:
    """TFLOP/s of a forward + backward pass (1 + 2.5 forward FLOPs) from its two rates.

    >>> round(fwd_bwd_tflops(1171.278, 942.509), 1)  # cuDNN 9.13.1, B200, 8k tokens
    998.2
    """
    if min(forward, backward) <= 0:
        raise SpecError(f"attention rates must be positive TFLOP/s, got {forward}, {backward}")
    return (1 + BACKWARD_FLOPS_FACTOR) / (1 / forward + BACKWARD_FLOPS_FACTOR / backward)


def mean_efficiency(rows: dict[int, tuple[float, float]], peak_tflops: float) -> float:
    """The mean over ``rows`` of each length's forward + backward rate over ``peak_tflops``."""
    return _mean([fwd_bwd_tflops(f, b) / peak_tflops for f, b in rows.values()])


BLACKWELL_FLASH_EFFICIENCY = round(mean_efficiency(CUDNN_913_B200_TFLOPS, B200_BF16_PEAK_TFLOPS), 2)
"""0.49: cuDNN 9.13.1's causal forward + backward over the B200's peak, 8k-32k tokens."""

BLACKWELL_FA2_EFFICIENCY = round(
    _mean([mean_efficiency(r, B200_BF16_PEAK_TFLOPS) for r in FA2_B200_TFLOPS.values()]), 2
)
"""0.15: FlashAttention-2's (SDPA's flash backend and flash-attn 2.7.4) the same way."""

BLACKWELL_FLASH_SOURCE = (
    f"{_CSV} (cuDNN 9.13.1, NGC pytorch:25.09, Megatron-Bridge 0.2's image): causal hdim 128, "
    "fwd+bwd (bwd 2.5 x fwd FLOPs) 0.444/0.506/0.526 of 2250 TFLOP/s at 8k/16k/32k tokens, mean "
    f"{BLACKWELL_FLASH_EFFICIENCY} (rlmcost.perf.blackwell_attention); GB200: the same fraction"
)
BLACKWELL_FA2_SOURCE = (
    f"{_CSV}: FlashAttention-2 on B200 (SDPA flash backend, flash-attn 2.7.4), causal hdim 128, "
    f"fwd+bwd 0.141-0.163 of peak at 8k-32k tokens, mean {BLACKWELL_FA2_EFFICIENCY} "
    "(rlmcost.perf.blackwell_attention); dropout runs take it too"
)
