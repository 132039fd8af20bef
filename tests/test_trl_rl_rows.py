"""TRL's published runs in `rlmcost validate --rl` (rlmcost/reports/rl_runs_trl.py): the row of
open-r1's README (huggingface/open-r1 571661a1, PR 197: Qwen2.5-Math-7B GRPO 'on 8 H100 80G
takes about 3 hours') goes through `rlmcost import trl` with the recipe and the accelerate
config as published, and the TRL code of its date decides three meanings TRL changed since:
per_device_train_batch_size in prompts (before PR 2776, 2025-02-06), one vLLM call per
micro-step (before PR 3283, 2025-04-17) and beta 0.04 by default (before PR 3516,
2025-05-30). The expected flags are recomputed here from the recipe's numbers."""

from __future__ import annotations

import copy
import math
import re

import pytest

from rlmcost.frameworks import trl_versions
from rlmcost.frameworks.trl_versions import BETA_ZERO, GENERATE_PER_BATCH, PROMPTS_PER_DEVICE
from rlmcost.reports.rl_runs import load_runs, published_step_s
from rlmcost.reports.rl_runs_frameworks import recipe

TRL_COMPLETIONS_PER_DEVICE_DATE = PROMPTS_PER_DEVICE.merged
TRL_GENERATE_PER_BATCH_DATE = GENERATE_PER_BATCH.merged
TRL_BETA_ZERO_DATE = BETA_ZERO.merged

RUN_ID = "trl-open-r1-readme-qwen2.5-math-7b-grpo-8gpu"
RECORD = next(r for r in load_runs()["runs"] if r["id"] == RUN_ID)


def flags(rec: dict) -> dict:
    rcp = recipe(rec)
    assert rcp.query is not None, rcp.unexpressible
    return dict(rcp.query.flags)


def with_code(date: str) -> dict:
    rec = copy.deepcopy(RECORD)
    rec["framework_settings"]["code_date"] = date
    return rec


def test_the_recipe_as_published() -> None:
    # open-r1 571661a1: config_base_math_smalllr.yaml and accelerate_configs/zero2.yaml, the
    # README's command overriding num_processes to 7 (the 8th GPU runs vLLM: vllm_device auto)
    s = RECORD["framework_settings"]
    cfg, acc = s["config"], s["accelerate"]
    assert (cfg["per_device_train_batch_size"], cfg["gradient_accumulation_steps"]) == (1, 16)
    assert (cfg["max_prompt_length"], cfg["max_completion_length"]) == (512, 1024)
    assert "num_generations" not in cfg and "beta" not in cfg  # TRL's defaults then: 8, 0.04
    assert cfg["vllm_device"] == "auto" and cfg["vllm_gpu_memory_utilization"] == 0.7
    assert acc["deepspeed_config"]["zero_stage"] == 2 and acc["num_processes"] == 7
    assert "--num_processes=7" in s["launch"]
    assert RECORD["gpus"] == acc["num_processes"] + 1 == sum(RECORD["gpus_by_role"].values())
    # 7 processes x 1 prompt x 16 micro-steps = 112 prompts of 8 completions per step
    assert RECORD["prompts_per_step"] == 7 * 1 * 16 and RECORD["samples_per_prompt"] == 8


def test_the_hours_convert_over_the_trainers_steps() -> None:
    # MATH (Hendrycks et al. 2021, arXiv 2103.03874 Section 3): 7,500 training problems; one
    # epoch sharded over 7 processes at 1 prompt, transformers' Trainer stepping every 16
    steps = math.ceil(7500 / 7) // 16
    assert steps == RECORD["framework_settings"]["ppo_steps"] == 67
    assert published_step_s(RECORD) == pytest.approx(3.0 * 3600 / 67)
    assert "161.2 s" in RECORD["conversion"]


