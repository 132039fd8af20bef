"""Error handling in one place: user errors print one line on stderr and exit with code 2."""

from __future__ import annotations

import sys
from typing import Any

import click
from typer.core import TyperGroup

from rlmcost.errors import SpecError


class OneLineErrors(TyperGroup):
    """A typer group whose user errors (bad options, bad specs) are one line, exit code 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except SpecError as exc:
            _fail(str(exc))
        except click.UsageError as exc:
            where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
            _fail(exc.format_message().replace("\n", " ").strip() + where)
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(1)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except BrokenPipeError:
            sys.exit(0)
        sys.exit(rv if isinstance(rv, int) else 0)


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)
