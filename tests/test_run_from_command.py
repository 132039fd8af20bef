"""``rlmcost.run_from_command`` (rlmcost.cli.from_command): the Run of an algorithm command
line, its words or an importer's query is the Run the command itself prints as ``run`` under
``--json`` (the reference: the CLI's own output for the same words, through typer's runner);
bad input is a one-line SpecError; the call loads no sympy (a numeric path)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rlmcost
from rlmcost.cli import app
from rlmcost.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]
VERL = ROOT / "tests" / "data" / "frameworks" / "verl_grpo.yaml"  # verl's example config

COMMANDS = [
    "rlmcost ppo -m 70b --tp 8",
    "rlmcost grpo -m 8b --gpus 16 --framework slime",
    "rlmcost dpo -m 8b --zero 3 --gpus 8",
    "rlmcost ppo -m 8b --critic llama-3.2-1b --placement async --gpus 16 --staleness 2",
    "rlmcost grpo -m llama-3.2-1b --framework verl --gpus 8 --groups 'rollout=4[tp=2],actor=4'",
]


def _cli_run(words: list[str]) -> dict:
    """The ``run`` the CLI prints for ``words`` (its own parse and build)."""
    res = CliRunner().invoke(app, [*words, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["run"]


@pytest.mark.parametrize("line", COMMANDS)
def test_the_run_is_the_one_the_command_prints(line: str) -> None:
    words = shlex.split(line)
    run = rlmcost.run_from_command(line)
    assert run.to_json() == _cli_run(words[1:])
    # its words, without the program name, and the (algorithm, argv) form: one Run
    assert rlmcost.run_from_command(words) == run == rlmcost.run_from_command(words[1:])
    assert rlmcost.run_from_command(words[1], words[2:]) == run
    assert rlmcost.run_from_command(run.to_command()) == run  # the Run's own command line


def test_an_importers_query_gives_the_run_its_command_gives() -> None:
    from rlmcost.frameworks.verl import import_verl

    q = import_verl(VERL)
    run = rlmcost.run_from_command(q)
    assert run == rlmcost.run_from_command(q.command())
    assert run.to_json() == _cli_run([q.algorithm, *q.argv()])
    assert run.deployment.framework == "verl" and run.deployment.engine.gpu_memory_utilization \
        == 0.6  # verl_grpo.yaml: actor_rollout_ref.rollout.gpu_memory_utilization: 0.6
    more = rlmcost.run_from_command(q, ["--hardware", "a100-80gb"])  # flags added after it
    assert more.cluster.hardware == "a100-80gb" and more.replace(cluster={
        "hardware": run.cluster.hardware}) == run  # fmt: skip


@pytest.mark.parametrize(("command", "word"), [
    ("", "algorithm command"),
    ("rlmcost", "algorithm command"),
    ("rlmcost plan grpo -m 8b", "not an algorithm command"),
    ("rlmcost run run.yaml", "load_run"),
    ("ppo --tp 8", "--model"),  # the command's own check
    ("ppo -m 70b --tp x", "--tp"),
    ("ppo -m 70b --nonsense", "--nonsense"),
    ("ppo -m 70b --framework verll", "did you mean 'verl'"),
    ("ppo -m 70b --tp", "--tp"),
    ("ppo -m '70b", "quotation"),
    ("ppo -m 70b --help", "--help"),
    (["ppo", 3], "list of its words"),
    (None, "command line"),
    (b"ppo -m 70b", "command line"),
])  # fmt: skip
def test_bad_input_is_a_one_line_spec_error(command: object, word: str) -> None:
    with pytest.raises(SpecError) as e:
        rlmcost.run_from_command(command)
    assert "\n" not in str(e.value) and word in str(e.value), str(e.value)


def test_it_is_listed_and_loads_no_sympy() -> None:
    assert "run_from_command" in rlmcost.__all__ and "run_from_command" in dir(rlmcost)
    code = ("import sys, rlmcost\n"
            "rlmcost.evaluate(rlmcost.run_from_command('rlmcost ppo -m 70b --tp 8'))\n"
            "print('sympy' in sys.modules)\n")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize(("line", "message"), [
    # rlmcost/specs/registry.py _resolve: the name, then where the names are listed
    ("grpo -m nosuchmodel --gpus 8", "unknown model 'nosuchmodel'; see `rlmcost models`"),
    ("grpo -m 8b -H nosuchhw --gpus 8", "unknown hardware 'nosuchhw'; see `rlmcost hardware`"),
    ("grpo -m 8b -H h10", "hardware 'h10' is ambiguous"),
    # rlmcost/deployment/resolve.py _model_of: a role's model names its flag
    ("ppo -m 8b --critic nosuch", "--critic 'nosuch': unknown model 'nosuch'"),
    ("ppo -m 8b --ref nosuch", "--ref 'nosuch': unknown model 'nosuch'"),
    ("ppo -m 8b --reward rulee", "did you mean --reward rule"),
    ("grpo -m 8b --critic 8b", "grpo has no critic model"),
    ("grpo -m 8b --speculative-tokens 1 --speculative-draft nosuch --speculative-acceptance 0.5",
     "--speculative-draft 'nosuch': unknown model 'nosuch'; see `rlmcost models`"),
    ("grpo -m 8b --calibration /nonexistent/profile.json", "cannot read calibration profile"),
])  # fmt: skip
def test_an_unknown_name_fails_at_build_time_as_the_command_fails(line: str,
                                                                  message: str) -> None:
    """The Run of a command that names an unknown model, hardware, draft or profile is refused
    when it is built (it had been built, and failed only when evaluated), with the one line the
    command prints for it."""
    with pytest.raises(SpecError) as e:
        rlmcost.run_from_command(line)
    text = str(e.value)
    assert message in text and "\n" not in text, text
    res = CliRunner().invoke(app, line.split())
    assert res.exit_code != 0 and f"error: {text}" in res.output, res.output
