"""The ``rlmcost`` command line: typer commands that parse, call the library once, render.

Start-up is kept light: this package imports typer and the choice enums only; sympy, numpy,
pandas and rich load inside the commands that need them.
"""

from __future__ import annotations

import importlib

import typer

from rlmcost.cli._app import OneLineErrors

app = typer.Typer(
    cls=OneLineErrors,
    name="rlmcost",
    help=(
        "Work, depth, memory and time of RL post-training (PPO, GRPO, DPO) of LLMs, "
        "from analytical formulas checked against PyTorch."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module defines register(app); the order is the order of `rlmcost --help`.
_COMMAND_MODULES = (
    "listings", "blocks", "tables", "algorithms", "train", "placement", "calibrate", "validate",
    "frameworks", "plan",
)
for _name in _COMMAND_MODULES:
    importlib.import_module(f"rlmcost.cli.{_name}").register(app)


def main() -> None:
    """Console-script entry point."""
    app()
