"""Kernel time by shape: GEMMs with tile and wave quantization, attention, memory-bound ops.

A GEMM C[M, N] = A[M, K] B[K, N] (2 M N K FLOPs) on a GPU is cut into output tiles of
t_m x t_n; each streaming multiprocessor (SM) computes one tile at a time, so the tiles run in
``ceil(tiles / SMs)`` waves and the last wave may leave SMs idle (*wave quantization*), and
a tile that hangs over the matrix edge computes padding (*tile quantization*). Both are
described in NVIDIA's "Matrix Multiplication Background User's Guide" (Deep Learning
Performance documentation, sections "Dimension Quantization Effects": tile and wave
quantization). The model takes, per GEMM,

    compute_s = waves x SMs x (2 t_m t_n (K + K_0)) / (peak x eta_gemm')
    memory_s  = (M K + K N + M N) x dtype bytes / (HBM bandwidth x eta_hbm)
    time_s    = max(compute_s, memory_s) + kernel_gap_s

with the best of the tile shapes cuBLAS offers for 16-bit tensor-core GEMMs (256x128,
128x256, 128x128; same guide, "cuBLAS tile sizes"). A skinny GEMM (M or N below the smallest
tile, 128) may instead run as a split-K / GEMV-class kernel that keeps every SM busy with the
short side padded to the tensor-core instruction's least row count ``mma_rows`` (16 for
``mma.sync``; 64 for Hopper's ``wgmma`` and Blackwell's ``tcgen05``:
:func:`~rlmcost.perf.gemm_tile_cost.skinny_gemm_flops`) at ``peak x eta_gemm``.
``eta_gemm`` is the sustained large-GEMM FLOP/s of the device over its peak (below), so a
large GEMM runs at eta_gemm x peak and a small or skinny one (few tiles, one partial wave, small K:
memory-bound) runs far below it.

Per accelerator (:data:`DEFAULT_PROFILES`) four numbers, each with its source:

* ``sms``: SM (or CU) count, from the architecture whitepaper;
* ``gemm_efficiency``: the *sustained* large-GEMM FLOP/s over the dense peak, from S. Bekman,
  *Machine Learning Engineering* (github.com/stas00/ml-engineering): the MSMF ("maximum
  sustainable matmul FLOPS", power-saturated clock, "the number that matches real training
  throughput"; compute/accelerator/benchmarks/README.md) where measured: H200 702.9 / 989 =
  0.711, B200 1455.7 / 2250 = 0.647. Where only the burst MAMF is published
  (compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison table", BF16 v2:
  A100 SXM 271.2 / 312 = 0.869; GB200 SXM 1822.0 / 2500 = 0.729, added in ml-engineering
  commit 68cd2e5) it is scaled by the measured sustained / burst ratio of the same source
  (H200 702.9 / 828.0 = 0.849, B200 1455.7 / 1732.6 = 0.840; mean 0.845): A100 0.734, GB200
  0.616 (GB200's measured fraction, 0.729, is below B200's 1732.6 / 2250 = 0.770, so B200's
  sustained fraction carried to GB200's 2.5 PF peak overstated it). H100 and H800
  (the H200's GH100 die at the same 700 W) take the H200 value. AMD
  MI300X / MI325X hit their power cap within one kernel (same source), so their MAMF is
  already the sustained rate: 668.4 / 1300 = 0.514 and 784.9 / 1300 = 0.604. A part run
  below the power its MSMF was measured at takes :func:`power_capped` of it (Meta's
  500 W H100, ``h100-hbm2e-500w``).
* ``hbm_efficiency``: achieved / datasheet HBM bandwidth of a streaming kernel, about 0.88-0.90
  on A100 (NVIDIA developer forum thread "Trouble to Reach Peak Bandwidth of A100": 1.80 of
  2.04 TB/s, and "the maximum memory bandwidth achieved by any kernel was around 90 %" in
  the NVIDIA GTC talk cited there); 0.9 for NVIDIA parts, 0.8 assumed for AMD; Hopper parts
  cite PyTorch's bf16 elementwise kernels measured on an H100 (:mod:`~rlmcost.perf.elementwise_bw`),
  the H20 what its 78 SMs can draw (:mod:`~rlmcost.perf.sm_bandwidth`: 0.61);
* ``flash_attention_efficiency``: FLOP/s of a FlashAttention-class fused causal attention,
  forward + backward, over peak, counting the backward as 2.5 x the forward (the convention of
  Dao 2023, FlashAttention-2, arXiv 2307.08691, §4.1 and Fig. 6: about 190 of 312 TFLOP/s on
  A100 for causal head dim 128 at 2k-16k tokens); Hopper from Shah et al. 2024,
  FlashAttention-3, arXiv 2407.08608 §4.1 (forward up to 75 % of peak, backward lower): 0.55;
  Blackwell cuDNN 9.13.1's published B200 rates, 0.49 (:mod:`~rlmcost.perf.blackwell_attention`).
* ``fa2_attention_efficiency``: the same for a pre-FlashAttention-3 kernel: FlashAttention-2,
  or PyTorch SDPA's flash backend (a vendored FlashAttention-2), which is what a Hugging Face
  model runs with ``attn_implementation="flash_attention_2"`` or ``"sdpa"`` (the trainers that
  do so are listed in :mod:`rlmcost.placement.pass_options`), and any run with attention
  dropout. FlashAttention-3's warp-specialised wgmma kernels, the source of Hopper's 0.55, have
  no dropout (Dao-AILab/flash-attention hopper/flash_attn_interface.py @01afd16d:
  ``_flash_attn_forward`` takes no ``dropout_p``). FlashAttention-3's abstract (arXiv
  2407.08608) says FlashAttention-2 "achieves only 35% utilization on the H100 GPU", so Hopper
  parts take 0.35. SDPA "picks its backend by a fixed priority that puts FlashAttention first",
  and "on Hopper the cuDNN attention kernels are consistently 1.7-2.3x faster for training
  shapes" (huggingface/transformers PR 48163, 2026-08): the 0.55 / 0.35 = 1.57 ratio is at the
  low end of that gap. H800 (the H100 die) takes 0.35 too. The H20 does not (an assumption,
  stated): its tensor cores are capped at 148 TFLOP/s, below the A100's 312, while its SMs'
  other units (exp, FP32) and its HBM are Hopper's, so the two limits that hold FlashAttention-2
  at 35 % of an H100 (the mma.sync path's ceiling against wgmma's, and softmax work against the
  tensor rate; FlashAttention-3 §1, §3.1) sit far above its tensor peak, and it keeps its flash
  figure, as pre-Hopper parts do; no FA2 figure on the H20 is published. Pre-Hopper parts run
  FlashAttention-2 as their best kernel (dropout inside it at its usual speed), so they keep
  their figure; Blackwell parts take FlashAttention-2's published B200 rate, 0.15 (dropout
  runs too). TransformerEngine on sm90 and up prefers cuDNN's FusedAttention
  (``get_attention_backend``: "give FusedAttention preference on Hopper+"), a Megatron-core
  trainer's kernel, priced at the flash figure; with dropout on no fwd+bwd figure is published
  for it, so the FA2 figure is the assumption for it too.

**A tile's fixed cost** adds ``K_0`` K-steps to its K on Hopper and Blackwell (gemm_tile_cost).

``kernel_gap_s`` (2 us) is the launch and tail gap between consecutive kernels of one stream,
an assumption of the order of the CUDA launch latency; it matters only for tiny kernels.

A measured calibration profile (:class:`~rlmcost.calibrate.profile.Profile`, any
:class:`~rlmcost.timing.Efficiency`) replaces the defaults where it has a table: GEMMs take its
"gemm" efficiency at their FLOPs, fused attention its "attention" table, memory-bound kernels
its "copy" bandwidth. A W4A4 device (``fp4``: FP4 activations and weights) runs its GEMMs at the
FP4 peak after a quantizing kernel (:mod:`~rlmcost.perf.fp4_gemm`)."""

