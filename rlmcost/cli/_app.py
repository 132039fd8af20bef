"""Error handling in one place: user errors print one line on stderr and exit with code 2."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from rlmcost.errors import SpecError

# click's exception module, wherever typer takes click from (recent typer vendors it)
_click_exceptions = importlib.import_module(typer.BadParameter.__module__)
UsageError = _click_exceptions.UsageError
NoArgsIsHelpError = _click_exceptions.NoArgsIsHelpError


class OneLineErrors(TyperGroup):
    """A typer group whose user errors (bad options, bad specs) are one line, exit code 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except SpecError as exc:
            _fail(str(exc))
        except NoArgsIsHelpError as exc:  # a bare `rlmcost` (or group): its help, exit code 2
            text = exc.format_message().strip()  # typer's rich help has printed itself already
            if text:
                print(text, file=sys.stderr)
            sys.exit(2)
        except UsageError as exc:
            where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
            _fail(exc.format_message().replace("\n", " ").strip() + where)
        except typer.Abort:
            print("aborted", file=sys.stderr)
            sys.exit(1)
        except typer.Exit as exc:
            sys.exit(exc.exit_code)
        except BrokenPipeError:
            sys.exit(0)
        sys.exit(rv if isinstance(rv, int) else 0)


def _fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
