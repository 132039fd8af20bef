"""Lazy command loading: a run imports and builds only the command it runs.

typer turns every registered command into a click command, all its options included, each time
the app runs; with one command per algorithm that is most of a quick query's start-up. Here the
root group knows the command names from a table (name -> module of rlmcost.cli) and, asked for
one command, imports its module, registers it on a scratch app (rlmcost.cli._app.App, whose
commands print each option whole in their help) and converts that command alone (the pattern
click documents as "lazily loading subcommands"). The root help needs every command's short
help and panel, not its options: it imports every module and registers it, and lists summaries
(no options) built from the registrations.

A module defines ``register(app)``; one with many commands may also define
``register_command(app, name)`` that registers one of them.
"""

from __future__ import annotations

import importlib
import inspect
from difflib import get_close_matches
from typing import Any

import typer
import typer.main
from typer.core import TyperCommand
from typer.models import CommandInfo, TyperInfo

from rlmcost.cli._app import App, OneLineErrors, UsageError, summary_line

_OWN_COMMANDS = {
    "models": "listings",
    "hardware": "listings",
    "blocks": "blocks",
    "tables": "tables",
    "algorithms": "algorithms",
    "compare": "algorithms",
}
_AFTER_ALGORITHMS = {
    "train": "train",
    "placements": "placement",
    "calibrate": "calibrate",
    "validate": "validate",
    "frameworks": "frameworks",
    "plan": "plan",
    "run": "run",
    "schema": "run",
    "import": "frameworks",  # a command group: typer lists groups after the commands
}


def command_modules() -> dict[str, str]:
    """Each command's name -> its module in rlmcost.cli, in the order of `rlmcost --help`.

    One command per algorithm of the catalog (light: no sympy), between `compare` and `train`.
    """
    from rlmcost.algorithms.catalog import algorithms

    return {**_OWN_COMMANDS, **dict.fromkeys(algorithms(), "algorithms"), **_AFTER_ALGORITHMS}


class LazyCommands(OneLineErrors):
    """The root group: command names from :func:`command_modules`, each command built on
    first use; one-line errors as :class:`OneLineErrors`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._listing = False  # True while the help lists the commands
        self._registered: dict[str, typer.Typer] = {}  # module -> all its commands
        # typer suggests close matches among the commands built so far (none before the
        # lookup); resolve_command suggests among every name instead
        self._suggest = getattr(self, "suggest_commands", True)
        self.suggest_commands = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(command_modules())

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        module = command_modules().get(cmd_name)
        if module is None:
            return None
        if self._listing:
            return _summary(_info(self._all_of(module), cmd_name))
        if cmd_name not in self.commands:
            self.commands[cmd_name] = self._build(_info(_one(module, cmd_name), cmd_name))
        return self.commands[cmd_name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if self._suggest and matches:
                names = ", ".join(repr(m) for m in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {names}?"
            raise

    def _all_of(self, module: str) -> typer.Typer:
        if module not in self._registered:
            app = App()
            importlib.import_module(f"rlmcost.cli.{module}").register(app)
            self._registered[module] = app
        return self._registered[module]

    def _build(self, info: CommandInfo | TyperInfo) -> Any:
        """The click command of ``info``, as typer builds it for an app registered up front
        (pretty_exceptions_short: typer's default, which the root app keeps)."""
        if isinstance(info, TyperInfo):
            return typer.main.get_group_from_info(
                info,
                pretty_exceptions_short=True,
                suggest_commands=self._suggest,
                rich_markup_mode=self.rich_markup_mode,
            )
        return typer.main.get_command_from_info(
            info, pretty_exceptions_short=True, rich_markup_mode=self.rich_markup_mode
        )


def _one(module: str, name: str) -> App:
    """A scratch app with the command ``name`` of ``module`` registered (and maybe others)."""
    app = App()
    mod = importlib.import_module(f"rlmcost.cli.{module}")
    if hasattr(mod, "register_command"):
        mod.register_command(app, name)
    else:
        mod.register(app)
    return app


def _info(app: typer.Typer, name: str) -> CommandInfo | TyperInfo:
    """The registration of command ``name`` on ``app``."""
    for command in app.registered_commands:
        if _name(command) == name:
            return command
    for group in app.registered_groups:
        if group.name == name:
            return group
    raise LookupError(f"rlmcost.cli registers no command {name!r}; fix command_modules()")


def _name(command: CommandInfo) -> str:
    """The command's name as typer derives it (the given name, else the function's)."""
    if command.name:
        return command.name
    assert command.callback is not None  # typer registers no command without one
    return typer.main.get_command_name(command.callback.__name__)


def _summary(info: CommandInfo | TyperInfo) -> TyperCommand:
    """What the help lists of a command (name, help, panel, hidden, deprecated), no options;
    the help text as typer takes it (the explicit help, else the docstring)."""
    if isinstance(info, TyperInfo):
        group = typer.main.solve_typer_info_defaults(info)
        return _listed(group.name, group.help, group)
    if info.help is None:
        return _listed(_name(info), inspect.getdoc(info.callback), info)
    return _listed(_name(info), inspect.cleandoc(info.help), info)


def _listed(name: str | None, help_text: str | None, info: CommandInfo | TyperInfo) -> TyperCommand:
    return TyperCommand(
        name=name,
        help=help_text,
        short_help=info.short_help or summary_line(help_text),
        hidden=bool(info.hidden),
        deprecated=bool(info.deprecated),
        rich_help_panel=info.rich_help_panel,
    )
