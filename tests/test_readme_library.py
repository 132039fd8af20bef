"""The README's library examples run as printed and give what their comments say.

README.md, "As a library": the first ``python`` block builds a Run from YAML and evaluates it,
the second a Deployment object. Their comments are the results a planner reads; the README had
listed a ``results`` key that ``Evaluation.to_json()`` does not have, and printed the dominant
stage as a plain string where the API returns a :class:`~rlmcost.algorithms.kinds.Stage`."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def _run(block: str) -> dict:
    namespace: dict = {}
    exec(compile("import rlmcost\n" + block, "README.md", "exec"), namespace)  # noqa: S102
    return namespace


def test_the_run_example_gives_its_comments():
    block = next(b for b in BLOCKS if "Run.from_yaml" in b)
    ns = _run(block)
    e, run = ns["e"], ns["run"]
    comment = re.search(r"e\.dominant_stage\s+# (.*)", block).group(1)
    assert repr((e.fits, e.shortfall_bytes, e.dominant_stage)) == comment
    listed = re.search(r"prints: (.*?), \.\.\.", block).group(1).split(", ")
    assert list(e.to_json())[:3] == listed[:3]  # schema_version, command, run
    assert all(key in e.to_json() for key in listed)
    line = re.search(r"run\.to_command\(\)\s+# '(.*?) \.\.\.'", block).group(1)
    assert run.to_command().startswith(line)
    assert ns["again"] == run  # rlmcost.run_from_command of the Run's own command line


def test_the_deployment_example_gives_its_comment():
    block = next(b for b in BLOCKS if "Deployment(train=TrainLayout" in b)
    ns = _run(block)
    e = ns["e"]
    comment = re.search(r'\["recommended_gpu_memory_utilization"\]\s+# (.*)', block).group(1)
    assert repr((e.fits, e.to_json()["recommended_gpu_memory_utilization"])) == comment
