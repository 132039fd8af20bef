"""OpenRLHF's vLLM TP where its published runs leave it open (rlmcost/reports/
rl_runs_engine_tp.py): the smallest that fits, as OpenRLHF's own scripts choose it.

Independent reference: OpenRLHF examples/scripts/train_ppo_llama_ray_70b.sh (commits 7cfc3f36,
2024-02-18, to 77561119, 2024-07-17): the benchmark's 2:2:4:4:4 split of 16 GPUs with
``--vllm_num_engines 2 --vllm_tensor_parallel_size 2`` for Llama-2-70B; Llama-2-70B has 64
heads and 8 KV heads, 69 GB of bf16 weights per GPU at TP 2 (HF config).
"""

from __future__ import annotations

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_engine_tp import engine_tp_candidates, leaves_engine_tp_open
from rlmcost.reports.rl_runs_frameworks import engine_tp
from rlmcost.reports.rl_runs_frameworks import recipe as recipe_of
from rlmcost.reports.rl_runs_rows import evaluate_recipe


def _record(suffix):
    return next(r for r in load_runs()["runs"] if r["id"].endswith(suffix))


def test_70b_benchmark_engines_at_the_scripts_tp():
    rec = _record("benchmark-llama2-70b-ppo-16gpu")
    # the half-HBM rule gives TP 4 (138 GB / 4 <= 40 GB), the script runs TP 2
    assert engine_tp("llama-2-70b", "a800-80gb") == 4
    assert engine_tp_candidates(rec) == [1, 2, 4]  # 4 vLLM GPUs of the 16
    row = evaluate_recipe(recipe_of(rec), run_from_argv)
    assert row.fits
    rollout = row.run.deployment.groups[0]
    assert rollout.members == "rollout"
    assert rollout.gpus == 4
    assert "tp=2" in str(rollout.settings)
    assert any(c.startswith("vLLM TP 2: the smallest power of two") for c in row.recipe.choices)


@pytest.mark.parametrize("suffix", ["readme-llama2-7b-ppo-16gpu", "benchmark-llama2-13b-ppo-8gpu"])
def test_small_models_at_tp_one(suffix):
    # 7B and 13B in bf16 leave most of an 80 GB GPU to the KV cache at TP 1 (OpenRLHF's
    # train_ppo_llama_ray.sh runs 7B at TP 1)
    row = evaluate_recipe(recipe_of(_record(suffix)), run_from_argv)
    assert "tp=1" in str(row.run.deployment.groups[0].settings)


def test_a_given_tp_is_kept():
    rec = _record("benchmark-llama2-70b-ppo-16gpu")
    rec = {**rec, "framework_settings": {**rec["framework_settings"],
                                         "--vllm_tensor_parallel_size": 4}}  # fmt: skip
    r = recipe_of(rec)
    assert not leaves_engine_tp_open(r)
    row = evaluate_recipe(r, run_from_argv)
    assert "tp=4" in str(row.run.deployment.groups[0].settings)
    assert "vLLM TP 4 (--vllm_tensor_parallel_size)" in row.recipe.choices