def test_the_row_through_the_trl_importer() -> None:
    f = flags(RECORD)
    rcp = recipe(RECORD)
    assert rcp.query is not None and rcp.query.framework == "trl"
    assert rcp.command.startswith("rlmcost rlvr --framework trl --model qwen2.5-7b ")
    # 1 prompt x num_generations 8 completions per device per micro-step (before PR 2776)
    assert f["--micro-batch"] == 8
    # one vLLM call per micro-step of 8 completions x 7 processes (before PR 3283)
    assert f["--sequences-per-call"] == 56
    assert "--kl" in f and "--no-kl" not in f  # beta 0.04 (before PR 3516)
    assert f["--zero"] == "2" and f["--ckpt"] == "full"
    assert f["--groups"] == "rollout=1[tp=1],actor+reference=7" and f["--gpus"] == 8
    assert f["--gpu-memory-utilization"] == 0.7 and "--no-sleep" in f
    said = " ".join(recipe(RECORD).choices)
    for pr in ("PR 2776", "PR 3283", "PR 3516"):
        assert pr in said


def test_newer_trl_code_reads_todays_semantics() -> None:
    # after every rule of rlmcost.frameworks.trl_versions: per_device_train_batch_size counts
    # completions, one generation per gradient-accumulation batch, beta 0.0 (no reference)
    # unless given, vllm_device dropped (PR 3394) and vLLM colocated (PR 5255) with the
    # importance-sampling forward (PR 3867)
    rules = [v for v in vars(trl_versions).values() if isinstance(v, trl_versions.Rule)]
    late = max(rule.merged for rule in rules)
    f = flags(with_code(late))
    assert f["--micro-batch"] == 1
    assert "--sequences-per-call" not in f
    assert "--no-kl" in f and "--kl" not in f
    assert "--groups" not in f and "--recompute-logprobs" in f  # colocated on every GPU
    assert recipe(with_code(late)).choices[0].startswith("response lengths ")


def test_each_change_on_its_own_day() -> None:
    # between PR 2776 and PR 3283: completions per device as given, still one call per
    # micro-step (1 completion x 7 processes), beta still 0.04
    f = flags(with_code(TRL_COMPLETIONS_PER_DEVICE_DATE))
    assert f["--micro-batch"] == 1 and f["--sequences-per-call"] == 7 and "--kl" in f
    # between PR 3283 and PR 3516: the whole generation batch at once, beta 0.04
    f = flags(with_code(TRL_GENERATE_PER_BATCH_DATE))
    assert "--sequences-per-call" not in f and "--kl" in f
    # a beta the recipe gives wins over any default
    rec = with_code(TRL_BETA_ZERO_DATE)
    rec["framework_settings"]["config"]["beta"] = 0.04
    assert "--kl" in flags(rec)


# open-r1 issue 251 (2025-02-09): the README's next recipe (config_simple_rl.yaml at 0da0f7c)
# on 8 x H100 SXM, unmodified: progress '9/468 [10:25<...]' and 'completion_length' 639.025
ISSUE_251_ID = "trl-open-r1-issue251-qwen2.5-math-7b-grpo-8gpu"
ISSUE_251 = next(r for r in load_runs()["runs"] if r["id"] == ISSUE_251_ID)


def test_issue_251_steps_are_trl_after_pr_2776() -> None:
    # 468 steps only if per_device_train_batch_size counts completions (PR 2776, 2025-02-06):
    # 7,500 MATH problems (arXiv 2103.03874) x 7 generations / (7 processes x 2) micro-steps,
    # // 8 accumulation steps; counting prompts (before PR 2776) it would be 67
    cfg = ISSUE_251["framework_settings"]["config"]
    n, per_dev, accum = cfg["num_generations"], cfg["per_device_train_batch_size"], 8
    assert (n, per_dev, cfg["gradient_accumulation_steps"]) == (7, 2, accum)
    assert 7500 * n // (7 * per_dev) // accum == 468 == ISSUE_251["framework_settings"]["ppo_steps"]
    assert math.ceil(7500 / (7 * per_dev)) // accum != 468
    assert ISSUE_251["framework_settings"]["code_date"] >= TRL_COMPLETIONS_PER_DEVICE_DATE
    # the elapsed 10:25 over the first 9 steps
    assert published_step_s(ISSUE_251) == pytest.approx(625 / 9, abs=0.01)
    assert ISSUE_251["mean_response_len"] == 639


