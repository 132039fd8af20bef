"""A command's options in its help: each option's names and metavar on one line, its help below.

typer prints the options of a command as one table row each, in columns (long names | short
name | negative names | type | help), and rich, to fit the table in the terminal, narrows every
column, the names included: at 80 columns ``--gpu-memory-utilization`` printed as
``--gpu-memory-utiliz…`` and a choice such as ``<baseline|ac-shared|...>`` folded mid-word.
Here each option is an entry of two rows, the layout of click's plain help and of man pages::

    --recompute-logprobs / --no-recompute-logprobs <bool>
        Recompute old log-probs with an extra actor forward (verl, OpenRLHF) instead of
        taking them from generation (default: no, or --framework's).

The first row breaks only between names (a name or metavar is never cut); the help wraps at the
panel's width. typer still builds the rows, panels, styles and defaults (typer.rich_utils);
:func:`option_entries` only lends it this table while a command prints its help. This module
imports rich: it is loaded to print a help, never by a query.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer.rich_utils
from rich.console import RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

HELP_INDENT = 4  # columns the help of an option is indented under its names


class OptionEntries(Table):
    """The table typer fills with one row per option, laid out as one entry per option.

    typer's row: ``[required marker,] long names, short names, negative long names, negative
    short names, type, help`` (typer.rich_utils._print_options_panel); the marker column is
    there when some option is required, and stays a column of its own here.
    """

    def add_row(
        self, *renderables: RenderableType | None, style: Any = None, end_section: bool = False
    ) -> None:
        *lead, long, short, negative_long, negative_short, metavar, help_ = renderables
        names = _joined(
            " / ", _joined(", ", long, short), _joined(", ", negative_long, negative_short)
        )
        signature = _joined(" ", names, metavar)
        signature.overflow = "fold"  # a name wider than the whole panel folds, never is cut
        super().add_row(*lead, signature, style=style)
        blank = [""] * len(lead)
        indented = Padding(help_ or "", (0, 0, 0, HELP_INDENT))
        super().add_row(*blank, indented, style=style, end_section=end_section)


def _joined(separator: str, *parts: RenderableType | None) -> Text:
    """The non-empty ``parts`` (typer's cells: styled Text) joined by ``separator``."""
    texts = [p if isinstance(p, Text) else Text(str(p)) for p in parts if p is not None]
    return Text(separator).join(t for t in texts if t.plain)


@contextmanager
def option_entries() -> Iterator[None]:
    """While open, typer prints a command's options as :class:`OptionEntries`.

    typer's help of a command (``rich_format_help``) builds a ``Table`` for each options panel
    and no other (the table of commands is a group's help), so the swap reaches those panels
    only, and only while the help prints."""
    table = typer.rich_utils.Table
    typer.rich_utils.Table = OptionEntries  # type: ignore[misc]
    try:
        yield
    finally:
        typer.rich_utils.Table = table  # type: ignore[misc]