from __future__ import annotations

from math import ceil
from typing import TYPE_CHECKING

from rlmcost.choices import Dtype
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.memo import memoized
from rlmcost.perf import blackwell_attention as _bw
from rlmcost.perf.elementwise_bw import HOPPER_ELEMENTWISE_EFFICIENCY, HOPPER_ELEMENTWISE_SOURCE
from rlmcost.perf.fp4_gemm import fp4_bytes, fp4_peak, quantize_s
from rlmcost.perf.gemm_tile_cost import (
    GEMM_K_OVERHEAD,
    HOPPER_GEMM_K_OVERHEAD,  # noqa: F401 - re-exported
    K0_NONE,
    MMA_ROWS_SOURCE,
    MMA_SYNC_ROWS,
    MSMF_REFERENCE_K,
    WGMMA_PARTS,
    WGMMA_ROWS,
    skinny_gemm_flops,
)  # fmt: skip
from rlmcost.perf.power_cap import power_capped  # noqa: F401 - re-exported
from rlmcost.perf.sm_bandwidth import H20_STREAM_EFFICIENCY, H20_STREAM_SOURCE

if TYPE_CHECKING:
    from rlmcost.specs import HardwareSpec
    from rlmcost.timing import Efficiency

TILES = ((256, 128), (128, 256), (128, 128))
"""Output tiles (t_m, t_n) of cuBLAS 16-bit tensor-core GEMMs (NVIDIA Matrix Multiplication
Background User's Guide); the model takes the fastest for each shape, as cuBLAS's heuristics
aim to."""

