"""Run the micro-kernels on a device: count, time, compare with the peaks, build the profile.

:func:`run_calibration` is what ``rlmcost calibrate`` and the notebook call. For each case of
:func:`~rlmcost.calibrate.plan.kernel_plan` it builds the kernel once on the device, counts it
under ``FlopCounterMode`` (that call doubles as the first warm-up), times it, and records the
analytic FLOPs (from ``blocks``) next to the counted ones. With two or more ranks it then
measures the collectives in spawned processes. Efficiencies come last, once the reference
peaks are known (the datasheet on a GPU; the best GEMM and the largest copy on a CPU); their
definitions and the report are :mod:`rlmcost.calibrate.report`.

Causal attention is counted ``full`` (all S x S pairs) like the rest of rlmcost, so a
causal kernel that skips the masked half shows up to twice the FLOP/s it executes; the time
model divides the same full-counted FLOPs by it, so estimates stay consistent.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any

from rlmcost.calibrate import device as dev
from rlmcost.calibrate.plan import KernelCase, kernel_plan
from rlmcost.calibrate.profile import CPU_DEVICE
from rlmcost.calibrate.report import (
    CalibrationReport,
    Measured,
    collective_result,
    kernel_result,
)
from rlmcost.choices import Dtype
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

#: progress(done, total, label): called before each step and once at the end
Progress = Callable[[int, int, str], None]

_MiB = 1 << 20


def _budget(quick: bool) -> Any:
    """How long each kernel is measured: short with --quick (CI), longer otherwise."""
    from rlmcost.calibrate.measure import Budget

    if quick:
        return Budget(warmup=2, warmup_time_s=0.05, min_time_s=0.1)
    return Budget(warmup=3, warmup_time_s=0.2, min_time_s=0.5)


def collective_sizes(kind: dev.DeviceKind, quick: bool) -> list[int]:
    """Buffer sizes in bytes for the collectives (NCCL-tests' size convention)."""
    if kind is dev.DeviceKind.CUDA:
        return [64 * _MiB] if quick else [_MiB, 16 * _MiB, 256 * _MiB, 1024 * _MiB]
    return [_MiB] if quick else [_MiB // 4, 4 * _MiB, 16 * _MiB]


def default_ranks(kind: dev.DeviceKind) -> int:
    """Processes for the collectives: 2 on CPU (gloo), one per GPU (NCCL, up to 8)."""
    if kind is dev.DeviceKind.CPU:
        return 2
    torch = dev.require_torch()
    return min(8, torch.cuda.device_count())


@contextlib.contextmanager
def _matmul_mode(kind: dev.DeviceKind, dtype: Dtype) -> Iterator[None]:
    """TF32 tensor-core matmuls exactly when the dtype is tf32 (restored afterwards)."""
    torch = dev.require_torch()
    if kind is not dev.DeviceKind.CUDA:
        yield
        return
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype is Dtype.TF32
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def _measure_case(case: KernelCase, device: Any, tdtype: Any, budget: Any) -> Measured:
    import torch

    from rlmcost.calibrate import kernels, measure

    built: dict[str, Any] = {}

    def build(where: Any) -> Any:
        kernel = kernels.build(case, where, tdtype)
        if torch.device(where).type != "meta":
            built["kernel"] = kernel
        return kernel

    sync = torch.cuda.synchronize if device.type == "cuda" else None
    count = measure.count_flops(build, device, sync)
    timing = measure.time_kernel(built["kernel"], device, budget)
    return Measured(
        case,
        count.flops,
        count.counted_on,
        timing.seconds,
        timing.min_seconds,
        timing.reps,
        count.note,
    )


def run_calibration(
    device: dev.DeviceKind | str = dev.DeviceKind.CPU,
    quick: bool = False,
    dtype: Dtype | str | None = None,
    ranks: int | None = None,
    hardware: str | None = None,
    progress: Progress | None = None,
    command: str = "",
    only: tuple[str, ...] = (),
) -> CalibrationReport:
    """Measure every micro-kernel on ``device`` and return the report (and its profile).

    ``dtype``: default fp32 on CPU, bf16 on CUDA. ``ranks``: processes for the collectives
    (default 2 on CPU, one per GPU; 1 skips them). ``hardware``: the built-in spec of the GPU
    when its name does not say (CUDA only). ``only``: kernel names to run (default all; the
    profile then has only their tables; on CPU gemm and copy always run, since the CPU's
    reference peaks come from them). SpecError for a missing torch, a missing GPU, a
    dtype the device cannot run.
    """
    kind = _choice(dev.DeviceKind, device, "device")
    dtype = _choice(Dtype, dtype, "dtype") if dtype is not None else dev.default_dtype(kind)
    torch = dev.require_torch()
    where = dev.check_device(kind)
    tdtype = dev.torch_dtype(dtype, kind)
    if hardware is not None and kind is dev.DeviceKind.CPU:
        raise SpecError("--hardware names a GPU spec; it applies with --device cuda only")
    threads = dev.set_cpu_threads() if kind is dev.DeviceKind.CPU else 1
    notes = [_busy_note(kind)]
    name = dev.device_name(kind)
    spec = None
    if kind is dev.DeviceKind.CUDA:
        from rlmcost.specs import get_hardware

        spec = get_hardware(hardware) if hardware else dev.match_hardware(name)
        spec.peak(dtype)  # SpecError now, not after the run, if the spec lacks the dtype
    ranks = default_ranks(kind) if ranks is None else ranks
    if ranks < 1:
        raise SpecError(f"--ranks {ranks} must be at least 1 (1 skips the collectives)")
    cases = _select(kernel_plan(kind, quick, dtype), only, kind)

    steps = len(cases) + (1 if ranks > 1 else 0)
    budget = _budget(quick)
    measured: list[Measured] = []
    with _matmul_mode(kind, dtype):
        for i, case in enumerate(cases):
            if progress:
                progress(i, steps, f"{case.name} {case.label}")
            measured.append(_measure_case(case, where, tdtype, budget))
            if kind is dev.DeviceKind.CUDA:
                torch.cuda.empty_cache()
    collective_rows: list[Any] = []
    if ranks > 1:
        from rlmcost.calibrate.collectives import run_collectives

        if progress:
            progress(len(cases), steps, f"collectives on {ranks} ranks")
        dtype_name = str(tdtype).removeprefix("torch.")
        sizes = collective_sizes(kind, quick)
        collective_rows = run_collectives(ranks, kind.value, sizes, dtype_name, asdict(budget))
    else:
        notes.append("collectives skipped: one rank (use --ranks 2 or more)")
    if progress:
        progress(steps, steps, "done")

    ref = _reference(spec, measured, dtype, threads)
    results = [kernel_result(m, ref.peak_flops_per_s, ref.peak_bytes_per_s) for m in measured]
    results += [collective_result(c, ref.link_bytes_per_s) for c in collective_rows]
    return CalibrationReport(
        device=ref.device,
        device_name=name,
        torch=str(torch.__version__),
        dtype=dtype,
        threads=threads,
        quick=quick,
        peak_flops_per_s=ref.peak_flops_per_s,
        peak_bytes_per_s=ref.peak_bytes_per_s,
        peak_source=ref.source,
        link_bytes_per_s=ref.link_bytes_per_s,
        kernels=results,
        notes=[n for n in notes if n] + sorted({m.note for m in measured if m.note}),
        command=command,
    )


def _select(
    cases: list[KernelCase], only: tuple[str, ...], kind: dev.DeviceKind
) -> list[KernelCase]:
    """The cases named in ``only`` (all when empty); on CPU gemm and copy always stay."""
    if not only:
        return cases
    unknown = sorted(set(only) - {c.name for c in cases})
    if unknown:
        names = ", ".join(sorted({c.name for c in cases}))
        raise SpecError(f"unknown kernel(s) {', '.join(unknown)}; use some of: {names}")
    if kind is dev.DeviceKind.CPU:  # a CPU run measures its own reference peaks
        only = (*only, "gemm", "copy")
    return [c for c in cases if c.name in only]


@dataclass(frozen=True)
class _Reference:
    """What the efficiencies divide by, and where that comes from."""

    device: str
    peak_flops_per_s: float
    peak_bytes_per_s: float
    link_bytes_per_s: float | None
    source: str


def _reference(spec: Any, measured: list[Measured], dtype: Dtype, threads: int) -> _Reference:
    """A GPU's datasheet peaks; a CPU's best GEMM and largest (DRAM-resident) copy."""
    if spec is not None:
        return _Reference(
            spec.name,
            float(spec.peak(dtype)),
            float(spec.hbm_bandwidth_bytes_per_s),
            float(spec.intra_node_bandwidth_bytes_per_s),
            f"datasheet of {spec.name}: dense {dtype} peak and HBM bandwidth; "
            f"collectives against the intra-node link ({spec.source})",
        )
    gemms = [m.case.flops / m.seconds for m in measured if m.case.kernel_class == "gemm"]
    copies = [m for m in measured if m.case.kernel_class == "copy"]
    if not gemms or not copies:
        raise SpecError("a CPU profile needs the gemm and copy kernels for its reference peaks")
    largest = max(copies, key=lambda m: m.case.bytes_moved)
    return _Reference(
        CPU_DEVICE,
        max(gemms),
        largest.case.bytes_moved / largest.seconds,
        None,
        f"measured on this CPU ({threads} threads): peak FLOP/s = best {dtype} GEMM of this "
        "run, bandwidth = the largest copy (DRAM-resident); no link peak for gloo",
    )


def _busy_note(kind: dev.DeviceKind) -> str:
    """A warning when other processes load the CPU (they inflate CPU timings)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return ""
    cores = dev.cpu_cores()
    if kind is dev.DeviceKind.CPU and load > 0.25 * cores:
        return (
            f"the CPU was busy at the start (load average {load:.2f} on {cores} cores): "
            "other processes inflate CPU timings; rerun on an idle machine for a profile"
        )
    return ""


def _choice(enum: Any, value: Any, what: str) -> Any:
    try:
        return enum(value)
    except ValueError:
        raise SpecError(
            f"unknown {what} '{value}'; use one of: {', '.join(e.value for e in enum)}"
        ) from None
