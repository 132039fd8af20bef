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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from fractions import Fraction

    import numpy as np

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
        """``compute`` when most of the bound is compute-bound time, else ``memory``."""
        return "compute" if self.compute_bound_s >= self.bound_s / 2 else "memory"

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
        from rlmcost.errors import SpecError

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
        return self.steps([float(flops)], [bytes_per_device], kernels)

    def seconds(
        self,
        flops: Sequence[float] | np.ndarray,
        bytes_per_device: Sequence[float] | np.ndarray,
        kernels: Kernels = DECODE,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per phase, (compute seconds, memory seconds) at the efficiencies (arrays).

        ``kernels`` names the profile tables the phase reads (compute, bandwidth); a profile
        without that compute table falls back to "gemm", without that bandwidth table to
        "decode"."""
        import numpy as np

        f = np.asarray(flops, dtype=np.float64)
        b = np.asarray(bytes_per_device, dtype=np.float64)
        if np.any(f < 0) or np.any(b < 0):
            raise ValueError("flops and bytes must be non-negative")
        eff = self.efficiency
        eff_c: Any  # 1.0 or an array, one efficiency per phase
        eff_b: Any
        if isinstance(eff, Peak):
            eff_c = eff_b = 1.0
        else:
            c_kernel, b_kernel = kernels
            eff_c = np.array(
                [_fraction(_measured(eff.compute, x / self.gpus, c_kernel, "gemm"), eff.name)
                 for x in f]
            )  # fmt: skip
            eff_b = np.array(
                [_fraction(_measured(eff.bandwidth, x, b_kernel, "decode"), eff.name) for x in b]
            )
        compute = f / (self.gpus * self.peak_flops_per_s * eff_c)
        memory = b / (self.hardware.hbm_bandwidth_bytes_per_s * eff_b)
        return compute, memory

    def steps(
        self,
        flops: Sequence[float] | np.ndarray,
        bytes_per_device: Sequence[float] | np.ndarray,
        kernels: Kernels = DECODE,
    ) -> PhaseTime:
        """Phases one after another: sums of compute, memory and per-phase maxima."""
        import numpy as np

        compute, memory = self.seconds(flops, bytes_per_device, kernels)
        bound = np.maximum(compute, memory)
        return PhaseTime(
            float(compute.sum()),
            float(memory.sum()),
            float(bound.sum()),
            float(bound[compute >= memory].sum()),
        )


def _measured(method: Any, size: float, kernel: str, fallback: str) -> float:
    """``method(size, kernel)``, or the ``fallback`` table when the profile lacks ``kernel``."""
    from rlmcost.errors import SpecError

    try:
        return method(size, kernel)
    except SpecError:
        return method(size, fallback)


def _fraction(x: float, name: str) -> float:
    from rlmcost.errors import SpecError

    if not 0 < x <= 1:
        raise SpecError(f"calibration {name} gave efficiency {x}; it must be in (0, 1]")
    return float(x)