KERNEL_GAP_S = 2e-6
"""Launch and tail gap per kernel (assumption, the order of CUDA's launch latency)."""

FLASH_BACKWARD_FACTOR = 2.5
"""FlashAttention backward FLOPs / forward FLOPs (recomputes the scores; Dao 2023 §4.1)."""

_MLE = "stas00/ml-engineering compute/accelerator"
_SUSTAINED = f"{_MLE} benchmarks/README.md MSMF (sustained)"
_BURST_TO_SUSTAINED = 0.845  # mean MSMF / MAMF of H200 (702.9 / 828.0) and B200 (1455.7 / 1732.6)
_HBM = "NVIDIA forum 'Trouble to Reach Peak Bandwidth of A100' (~88-90 % of datasheet)"
_FA2 = "FlashAttention-2 (arXiv 2307.08691) Fig. 6: ~190 TFLOP/s fwd+bwd causal on A100"
_FA3 = "FlashAttention-3 (arXiv 2407.08608) §4.1: fwd up to 75 %, bwd lower, on H100"
_FA2_ON_HOPPER = 0.35
"""FlashAttention-2's utilization on H100 (FlashAttention-3, arXiv 2407.08608, abstract)."""
_FA2_HOPPER_SRC = (
    "FlashAttention-2 (and SDPA's flash backend) reaches 35 % of peak on H100 (FlashAttention-3"
    ", arXiv 2407.08608, abstract); FA3 has no dropout (flash-attention hopper/"
    "flash_attn_interface.py @01afd16d: no dropout_p), so dropout runs take it too; cuDNN "
    "FusedAttention with dropout (TE's Hopper choice) assumed the same"
)
_HOPPER = frozenset({"h100-sxm", "h100-pcie", "h200", "h800", "h100-hbm2e-500w"})  # not h20
_FA2_H20 = (
    "assumption: the H20's tensor cores are capped at 148 TFLOP/s (below A100's 312), so "
    "FlashAttention-2's Hopper limits (mma.sync ceiling, softmax against the tensor rate; "
    "FlashAttention-3 §1, §3.1) do not bind: its flash figure"
)
_FA2_OWN = "FlashAttention-2 is this part's fused kernel (dropout inside it at its speed): the same"
_BLACKWELL = frozenset({"b200", "gb200"})  # cuDNN / FA2 rates: perf.blackwell_attention


