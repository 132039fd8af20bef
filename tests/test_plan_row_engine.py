"""A plan row's engine reservation (``gpu_memory_utilization``) and KV pool (``kv_buffer_gib``)
are those of the Run its numbers came from, as its command line says them: a base Run's own
reservation (slime's preset ``--gpu-memory-utilization 0.7``, rlmcost/frameworks data; the
preset test tests/test_frameworks_presets.py reads it) carried by every candidate that does
not search one (the split and async families), not None."""

from __future__ import annotations

import json
import shlex

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates, evaluate_row
from rlmcost.run.spec import Run

BASE = Run.from_data({
    "algorithm": {"name": "grpo", "rule_reward": True},
    "models": {"actor": "llama-3.2-1b"},
    "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 512},
    "deployment": {"engine": {"gpu_memory_utilization": 0.7}},
})  # fmt: skip
SPACE = RLSpace(placements=("baseline", "split"), tp=(1,), rollout_tp=(1,), micro_batch=(1,),
                offload=(False,), ckpt=("none",), fractions=(0.5,))  # type: ignore[arg-type]


def _flag(command: str, flag: str) -> str | None:
    words = shlex.split(command)
    return words[words.index(flag) + 1] if flag in words else None


def test_a_row_carries_the_reservation_its_run_was_evaluated_with() -> None:
    seen = set()
    for c in candidates(BASE, SPACE, 4):
        row, run = evaluate_row(BASE, c), candidate_run(BASE, c)
        eng = run.deployment.engine
        assert row["gpu_memory_utilization"] == eng.gpu_memory_utilization, c
        assert row["kv_buffer_gib"] == eng.kv_buffer_gib
        seen.add((c.family, row["gpu_memory_utilization"]))
    # the split keeps the base's 0.7 (its candidates set none); the baseline searches 0.5
    assert ("split", 0.7) in seen and ("baseline", 0.5) in seen


def test_every_cli_row_says_what_its_command_says() -> None:
    res = CliRunner().invoke(app, ["plan", "grpo", "-m", "8b", "--gpus", "16", "--framework",
                                   "slime", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    rows = [*data["rows"], *data["pareto"], *data["best_per_topology"]]
    assert rows and any(r["family"] != "baseline" for r in rows)
    for r in rows:
        engine = r["run"]["deployment"]["engine"]
        assert r["gpu_memory_utilization"] == engine["gpu_memory_utilization"]
        assert r["kv_buffer_gib"] == engine["kv_buffer_gib"]
        flag = _flag(r["command"], "--gpu-memory-utilization")
        assert (float(flag) if flag else None) == r["gpu_memory_utilization"], r["command"]
