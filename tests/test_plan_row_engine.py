"""A plan row's engine reservation (``gpu_memory_utilization``) and KV pool (``kv_buffer_gib``)
are those of the Run its numbers came from, as its command line says them: a base Run's own
reservation (slime's preset ``--gpu-memory-utilization 0.7``, rlmcost/frameworks data; the
preset test tests/test_frameworks_presets.py reads it) carried by every candidate that does
not search one (the split and async families), not None; where the Run leaves them unset, the
default the evaluation sized the engine by (rlmcost/deployment/engine.py: 0.5 beside a
trainer, verl's ppo_trainer.yaml; 0.9 on GPUs of its own, vLLM's EngineArgs default), not
None."""

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
        assert eng.gpu_memory_utilization is not None  # the base's 0.7 or the searched 0.5
        assert row["gpu_memory_utilization"] == eng.gpu_memory_utilization, c
        assert row["kv_buffer_gib"] is None and eng.kv_buffer_gib is None  # a vLLM engine
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
        assert r["gpu_memory_utilization"] == engine["gpu_memory_utilization"] is not None
        assert r["kv_buffer_gib"] == engine["kv_buffer_gib"]
        flag = _flag(r["command"], "--gpu-memory-utilization")
        assert flag is not None and float(flag) == r["gpu_memory_utilization"], r["command"]


def test_an_unset_reservation_shows_the_default_the_evaluation_used() -> None:
    """Under --framework none no family sets a reservation but the co-located one: each row
    says the default its engine ran with (0.9 on the engines' own GPUs, 0.5 beside the
    trainer), as its group_layouts do, and the row's command with that value given is the
    same deployment (same time and memory)."""
    res = CliRunner().invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "8", "-B",
                                   "16", "-K", "4", "-T", "512", "--framework", "none",
                                   "--placements", "split,baseline", "--top", "3",
                                   "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["best_per_topology"]
    unset = [r for r in rows if r["run"]["deployment"]["engine"]["gpu_memory_utilization"]
             is None]  # fmt: skip
    assert unset and {r["family"] for r in unset} == {"split"}
    for r in unset:
        (gen,) = [g["engine"] for g in r["group_layouts"] if g["engine"] is not None]
        assert r["gpu_memory_utilization"] == gen["gpu_memory_utilization"] == 0.9
        assert r["kv_buffer_gib"] is None
    r = unset[0]
    again = CliRunner().invoke(app, [*shlex.split(r["command"])[1:],
                                     "--gpu-memory-utilization", "0.9", "--json"])  # fmt: skip
    assert again.exit_code == 0, again.output
    data = json.loads(again.output)
    assert data["iteration"]["time_s"] == r["time_s"]
    assert max(data["device_memory_bytes"].values()) == r["memory_bytes_per_device"]


def test_a_megatron_pool_left_unset_is_nemo_rls_default() -> None:
    """A Megatron engine without --kv-buffer-gib reserves NeMo RL's buffer_size_gb default,
    10 GiB (rlmcost/deployment/megatron_engine.py MEGATRON_KV_BUFFER_GIB)."""
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.plan.rl_groups import row_engine_memory

    run = Run.from_data({"algorithm": {"name": "grpo", "rule_reward": True},
                         "models": {"actor": "llama-3.2-1b"},
                         "deployment": {"framework": "nemo-rl", "engine": {"kind": "megatron"},
                                        "train": {"zero": "1"}},
                         "cluster": {"gpus": 8}})  # fmt: skip
    assert run.deployment.engine.kv_buffer_gib is None
    used = row_engine_memory(evaluate_deployment(run), 0)
    assert used == {"rollout_tp": 0, "gpu_memory_utilization": None, "kv_buffer_gib": 10.0}
