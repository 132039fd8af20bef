"""The engine's step options and a decode step's parts (:mod:`rlmcost.perf.generation` prices
them): vLLM V1's defaults, each with its source."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.perf.collectives import Algorithm
from rlmcost.perf.efficiency import Device
from rlmcost.perf.engine_host import STEP_OVERHEAD_S, VLLM_HOST_S_PER_SEQUENCE
from rlmcost.perf.fp4_gemm import has_fp4
from rlmcost.perf.rl_constants import VLLM_DECODE_HBM_FRACTION

CHUNK_TOKENS = 8192
"""Prefill tokens per engine step: vLLM V1's default ``max_num_batched_tokens`` for offline
``LLM`` use (vLLM docs, "Optimization and Tuning", chunked prefill)."""

LOGITS_BYTES = 4  # the sampler's fp32 logits

@dataclass(frozen=True)
class EngineOptions:
    """How the engine runs its steps (defaults: vLLM V1, offline batch generation)."""

    step_overhead_s: float = STEP_OVERHEAD_S
    chunk_tokens: int = CHUNK_TOKENS
    algorithm: Algorithm = Algorithm.AUTO
    per_sequence_s: float = VLLM_HOST_S_PER_SEQUENCE.value
    launch_s: float = 0.0  # eager host launch time of a step's kernels (perf.eager_launch)
    overlapped_s_per_sequence: float = 0.0  # host work beside the GPU (perf.engine_host)
    state_bytes: int = 4  # a Gated DeltaNet recurrent state element (deployment.engine_kv)
    window_read: float = 1.0  # a sliding layer's KV read per context token (window_read)
    attention_dp: int = 1  # SGLang's data-parallel attention ranks (perf.dp_attention)
    packed: tuple[Fraction, str, bool] | None = None  # 4-bit weights: bytes/element, parts, W4A4

    def __post_init__(self) -> None:
        if self.launch_s < 0:
            raise SpecError(f"launch_s={self.launch_s} must be non-negative")
        if self.step_overhead_s < 0:
            raise SpecError(f"step_overhead_s={self.step_overhead_s} must be non-negative")
        if self.overlapped_s_per_sequence < 0:
            raise SpecError(f"overlapped_s_per_sequence={self.overlapped_s_per_sequence} must "
                            "be non-negative")  # fmt: skip
        if self.per_sequence_s < 0:
            raise SpecError(f"per_sequence_s={self.per_sequence_s} must be non-negative")
        if self.state_bytes < 1 or not 0 < self.window_read <= 1:
            raise SpecError(f"state_bytes={self.state_bytes} must be positive and "
                            f"window_read={self.window_read} in (0, 1]")  # fmt: skip
        if self.chunk_tokens < 1:
            raise SpecError(f"chunk_tokens={self.chunk_tokens} must be a positive integer")


def packed_devices(gemm: Device, moe: Device,
                   packed: tuple[Fraction, str, bool] | None) -> tuple[Device, ...]:  # fmt: skip
    """(attention, FFN, expert) devices of an engine whose ``packed`` parts (bytes per element,
    parts, W4A4; ``EngineOptions.packed``) stream their packed weights (``Device.weight_bytes``;
    :mod:`rlmcost.parallel.packed_weights`): experts always, FFNs unless only experts are
    packed, attention (and linear-attention mixers) where every Linear layer is. W4A4 on a
    part with FP4 tensor cores: those GEMMs take FP4 activations (``Device.fp4``,
    :mod:`rlmcost.perf.fp4_gemm`); without, they run W4A16 as vLLM's Marlin fallback does."""
    if packed is None:
        return gemm, gemm, moe
    per, parts, w4a4 = packed
    wb, fp4 = float(per), w4a4 and has_fp4(gemm.hardware)  # 9/16, 17/32, 33/64: exact floats
    ffn = gemm if parts == "experts" else replace(gemm, weight_bytes=wb, fp4=fp4)
    return (ffn if parts == "linear" else gemm), ffn, replace(moe, weight_bytes=wb, fp4=fp4)


def window_read(window: int, prompt: int, response: int) -> float:
    """The keys a sliding-window layer reads over one sequence's decode, as a fraction of a
    full layer's: sum_{c=S+1}^{S+T} min(c, W) / sum_{c=S+1}^{S+T} c (``blocks.window.
    attended_keys_sum``'s two sums, in integers). The engines' decode kernels read the window
    only (vLLM's FlashAttention ``window_size``, SGLang's ``sliding_window_size``); priced per
    context token, this ratio makes a rollout of equal lengths exact.

    >>> window_read(4096, 1024, 1024), window_read(4096, 4096, 4096) < 0.67
    (1.0, True)
    """

    def p(n: int) -> int:  # sum_{i=1}^{n} min(i, W)
        a = min(n, window)
        return a * (a + 1) // 2 + (n - a) * window

    full = response * prompt + response * (response + 1) // 2
    return (p(prompt + response) - p(prompt)) / full if full else 1.0


@dataclass(frozen=True)
class DecodeStep:
    """Seconds of one decode step by part (module docstring)."""

    gemm_s: float
    attention_s: float
    elementwise_s: float
    tp_comm_s: float
    head_s: float
    overhead_s: float

    @property
    def total_s(self) -> float:
        return (self.gemm_s + self.attention_s + self.elementwise_s + self.tp_comm_s
                + self.head_s + self.overhead_s)  # fmt: skip


def weight_streaming_device(device: Device) -> Device:
    """``device`` with its GEMMs' memory side at the engine's weight-streaming bandwidth,
    :data:`~rlmcost.perf.rl_constants.VLLM_DECODE_HBM_FRACTION` of the datasheet HBM bandwidth
    where that is below the profile's streaming-kernel efficiency (module docstring); a
    measured calibration's copy bandwidth, where given, still takes precedence."""
    profile = device.defaults
    fraction = VLLM_DECODE_HBM_FRACTION.value
    if fraction >= profile.hbm_efficiency:
        return device
    return replace(device, profile=replace(profile, hbm_efficiency=fraction))
