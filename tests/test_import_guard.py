"""The import guard guards: numeric start-up loads no heavy library, and ruff flags a module-level
heavy import anywhere outside the listed symbolic modules."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sympy", "numpy", "pandas", "torch")


@pytest.mark.parametrize("args", [["--help"], ["hardware"], ["models"]])
def test_light_commands_import_no_heavy_library(args):
    code = (
        "import sys\n"
        "from rlmcost.cli import app\n"
        "try:\n"
        f"    app({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    loaded = eval(out.stdout.strip().splitlines()[-1])  # a printed list of names
    assert loaded == [], loaded


@pytest.mark.parametrize("where", ["rlmcost/cli/x_guard.py", "rlmcost/deployment/x_guard.py",
                                   "rlmcost/specs/x_guard.py"])  # fmt: skip
def test_ruff_flags_a_module_level_heavy_import(where):
    ruff = pytest.importorskip("ruff")
    del ruff
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "TID253", "--stdin-filename", where,
         "-"],
        input="import numpy\n", capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 1 and "TID253" in out.stdout, out.stdout + out.stderr
