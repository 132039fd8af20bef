"""vLLM's fused-MoE Triton expert GEMMs at decode sizes, priced as they run: a weight stream at
the rate the kernel's own benchmark sweeps measure on each architecture.

**How the kernel runs** (``vllm/model_executor/layers/fused_moe/fused_moe.py``:
``fused_experts_impl``, ``invoke_fused_moe_kernel``, ``fused_moe_kernel``; the tuned
configs ``configs/E=128,N=768,device_name=NVIDIA_H100_80GB_HBM3.json`` read at vllm@4466f1b5,
Qwen3-MoE configs first added by vLLM PR 17328, 2025-04-28, from SGLang's tuning).
``moe_align_block_size`` sorts the ``m k`` routed rows by expert and pads each expert's rows to
``BLOCK_SIZE_M``; the grid is (padded rows / BLOCK_SIZE_M) x (N / BLOCK_SIZE_N) programs, each
taking one BLOCK_SIZE_M slice of one expert's rows and one BLOCK_SIZE_N column block of that
expert's weight, looping over K in BLOCK_SIZE_K steps (``num_stages`` of them in flight);
programs past the padded row count exit at once. Qwen3-30B-A3B (E = 128, top-8, d = 2048,
expert width 768, TP 1; ``N = 768`` in the file name, w1 [1536, 2048], w2 [2048, 768]):

* H100 (the tuned file): M = 8 -> BLOCK_SIZE_M 16, N 64, K 64, GROUP_SIZE_M 64, 4 warps,
  5 stages; M = 16 -> 16/32/256, 2 stages; M = 64 -> 16/256/128, 8 warps, 3 stages; BLOCK_SIZE_M
  stays 16 up to M = 128. B200: no tuned file for this shape until vLLM PR 31448 (2025-12-28,
  after ML.ENERGY v3's vLLM 0.11.1), whose log shows the default config on B200:
  BLOCK_SIZE_M 16, N 32, K 64, GROUP_SIZE_M 1 at M = 1-8.
* Rows per expert: at batch 8 about 51.6 of the 128 experts are touched
  (:func:`~rlmcost.perf.decode_kernels.expected_experts_touched`) with 1.2 rows each, at
  batch 64 126.8 with 4.0: every touched expert's rows fit one BLOCK_SIZE_M block, so each
  column block of its weights is read once. w1 has 1536 / 64 = 24 column blocks per expert on
  H100 at M = 8 (51.6 x 24 = 1,239 programs), w2 2048 / 64 = 32 (1,652): 9-13 programs per SM
  of 132, several resident at once, so the tail wave is a small share; on B200 at N 32 twice
  as many programs over 148 SMs.
* FLOPs: the 16 padded rows run Triton's warp-level ``mma.sync`` (a dot of fewer than 64 rows
  does not use ``wgmma``; :data:`~rlmcost.perf.decode_kernels.FUSED_MOE_MMA_ROWS`): at batch 64
  2 x 16 x (1536 + 768) x 2048 x 126.8 = 19.2 GFLOP a layer, 0.92 TFLOP a step, against
  57 GB of bf16 expert weights (17 ms at the H100's 3.35 TB/s): a fraction of even
  ``mma.sync``'s rate is far from binding. The kernel is bound by the weights' bytes.

So the expert GEMMs of one MoE layer cost the touched experts' weight bytes at the rate the
fused-MoE kernel streams them, which is not the dense decode GEMMs'
(:data:`~rlmcost.perf.rl_constants.VLLM_DECODE_HBM_FRACTION`, 0.75): :data:`FUSED_MOE_STREAM`
gives it per architecture and weight width, each from a ``benchmarks/kernels/benchmark_moe.py``
sweep over batch sizes (CUDA-graph replays of the whole ``fused_moe``: top-k, align, both
GEMMs, activation, sum) as the least-squares line ``t = t_0 + bytes / (f x datasheet HBM)``
with bytes = expected touched experts x one expert's weights (:func:`stream_fit`). The
intercept ``t_0`` (27-56 us) is the routing and activation kernels, which
:mod:`~rlmcost.perf.decode_kernels` and the engine's elementwise term already price; the slope
is the GEMMs' streaming rate. Hopper's bf16 figure (0.94) is above the H100 copy kernel's
marginal 0.91 (:mod:`~rlmcost.perf.elementwise_bw`): the expert GEMMs only read, a copy
reads and writes. Parts or widths without a sweep keep the engine's dense rate (assumption),
among them the H200 and H20: the same die with more bandwidth per SM, so a kernel that keeps
enough bytes in flight to stream at 0.94 of an H100 need not on them (Little's law), and no
sweep there was found. Carried anyway, the H200 vLLM CI Mixtral-8x7B TP 2 row of ``rlmcost
validate --engine`` would move from -1.0 % to -15.6 %: it is not.

Checked against a whole decode step the constants were not taken from: vLLM PR 23151
(2025-08-19; H100, Qwen3-30B-A3B bf16 TP 1, ``benchmark_serving`` at concurrency 10, 2048 input
and 1024 output tokens) logs a mean TPOT of 13.18 ms; the engine model's decode step of 10
sequences at 2,560 tokens of context is 14.7 ms with this rate, 16.9 ms at the dense rate
(``tests/test_fused_moe.py``).

Leaves out: re-reads of an expert's weights by a second BLOCK_SIZE_M block (rows per expert
above 16, beyond the decode batches here; L2 then holds most of a 9.4 MB expert), the wave
tail, and routing skew (uniform touched experts, an upper bound).
"""

