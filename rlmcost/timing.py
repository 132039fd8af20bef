"""Roofline lower bounds of time: compute-bound work / peak versus memory-bound bytes / bandwidth.

A phase (one kernel sequence with no dependence on earlier results in it, e.g. a prefill, one
decode step, one optimizer step) takes at least

    max(flops / (gpus x peak x eff_c),  bytes_per_device / (hbm_bandwidth x eff_b))

(Williams et al. 2009, "Roofline"; the memory side per device because every device streams
its own share). ``peak`` is the dense datasheet FLOP/s of the compute dtype and
``hbm_bandwidth`` the datasheet HBM bandwidth (:class:`~rlmcost.specs.HardwareSpec`).
Efficiencies ``eff_c, eff_b`` in (0, 1] default to 1 (the datasheet peaks, a true lower bound);
a calibration profile can supply measured ones through the :class:`Efficiency` protocol.
Communication is not included (``rlmcost.parallel`` models it); neither are kernel launch
latencies or the scheduler.

A sequence of phases that must run one after another (T decode steps) takes at least the sum
of their maxima, which :meth:`Roofline.steps` computes exactly for arrays of phases.

:func:`calibrated_time` is the same roofline for one kernel class of a measured profile
(``rlmcost calibrate``), hardware spec or not: t = max(F / (peak e_compute(F)), Q / (bandwidth
e_bandwidth(Q))), where ``kernel`` names the profile table of the work: a compute class
("gemm", "train", "prefill", ...: its ``compute_efficiency`` table, with the streaming "copy"
bandwidth table) or a memory class ("decode", "copy": its ``bandwidth_efficiency`` table, with
"gemm" for compute). Without a profile it is the roofline itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import fsum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

if TYPE_CHECKING:
    from rlmcost.calibrate.profile import Profile
    from rlmcost.choices import Dtype
    from rlmcost.specs import HardwareSpec


@runtime_checkable
class Efficiency(Protocol):
    """Achieved fraction of peak: for a phase of ``flops_per_device`` FLOPs and of
    ``bytes_per_device`` bytes moved per device. ``name`` says where the numbers come from."""

    @property
    def name(self) -> str: ...

    def compute(self, flops_per_device: float, kernel: str = "gemm") -> float: ...

    def bandwidth(self, bytes_per_device: float, kernel: str = "decode") -> float: ...


@dataclass(frozen=True)
class Peak:
    """The datasheet peaks themselves (efficiency 1): the default, a true lower bound."""

    name: str = "datasheet peak (no calibration)"

    def compute(self, flops_per_device: float, kernel: str = "gemm") -> float:
        return 1.0

    def bandwidth(self, bytes_per_device: float, kernel: str = "decode") -> float:
        return 1.0


PEAK = Peak()

Kernels = tuple[str, str]
"""(compute table, bandwidth table) of a phase in a calibration profile."""
DECODE: Kernels = ("gemm", "decode")  # a decode step: weight and KV-cache streaming
PREFILL: Kernels = ("prefill", "copy")
FORWARD: Kernels = ("forward", "copy")  # teacher-forced forward (assessment)
TRAIN: Kernels = ("train", "copy")  # forward + backward + optimizer step


@dataclass(frozen=True)
class PhaseTime:
    """Seconds of one phase or a sum of sequential phases.

    ``bound_s`` is the lower bound (sum of per-phase maxima); ``compute_s`` and ``memory_s``
    the sums of each side alone; ``compute_bound_s`` the part of ``bound_s`` spent in phases
    where compute was the larger side.
    """

    compute_s: float = 0.0
    memory_s: float = 0.0
    bound_s: float = 0.0
    compute_bound_s: float = 0.0

    def scaled(self, factor: float | Fraction) -> PhaseTime:
        """The bound stretched by ``factor`` (>= 1: pipeline bubbles, load imbalance); the
        compute and memory sums stay what the phases need."""
        f = float(factor)
        return PhaseTime(self.compute_s, self.memory_s, self.bound_s * f, self.compute_bound_s * f)

    def __add__(self, other: PhaseTime) -> PhaseTime:
        return PhaseTime(
            self.compute_s + other.compute_s,
            self.memory_s + other.memory_s,
            self.bound_s + other.bound_s,
            self.compute_bound_s + other.compute_bound_s,
        )

    def times(self, n: int) -> PhaseTime:
        """``n`` identical phases one after another."""
        return PhaseTime(
            self.compute_s * n, self.memory_s * n, self.bound_s * n, self.compute_bound_s * n
        )

    @property
    def bound(self) -> str:
        """What most of the bound is: ``compute`` where compute-bound phases are at least half
        of it; ``link`` where more than half of it is beyond the compute-bound time and the
        whole HBM time (``bound_s - compute_bound_s - memory_s``): seconds no phase's roofline
        gives, the transfers and parameter gathers at link bandwidth that a stage's bound
        holds (``_at_least`` and the offload traffic of ``placement.group_jobs``, a stage's
        ``transfer_s``: weight sync, engine sleep/wake, host offload); else ``memory``;
        ``none`` where the bound is 0 (a stage with nothing to run)."""
        if self.bound_s <= 0:
            return "none"  # nothing runs (a stage without invocations)
        if self.compute_bound_s >= self.bound_s / 2:
            return "compute"
        if self.bound_s - self.compute_bound_s - self.memory_s > self.bound_s / 2:
            return "link"
        return "memory"

    def to_json(self) -> dict[str, float | str]:
        return {
            "time_lower_bound_s": self.bound_s,
            "compute_time_s": self.compute_s,
            "memory_time_s": self.memory_s,
            "bound": self.bound,
        }


@dataclass(frozen=True)
class Roofline:
    """The roofline of ``gpus`` devices of ``hardware`` computing in ``dtype``."""

    hardware: HardwareSpec
    gpus: int
    dtype: Dtype
    efficiency: Efficiency = PEAK

    def __post_init__(self) -> None:
        if self.gpus < 1:
            raise SpecError(f"gpus={self.gpus} must be a positive integer")
        self.hardware.peak(self.dtype)  # SpecError when the hardware lists no such peak

    @property
    def peak_flops_per_s(self) -> int:
        return self.hardware.peak(self.dtype)

    def phase(
        self,
        flops: int | float | Fraction,
        bytes_per_device: int | float,
        kernels: Kernels = DECODE,
    ) -> PhaseTime:
        """One phase: ``flops`` over all devices, ``bytes_per_device`` moved by each.

        >>> from rlmcost.specs import get_hardware
        >>> from rlmcost.choices import Dtype
        >>> r = Roofline(get_hardware("h100"), 8, Dtype.BF16)
        >>> r.phase(8 * 989e12, 3.35e12).bound_s  # 1 s of compute, 1 s of HBM traffic
        1.0
        """
        if not isinstance(self.efficiency, Peak):
            return self.steps([float(flops)], [bytes_per_device], kernels)
        # at the peaks, :meth:`steps` of one phase without its lists: the same operations
        f, b = float(flops), float(bytes_per_device)
        if f < 0 or b < 0:
            raise SpecError("flops and bytes must be non-negative; check the inputs")
        c = f / (self.gpus * self.peak_flops_per_s * 1.0)
        m = b / (self.hardware.hbm_bandwidth_bytes_per_s * 1.0)
        bound = max(c, m)
        return PhaseTime(fsum((c,)), fsum((m,)), fsum((bound,)), fsum((bound,) if c >= m else ()))

    def seconds(
        self,
        flops: Sequence[float],
        bytes_per_device: Sequence[float],
        kernels: Kernels = DECODE,
    ) -> tuple[list[float], list[float]]:
        """Per phase, (compute seconds, memory seconds) at the efficiencies.

        ``kernels`` names the profile tables the phase reads (compute, bandwidth); a profile
        without that compute table falls back to "gemm", without that bandwidth table to
        "decode". Plain Python floats (a cold query loads no numpy)."""
        f = [float(x) for x in flops]
        b = [float(x) for x in bytes_per_device]
        if any(x < 0 for x in f) or any(x < 0 for x in b):
            raise SpecError("flops and bytes must be non-negative; check the inputs")
        eff = self.efficiency
        compute_rate = self.gpus * self.peak_flops_per_s
        bandwidth = self.hardware.hbm_bandwidth_bytes_per_s
        if isinstance(eff, Peak):
            return [x / (compute_rate * 1.0) for x in f], [x / (bandwidth * 1.0) for x in b]
        c_kernel, b_kernel = kernels
        compute = [
            x / (compute_rate * _fraction(_measured(eff.compute, x / self.gpus, c_kernel, "gemm"),
                                          eff.name))
            for x in f
        ]  # fmt: skip
        memory = [
            x / (bandwidth * _fraction(_measured(eff.bandwidth, x, b_kernel, "decode"), eff.name))
            for x in b
        ]
        return compute, memory

    def steps(
        self,
        flops: Sequence[float],
        bytes_per_device: Sequence[float],
        kernels: Kernels = DECODE,
    ) -> PhaseTime:
        """Phases one after another: sums of compute, memory and per-phase maxima."""
        compute, memory = self.seconds(flops, bytes_per_device, kernels)
        bound = [max(c, m) for c, m in zip(compute, memory, strict=True)]
        return PhaseTime(
            fsum(compute),
            fsum(memory),
            fsum(bound),
            fsum(x for c, m, x in zip(compute, memory, bound, strict=True) if c >= m),
        )


def _measured(method: Any, size: float, kernel: str, fallback: str) -> float:
    """``method(size, kernel)``, or the ``fallback`` table when the profile lacks ``kernel``."""
    try:
        return method(size, kernel)
    except SpecError:
        return method(size, fallback)


def _fraction(x: float, name: str) -> float:
    if not 0 < x <= 1:
        raise SpecError(f"calibration {name} gave efficiency {x}; it must be in (0, 1]")
    return float(x)


# --------------------------------------------------------------------------------------------
# One phase through a measured profile (also without a HardwareSpec: a CPU profile's own
# reference peaks). The same roofline, written for a single kernel class of a profile.
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CalibratedTime:
    """A time estimate and how it was made."""

    seconds: float
    compute_seconds: float  # F / (peak * e_compute)
    memory_seconds: float  # Q / (bandwidth * e_bandwidth)
    compute_efficiency: float
    bandwidth_efficiency: float
    profile: str  # the profile's name, or "roofline (no profile)"

    @property
    def bound(self) -> str:
        """'compute' or 'memory': the larger term."""
        return "compute" if self.compute_seconds >= self.memory_seconds else "memory"


def roofline_seconds(
    flops: float, bytes_moved: float, peak_flops_per_s: float, peak_bytes_per_s: float
) -> float:
    """The roofline lower bound max(F / peak, Q / bandwidth)."""
    return max(flops / peak_flops_per_s, bytes_moved / peak_bytes_per_s)


def _peaks(
    hardware: HardwareSpec | None, dtype: Dtype, profile: Profile | None
) -> tuple[float, float]:
    if hardware is not None:
        return float(hardware.peak(dtype)), float(hardware.hbm_bandwidth_bytes_per_s)
    if profile is None:
        raise SpecError("a time estimate needs a hardware spec or a calibration profile")
    return profile.peak_flops_per_s, profile.peak_bytes_per_s


def _efficiencies(
    profile: Profile, flops: float, bytes_moved: float, kernel: str
) -> tuple[float, float]:
    compute_tables, bandwidth_tables = profile.compute_efficiency, profile.bandwidth_efficiency
    if kernel not in compute_tables and kernel not in bandwidth_tables:
        have = ", ".join([*compute_tables, *bandwidth_tables])
        raise SpecError(
            f"profile {profile.name} has no kernel class '{kernel}'; use one of: {have}"
        )
    compute_kernel = kernel if kernel in compute_tables else "gemm"
    bandwidth_kernel = kernel if kernel in bandwidth_tables else "copy"
    e_compute = profile.compute(flops, compute_kernel) if flops > 0 else 1.0
    e_bandwidth = profile.bandwidth(bytes_moved, bandwidth_kernel) if bytes_moved > 0 else 1.0
    return e_compute, e_bandwidth


def calibrated_time(
    flops: float,
    bytes_moved: float,
    hardware: HardwareSpec | None,
    dtype: Dtype,
    profile: Profile | None,
    kernel: str = "gemm",
) -> CalibratedTime:
    """The calibrated estimate with its parts; see the module docstring.

    ``hardware`` supplies the peaks (None: the profile's own reference peaks, as for a CPU
    profile). ``flops`` and ``bytes_moved`` are per device. A profile measured in another
    dtype than ``dtype`` is refused: its efficiencies belong to another peak.
    """
    if flops < 0 or bytes_moved < 0:
        raise SpecError(f"flops={flops} and bytes_moved={bytes_moved} must not be negative")
    peak, bandwidth = _peaks(hardware, dtype, profile)
    if profile is None:
        e_compute = e_bandwidth = 1.0
        name = "roofline (no profile)"
    else:
        if profile.dtype != dtype:
            raise SpecError(
                f"profile {profile.name} was measured in {profile.dtype}, the estimate is for "
                f"{dtype}; calibrate with --dtype {dtype} or estimate in {profile.dtype}"
            )
        e_compute, e_bandwidth = _efficiencies(profile, flops, bytes_moved, kernel)
        name = profile.name
    compute_s = flops / (peak * e_compute)
    memory_s = bytes_moved / (bandwidth * e_bandwidth)
    return CalibratedTime(
        max(compute_s, memory_s), compute_s, memory_s, e_compute, e_bandwidth, name
    )


def calibrated_seconds(
    flops: float,
    bytes_moved: float,
    hardware: HardwareSpec | None,
    dtype: Dtype,
    profile: Profile | None,
    kernel: str = "gemm",
) -> float:
    """max(F / (peak e_compute), Q / (bandwidth e_bandwidth)) in seconds.

    >>> from rlmcost.choices import Dtype
    >>> calibrated_seconds(1e12, 0, None, Dtype.FP32, None)
    Traceback (most recent call last):
    ...
    rlmcost.errors.SpecError: a time estimate needs a hardware spec or a calibration profile
    """
    return calibrated_time(flops, bytes_moved, hardware, dtype, profile, kernel).seconds
