"""Lazy command loading: the table of command names is what the modules register, a run loads
only its command's module, and the help and errors are those of an app registered up front."""

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import typer.main
from typer.testing import CliRunner

import rlmcost.cli
from rlmcost.cli import app
from rlmcost.cli._app import App, OneLineErrors
from rlmcost.cli._lazy import command_modules

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def eager_app() -> typer.Typer:
    """The same app with every command module registered up front, in help order (on an
    :class:`App`, as the lazy app registers each module)."""
    eager = App(
        cls=OneLineErrors,
        name="rlmcost",
        help=app.info.help,
        no_args_is_help=True,
        add_completion=False,
    )
    for module in dict.fromkeys(command_modules().values()):
        importlib.import_module(f"rlmcost.cli.{module}").register(eager)
    return eager


def _group(typer_app: typer.Typer):
    return typer.main.get_command(typer_app)


def _describe(command) -> dict:
    """What a user sees of a command: its help, panel and every option."""
    return {
        "class": type(command).__name__,
        "help": command.help,
        "short_help": command.short_help,
        "panel": command.rich_help_panel,
        "hidden": command.hidden,
        "params": [
            (
                p.name,
                p.opts,
                p.secondary_opts,
                p.required,
                repr(p.default),
                getattr(p, "help", None),
            )
            for p in command.params
        ],  # fmt: skip
        "subcommands": sorted(getattr(command, "commands", {})),
    }


def test_every_command_module_is_in_the_table():
    # independent of the table: the modules of rlmcost.cli that define register(app)
    registering = {
        m.name
        for m in pkgutil.iter_modules(rlmcost.cli.__path__)
        if hasattr(importlib.import_module(f"rlmcost.cli.{m.name}"), "register")
    }
    assert registering == set(command_modules().values())


def test_the_table_lists_the_eager_registration_in_order():
    # the reference: typer's group of an app with every module registered up front
    eager, lazy = _group(eager_app()), _group(app)
    ctx = typer.Context(lazy)
    assert lazy.list_commands(ctx) == eager.list_commands(typer.Context(eager))


def test_each_lazy_command_is_the_eager_one():
    # the reference: the click command typer builds when everything is registered up front
    eager, lazy = _group(eager_app()), _group(app)
    for name in eager.list_commands(typer.Context(eager)):
        expected = _describe(eager.get_command(typer.Context(eager), name))
        assert _describe(lazy.get_command(typer.Context(lazy), name)) == expected, name


def test_each_command_help_is_the_eager_help():
    # the reference: `rlmcost NAME --help` of the eager app (option types, defaults, panels)
    eager = eager_app()
    for name in command_modules():
        lazy_help = runner.invoke(app, [name, "--help"], env={"COLUMNS": "120"})
        eager_help = runner.invoke(eager, [name, "--help"], env={"COLUMNS": "120"})
        assert lazy_help.exit_code == 0 and lazy_help.output == eager_help.output, name


def test_root_help_is_the_eager_help_and_lists_every_command():
    # the reference: the help of the eager app (same panels, order and short help)
    env = {"COLUMNS": "120"}
    lazy = runner.invoke(app, ["--help"], env=env)
    eager = runner.invoke(eager_app(), ["--help"], env=env)
    assert lazy.exit_code == 0 and lazy.output == eager.output
    for name in command_modules():
        assert f"│ {name} " in lazy.output, name


def test_no_arguments_print_the_help_like_the_eager_app():
    lazy, eager = runner.invoke(app, []), runner.invoke(eager_app(), [])
    assert (lazy.exit_code, lazy.output) == (eager.exit_code, eager.output)
    assert "ppo" in lazy.output and "placements" in lazy.output


@pytest.mark.parametrize(
    ("typo", "suggestion"), [("ppx", "'ppo'"), ("placement", "'placements'"), ("imprt", "'import'")]
)
def test_unknown_command_is_one_line_with_the_close_match(typo, suggestion):
    r = runner.invoke(app, [typo, "--model", "8b"])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: No such command '{typo}'"), r.output
    assert f"Did you mean {suggestion}" in lines[0]


def test_unknown_command_far_from_every_name_has_no_suggestion():
    r = runner.invoke(app, ["zzzzzz"])
    assert r.exit_code == 2 and "Did you mean" not in r.output
    assert r.output.strip() == "error: No such command 'zzzzzz'. (see `rlmcost --help`)"


def test_bad_option_of_a_lazy_command_is_one_line_exit_2():
    r = runner.invoke(app, ["ppo", "--model", "8b", "--tp", "zero"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert r.output.startswith("error: Invalid value for '--tp'"), r.output


def test_the_import_subgroup_loads_lazily_and_lists_its_commands():
    r = runner.invoke(app, ["import", "--help"], env={"COLUMNS": "120"})
    assert r.exit_code == 0
    for name in ("verl", "openrlhf", "trl", "nemo-rl"):
        assert name in r.output


_PROBE = """
import json, sys
import typer.main
from rlmcost.cli import app
from rlmcost.cli._lazy import command_modules

group = typer.main.get_command(app)
try:
    group.main({args!r}, prog_name="rlmcost")
except SystemExit as exc:
    code = exc.code
modules = set(command_modules().values())
print(json.dumps({{
    "code": code,
    "built": sorted(group.commands),
    "modules": sorted(m for m in modules if "rlmcost.cli." + m in sys.modules),
}}))
"""


@pytest.mark.parametrize(
    ("args", "built", "module"),
    [
        (["ppo", "--model", "gpt-2", "--json"], ["ppo"], "algorithms"),
        (["models", "--json"], ["models"], "listings"),
        (["train", "--model", "gpt-2", "--json"], ["train"], "train"),
        (["import", "verl", "--help"], ["import"], "frameworks"),
    ],
)
def test_a_run_imports_and_builds_only_its_command(args, built, module):
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(args=args)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    assert probe == {"code": 0, "built": built, "modules": [module]}, probe


def test_python_dash_m_runs_the_lazy_app():
    out = subprocess.run(
        [sys.executable, "-m", "rlmcost", "models", "--json"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert any(row["name"] == "gpt-2" for row in json.loads(out.stdout)["models"])
