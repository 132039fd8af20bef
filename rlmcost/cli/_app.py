"""What every command shares: user errors print one line on stderr and exit with code 2
(:class:`OneLineErrors`); a command's help prints each option whole and its options convert
only the values given (:class:`App`)."""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
import sys
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from rlmcost.errors import SpecError

# click's exception module, wherever typer takes click from (recent typer vendors it)
_click_exceptions = importlib.import_module(typer.BadParameter.__module__)
UsageError = _click_exceptions.UsageError
NoArgsIsHelpError = _click_exceptions.NoArgsIsHelpError


class _UnsetFirst:
    """typer's conversion of one option's value, built only for a value that is there.

    typer 0.29 converts every option's value through a pydantic ``TypeAdapter`` that it builds
    per option on first use (``typer.core._TyperParameter.get_runtime_param``), unset options
    included, although a missing value (None) converts to None (``()`` for a repeated option)
    before the adapter is asked (``typer._coercion.RuntimeParam.coerce``). A query sets a few of
    its ~70 options; building the adapters of the others was ~8 ms of each run. This stands in
    for the conversion until a value comes, then puts typer's own in its place."""

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:  # what typer's RuntimeParam.coerce returns, without its adapter
            return () if param.multiple or param.nargs == -1 else None
        from typer._coercion import build_runtime_param

        param._runtime_param = build_runtime_param(param.type_descriptor)
        return param._runtime_param.coerce(value, param=param, ctx=ctx)


_UNSET_FIRST = _UnsetFirst()


def summary_line(help_text: str | None) -> str | None:
    """The first paragraph of ``help_text`` on one line: what a group's help lists for a
    command. typer 0.29's rich mode keeps a docstring's line breaks there
    (``typer.rich_utils._make_command_help`` joins them only outside rich markup), so a summary
    wrapped in its source broke mid-sentence in `rlmcost --help`."""
    if not help_text or help_text.startswith("\b"):
        return None
    return " ".join(inspect.cleandoc(help_text).split("\n\n")[0].split())


class HelpCommand(TyperCommand):
    """A typer command whose help prints each option's names and metavar whole, however
    narrow the terminal (rlmcost.cli._help; rich loads only when the help prints), whose
    options build their conversion only when given a value (:class:`_UnsetFirst`), that
    refuses an option given twice with different values (rlmcost.cli._repeats), whose parse
    errors name its help, and whose summary in a group's help is one line
    (:func:`summary_line`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.short_help is None:
            self.short_help = summary_line(self.help)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from rlmcost.cli._help import option_entries

        with option_entries():
            super().format_help(ctx, formatter)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        from rlmcost.cli._repeats import repeated_option

        message = repeated_option(self.params, args)
        if message is not None:
            raise UsageError(message, ctx=ctx)
        for param in self.params:
            if getattr(param, "_runtime_param", False) is None:  # typer's: not built yet
                param._runtime_param = _UNSET_FIRST  # type: ignore[attr-defined]
        try:
            return super().parse_args(ctx, args)
        except UsageError as exc:  # click's parser raises some without the context
            exc.ctx = exc.ctx or ctx  # (a value missing after an option): name the help
            raise


class App(typer.Typer):
    """A typer app whose commands are :class:`HelpCommand` unless they name their class."""

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Any:
        return super().command(name, cls=cls or HelpCommand, **kwargs)


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
            _fail(choice_message(exc.format_message().replace("\n", " ").strip()) + where)
        except typer.Abort:
            print("aborted", file=sys.stderr)
            sys.exit(1)
        except typer.Exit as exc:
            sys.exit(exc.exit_code)
        except BrokenPipeError:
            sys.exit(0)
        sys.exit(rv if isinstance(rv, int) else 0)


_CHOICE = re.compile(r"Invalid value for '(?P<opt>--[a-z0-9-]+)'(?: / '-\w')?: (?:Value error, )?"
                     r"'(?P<value>.*)' is not one of (?P<choices>'.*')\.$")
"""typer's message for a value outside an option's choices (its ``_param_types`` enum check
through pydantic: ``Invalid value for '--framework': Value error, 'verll' is not one of
'verl', ... .``)."""

_MEANT = {"--placement": {"colocate": "baseline", "colocated": "baseline",
                          "split": "disaggregated", "separate": "disaggregated"}}
"""Words for an option's values that are not its choices: the `placements` summary's
'colocate, split or overlap' as the placement that does it (rlmcost.placement.kinds)."""


def choice_message(text: str) -> str:
    """``text`` for a value outside an option's choices said as ``--framework 'verll' is not
    one of 'verl', ...; did you mean 'verl'?`` (the nearest choice, difflib; for --framework,
    :func:`rlmcost.frameworks.presets.framework_hint`); any other message as it is."""
    m = _CHOICE.match(text)
    if m is None:
        return text
    opt, value = m["opt"], m["value"]
    choices = re.findall(r"'([^']*)'", m["choices"])
    if opt == "--framework":
        from rlmcost.frameworks.presets import framework_hint

        hint = framework_hint(value)
    elif value.lower() in _MEANT.get(opt, {}):
        hint = f"did you mean '{_MEANT[opt][value.lower()]}'?"
    else:
        near = difflib.get_close_matches(value.lower(), choices, n=1, cutoff=0.6)
        hint = f"did you mean '{near[0]}'?" if near else ""
    return f"{opt} '{value}' is not one of {m['choices']}" + (f"; {hint}" if hint else "")


def _fail(message: str) -> None:
    sys.stdout.flush()  # what was printed before the error stays before it under 2>&1
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