@dataclass(frozen=True)
class AcceleratorProfile:
    """Default efficiencies of one accelerator: few numbers, each with its source."""

    name: str
    sms: int  # streaming multiprocessors (NVIDIA) / compute units (AMD)
    gemm_efficiency: float  # sustained large-GEMM FLOP/s / dense peak
    hbm_efficiency: float  # streaming-kernel bandwidth / datasheet HBM bandwidth
    flash_attention_efficiency: float  # fused causal attention fwd+bwd FLOP/s / peak
    sources: tuple[tuple[str, str], ...] = ()  # (parameter, source)
    kernel_gap_s: float = KERNEL_GAP_S
    fa2_attention_efficiency: float = 0.0  # pre-FA3 kernel (FA2, SDPA, dropout); 0 = as FA3
    fa2_backward_efficiency: float = 0.0  # its backward where it differs; 0 = as its forward
    gemm_k_overhead: int = 0  # a tile's fixed cost in K-steps (module docstring); 0 = none
    gemm_reference_k: int = 0  # K of the shape gemm_efficiency was measured at; 0 = none
    mma_rows: int = MMA_SYNC_ROWS  # least rows of the tensor-core instruction (skinny GEMMs)

    def __post_init__(self) -> None:
        if not self.fa2_attention_efficiency:
            object.__setattr__(self, "fa2_attention_efficiency", self.flash_attention_efficiency)
        if not self.fa2_backward_efficiency:
            object.__setattr__(self, "fa2_backward_efficiency", self.fa2_attention_efficiency)
        for field in ("gemm_efficiency", "hbm_efficiency", "flash_attention_efficiency",
                      "fa2_attention_efficiency", "fa2_backward_efficiency"):  # fmt: skip
            value = getattr(self, field)
            if not 0 < value <= 1:
                raise SpecError(f"profile {self.name}: {field}={value} must be in (0, 1]")
        if self.sms < 1:
            raise SpecError(f"profile {self.name}: sms={self.sms} must be a positive integer")
        if min(self.gemm_k_overhead, self.gemm_reference_k) < 0 or self.mma_rows < 1:
            raise SpecError(f"profile {self.name}: gemm_k_overhead, gemm_reference_k must be "
                            ">= 0 and mma_rows >= 1")  # fmt: skip

    @property
    def k_loop_efficiency(self) -> float:
        """A tile's K-loop efficiency: ``gemm_efficiency`` was measured at K_ref, K_0 included."""
        if not self.gemm_k_overhead or not self.gemm_reference_k:
            return self.gemm_efficiency
        k_ref = self.gemm_reference_k
        return self.gemm_efficiency * (k_ref + self.gemm_k_overhead) / k_ref


def _profile(
    name: str, sms: int, sms_src: str, gemm: float, gemm_src: str, fa: float, fa_src: str,
    hbm: float = 0.9, hbm_src: str = _HBM,
) -> AcceleratorProfile:
    hopper = name in _HOPPER  # FlashAttention-3's parts: FA2 runs well below it there
    fa2, fa2_src = (_FA2_ON_HOPPER, _FA2_HOPPER_SRC) if hopper else (fa, _FA2_OWN)
    if name in _BLACKWELL:
        fa2, fa2_src = _bw.BLACKWELL_FA2_EFFICIENCY, _bw.BLACKWELL_FA2_SOURCE
    if name == "h20":
        fa2_src = _FA2_H20
    k0, k0_src = GEMM_K_OVERHEAD.get(name, (0, K0_NONE))  # Hopper's and Blackwell's fits
    k_ref = MSMF_REFERENCE_K if k0 else 0
    if (hopper or name == "h20") and hbm_src == _HBM:  # Hopper's own measured figure
        hbm, hbm_src = HOPPER_ELEMENTWISE_EFFICIENCY, HOPPER_ELEMENTWISE_SOURCE
    rows = WGMMA_ROWS if name in WGMMA_PARTS else MMA_SYNC_ROWS
    return AcceleratorProfile(
        name=name, sms=sms, gemm_efficiency=round(gemm, 3), hbm_efficiency=hbm,
        flash_attention_efficiency=fa, fa2_attention_efficiency=fa2,
        gemm_k_overhead=k0, gemm_reference_k=k_ref, mma_rows=rows,
        sources=(("sms", sms_src), ("gemm_efficiency", gemm_src), ("hbm_efficiency", hbm_src),
                 ("flash_attention_efficiency", fa_src), ("fa2_attention_efficiency", fa2_src),
                 ("gemm_k_overhead", k0_src),
                 ("mma_rows", MMA_ROWS_SOURCE[rows])),
    )  # fmt: skip


