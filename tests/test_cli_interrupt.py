"""Ctrl-C at any point of a command line run: exit code 130 and one line, ``interrupted``, on
stderr, never a traceback (rlmcost.__main__.main, the console script's entry point).

The console script is run as pip writes it (the wrapper imports the entry function named in
pyproject.toml ``[project.scripts]``, then calls it), in a fresh interpreter whose import hook
sends the process a real SIGINT when the named module is first imported: ``typer`` (the
command line's own imports, before any command runs, the ~50 ms where a Ctrl-C printed a
KeyboardInterrupt traceback) and ``rlmcost.run.spec`` (inside a command, where typer turns the
KeyboardInterrupt into a silent ``Exit(130)``)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
import builtins, os, signal, sys
real = builtins.__import__
def hook(name, *args, **kwargs):
    if name == {target!r}:
        builtins.__import__ = real
        os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C now: Python raises KeyboardInterrupt
    return real(name, *args, **kwargs)
builtins.__import__ = hook
sys.argv = ["rlmcost", "grpo", "-m", "llama-3.2-1b", "--json"]
# pip's console-script wrapper for the entry point {entry}
import re
from {module} import {attr}
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit({attr}())
"""


def _entry() -> str:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return str(data["project"]["scripts"]["rlmcost"])


@pytest.mark.parametrize("target", ["typer", "rlmcost.run.spec"])
def test_ctrl_c_exits_130_with_one_line(target: str) -> None:
    entry = _entry()
    module, _, attr = entry.partition(":")
    script = _SCRIPT.format(target=target, entry=entry, module=module, attr=attr)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=120, check=False)  # fmt: skip
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr == "interrupted\n"
    assert r.returncode == 130
    assert r.stdout == ""


def test_a_plain_exit_code_passes_through() -> None:
    """A command's own exit code (a user error's 2) is not taken for an interrupt."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "rlmcost", "ppo", "--model", "70b", "--tp", "3"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
                       check=False)  # fmt: skip
    assert r.returncode == 2 and "interrupted" not in r.stderr, r.stderr
