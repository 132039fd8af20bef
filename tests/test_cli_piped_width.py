"""Tables printed into a pipe or a file take their natural width (rlmcost.cli._render
.console_for): rich assumes 80 columns where stdout is no terminal and would fold a nine-column
table's names and numbers ("Genera" / "tion"); in a terminal, or where COLUMNS is set, rich's
own width rule holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_ARGS = ("grpo", "--model", "8b", "--gpus", "8")


def _run(env_columns: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = str(ROOT)
    if env_columns is not None:
        env["COLUMNS"] = env_columns
    r = subprocess.run([sys.executable, "-m", "rlmcost", *_ARGS], capture_output=True,
                       text=True, cwd=ROOT, env=env, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def _table_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line[:1] in "┏┃┡│└"]


def _stage_rows(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("│ ") and "PFLOP" in line]


def test_a_piped_table_is_not_folded() -> None:
    lines = _run(None)
    rows = _stage_rows(lines)
    # one row per stage, each naming its stage whole on its own line
    assert [r.split("│")[1].strip() for r in rows] == [
        "Generation", "Assessment", "Training", "Iteration"]  # fmt: skip
    assert max(len(line) for line in _table_lines(lines)) > 80


def test_columns_still_sets_the_width() -> None:
    lines = _run("80")
    assert max(len(line) for line in _table_lines(lines)) <= 80
    cells = {r.split("│")[1].strip() for r in _table_lines(lines) if r.startswith("│")}
    assert "Genera" in cells  # folded at 80 columns, as rich folds in a narrow terminal
