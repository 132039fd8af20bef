"""A numeric query through the compiled engine loads neither sympy, pandas nor numpy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

QUERY = """
import json, sys
import rlmcost.compiled
from rlmcost.compiled import memory_per_rank
from rlmcost.compiled.train_step import train_step
from rlmcost.parallel.layout import Layout
from rlmcost.specs import get_hardware, get_model

m = memory_per_rank(get_model("70b"), Layout(tp=8), "train", 64, 4096)
t = train_step(get_model("mixtral-8x7b"), get_hardware("h100"), Layout(tp=2, dp=4, ep=4), 64, 4096)
heavy = sorted(k for k in ("sympy", "pandas", "numpy", "torch") if k in sys.modules)
print(json.dumps({"total": m.total, "fits": t.fits, "heavy": heavy}))
"""


def test_a_memory_query_imports_no_sympy_pandas_or_numpy():
    out = subprocess.run(
        [sys.executable, "-c", QUERY],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    result = json.loads(out.stdout)
    assert result["total"] > 0
    # Independent: the interpreter's own record of loaded modules.
    assert result["heavy"] == []
