"""`rlmcost tables`: rebuild tables/ (or check it is in sync)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def tables(
    out: Annotated[Path, typer.Option(help="Folder to write.")] = Path("tables"),
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Write nothing; exit 1 when the files in --out differ from a fresh build.",
        ),
    ] = False,
) -> None:
    """Write Tables III-IX as Markdown, LaTeX and CSV (each file names the command)."""
    from rlmcost import tables as tb

    if check:
        if not out.is_dir():
            typer.echo(
                f"error: no folder {out}/ here; run from the repository root or give --out",
                err=True,
            )
            raise typer.Exit(2)
        bad = tb.check(out)
        if bad:
            typer.echo(f"out of date in {out}/: {', '.join(bad)}; run `rlmcost tables`", err=True)
            raise typer.Exit(1)
        typer.echo(f"{out}/ is up to date", err=True)
        return
    for p in tb.write_all(out):
        typer.echo(str(p))


def register(app: typer.Typer) -> None:
    app.command("tables")(tables)
