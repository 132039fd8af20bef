"""The ``rlmcost`` console script (pyproject.toml ``[project.scripts]``) and ``python -m rlmcost``.

The entry point is this module's :func:`main`, not ``rlmcost.cli.main``: a console script
imports its entry function before it calls it (pip's wrapper: ``from rlmcost.cli import main``
then ``sys.exit(main())``), so a Ctrl-C during the command line's own imports (typer, click,
the ~50 ms before a command starts) raised KeyboardInterrupt outside any guard and printed its
traceback. This module imports nothing but the standard library's ``sys`` (already loaded) and
imports the command line inside its guard, so a Ctrl-C that lands at any point after it is
loaded ends with one line, ``interrupted``, on stderr and exit code 130 (128 + SIGINT, the
shells' convention, which typer also gives a Ctrl-C during a command, silently: here it gets
the same line). What runs before it (the interpreter's start, ``site``, the wrapper's
``import re, sys``, the package's tiny ``rlmcost/__init__.py``) is out of its reach.
"""

from __future__ import annotations

import sys

INTERRUPTED_CODE = 130
"""Exit code of a Ctrl-C: 128 + SIGINT (2), as shells report a process ended by SIGINT."""


def main() -> None:
    """Run the command line (:func:`rlmcost.cli.main`); a Ctrl-C, however early, exits with
    :data:`INTERRUPTED_CODE` and one line on stderr (module docstring). A command's exit code
    130 is typer's for a Ctrl-C during the command (``typer.core._main``: ``Exit(130)`` from the
    KeyboardInterrupt, which the command line's group, ``cli._app.OneLineErrors``, runs
    without standalone mode, so it returns the code and the exception is gone); the only
    other 130 is `rlmcost plan`'s after a search that a Ctrl-C ended early, once its partial
    result is printed (``interrupted`` in its --json), which gets the same line."""
    try:
        from rlmcost.cli import main as run

        run()
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit as exc:
        if exc.code == INTERRUPTED_CODE:
            _interrupted()
        raise


def _interrupted() -> None:
    """One line on stderr and :data:`INTERRUPTED_CODE` (no traceback)."""
    try:
        print("interrupted", file=sys.stderr, flush=True)
    finally:
        raise SystemExit(INTERRUPTED_CODE) from None


if __name__ == "__main__":
    main()
