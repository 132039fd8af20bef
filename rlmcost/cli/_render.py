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
    """A rich table on stdout; ``right`` lists the column indices to right-align.

    In a terminal the table fits its width (rich folds the cells). Into a pipe or a file
    (``rlmcost ppo ... > out.txt``) with no ``COLUMNS`` set, rich would assume 80 columns and
    fold a nine-column table's numbers and names ("Genera" / "tion"): there the table takes its
    natural width instead (:func:`console_for`)."""
    from rich.table import Table

    table = Table(title=title, caption=caption, caption_justify="left")
    for i, col in enumerate(columns):
        table.add_column(col, justify="right" if i in right else "left", overflow="fold")
    for row in rows:
        table.add_row(*[str(x) for x in row])
    console_for(table).print(table)


#: The widest a piped table is printed: a bound for a pathological cell, not a layout choice.
PIPE_MAX_WIDTH = 400


def console_for(table: Any) -> Any:
    """A rich Console for ``table`` on stdout: the terminal's width in a terminal or where
    ``COLUMNS`` is set (rich's own rule), else the table's natural width (at least 80, at most
    :data:`PIPE_MAX_WIDTH`), so that piped output is never folded."""
    import os
    import sys

    from rich.console import Console

    if os.environ.get("COLUMNS") or sys.stdout.isatty():
        return Console()
    wide = Console(width=PIPE_MAX_WIDTH)
    natural = wide.measure(table).maximum
    return Console(width=max(80, min(PIPE_MAX_WIDTH, natural)))


def note(message: str) -> None:
    """A remark for people on stderr (keeps stdout clean for --json), after what stdout holds
    so far (a pipe buffers stdout: with ``2>&1`` the note would cut into its last lines)."""
    import sys

    sys.stdout.flush()
    print(message, file=sys.stderr)
