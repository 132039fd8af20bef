"""What a calibration run found: each measured kernel call against the reference peaks, and the
report that becomes a :class:`~rlmcost.calibrate.profile.Profile`.

Definitions, per kernel call (F analytic FLOPs, Q analytic bytes, t measured seconds):
achieved FLOP/s = F / t, achieved bytes/s = Q / t, compute efficiency = F / t / peak,
bandwidth efficiency = Q / t / bandwidth, and efficiency = roofline bound / t
= max(compute efficiency, bandwidth efficiency), with ``bound`` naming the larger term.
A collective's bytes are the ring bus bytes per rank (NCCL-tests' bus bandwidth) and its
efficiency is measured against the link peak.
"""

from __future__ import annotations

from dataclasses import asdict, field
from typing import Any

from rlmcost.calibrate.plan import BANDWIDTH_CLASSES, COMPUTE_CLASSES, KernelCase
from rlmcost.calibrate.profile import SCHEMA, Profile
from rlmcost.choices import Dtype
from rlmcost.frozen import dataclass


@dataclass(frozen=True)
class KernelResult:
    """One measured kernel call, with its analytic and counted FLOPs and efficiencies."""

    name: str
    kernel_class: str
    shape: dict[str, int]
    analytic_flops: int
    counted_flops: int
    counted_on: str
    analytic_bytes: int
    seconds: float  # median of the timed calls
    min_seconds: float  # fastest timed call (less affected by other load on the machine)
    reps: int
    achieved_flops_per_s: float
    achieved_bytes_per_s: float
    compute_efficiency: float | None
    bandwidth_efficiency: float | None
    efficiency: float | None
    bound: str  # "compute", "memory" or "link"
    note: str = ""

    @property
    def flops_match(self) -> bool:
        return self.analytic_flops == self.counted_flops

    def to_json(self) -> dict[str, Any]:
        row = asdict(self)
        row["flops_match"] = self.flops_match
        return row


@dataclass(frozen=True)
class Measured:
    """A kernel's counts and time before the peaks are known."""

    case: KernelCase
    counted_flops: int
    counted_on: str
    seconds: float
    min_seconds: float
    reps: int
    note: str = ""


