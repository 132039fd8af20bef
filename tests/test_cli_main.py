"""The command line's entry point (rlmcost.cli.main: pydantic's plugins off, the objects a
command leaves frozen for the exit) answers as the app called in-process: the same JSON, the
same one-line errors and exit code."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app

ROOT = Path(__file__).resolve().parents[1]

_ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}


@pytest.mark.parametrize(
    "args", [("ppo", "--model", "70b", "--tp", "8"), ("grpo", "--model", "8b", "--batch", "16")]
)
def test_a_query_answers_as_the_app_in_process(args: tuple[str, ...]) -> None:
    """``python -m rlmcost`` (rlmcost.cli.main: pydantic plugins off, the exit frozen) prints
    the JSON that the app prints called in-process (the tests do not run main)."""
    r = subprocess.run(
        [sys.executable, "-m", "rlmcost", *args, "--json"],
        capture_output=True, text=True, cwd=ROOT, env=_ENV, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    direct = CliRunner().invoke(app, [*args, "--json"])
    assert direct.exit_code == 0, direct.output
    assert json.loads(r.stdout) == json.loads(direct.stdout)


_FREEZE_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0, file=sys.stderr))
sys.argv = ["rlmcost", "grpo", "--model", "8b", "--json"]
from rlmcost.cli import main
main()
"""


def test_main_leaves_the_objects_to_the_exit_frozen() -> None:
    """rlmcost.cli.main moves what the command leaves to the permanent generation (the exit's
    collections skip it), and the answer still comes whole."""
    r = subprocess.run([sys.executable, "-c", _FREEZE_PROBE], capture_output=True, text=True,
                       cwd=ROOT, env=_ENV, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["run"]["models"]["actor"]
    assert r.stderr.strip().splitlines()[-1] == "frozen True"


@pytest.mark.parametrize(
    "args", [("ppo", "--model", "70b", "--tp", "3"), ("grpo", "--model", "8b", "--batch", "0")]
)
def test_a_bad_query_fails_as_the_app_in_process(args: tuple[str, ...]) -> None:
    """User errors (a validator's, pydantic's) read the same one line, exit code 2."""
    r = subprocess.run([sys.executable, "-m", "rlmcost", *args], capture_output=True,
                       text=True, cwd=ROOT, env=_ENV, check=False)  # fmt: skip
    direct = CliRunner().invoke(app, list(args))
    assert r.returncode == direct.exit_code == 2
    assert r.stderr.strip().startswith("error: ")
    # the same line, but the program's name (`python -m rlmcost` runs as it)
    assert r.stderr.strip().replace("python -m rlmcost", "rlmcost") == direct.stderr.strip()
