"""slime's published runs in `rlmcost validate --rl` (rlmcost/reports/rl_runs_slime.py).

THUDM/slime issue 385 (2025-09-26): Qwen3-0.6B GRPO on GSM8K, 2 nodes x 8 H200 colocated,
``perf/total_train_time`` 287.26 s and ``perf/rollout_time`` 245.61 s; its launch line goes
through `rlmcost import slime`, and slime's code of that date recomputes the old log-probs
(reuse came with slime bf9b1a3b, 2026-05-09). skypilot-org/skypilot llm/slime
benchmark/metrics.json (273ca359): a 20-turn coding agent, which rlmcost cannot price, kept as
an unexpressible row. The expected flags are recomputed here from the issue's numbers."""

from __future__ import annotations

import copy

from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe
from rlmcost.reports.rl_runs_slime import SLIME_REUSE_LOGPROBS_DATE

RUNS = {r["id"]: r for r in load_runs()["runs"]}
ISSUE = RUNS["slime-issue385-qwen3-0.6b-gsm8k-colocate-16gpu"]
AGENT = RUNS["skypilot-slime-coding-agent-qwen3-14b-sync-3engine-7gpu"]


def flags(rec: dict) -> dict:
    rcp = recipe(rec)
    assert rcp.query is not None, rcp.unexpressible
    return dict(rcp.query.flags)


def with_settings(rec: dict, **settings: object) -> dict:
    out = copy.deepcopy(rec)
    out["framework_settings"].update(settings)
    return out


def arg(rec: dict, name: str) -> str:
    argv = rec["framework_settings"]["argv"]
    return argv[argv.index(name) + 1]


def test_the_issue_figures_and_flags() -> None:
    # slime issue 385: 'perf/total_train_time': 287.2645092010498, 'perf/rollout_time':
    # 245.61117100715637, with the flags the issue lists
    assert ISSUE["published"] == round(287.2645092010498, 2)
    assert ISSUE["published_phases"] == {"generation_s": round(245.61117100715637, 2)}
    for name, value in (("--rollout-batch-size", "1152"), ("--n-samples-per-prompt", "5"),
                        ("--rollout-max-response-len", "1024"), ("--global-batch-size", "5760"),
                        ("--rollout-num-gpus-per-engine", "1"),
                        ("--sglang-mem-fraction-static", "0.7"), ("--actor-num-nodes", "2"),
                        ("--actor-num-gpus-per-node", "8")):  # fmt: skip
        assert arg(ISSUE, name) == value, name
    assert "--colocate" in ISSUE["framework_settings"]["argv"]
    # 2 nodes x 8 GPUs colocated: the actor and the 16 one-GPU engines share 16 GPUs
    assert ISSUE["gpus"] == 2 * 8 and ISSUE["hardware"] == "h200"
    assert (ISSUE["prompts_per_step"], ISSUE["samples_per_prompt"]) == (1152, 5)


def test_the_issue_row_through_the_slime_importer() -> None:
    f = flags(ISSUE)
    rcp = recipe(ISSUE)
    assert rcp.command.startswith("rlmcost rlvr --framework slime --model qwen3-0.6b ")
    # Megatron TP 2 of run-qwen3-4B.sh; one SGLang engine per GPU; memory fraction 0.7
    assert f["--tp"] == 2 and f["--rollout-tp"] == 1
    assert f["--gpu-memory-utilization"] == 0.7
    # --use-kl-loss (coef 0) loads and runs the reference
    assert "--kl" in f
    # 1152 x 5 = 5760 samples = --global-batch-size: one optimizer step per rollout
    assert f.get("--mini-batches", 1) == 1152 * 5 // 5760 == 1
    assert (f["--batch"], f["--group"], f["--gpus"]) == (1152, 5, 16)
    # slime of 2025-09-26 recomputes the old log-probs (before bf9b1a3b)
    assert "--recompute-logprobs" in f and "--no-recompute-logprobs" not in f
    assert any("bf9b1a3b" in c for c in rcp.choices)


def test_the_code_date_decides_the_old_logprob_forward() -> None:
    after = with_settings(ISSUE, code_date=SLIME_REUSE_LOGPROBS_DATE)
    f = flags(after)
    assert "--no-recompute-logprobs" in f and "--recompute-logprobs" not in f
    assert not any("bf9b1a3b" in c for c in recipe(after).choices)
    # several optimizer steps per rollout: slime recomputes them at any date
    argv = list(after["framework_settings"]["argv"])
    argv[argv.index("--global-batch-size") + 1] = "2880"
    assert "--recompute-logprobs" in flags(with_settings(after, argv=argv))


def test_a_multi_turn_agent_is_not_expressible() -> None:
    rcp = recipe(AGENT)
    assert rcp.query is None
    assert rcp.unexpressible is not None and "20-turn agent" in rcp.unexpressible
    assert "--custom-generate-function-path" in rcp.unexpressible
    # the benchmark's sync 3-engine run, step 2 (steady state): step, rollout, train, weights
    assert AGENT["published"] == 1031.6
    assert AGENT["published_phases"] == {"generation_s": 620.0, "training_s": 377.7,
                                         "refit_s": 32.2}  # fmt: skip
    # trainer H100:4 + 3 engines of H100:1; 23 prompts x 8 samples = the global batch
    assert AGENT["gpus"] == 4 + 3 == sum(AGENT["gpus_by_role"].values())
    assert int(arg(AGENT, "--global-batch-size")) == 23 * 8


def test_a_single_turn_custom_generate_still_maps() -> None:
    one = with_settings(AGENT, agent_max_turns=1)
    rcp = recipe(one)
    assert rcp.query is not None, rcp.unexpressible
    f = dict(rcp.query.flags)
    assert f["--tp"] == 4 and f["--rollout-tp"] == 1 and f["--gpus"] == 7
