"""OpenRLHF before November 2024 generated in calls of micro_rollout_batch_size prompts per engine.

Independent references: OpenRLHF openrlhf/trainer/ppo_trainer.py ``fit`` and
ppo_utils/experience_maker.py ``RemoteExperienceMaker`` at commit dbdd43b0 (2024-03-26): one
``make_experience`` per ``micro_rollout_batch_size`` prompts of each actor rank, each sent to one
vLLM engine, a synchronous Ray actor; PR 507 (commit e52bc6c5, 2024-11-07) "Send all prompts to
vllm"; benchmark/README.md at dbdd43b0 (the micro batch sizes of the 'OpenRLHF(ray+vllm)' rows);
the Llama-3.2-1B config (1.24e9 parameters, bf16) and the H100 SXM datasheet (3.35 TB/s HBM3).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import OPENRLHF_ALL_PROMPTS_DATE, recipe
from rlmcost.reports.rl_runs_rows import build_run

runner = CliRunner()
RECORDS = [r for r in load_runs()["runs"] if r["framework"] == "openrlhf"]
# benchmark/README.md@dbdd43b0, 'OpenRLHF(ray+vllm)': generation micro_batch_size per size
BENCHMARK_ROLLOUT_MICRO = {"7b": 16, "13b": 8, "34b": 4, "70b": 4}


def test_pr_507_date():
    assert OPENRLHF_ALL_PROMPTS_DATE == "2024-11-07"


@pytest.mark.parametrize("rec", RECORDS, ids=[r["id"] for r in RECORDS])
def test_rows_generate_in_calls_of_the_benchmarks_micro_batch(rec):
    size = rec["id"].split("llama2-")[1].split("-")[0]
    run = build_run(recipe(rec), run_from_argv)
    assert run.deployment.engine.sequences_per_call == BENCHMARK_ROLLOUT_MICRO[size]
    assert rec["framework_settings"]["code_date"] < OPENRLHF_ALL_PROMPTS_DATE


def test_code_from_pr_507_on_sends_everything_at_once():
    rec = {**RECORDS[0], "framework_settings": {**RECORDS[0]["framework_settings"],
                                                "code_date": "2025-04-13"}}  # fmt: skip
    run = build_run(recipe(rec), run_from_argv)
    assert run.deployment.engine.sequences_per_call is None


def _generation_s(extra: list[str]) -> float:
    args = ["grpo", "--model", "llama-3.2-1b", "--hardware", "h100-sxm", "--gpus", "8",
            "--batch", "64", "--group", "4", "--prompt-len", "128", "--response-len", "256",
            "--length-dist", "fixed", "--json", *extra]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return next(p["time_s"] for p in json.loads(res.stdout)["phases"] if p["name"] == "generation")


def test_calls_run_one_after_another():
    # 256 samples over 8 replicas (vLLM TP 1): 32 each. In calls of 4, a replica decodes 8
    # calls of 256 steps one after another, every step reading the bf16 weights at least once
    whole, calls = _generation_s([]), _generation_s(["--sequences-per-call", "4"])
    weights_s = 1.24e9 * 2 / 3.35e12
    assert calls >= 8 * 256 * weights_s
    assert calls > 4 * whole
    assert _generation_s(["--sequences-per-call", "32"]) == pytest.approx(whole, rel=1e-9)


def test_the_flag_round_trips_through_the_command():
    rec = RECORDS[0]
    run = build_run(recipe(rec), run_from_argv)
    assert "--sequences-per-call 16" in run.to_command()
