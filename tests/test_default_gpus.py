"""The GPUs of a query that gives none: the trainer's layout, raised to hold a whole engine
replica where the framework's rollout TP needs more (verl's rollout mesh,
verl/workers/fsdp_workers.py @b178a3cd: the world size must be a multiple of rollout TP x DP x
PP)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.evaluation import evaluate
from rlmcost.run.spec import Run

runner = CliRunner()


def _run(engine: dict, cluster: dict | None = None, alg: str = "grpo") -> Run:
    return Run.from_data({"algorithm": {"name": alg}, "models": {"actor": "llama-3.1-8b"},
                          "deployment": {"engine": engine}, "cluster": cluster or {}})


def test_the_default_query_with_verl_runs_on_its_rollout_tp() -> None:
    # verl's preset: rollout.tensor_model_parallel_size 2 (verl/trainer/config/ppo_trainer.yaml);
    # the default trainer layout is one GPU, so one GPU holds no whole engine replica
    res = runner.invoke(app, ["grpo", "-m", "llama-3.1-8b", "--framework", "verl"],
                        env={"COLUMNS": "200"})  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "GPUs not given: 2" in res.output


@pytest.mark.parametrize(("engine", "train", "gpus"), [
    ({"tp": 2}, {}, 2),
    ({"tp": 4}, {"tp": 2}, 4),  # lcm(2, 4)
    ({"tp": 2}, {"tp": 4}, 4),  # the trainer's 4 GPUs already hold two engine replicas
    ({"tp": 2, "pp": 3}, {}, 6),  # an engine replica spans tp x pp GPUs
])  # fmt: skip
def test_the_default_count_holds_whole_trainer_and_engine_replicas(
        engine: dict, train: dict, gpus: int) -> None:  # fmt: skip
    run = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "llama-3.1-8b"},
                         "deployment": {"engine": engine, "train": train}})  # fmt: skip
    assert evaluate(run).gpus == gpus


def test_a_given_count_is_kept_and_an_offline_algorithm_needs_no_engine() -> None:
    with pytest.raises(SpecError, match="not a multiple of tp\\*pp\\*cp = 2"):
        evaluate(_run({"tp": 2}, {"gpus": 1}))  # the user's count stands
    with pytest.raises(SpecError):
        evaluate(_run({"tp": 2}, {"dp": 1}))  # so does the user's data parallelism
    assert evaluate(_run({"tp": 2}, alg="dpo")).gpus == 1  # DPO generates nothing