_A100_SMS = "NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs"
_H100_SMS = "NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs (SXM5)"
_A100_GEMM = (
    271.2 / 312 * _BURST_TO_SUSTAINED,
    f"{_MLE}/README.md MAMF v2 A100 SXM 271.2/312 x sustained/burst {_BURST_TO_SUSTAINED} "
    "(H200, B200 MSMF/MAMF)",
)
_H200_GEMM = (702.9 / 989, f"{_SUSTAINED}: H200 702.9/989")
_GB200_GEMM = (  # its own burst MAMF (ml-engineering@68cd2e5), not B200's sustained 1455.7/2250
    1822.0 / 2500 * _BURST_TO_SUSTAINED,
    f"{_MLE}/README.md MAMF v2 GB200 SXM 1822.0/2500 x sustained/burst {_BURST_TO_SUSTAINED}",
)
_BLACKWELL_FA = (_bw.BLACKWELL_FLASH_EFFICIENCY, _bw.BLACKWELL_FLASH_SOURCE)
_CDNA3 = "AMD CDNA 3 white paper: 304 CUs"
_AMD_FA = "assumption: 2/3 of the GEMM efficiency (no published fwd+bwd figure used)"
_AMD_HBM = "assumption: 0.8 of the datasheet bandwidth"
DEFAULT_PROFILES: dict[str, AcceleratorProfile] = {
    p.name: p
    for p in (
        _profile("a100-40gb", 108, _A100_SMS, *_A100_GEMM, 0.60, _FA2),
        _profile("a100-80gb", 108, _A100_SMS, *_A100_GEMM, 0.60, _FA2),
        _profile("h100-sxm", 132, _H100_SMS, _H200_GEMM[0], _H200_GEMM[1] + " (same die, 700 W)",
                 0.55, _FA3),
        _profile("h100-pcie", 114, "H100 whitepaper: 114 SMs (PCIe)", _H200_GEMM[0],
                 _H200_GEMM[1] + " (carried to PCIe; its lower clocks are in its peak)", 0.55,
                 _FA3),
        _profile("h200", 132, _H100_SMS, *_H200_GEMM, 0.55, _FA3),
        _profile("h100-hbm2e-500w", 132, _H100_SMS, power_capped(_H200_GEMM[0], 500, 700),
                 _H200_GEMM[1] + " (same die) x 500 / 700 W: power_capped (torchtitan "
                 "benchmarks/llama3_h100_202412_torchtitan.md: 'the default 500W power limit')",
                 0.55, _FA3),
        _profile("h800", 132, _H100_SMS, _H200_GEMM[0], _H200_GEMM[1] + " (same die)", 0.55,
                 _FA3),
        _profile("b200", 148, "NVIDIA Blackwell architecture technical brief: 148 SMs",
                 1455.7 / 2250, f"{_SUSTAINED}: B200 1455.7/2250", *_BLACKWELL_FA),
        _profile("mi300x", 304, _CDNA3, 668.4 / 1300,
                 f"{_MLE}/README.md MAMF v2 MI300X 668.4/1300 (power-capped: sustained)",
                 0.34, _AMD_FA, 0.8, _AMD_HBM),
        _profile("mi325x", 304, _CDNA3, 784.9 / 1300,
                 f"{_MLE}/README.md MAMF v2 MI325X 784.9/1300 (power-capped: sustained)",
                 0.40, _AMD_FA, 0.8, _AMD_HBM),
        # Derived profiles: the accelerator shares a die (or an architecture) with a measured
        # one above; its own peak is in its HardwareSpec, the efficiency carried over.
        _profile("a800-80gb", 108, _A100_SMS + " (A800: the A100 die, NVLink cut)",
                 *_A100_GEMM, 0.60, _FA2),
        _profile("h20", 78, "H20 product brief / nvidia-smi reports: 78 SMs (a cut Hopper die)",
                 _H200_GEMM[0], _H200_GEMM[1] + " (carried to H20: assumption; its 148 "
                 "TFLOP/s peak is compute-capped, so GEMMs run nearer it)", 0.55,
                 f"{_FA3} (carried to H20)", H20_STREAM_EFFICIENCY, H20_STREAM_SOURCE),
        _profile("gb200", 148, "NVIDIA Blackwell architecture technical brief: 148 SMs",
                 *_GB200_GEMM, *_BLACKWELL_FA),
        _profile("l40s", 142, "NVIDIA Ada Lovelace architecture whitepaper: 142 SMs (L40S)",
                 *_A100_GEMM, 0.60, f"{_FA2} (carried to Ada: assumption)",
                 0.85, "assumption: GDDR6 streams at ~85 % of its datasheet bandwidth"),
        _profile("mi250x-gcd", 110, "AMD CDNA 2 white paper: 220 CUs per MI250X, 110 per GCD",
                 0.55, "assumption: ~55 % of the dense bf16 peak sustained (CDNA 2 has no "
                 "published MSMF figure)", 0.30, _AMD_FA, 0.8, _AMD_HBM),
    )  # fmt: skip
}


