"""Rendering helpers shared by the commands: JSON to stdout, rich tables for people."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def print_json(obj: Any) -> None:
    """One JSON object on stdout (plain print: no wrapping, pipes to jq)."""
    print(json.dumps(obj, indent=2, default=str))


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    caption: str = "",
    right: Sequence[int] = (),
) -> None:
    """A rich table on stdout; ``right`` lists the column indices to right-align."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, caption=caption, caption_justify="left")
    for i, col in enumerate(columns):
        table.add_column(col, justify="right" if i in right else "left", overflow="fold")
    for row in rows:
        table.add_row(*[str(x) for x in row])
    Console().print(table)


def note(message: str) -> None:
    """A remark for people on stderr (keeps stdout clean for --json), after what stdout holds
    so far (a pipe buffers stdout: with ``2>&1`` the note would cut into its last lines)."""
    import sys

    sys.stdout.flush()
    print(message, file=sys.stderr)
