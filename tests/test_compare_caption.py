"""`rlmcost compare`'s caption says what its rows are: "Iteration time" is the predicted
iteration (``Evaluation.time_s``, the same figure `rlmcost grpo` prints as "predicted
iteration"), the "time >=" rows the roofline bound; and where the models sit, from the run's
deployment. It had said "All models co-located; time = roofline lower bound" whatever the
deployment file placed and beside a predicted "Iteration time" row."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from rlmcost.cli import app


def _caption(*extra: str, algorithms: tuple[str, ...] = ("ppo", "grpo")) -> str:
    res = CliRunner().invoke(app, ["compare", *algorithms, "-m", "llama-3.2-1b", "--gpus",
                                   "8", *extra])  # fmt: skip
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def test_compare_names_the_predicted_row_and_the_bound() -> None:
    text = _caption()
    assert "All models co-located; Iteration time = predicted; time >= = roofline lower" in text
    assert "time = roofline lower bound" not in text.replace("time >= = roofline", "")


def test_compare_names_a_deployment_files_placement(tmp_path: Path) -> None:
    dep = tmp_path / "dep.yaml"
    dep.write_text("placement: async\nstaleness: 1\n")
    text = _caption("--deployment", str(dep))
    assert "Placement async;" in text and "co-located" not in text
    dep.write_text("groups:\n- {members: rollout, gpus: 4}\n"
                   "- {members: actor+reference, gpus: 4}\n")  # fmt: skip
    text = _caption("--deployment", str(dep), algorithms=("grpo", "rloo"))
    assert "Models on the deployment's groups;" in text


def test_compare_partial_rollout_error_names_the_way_compare_takes(tmp_path: Path) -> None:
    # compare has no --placement nor --staleness: the error names the deployment file's keys,
    # and a file with them runs
    res = CliRunner().invoke(app, ["compare", "ppo", "grpo", "-m", "llama-3.2-1b", "--gpus",
                                   "8", "--partial-rollout"])  # fmt: skip
    assert res.exit_code != 0
    assert "a --deployment file's `placement: async` and `staleness: k`" in res.output
    dep = tmp_path / "dep.yaml"
    dep.write_text("placement: async\nstaleness: 1\n")
    assert "Placement async;" in _caption("--partial-rollout", "--deployment", str(dep))


def test_a_stage_an_offline_method_runs_not_is_none_not_offline() -> None:
    # ORPO (Hong et al. 2024) has no reference model: no Assessment at all, where DPO, offline
    # too, runs its reference there; "- (offline)" is for the Generation offline methods skip
    res = CliRunner().invoke(app, ["compare", "dpo", "orpo", "-m", "llama-3.2-1b", "--gpus",
                                   "8"], env={"COLUMNS": "200"})  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = {ln.split("│")[1].strip(): [c.strip() for c in ln.split("│")[2:-1]]
            for ln in res.output.splitlines() if ln.startswith("│")}
    assert rows["Generation work"] == ["- (offline)", "- (offline)"]
    assert rows["Assessment work"][0].endswith("FLOP") and rows["Assessment work"][1] == "- (none)"


def test_an_algorithm_given_twice_is_an_error() -> None:
    # `compare ppo ppo` had printed two identical columns
    res = CliRunner().invoke(app, ["compare", "ppo", "PPO", "-m", "llama-3.2-1b", "--gpus", "8"])
    assert res.exit_code != 0 and "ppo given twice" in res.output
