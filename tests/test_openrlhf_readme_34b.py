"""OpenRLHF's README 34B row against the benchmark's own 34B rates, and the engines' memory
reservation of 2024 OpenRLHF code.

Independent references: OpenRLHF benchmark/README.md at commit dbdd43b0 (2024-03-26; rows
'OpenRLHF(ray+vllm)': GPUs, Generation, Training and End-to-End latency, micro_rollout_batch_size
4 for 34B); OpenRLHF README.md at commit 391e1de4 (2024-05-18; 'Performance': OpenRLHF seconds
for 1024 prompts of 7B on 16, 13B, 34B and 70B on 32 A800-80GB GPUs);
openrlhf/trainer/ray/vllm_engine.py ``create_vllm_engines`` at dbdd43b0 and 391e1de4 (no
``gpu_memory_utilization`` passed to ``vllm.LLM``; the argument arrived with PR 677, commit
c10f02bd, 2025-02-07) and vllm/entrypoints/llm.py ``LLM.__init__`` (default 0.9).
"""

from __future__ import annotations

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe
from rlmcost.reports.rl_runs_rows import build_run, evaluate_recipe

RECORDS = {r["id"]: r for r in load_runs()["runs"] if r["framework"] == "openrlhf"}
# README.md@391e1de4 'Performance' (size: GPUs, OpenRLHF s) and benchmark/README.md@dbdd43b0
# 'OpenRLHF(ray+vllm)' (size: GPUs, End-to-End s)
README = {"7b": (16, 471.11), "13b": (32, 608.93), "34b": (32, 1526.4), "70b": (32, 4488.53)}
BENCH = {"7b": (8, 885.16), "13b": (8, 2392.91), "34b": (8, 8814.25), "70b": (16, 9822.62)}
# benchmark/README.md@dbdd43b0, 34B: Generation and Training latency (s), micro_rollout 4
BENCH_34B_GENERATION_S, BENCH_34B_TRAINING_S = 5518.07, 3296.18


def test_readme_34b_is_the_one_superlinear_row():
    # speedup of each README row over the benchmark row of its size, over the GPU ratio:
    # 7B 0.94, 13B 0.98, 70B 1.10, 34B 1.44 -- only the 34B ran better than its GPUs give
    excess = {s: BENCH[s][1] / README[s][1] / (README[s][0] / BENCH[s][0]) for s in README}
    assert excess["34b"] == pytest.approx(1.444, abs=0.001)
    assert all(0.9 < v < 1.11 for s, v in excess.items() if s != "34b")
    for size, (gpus, seconds) in README.items():
        rec = RECORDS[f"openrlhf-readme-llama2-{size}-ppo-{gpus}gpu"]
        assert (rec["gpus"], rec["published"]) == (gpus, seconds)


def test_readme_34b_prediction_is_the_benchmark_rates_scaled():
    # one engine per actor rank in both runs (1:1:2:2:2): 32 calls per rank instead of 128 at
    # the benchmark's measured seconds per call, the update at its measured rate on 4x the
    # actor's GPUs: 1379.5 + 824.0 = 2203.6 s. rlmcost scales the benchmark's recipe so; the
    # README's 1526.4 s is 31 % below it, what the recipe's open settings leave (the row's doubt)
    rec = RECORDS["openrlhf-readme-llama2-34b-ppo-32gpu"]
    s = rec["framework_settings"]
    calls = rec["prompts_per_step"] // (rec["gpus"] // 4) // s["--micro_rollout_batch_size"]
    assert calls == 32
    scaled = calls * BENCH_34B_GENERATION_S / 128 + BENCH_34B_TRAINING_S / 4
    assert scaled == pytest.approx(2203.6, abs=0.1)
    row = evaluate_recipe(recipe(rec), run_from_argv)
    assert row.predicted_s == pytest.approx(scaled, rel=0.05)
    assert rec["published"] < 0.7 * scaled


# benchmark/README.md@dbdd43b0 'OpenRLHF(ray+vllm)': (actor ranks, micro_rollout_batch_size,
# Generation s, Training s) of each size, on the GPUs of BENCH (ratio 1:1:2:2:2, 70B 2:2:4:4:4)
BENCH_RATES = {"7b": (2, 16, 481.86, 403.29), "13b": (2, 8, 1425.75, 967.15),
               "34b": (2, 4, 5518.07, 3296.18), "70b": (4, 4, 7122.65, 2699.97)}  # fmt: skip


def test_the_other_readme_rows_ran_at_the_benchmark_rates():
    # each README row scaled from its size's benchmark row: the same seconds per make_experience
    # call on k x the ranks (1,024 prompts over them), the update on k x the actor's GPUs. The
    # 7B, 13B and 70B README figures are within 9 % of that; the 34B alone is 31 % below, and the
    # row's audit note quotes these figures
    rec = RECORDS["openrlhf-readme-llama2-34b-ppo-32gpu"]
    (note,) = [a for a in rec["assumptions"] if a.startswith("audit (issue 18)")]
    for size, (ranks, mrb, gen_s, train_s) in BENCH_RATES.items():
        k = README[size][0] // BENCH[size][0]
        per_call = gen_s / (1024 // ranks // mrb)
        scaled = (1024 // (ranks * k) // mrb) * per_call + train_s / k
        off = README[size][1] / scaled - 1
        assert (abs(off) < 0.09) == (size != "34b")
        assert f"{scaled:.1f} s ({README[size][1]:g} s, {100 * off:+.1f} %)" in note
    assert "experience_maker.py:335 and :351" in note and "vllm_engine.py:18" in note


def test_2024_code_runs_the_engines_at_vllm_default_utilization():
    from rlmcost.frameworks.openrlhf import engine_utilization

    assert engine_utilization("2024-03-26") == 0.9
    assert engine_utilization("2025-02-06") == 0.9
    assert engine_utilization("2025-02-07") is None  # --vllm_gpu_memory_utilization read
    for run_id, rec in RECORDS.items():
        r = recipe(rec)
        assert r.query is not None
        assert dict(r.query.flags)["--gpu-memory-utilization"] == 0.9, run_id
        assert build_run(r, run_from_argv).deployment.engine.gpu_memory_utilization == 0.9
        assert any(c.startswith("vLLM gpu_memory_utilization 0.9") for c in r.choices)


def test_a_given_utilization_is_kept():
    rec = RECORDS["openrlhf-benchmark-llama2-7b-ppo-8gpu"]
    given = {**rec, "framework_settings": {**rec["framework_settings"],
                                           "--vllm_gpu_memory_utilization": 0.8}}  # fmt: skip
    r = recipe(given)
    assert r.query is not None
    assert dict(r.query.flags)["--gpu-memory-utilization"] == 0.8
    assert not any(c.startswith("vLLM gpu_memory_utilization") for c in r.choices)