from __future__ import annotations

from dataclasses import replace

from rlmcost.errors import SpecError
from rlmcost.perf.efficiency import Device
from rlmcost.perf.rl_constants import Constant

HOPPER = frozenset({"h100-sxm", "h100-pcie", "h800", "h100-hbm2e-500w"})
"""Hopper parts at or below the H100 SXM's 3.35 TB/s over 132 SMs (114 on PCIe: 2.0 TB/s): the
H100 sweeps carry to them. Not the H200 (4.8 TB/s) or H20 (4.0 TB/s over 78 SMs): each SM must
keep 1.4-2.2 x the H100's bytes in flight, which no sweep measured (module docstring)."""
BLACKWELL = frozenset({"b200", "gb200"})
AMPERE = frozenset({"a100-40gb", "a100-80gb", "a800-80gb"})

# benchmark_moe.py sweeps as printed in the PRs (batch size, microseconds), with the shape:
# (experts, top_k, one expert's weight bytes, datasheet HBM bytes/s of the part measured).
H100_MIXTRAL_BF16_SWEEP = ((1, 144.03), (2, 229.28), (4, 351.10), (8, 434.98), (16, 471.49),
                           (24, 478.27), (32, 487.35), (48, 487.85), (64, 483.14))  # fmt: skip
"""vLLM PR 24700 (mgoin, 2025-09-11, "Benchmarks on H100"): Mixtral-8x7B bf16 TP 2, its tuned
``E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json``; an expert is w1 [14336, 4096] + w2
[4096, 7168] bf16."""
H100_MIXTRAL_BF16_SHAPE = (8, 2, (14336 * 4096 + 4096 * 7168) * 2, 3_350_000_000_000)

H100_QWEN3_FP8_SWEEP = ((1, 44.54), (2, 59.94), (4, 90.46), (8, 129.77), (16, 185.40),
                        (24, 215.99), (32, 238.37), (48, 257.83), (64, 262.73))  # fmt: skip
"""vLLM PR 24700, the same H100: Qwen3-30B-A3B ``--dtype fp8_w8a8`` TP 1 ("Main" defaults); an
expert is 3 x 2048 x 768 one-byte weights."""
H100_QWEN3_FP8_SHAPE = (128, 8, 3 * 2048 * 768, 3_350_000_000_000)

B200_QWEN3_BF16_SWEEP = ((1, 39.61), (2, 51.87), (4, 73.18))
"""vLLM PR 31448 (2025-12-28) "with default config" on one B200: Qwen3-Omni-30B-A3B (Qwen3-30B-
A3B's MoE shape, E = 128, N = 768) bf16 TP 1, BLOCK_SIZE_M 16, N 32, K 64 (the config vLLM 0.11.1
ran there); the stored PR text shows batch 1-4."""
B200_QWEN3_BF16_SHAPE = (128, 8, 3 * 2048 * 768 * 2, 7_700_000_000_000)

A100_QWEN3_BF16_SWEEP = ((1, 109.21), (2, 159.81), (4, 268.89), (8, 403.13), (16, 611.19),
                         (24, 730.19), (32, 808.53), (48, 885.97), (64, 917.45),
                         (96, 943.14))  # fmt: skip
"""vLLM PR 19049 (2025-06-03) "Before this PR" on an A100-PCIe-40GB: Qwen3-30B-A3B bf16 TP 1,
default config (BLOCK_SIZE_M 16, N 32, K 64)."""
A100_QWEN3_BF16_SHAPE = (128, 8, 3 * 2048 * 768 * 2, 1_555_000_000_000)


