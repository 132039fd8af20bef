"""From a roofline lower bound to a calibrated time estimate, through a measured profile.

Roofline (Williams, Waterman & Patterson 2009, CACM 52(4)): a kernel that does F FLOPs and
moves Q bytes takes at least max(F / peak, Q / bandwidth). The calibrated estimate divides
each term by the efficiency measured for that kind of kernel at that size:

    t = max(F / (peak * e_compute(F)), Q / (bandwidth * e_bandwidth(Q)))

``kernel`` names the profile table of the work: a compute class ("gemm", "train",
"prefill", ...: its ``compute_efficiency`` table gives e_compute, and the streaming "copy"
bandwidth table gives e_bandwidth) or a memory class ("decode", "copy": its
``bandwidth_efficiency`` table gives e_bandwidth, and "gemm" gives e_compute). So
GEMM-bound work runs at its measured FLOP efficiency and a decode step at its measured
bandwidth efficiency. Without a profile the estimate is the roofline itself (efficiency 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlmcost.choices import Dtype
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.calibrate.profile import Profile
    from rlmcost.specs import HardwareSpec


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

    >>> calibrated_seconds(1e12, 0, None, Dtype.FP32, None)
    Traceback (most recent call last):
    ...
    rlmcost.errors.SpecError: a time estimate needs a hardware spec or a calibration profile
    """
    return calibrated_time(flops, bytes_moved, hardware, dtype, profile, kernel).seconds