@dataclass(frozen=True)
class CalibrationReport:
    """Everything one calibration run found; :meth:`profile` turns it into a Profile."""

    device: str  # built-in hardware name, or "cpu"
    device_name: str
    torch: str
    dtype: Dtype
    threads: int
    quick: bool
    peak_flops_per_s: float
    peak_bytes_per_s: float
    peak_source: str
    link_bytes_per_s: float | None
    kernels: list[KernelResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str = ""

    @property
    def mismatches(self) -> list[KernelResult]:
        """Kernels whose analytic FLOPs differ from FlopCounterMode's (a bug if any)."""
        return [k for k in self.kernels if not k.flops_match]

    def to_json(self) -> dict[str, Any]:
        """The ``rlmcost calibrate --json`` object."""
        return {
            "device": self.device,
            "device_name": self.device_name,
            "torch": self.torch,
            "dtype": str(self.dtype),
            "threads": self.threads,
            "quick": self.quick,
            "peak_flops_per_s": self.peak_flops_per_s,
            "peak_bytes_per_s": self.peak_bytes_per_s,
            "peak_source": self.peak_source,
            "link_bytes_per_s": self.link_bytes_per_s,
            "notes": self.notes,
            "kernels": [k.to_json() for k in self.kernels],
        }

    COLUMNS = ("kernel", "shape", "FLOPs", "counter", "time", "FLOP/s", "bytes/s", "efficiency")
    RIGHT = (2, 4, 5, 6, 7)  # right-aligned columns
    LEGEND = (
        "counter: '= cpu' = FlopCounterMode counted the same FLOPs on the device, '= meta' = "
        "through the math decomposition on meta; efficiency: C compute-, M memory-bound"
    )

    def rows(self) -> list[tuple[str, ...]]:
        """One formatted row per kernel, in :attr:`COLUMNS` order."""
        from rlmcost.units import format_bandwidth, format_flops, format_seconds

        out: list[tuple[str, ...]] = []
        for k in self.kernels:
            shape = " ".join(f"{key}{v}" for key, v in k.shape.items())
            where = k.counted_on.split()[0]
            counter = f"= {where}" if k.flops_match else f"!= {format_flops(k.counted_flops)}"
            rate = format_flops(k.achieved_flops_per_s, "FLOP/s") if k.analytic_flops else "-"
            eff = "-"
            if k.efficiency is not None:
                eff = f"{k.efficiency:.1%} {k.bound[0].upper()}"
            out.append(
                (
                    k.name,
                    shape,
                    format_flops(k.analytic_flops),
                    counter,
                    format_seconds(k.seconds),
                    rate,
                    format_bandwidth(k.achieved_bytes_per_s),
                    eff,
                )
            )
        return out

    def profile(self) -> Profile:
        """The profile: per kernel class, (size, efficiency) points sorted by size."""
        compute = _table(self.kernels, COMPUTE_CLASSES, "analytic_flops", "compute_efficiency")
        bandwidth = _table(
            self.kernels, BANDWIDTH_CLASSES, "analytic_bytes", "bandwidth_efficiency"
        )
        link = _table(self.kernels, _COLLECTIVE_CLASSES, "analytic_bytes", "efficiency")
        return Profile(
            schema=SCHEMA,
            device=self.device,
            device_name=self.device_name,
            torch=self.torch,
            dtype=self.dtype,
            threads=self.threads,
            quick=self.quick,
            peak_flops_per_s=self.peak_flops_per_s,
            peak_bytes_per_s=self.peak_bytes_per_s,
            peak_source=self.peak_source,
            link_bytes_per_s=self.link_bytes_per_s,
            command=self.command,
            compute_efficiency=compute,
            bandwidth_efficiency=bandwidth,
            link_efficiency=link,
            kernels=tuple(k.to_json() for k in self.kernels),
        )


_COLLECTIVE_CLASSES = ("all_reduce", "all_gather", "reduce_scatter")


def _table(
    rows: list[KernelResult], classes: tuple[str, ...], size_key: str, eff_key: str
) -> dict[str, tuple[tuple[float, float], ...]]:
    """class -> points (size, efficiency), sorted; equal sizes averaged; None left out."""
    tables: dict[str, tuple[tuple[float, float], ...]] = {}
    for cls in classes:
        by_size: dict[int, list[float]] = {}
        for r in rows:
            eff = getattr(r, eff_key)
            if r.kernel_class == cls and eff is not None and getattr(r, size_key) > 0:
                by_size.setdefault(getattr(r, size_key), []).append(eff)
        if by_size:
            tables[cls] = tuple(
                (float(size), sum(effs) / len(effs)) for size, effs in sorted(by_size.items())
            )
    return tables


def kernel_result(m: Measured, peak: float, bandwidth: float) -> KernelResult:
    case = m.case
    flops_per_s = case.flops / m.seconds
    bytes_per_s = case.bytes_moved / m.seconds
    ce, be = flops_per_s / peak, bytes_per_s / bandwidth
    return KernelResult(
        name=case.name,
        kernel_class=case.kernel_class,
        shape=dict(case.shape),
        analytic_flops=case.flops,
        counted_flops=m.counted_flops,
        counted_on=m.counted_on,
        analytic_bytes=case.bytes_moved,
        seconds=m.seconds,
        min_seconds=m.min_seconds,
        reps=m.reps,
        achieved_flops_per_s=flops_per_s,
        achieved_bytes_per_s=bytes_per_s,
        compute_efficiency=ce,
        bandwidth_efficiency=be,
        efficiency=max(ce, be),
        bound="compute" if ce >= be else "memory",
        note=m.note,
    )


def collective_result(c: Any, link: float | None) -> KernelResult:
    bus_per_s = c.bus_bytes / c.seconds
    return KernelResult(
        name=c.op,
        kernel_class=c.op,
        shape={"ranks": c.ranks, "bytes": c.size_bytes},
        analytic_flops=0,
        counted_flops=c.counted_flops,
        counted_on=f"{c.backend} rank 0",
        analytic_bytes=c.bus_bytes,
        seconds=c.seconds,
        min_seconds=c.min_seconds,
        reps=c.reps,
        achieved_flops_per_s=0.0,
        achieved_bytes_per_s=bus_per_s,
        compute_efficiency=None,
        bandwidth_efficiency=None,
        efficiency=bus_per_s / link if link else None,
        bound="link",
        note="bytes = ring bus bytes per rank; bytes/s = bus bandwidth",
    )
