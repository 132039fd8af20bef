"""Help at 80 columns: every option's names and metavar print whole, no line is wider than the
terminal, and long help texts wrap instead of being cut."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli._lazy import command_modules

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 80
runner = CliRunner()


def _commands(name: str):
    """(argv, click command) of command ``name`` and, for a group, of each of its commands."""
    root = typer.main.get_command(app)
    command = root.get_command(typer.Context(root), name)
    yield [name], command
    for sub, subcommand in getattr(command, "commands", {}).items():
        yield [name, sub], subcommand


def _help(argv: list[str]) -> str:
    # rich takes the terminal's width from COLUMNS, as in a real terminal (see the subprocess test)
    r = runner.invoke(app, [*argv, "--help"], env={"COLUMNS": str(WIDTH)}, terminal_width=WIDTH)
    assert r.exit_code == 0, r.output
    return r.output


def _whole(name: str) -> re.Pattern[str]:
    """``name`` as a whole option name: not the start of a longer name, not cut by an ellipsis."""
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w…-])")


def _problems(output: str, command) -> list[str]:
    """What of ``command``'s help ``output`` is cut or too wide. The reference for what must
    print whole: the click command's own options (``param.opts``, ``param.secondary_opts``) and
    the metavar typer shows for each (``display_type_rich``, e.g. ``<baseline|ac-shared|...>``)."""
    ctx = typer.Context(command)
    problems = [f"line wider than {WIDTH}: {line!r}" for line in output.splitlines()
                if len(line) > WIDTH]  # fmt: skip
    # rich's ellipsis marks a cut; no help text of rlmcost contains one
    problems += [f"cut: {line!r}" for line in output.splitlines() if "…" in line]
    for param in command.params:
        if param.param_type_name != "option":
            continue
        names = [n for n in (*param.opts, *param.secondary_opts) if n.startswith("--")]
        problems += [f"{n} not whole" for n in names if not _whole(n).search(output)]
        metavar = param.display_type_rich(ctx)
        if metavar and metavar not in output:
            problems.append(f"metavar {metavar} of {names[0]} not whole")
    return problems


@pytest.mark.parametrize("name", list(command_modules()))
def test_help_at_80_columns_prints_every_option_whole(name):
    for argv, command in _commands(name):
        output = _help(argv)
        assert _problems(output, command) == [], argv


def test_root_help_fits_80_columns():
    output = _help([])
    assert all(len(line) <= WIDTH for line in output.splitlines()), output
    for name in command_modules():
        assert f"│ {name} " in output, name


def test_a_real_terminal_of_80_columns_prints_ppo_options_whole():
    # the reference: `rlmcost ppo --help` run as a program with COLUMNS=80, as the shell of an
    # 80-column terminal sets it (the CliRunner runs above take their width the same way)
    out = subprocess.run(
        [sys.executable, "-m", "rlmcost", "ppo", "--help"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": str(WIDTH)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    [(_, ppo)] = _commands("ppo")
    assert _problems(out.stdout, ppo) == []
    assert _whole("--gpu-memory-utilization").search(out.stdout)
    # an option and its negative print as one entry, as click's plain help joins them
    assert "│ --recompute-logprobs / --no-recompute-logprobs <bool>" in out.stdout


def test_a_query_loads_no_help_renderer():
    # the reference: sys.modules after a numeric query; the help layout is rich's, loaded only
    # to print a help
    code = (
        "import sys\n"
        "from rlmcost.cli import app\n"
        "try:\n"
        "    app(['ppo', '--model', 'gpt-2', '--json'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('rich', 'rlmcost.cli._help') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("argv, summary", [
    ([], "Run the Table III micro-kernels (GEMM, attention, MLP, block fwd/bwd, prefill, decode, "
         "MoE, copy, collectives)"),
    (["import"], "OpenRLHF's command line, e.g. `rlmcost import openrlhf -- --pretrain M "
                 "--rollout_batch_size 1024"),
])  # fmt: skip
def test_a_group_lists_each_summary_unbroken(argv, summary):
    # the summaries' docstrings wrap in the source; typer's rich listing kept those breaks
    wide = 400
    r = runner.invoke(app, [*argv, "--help"], env={"COLUMNS": str(wide)}, terminal_width=wide)
    assert r.exit_code == 0, r.output
    assert any(summary in line for line in r.output.splitlines()), r.output


@pytest.mark.parametrize("argv", [["ppo", "-m", "8b", "--tp"], ["import", "verl", "x.yaml",
                                                                 "--verl-version"]])
def test_an_option_without_its_value_names_the_help(argv):
    r = runner.invoke(app, argv)
    assert r.exit_code == 2
    assert "requires an argument" in r.output and f"rlmcost {argv[0]}" in r.output
    assert "--help`)" in r.output and "Traceback" not in r.output