def stream_fit(
    sweep: tuple[tuple[int, float], ...], experts: int, top_k: int, expert_bytes: int,
    hbm_bytes_per_s: float,
) -> tuple[float, float]:
    """(t_0 seconds, streaming fraction f) of the least-squares line t = t_0 + bytes / (f B)
    through a fused-MoE sweep, bytes = E (1 - (1 - k/E)^b) x ``expert_bytes`` (module docstring).

    >>> t0, f = stream_fit(A100_QWEN3_BF16_SWEEP, *A100_QWEN3_BF16_SHAPE)
    >>> round(t0 * 1e6, 1), round(f, 3)
    (56.1, 0.892)
    """
    from rlmcost.perf.decode_kernels import expected_experts_touched

    if len(sweep) < 2 or min(b for b, _ in sweep) < 1 or min(t for _, t in sweep) <= 0:
        raise SpecError("a fused-MoE sweep needs two or more (batch >= 1, time > 0) points")
    xs = [expected_experts_touched(experts, top_k, b) * expert_bytes for b, _ in sweep]
    ys = [t * 1e-6 for _, t in sweep]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0:
        raise SpecError("a fused-MoE sweep needs batches that touch different expert counts")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return my - slope * mx, 1.0 / (slope * hbm_bytes_per_s)


def _fraction(sweep: tuple[tuple[int, float], ...], shape: tuple[int, int, int, int]) -> float:
    return round(stream_fit(sweep, *shape)[1], 3)


_HOPPER_BF16 = _fraction(H100_MIXTRAL_BF16_SWEEP, H100_MIXTRAL_BF16_SHAPE)
_HOPPER_FP8 = _fraction(H100_QWEN3_FP8_SWEEP, H100_QWEN3_FP8_SHAPE)
_BLACKWELL_BF16 = _fraction(B200_QWEN3_BF16_SWEEP, B200_QWEN3_BF16_SHAPE)
_AMPERE_BF16 = _fraction(A100_QWEN3_BF16_SWEEP, A100_QWEN3_BF16_SHAPE)

FUSED_MOE_STREAM: dict[tuple[frozenset[str], int], Constant] = {
    (HOPPER, 2): Constant(_HOPPER_BF16, _HOPPER_FP8, _HOPPER_BF16,
                          "vLLM PR 24700 benchmark_moe on H100: Mixtral-8x7B bf16 TP 2, tuned "
                          "(low: Qwen3-30B-A3B fp8 sweep on the same H100)"),
    (HOPPER, 1): Constant(_HOPPER_FP8, _HOPPER_FP8, _HOPPER_BF16,
                          "vLLM PR 24700 benchmark_moe on H100: Qwen3-30B-A3B fp8_w8a8 TP 1"),
    (BLACKWELL, 2): Constant(_BLACKWELL_BF16, _BLACKWELL_BF16, _HOPPER_BF16,
                             "vLLM PR 31448 benchmark_moe on B200: Qwen3-Omni-30B-A3B bf16 "
                             "TP 1, default config (batch 1-4)"),
    (AMPERE, 2): Constant(_AMPERE_BF16, _AMPERE_BF16, _AMPERE_BF16,
                          "vLLM PR 19049 benchmark_moe on A100-PCIe-40GB: Qwen3-30B-A3B bf16 "
                          "TP 1, default config"),
}  # fmt: skip
"""Fused-MoE expert GEMMs' weight-streaming rate / datasheet HBM bandwidth, by (parts, weight
bytes): H100 bf16 0.937, H100 fp8 0.768, B200 bf16 0.773, A100 bf16 0.892 (module docstring;
each the slope of :func:`stream_fit` over the cited sweep)."""


def fused_moe_stream(hardware_name: str, weight_bytes: int) -> Constant | None:
    """The measured fused-MoE streaming fraction of a part and weight width, or None.

    >>> fused_moe_stream("h100-sxm", 2).value, fused_moe_stream("mi300x", 2)
    (0.937, None)
    """
    for (parts, width), fraction in FUSED_MOE_STREAM.items():
        if hardware_name in parts and width == weight_bytes:
            return fraction
    return None


def fused_moe_device(device: Device, dense: Device) -> Device:
    """``device`` with its memory side at the fused-MoE kernel's streaming rate
    (:data:`FUSED_MOE_STREAM`); ``dense`` (the engine's weight-streaming device) where no sweep
    covers the part and weight width. A measured calibration's copy bandwidth, where given,
    still takes precedence (:meth:`Device.memory_s`)."""
    fraction = fused_moe_stream(device.hardware.name, device.dtype.bytes)
    if fraction is None:
        return dense
    return replace(device, profile=replace(device.defaults, hbm_efficiency=fraction.value))
