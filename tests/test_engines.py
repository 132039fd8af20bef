"""Engines other than vLLM/SGLang: HF generate on the training model (TRL use_vllm false,
OpenRLHF without engines) and DeepSpeed-Chat's Hybrid Engine. Independent facts checked:
HF generate keeps no memory reservation and needs no weight refit (the same weights; TRL
grpo_trainer.py, OpenRLHF actor.py); a static batcher cannot finish before continuous
batching on the same lengths (every slot waits for its batch's longest; Yu et al. 2022,
Orca); the CLI line of a Run with --engine reproduces it."""

from __future__ import annotations

import json
import shlex

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.placement.group_jobs import static_batches
from rlmcost.reports.estimate import estimate
from rlmcost.run import Run

runner = CliRunner()
KW = dict(gpus=8, batch=32, group=4, response_len=1024, length_dist="lognormal:300,0.8,1024")


def _phases(e) -> dict[str, float]:  # noqa: ANN001
    return {p.name: p.time_s for p in e.evaluation.phases}


def _gen(e) -> float:  # noqa: ANN001
    return _phases(e)["generation"]


def test_static_batches_pad_each_batch_to_its_longest() -> None:
    assert static_batches((5, 1, 3, 2, 7), 2) == (5, 5, 3, 3, 7)
    assert static_batches((4, 4), 8) == (4, 4)


def test_hf_generate_has_no_reservation_refit_or_sleep() -> None:
    e = estimate("grpo", "qwen2.5-0.5b", **KW)
    run = e.run.replace(deployment={"engine": {"kind": "hf"}})
    from rlmcost import evaluate

    hf = evaluate(run)
    names = set(_phases(hf))
    assert "weight sync" not in names and "engine sleep/wake" not in names
    for g in hf.evaluation.groups:
        assert all(j.memory.engine == 0 for j in g.jobs)
    # the same lengths under static batching end no earlier than under continuous batching
    assert _gen(hf) >= _gen(e)


def test_engine_flag_round_trips_through_the_command_line() -> None:
    args = ["grpo", "-m", "qwen2.5-0.5b", "--gpus", "8", "--engine", "hf", "--json"]
    out = json.loads(runner.invoke(app, args).stdout)
    assert out["run"]["deployment"]["engine"]["kind"] == "hf"
    line = Run.from_data(out["run"]).to_command()
    assert "--engine hf" in line
    again = json.loads(runner.invoke(app, [*shlex.split(line)[1:], "--json"]).stdout)
    assert again == out


def test_trl_without_vllm_imports_as_hf_generate(tmp_path) -> None:  # noqa: ANN001
    cfg = tmp_path / "grpo.yaml"
    cfg.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\nuse_vllm: false\n"
                   "per_device_train_batch_size: 4\nnum_generations: 4\n")  # fmt: skip
    r = runner.invoke(app, ["import", "trl", str(cfg), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["run"]["deployment"]["engine"]["kind"] == "hf"
