"""The ``rlmcost`` command line: typer commands that parse, call the library once, render.

Start-up is kept light: this package imports typer and the command names only; a run imports
and builds the one command it runs (rlmcost.cli._lazy), and sympy, numpy, pandas and rich load
inside the commands that need them.
"""

from __future__ import annotations

import os

import typer

from rlmcost.cli._lazy import LazyCommands


def _no_options() -> None:
    """The root takes no options of its own (a callback makes typer build a group, whose
    commands LazyCommands loads when one runs)."""


app = typer.Typer(
    cls=LazyCommands,
    name="rlmcost",
    help=(
        "Work, depth, memory and time of RL post-training (PPO, GRPO, DPO) of LLMs, "
        "from analytical formulas checked against PyTorch."
    ),
    callback=_no_options,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
"""The command line; its commands (rlmcost.cli._lazy.command_modules) load on first use."""


def main() -> None:
    """Console-script entry point.

    pydantic plugins (observability hooks) have nothing to observe in a one-shot calculator,
    and looking for them scans the entry points of every installed distribution (30-70 ms of
    a cold query here); the command line turns them off unless ``PYDANTIC_DISABLE_PLUGINS``
    is set already. The library (``import rlmcost``) leaves them alone."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    app()