def test_issue_251_through_the_trl_importer() -> None:
    f = flags(ISSUE_251)
    # 2 completions per device; one vLLM call per micro-step of 2 x 7 processes (before PR 3283)
    assert f["--micro-batch"] == 2 and f["--sequences-per-call"] == 14
    # 8 micro-steps x 14 completions = 112 = 16 prompts x 7
    assert (f["--batch"], f["--group"]) == (16, 7) == (ISSUE_251["prompts_per_step"],
                                                      ISSUE_251["samples_per_prompt"])  # fmt: skip
    assert "--kl" in f and f["--groups"] == "rollout=1[tp=1],actor+reference=7"


def test_the_readme_hours_were_not_remeasured_for_the_next_recipe() -> None:
    # open-r1 README.md at db19392 keeps 'takes about 3 hours' for config_simple_rl: 3 h over
    # its 468 steps is 23 s a step, a third of the 69.4 s issue 251 measured on the same GPUs
    readme_step = 3.0 * 3600 / ISSUE_251["framework_settings"]["ppo_steps"]
    assert readme_step == pytest.approx(23.08, abs=0.01)
    assert readme_step < 0.35 * published_step_s(ISSUE_251)


def test_issue_251_is_predicted_within_its_interval() -> None:
    # an independent measured step of the stack the README row ran (TRL before PR 3283, vLLM
    # 0.7.1 on one H100, ZeRO-2 on seven): rlmcost 74.9 s against 69.4 s, +7.9 %
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.reports.rl_runs_rows import evaluate_recipe

    row = evaluate_recipe(recipe(ISSUE_251), run_from_argv)
    assert row.status == "ok" and row.inside
    assert row.error is not None and abs(row.error) < 0.15
    # the README row's doubt quotes this prediction (validate --rl prints the doubt): the
    # figure it states is the one rlmcost gives
    doubt = next(a for a in RECORD["assumptions"] if "open-r1 issue 251 (row" in a)
    quoted = re.search(r"rlmcost predicts ([\d.]+) s \(([+-][\d.]+) %\)", doubt)
    assert quoted is not None and row.predicted_s is not None
    assert float(quoted[1]) == round(row.predicted_s, 1)
    assert float(quoted[2]) == round(100 * row.error, 1)


def test_the_readme_rows_doubt_quotes_its_prediction() -> None:
    # validate --rl prints the row's doubt beside its prediction: the step and update it quotes
    # are the ones rlmcost gives (they moved with the checkpoint's early stop, perf.ckpt_early_stop)
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.reports.rl_runs_rows import evaluate_recipe

    row = evaluate_recipe(recipe(RECORD), run_from_argv)
    doubt = next(a for a in RECORD["assumptions"] if a.startswith("doubt (issue 18): the step"))
    step = re.search(r"of the predicted ([\d.]+) s", doubt)
    update = re.search(r"after the update \(([\d.]+) s\)", doubt)
    assert step is not None and update is not None and row.predicted_s is not None
    assert float(step[1]) == round(row.predicted_s, 1)
    assert float(update[1]) == round(dict(row.predicted_phases_s)["update actor"], 1)


# The prompt's count (the README row's prompt-length assumption): open-r1 grpo.py SYSTEM_PROMPT
# (lines 105-110 at 571661a1) under Qwen2.5-Math's ChatML template, in Qwen2.5 tokens, and MATH's
# problems. Counted outside the tests (no tokenizer files ship here): SYSTEM_PROMPT 83 tokens;
# the 5,000 test problems (microsoft/ToRA src/data/math/test.jsonl at 213c1c99) 68.73 on average.
SYSTEM_PROMPT_TOKENS = 83
# '<|im_start|>' 'system' '\n', '<|im_end|>' '\n', the same for the user turn, and the generation
# prompt '<|im_start|>' 'assistant' '\n' (QwenLM/Qwen2.5-Math evaluation/utils.py:141-144)
TEMPLATE_TOKENS = 3 + 2 + 3 + 2 + 3
MATH_TEST_MEAN_PROBLEM_TOKENS = 68.73
# Hugging Face cards of hendrycks/competition_math (and DigitalLearningGmbH/MATH-lighteval):
# num_bytes per split, problem + level + type + solution, with Arrow's 4 offset bytes per string
CARD_TRAIN_BYTES, CARD_TEST_BYTES = 5_984_772, 3_732_833
OFFSET_BYTES_A_ROW = 4 * 4


