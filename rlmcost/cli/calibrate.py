"""`rlmcost calibrate`: run the PyTorch micro-kernels, check FLOPs, measure throughput."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlmcost.calibrate.device import DeviceKind
from rlmcost.choices import Dtype
from rlmcost.cli._render import note, print_json, print_table
from rlmcost.errors import SpecError


def calibrate(
    device: Annotated[
        DeviceKind, typer.Option(help="Where the kernels run: cpu, or cuda (the current GPU).")
    ] = DeviceKind.CPU,
    quick: Annotated[
        bool, typer.Option("--quick", help="Fewer, smaller kernels (seconds on a CPU; for CI).")
    ] = False,
    dtype: Annotated[
        Dtype | None,
        typer.Option(help="Element type of the kernels (default: fp32 on cpu, bf16 on cuda)."),
    ] = None,
    ranks: Annotated[
        int | None,
        typer.Option(
            help="Processes for the collectives (gloo on cpu, NCCL on cuda); 1 skips them "
            "(default: 2 on cpu, one per GPU).",
            min=1,
        ),
    ] = None,
    hardware: Annotated[
        str | None,
        typer.Option(help="Built-in spec of the GPU when its name does not say (cuda only)."),
    ] = None,
    kernel: Annotated[
        list[str] | None,
        typer.Option("--kernel", help="Run only this kernel (repeatable), e.g. gemm, prefill."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Write the profile (JSON) here, e.g. calibration/cpu.json."),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Run the Table III micro-kernels (GEMM, attention, MLP, block fwd/bwd, prefill, decode,
    MoE, copy, collectives), assert analytic FLOPs == FlopCounterMode, measure FLOP/s and
    bytes/s, and optionally save a profile for the time model."""
    from rlmcost.calibrate.harness import run_calibration
    from rlmcost.units import format_bandwidth, format_flops

    if out is not None:
        _check_writable(out)
    command = _command(device, quick, dtype, ranks, hardware, kernel or [], out)
    with _progress_bar() as progress:
        report = run_calibration(
            device, quick, dtype, ranks, hardware, progress, command, tuple(kernel or ())
        )
    for line in report.notes:
        note(f"note: {line}")
    if json_out:
        from rlmcost.run.schema_envelope import versioned

        print_json(versioned("calibrate", report.to_json()))
    else:
        print_table(
            f"Calibration on {report.device_name} ({report.device}, {report.dtype})",
            report.COLUMNS,
            report.rows(),
            caption=f"torch {report.torch}, {report.threads} thread(s). FLOPs from rlmcost.blocks "
            "(FLOP = add or mul; attention counted full S x S); "
            f"{report.LEGEND}. Efficiency = roofline bound / time against "
            f"{format_flops(report.peak_flops_per_s, 'FLOP/s')} and "
            f"{format_bandwidth(report.peak_bytes_per_s)}: {report.peak_source}.",
            right=report.RIGHT,
        )
    if report.mismatches:  # a bug in blocks or in a kernel: no profile from such a run
        names = ", ".join(f"{k.name} {k.shape}" for k in report.mismatches)
        typer.echo(f"error: analytic FLOPs differ from FlopCounterMode for: {names}", err=True)
        raise typer.Exit(1)
    if out is not None:
        try:
            report.profile().save(out)
        except OSError as exc:
            raise SpecError(
                f"cannot write the profile to {out}: {exc.strerror}; choose a writable --out"
            ) from None
        note(f"wrote {out} ({report.device}, {report.dtype}); read it with --calibration {out}")


def _command(
    device: DeviceKind,
    quick: bool,
    dtype: Dtype | None,
    ranks: int | None,
    hardware: str | None,
    kernels: list[str],
    out: Path | None,
) -> str:
    """The command line that reproduces this run, for the profile's provenance."""
    parts = ["rlmcost calibrate", f"--device {device}"]
    parts += ["--quick"] if quick else []
    parts += [f"--dtype {dtype}"] if dtype else []
    parts += [f"--ranks {ranks}"] if ranks else []
    parts += [f"--hardware {hardware}"] if hardware else []
    parts += [f"--kernel {k}" for k in kernels]
    parts += [f"--out {out}"] if out else []
    return " ".join(parts)


class _progress_bar:  # noqa: N801 (a context manager used like a function)
    """A transient rich progress bar on stderr; yields the harness's progress callback.

    The bar starts at the first callback, so input errors found before any kernel runs
    print their one line and nothing else.
    """

    def __enter__(self):
        self._bar = None

        def update(done: int, total: int, label: str) -> None:
            if self._bar is None:
                self._start()
            self._bar.update(self._task, completed=done, total=total, description=label)

        return update

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        console = Console(stderr=True)
        self._bar = Progress(
            TextColumn("calibrating"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=True,
            disable=not console.is_terminal,  # no bar (and no stray newline) in logs and pipes
        )
        self._bar.start()
        self._task = self._bar.add_task("", total=None)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate)


def _check_writable(out: Path) -> None:
    """A one-line error before the run when ``out`` cannot be written (not after it)."""
    import os

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpecError(
            f"cannot create the folder of --out {out}: {exc.strerror}; choose a writable path"
        ) from None
    if out.is_dir() or not os.access(out.parent, os.W_OK):
        raise SpecError(f"cannot write the profile to {out}; choose a writable --out file path")
