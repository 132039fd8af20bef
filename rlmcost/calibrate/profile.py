"""A calibration profile: measured efficiency per kernel class as a function of problem size.

A profile (JSON, schema ``rlmcost-calibration/1``) records where it was measured (device,
device name, torch version, dtype, threads), the reference peaks its efficiencies divide by,
and per kernel class a table of (size, efficiency) points:

* ``compute_efficiency``: size = FLOPs of one kernel call, efficiency = achieved / peak FLOP/s;
* ``bandwidth_efficiency``: size = bytes one call moves, efficiency = achieved / peak bytes/s;
* ``link_efficiency`` (collectives, when a link peak is known): size = bus bytes per rank;
* ``kernels``: every measured row, for provenance and the notebook.

Reference peaks: on a GPU, the datasheet ``HardwareSpec`` of the device (dense peak of the
dtype, HBM bandwidth). A CPU has no datasheet spec here, so a CPU profile's peaks are
measured on the spot: the best GEMM of the run and the largest (DRAM-resident) copy, and its
efficiencies say how close a kernel comes to those.

:meth:`Profile.compute` / :meth:`Profile.bandwidth` interpolate a table linearly in
log(size), hold the end values outside it, and clamp to (0, 1]. No torch here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from rlmcost.calibrate import PROFILES
from rlmcost.choices import Dtype
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.specs import HardwareSpec

SCHEMA: Final = "rlmcost-calibration/1"
CPU_DEVICE = "cpu"
_MIN_EFFICIENCY = 1e-6  # clamp floor: a measured table never says "infinitely slow"

Point = tuple[float, float]


class Profile(BaseModel):
    """Measured efficiencies of one device and dtype; see the module docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_id: Literal["rlmcost-calibration/1"] = Field(alias="schema")
    device: str = Field(min_length=1, description="built-in hardware name (h200) or 'cpu'")
    device_name: str = Field(description="vendor's name, e.g. 'NVIDIA H200'")
    torch: str = Field(description="torch version that ran the kernels")
    dtype: Dtype
    threads: int = Field(gt=0, description="torch intra-op threads (CPU) / 1")
    quick: bool = Field(description="measured with --quick (fewer, smaller kernels)")
    peak_flops_per_s: float = Field(gt=0, description="reference peak the efficiencies divide")
    peak_bytes_per_s: float = Field(gt=0, description="reference memory bandwidth")
    peak_source: str = Field(description="where the reference peaks come from")
    link_bytes_per_s: float | None = Field(
        default=None, gt=0, description="reference link bandwidth of the collectives, if any"
    )
    command: str = Field(default="", description="the command that wrote the profile")
    compute_efficiency: dict[str, tuple[Point, ...]] = Field(
        description="kernel class -> (FLOPs per call, achieved / peak FLOP/s) points"
    )
    bandwidth_efficiency: dict[str, tuple[Point, ...]] = Field(
        description="kernel class -> (bytes per call, achieved / peak bytes/s) points"
    )
    link_efficiency: dict[str, tuple[Point, ...]] = Field(
        default_factory=dict,
        description="collective -> (bus bytes per rank, bus bandwidth / link bandwidth) points",
    )
    kernels: tuple[dict[str, Any], ...] = ()

    _source: str = PrivateAttr(default="")

    @field_validator("compute_efficiency", "bandwidth_efficiency", "link_efficiency")
    @classmethod
    def _tables(cls, tables: dict[str, tuple[Point, ...]]) -> dict[str, tuple[Point, ...]]:
        for name, points in tables.items():
            if not points:
                raise ValueError(f"table '{name}' is empty; it needs at least one point")
            sizes = [size for size, _ in points]
            if any(not (math.isfinite(s) and s > 0) for s in sizes):
                raise ValueError(f"table '{name}': sizes must be positive numbers")
            if any(b <= a for a, b in zip(sizes, sizes[1:], strict=False)):
                raise ValueError(f"table '{name}': sizes must increase strictly")
            if any(not (math.isfinite(e) and e > 0) for _, e in points):
                raise ValueError(f"table '{name}': efficiencies must be positive numbers")
        return tables

    # ----------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """Where the profile came from and what it measured, e.g. 'cpu.json (cpu, fp32)'."""
        return f"{self._source or 'profile'} ({self.device}, {self.dtype})"

    def compute(self, flops_per_device: float, kernel: str = "gemm") -> float:
        """Measured fraction of peak FLOP/s of ``kernel`` at ``flops_per_device`` FLOPs."""
        return _interpolate(self._table("compute_efficiency", kernel), flops_per_device)

    def bandwidth(self, bytes_per_device: float, kernel: str = "decode") -> float:
        """Measured fraction of peak memory bandwidth of ``kernel`` moving that many bytes."""
        return _interpolate(self._table("bandwidth_efficiency", kernel), bytes_per_device)

    def link(self, bytes_per_rank: float, collective: str = "all_reduce") -> float:
        """Measured fraction of the link bandwidth of a collective moving that many bus bytes."""
        return _interpolate(self._table("link_efficiency", collective), bytes_per_rank)

    def _table(self, kind: str, kernel: str) -> tuple[Point, ...]:
        tables: dict[str, tuple[Point, ...]] = getattr(self, kind)
        if kernel not in tables:
            have = ", ".join(tables) or "none"
            what = kind.replace("_", " ")
            raise SpecError(f"profile {self.name} has no {what} table '{kernel}'; it has: {have}")
        return tables[kernel]

    def check_hardware(self, hardware: HardwareSpec) -> None:
        """SpecError unless this profile was measured on ``hardware`` against its peaks."""
        if self.device != hardware.name:
            raise SpecError(
                f"profile {self.name} was measured on {self.device} ({self.device_name}), "
                f"not {hardware.name}; calibrate on a {hardware.name} "
                f"(rlmcost calibrate --device cuda) or pick that device's profile"
            )
        if self.dtype in hardware.peak_flops_per_s:
            peak = hardware.peak(self.dtype)
            if not math.isclose(peak, self.peak_flops_per_s, rel_tol=1e-9):
                raise SpecError(
                    f"profile {self.name} divides by a {self.dtype} peak of "
                    f"{self.peak_flops_per_s:.4g} FLOP/s but {hardware.name} lists {peak:.4g}; "
                    "recalibrate with the current hardware spec"
                )

    def to_json(self) -> dict[str, Any]:
        """The file contents (``schema`` key first)."""
        return self.model_dump(mode="json", by_alias=True)

    def save(self, path: str | Path) -> Path:
        """Write the profile as indented JSON (parent folders created)."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return out


def _interpolate(points: tuple[Point, ...], size: float) -> float:
    """Linear in log(size) between the points, the end values outside, clamped to (0, 1].

    Size 0 (a phase with no FLOPs or no traffic) takes the first point's value.

    >>> table = ((1e9, 0.5), (1e11, 0.9))
    >>> round(_interpolate(table, 1e10), 9), _interpolate(table, 1e3), _interpolate(table, 1e15)
    (0.7, 0.5, 0.9)
    """
    if not (math.isfinite(size) and size >= 0):
        raise SpecError(f"problem size {size} must be a non-negative number")
    if size <= points[0][0]:
        eff = points[0][1]
    elif size >= points[-1][0]:
        eff = points[-1][1]
    else:
        for (s0, e0), (s1, e1) in zip(points, points[1:], strict=False):
            if s0 <= size <= s1:
                t = (math.log(size) - math.log(s0)) / (math.log(s1) - math.log(s0))
                eff = e0 + t * (e1 - e0)
                break
    return min(1.0, max(_MIN_EFFICIENCY, eff))


def _parse(data: Any, source: str) -> Profile:
    from rlmcost.specs.validation import build

    if not isinstance(data, dict):
        raise SpecError(
            f"{source}: a calibration profile is a JSON object, got {type(data).__name__}"
        )
    if data.get("schema") != SCHEMA:
        raise SpecError(
            f"{source}: not a calibration profile (schema {data.get('schema')!r}, "
            f"expected {SCHEMA!r}); write one with `rlmcost calibrate --out FILE`"
        )
    profile = build(Profile, data, source)
    profile._source = source
    return profile


def load_profile(path: str | Path, hardware: HardwareSpec | None = None) -> Profile:
    """Read a profile from ``path``; with ``hardware``, check that it was measured there.

    One-line SpecErrors: file missing or unreadable, not JSON, schema mismatch, another
    device than ``hardware`` (or another peak than its spec lists).
    """
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise SpecError(
            f"cannot read calibration profile {str(path)!r}: {reason}; "
            "give --calibration a file written by `rlmcost calibrate --out FILE`"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(
            f"calibration profile {path} is not JSON ({exc.msg}, line {exc.lineno}); "
            "give a file written by `rlmcost calibrate --out FILE`"
        ) from None
    profile = _parse(data, str(path))
    if hardware is not None:
        profile.check_hardware(hardware)
    return profile


def builtin_profile(hardware: HardwareSpec | str) -> Profile | None:
    """The profile shipped in ``rlmcost/calibrate/profiles/<device>.json``, if there is one.

    ``hardware`` is a HardwareSpec or a device name ('cpu', 'h200'); None when nothing was
    measured for it yet.
    """
    name = hardware if isinstance(hardware, str) else hardware.name
    res = PROFILES / f"{name}.json"
    if not res.is_file():
        return None
    profile = _parse(json.loads(res.read_text()), f"built-in {name}.json")
    if not isinstance(hardware, str):
        profile.check_hardware(hardware)
    return profile


def builtin_devices() -> list[str]:
    """Devices with a shipped profile."""
    return sorted(
        p.name.removesuffix(".json") for p in PROFILES.iterdir() if p.name.endswith(".json")
    )