def default_profile(hardware: HardwareSpec | str) -> AcceleratorProfile:
    """The shipped profile of a built-in accelerator; SpecError names the ones there are."""
    name = hardware if isinstance(hardware, str) else hardware.name
    if name not in DEFAULT_PROFILES:
        have = ", ".join(DEFAULT_PROFILES)
        raise SpecError(f"no default efficiency profile for {name}; use one of: {have}")
    return DEFAULT_PROFILES[name]


@dataclass(frozen=True)
class Device:
    """One accelerator computing in ``dtype``: kernel times by shape.

    ``measured`` (a calibration profile) overrides the default efficiencies where it has a
    table; see the module docstring.
    """

    hardware: HardwareSpec
    dtype: Dtype = Dtype.BF16
    profile: AcceleratorProfile | None = None
    measured: Efficiency | None = None
    weight_bytes: float | None = None  # a GEMM's [k, n] operand packed (4-bit engine; exact)
    fp4: bool = False  # W4A4: its GEMMs quantize the [m, k] operand to FP4 (perf.fp4_gemm)

    @property
    def defaults(self) -> AcceleratorProfile:
        return self.profile or default_profile(self.hardware)

    @property
    def peak_flops_per_s(self) -> float:
        return float(fp4_peak(self.hardware) if self.fp4 else self.hardware.peak(self.dtype))

    def _measured(self, side: str, size: float, kernel: str) -> float | None:
        if self.measured is None:
            return None
        method = getattr(self.measured, side)
        try:
            eff = float(method(size, kernel))
        except SpecError:
            return None
        if not 0 < eff <= 1:
            raise SpecError(f"calibration {self.measured.name} gave efficiency {eff} for {kernel}")
        return eff

    def memory_s(self, bytes_moved: float) -> float:
        """Seconds to stream ``bytes_moved`` through HBM (a memory-bound kernel)."""
        if bytes_moved <= 0:
            return 0.0
        eff = self._measured("bandwidth", bytes_moved, "copy") or self.defaults.hbm_efficiency
        return bytes_moved / (self.hardware.hbm_bandwidth_bytes_per_s * eff)

    def elementwise_s(self, bytes_moved: float, kernels: int = 1) -> float:
        """Memory-bound kernels moving ``bytes_moved`` in all, plus their launch gaps."""
        return self.memory_s(bytes_moved) + kernels * self.defaults.kernel_gap_s

    @memoized()
    def gemm_s(self, m: int, n: int, k: int, batch: int = 1, mma_rows: int = 0) -> float:
        """Seconds of ``batch`` independent [m, k] x [k, n] GEMMs in one kernel (tile model);
        ``mma_rows``: a skinny GEMM's padded rows where its kernel's differ (0: the profile's).
        Memoized (pure; the planner's PPO 70B sweep asks 5,702 of 185 distinct arguments)."""
        if min(m, n, k, batch) < 1 or mma_rows < 0:
            raise SpecError(f"GEMM shape ({batch} x {m} x {n} x {k}) must be positive and "
                            f"mma_rows={mma_rows} non-negative")  # fmt: skip
        x, a = self.dtype.bytes, m * k * batch  # a: the [m, k] operand's elements
        flops = 2 * m * n * k * batch
        memory = self.memory_s((fp4_bytes(a) if self.fp4 else a * x)
                               + (m * n * x + k * n * (self.weight_bytes or x)) * batch)
        measured = self._measured("compute", flops, "gemm")
        if measured is not None:
            compute = flops / (self.peak_flops_per_s * measured)
        else:
            p = self.defaults
            per_tile_rate = self.peak_flops_per_s * p.k_loop_efficiency / p.sms
            k_tile = k + p.gemm_k_overhead  # the tile's fixed cost as K-steps (module docstring)
            compute = min(
                ceil(batch * ceil(m / tm) * ceil(n / tn) / p.sms) * 2 * tm * tn * k_tile
                / per_tile_rate
                for tm, tn in TILES
            )
            if min(m, n) < min(min(t) for t in TILES):  # split-K / GEMV-class kernel
                padded = skinny_gemm_flops(m, n, k, batch, mma_rows or p.mma_rows)
                compute = min(compute, padded / (self.peak_flops_per_s * p.gemm_efficiency))
        quantize = quantize_s(self, a) if self.fp4 and batch == 1 else 0.0  # (perf.fp4_gemm)
        return max(compute, memory) + self.defaults.kernel_gap_s + quantize

    def flash_attention_s(
        self, forward_flops: float, backward: bool, dropout: bool = False, fa2: bool = False
    ) -> float:
        """A FlashAttention-class fused attention pass of ``forward_flops`` (the causal
        matrix-product FLOPs of its forward); the backward does 2.5 x those FLOPs.
        ``fa2``: a pre-FlashAttention-3 kernel (FlashAttention-2, SDPA's flash backend);
        ``dropout``: attention dropout on (FlashAttention-3 has none); either takes
        ``fa2_attention_efficiency`` (module docstring)."""
        if forward_flops <= 0:
            return 0.0
        flops = forward_flops * (FLASH_BACKWARD_FACTOR if backward else 1.0)
        eff = self._measured("compute", flops, "attention")
        p = self.defaults
        pre_fa3 = p.fa2_backward_efficiency if backward else p.fa2_attention_efficiency
        eff = eff or (pre_fa3 if dropout or fa2 else p.flash_attention_efficiency)
        return flops / (self.peak_flops_per_s * eff) + self.defaults.kernel_gap_s


def gemm_time_s(m: int, n: int, k: int, dtype: Dtype, hardware: HardwareSpec | str,
                calibration: Efficiency | None = None, batch: int = 1) -> float:  # fmt: skip
    """Predicted seconds of an [m, k] x [k, n] GEMM (``batch`` of them) on ``hardware``.

    >>> from rlmcost.specs import get_hardware
    >>> round(gemm_time_s(8192, 8192, 8192, Dtype.BF16, "a100-80gb") * 1e3, 2)  # 73 % of peak
    4.81
    """
    from rlmcost.specs import get_hardware

    hw = get_hardware(hardware) if isinstance(hardware, str) else hardware
    return Device(hw, dtype, measured=calibration).gemm_s(m, n, k, batch)