def test_the_prompt_length_is_the_counted_prompt() -> None:
    per_train = (CARD_TRAIN_BYTES - OFFSET_BYTES_A_ROW * 7500) / 7500
    per_test = (CARD_TEST_BYTES - OFFSET_BYTES_A_ROW * 5000) / 5000
    scale = per_train / per_test  # a training example's text against a test one's
    assert scale == pytest.approx(1.0704, abs=1e-4)
    fixed = SYSTEM_PROMPT_TOKENS + TEMPLATE_TOKENS
    assert fixed == 96
    mean = fixed + MATH_TEST_MEAN_PROBLEM_TOKENS
    low = fixed + MATH_TEST_MEAN_PROBLEM_TOKENS / scale
    high = fixed + MATH_TEST_MEAN_PROBLEM_TOKENS * scale
    for rec in (RECORD, ISSUE_251):
        assert rec["prompt_len"] == round(mean) == 165
        assert rec["prompt_len_range"][0] == round(low) == 160
        assert "68.73" in rec["prompt_len_source"] and "96 tokens" in rec["prompt_len_source"]
    assert RECORD["prompt_len_range"][1] == round(high) == 170
    # issue 251: one process of 7 holds completions of both of a micro-step's prompts and pads to
    # the longer; the mean of the longer of two of the counted prompts is 194.5
    assert ISSUE_251["prompt_len_range"][1] == 195
    (how,) = [a for a in RECORD["assumptions"] if a.startswith("prompt length 165")]
    for part in ("lines 105-110 at 571661a1", "arXiv 2412.15115", "213c1c99", "3,732,833",
                 "5,984,772", "83 tokens", "68.73", "1.0704"):  # fmt: skip
        assert part in how, part


def test_the_interval_spans_the_prompt_range() -> None:
    from rlmcost.reports.rl_runs import assumed_length_dists, assumed_workloads

    dists = assumed_length_dists(RECORD)
    ends = assumed_workloads(RECORD)
    assert [e["prompt_len"] for e in ends] == RECORD["prompt_len_range"]
    assert [e.get("length_dist") for e in ends] == list(dists or (None, None))
    said = " ".join(recipe(RECORD).choices)
    assert "prompt length 165 (interval 160..170)" in said
    no_range = {k: v for k, v in RECORD.items() if not k.startswith("prompt_len_")}
    assert assumed_workloads(no_range) == tuple({"length_dist": d} for d in dists)


def test_the_audit_quotes_the_prompt_lengths_predictions() -> None:
    # open-r1 grpo.py@571661a1 lines 155-159: a prompt is the system prompt and one MATH problem;
    # at per_device_train_batch_size 1 a process holds one prompt (TRL grpo_trainer.py@724acb97
    # lines 402 and 447), so none is padded to max_prompt_length. The audit note quotes what the
    # cap gave and what the count gives: those figures are rlmcost's, and the count's are lower
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.reports.rl_runs_rows import evaluate_recipe

    assert RECORD["framework_settings"]["config"]["per_device_train_batch_size"] == 1
    cap = RECORD["framework_settings"]["config"]["max_prompt_length"]
    assert RECORD["prompt_len"] < cap
    (note,) = [a for a in RECORD["assumptions"] if a.startswith("audit (issue 18)")]
    assert "grpo.py:155-159" in note and ":447 repeat_interleave" in note
    said = re.search(r"predicting ([\d.]+) s \(([+-][\d.]+) %\) where the cap gave ([\d.]+) s "
                     r"\(([+-][\d.]+) %\), and issue 251's row ([\d.]+) s \(([+-][\d.]+) %\) "
                     r"where the cap gave ([\d.]+) s \(([+-][\d.]+) %\)", note)  # fmt: skip
    assert said is not None
    for rec, quoted in ((RECORD, said.group(1, 2, 3, 4)), (ISSUE_251, said.group(5, 6, 7, 8))):
        at_cap = copy.deepcopy(rec)
        at_cap["prompt_len"] = cap
        rows = [evaluate_recipe(recipe(r), run_from_argv) for r in (rec, at_cap)]
        got = []
        for row in rows:
            assert row.predicted_s is not None and row.error is not None
            got += [round(row.predicted_s, 1), round(100 * row.error, 1)]
        assert [float(q) for q in quoted] == got
        assert got[0] < got[2]
