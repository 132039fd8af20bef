"""slime's published runs in `rlmcost validate --rl` (rlmcost/reports/rl_runs_slime.py).

THUDM/slime issue 385 (2025-09-26): Qwen3-0.6B GRPO on GSM8K, 2 nodes x 8 H200 colocated,
``perf/total_train_time`` 287.26 s and ``perf/rollout_time`` 245.61 s; its launch line goes
through `rlmcost import slime`, and slime's code of that date recomputes the old log-probs
(reuse came with slime bf9b1a3b, 2026-05-09). skypilot-org/skypilot llm/slime
benchmark/metrics.json (273ca359): a 20-turn coding agent, which rlmcost cannot price, kept as
an unexpressible row. radixark/miles (slime's fork) docs/models/qwen/qwen3-8.md (bb6f7dbd): the
Qwen3.8-27B step measured on 8 H200, its phases checked against each other and its model
against transformers' Qwen3_5ForCausalLM. The expected flags are recomputed here from the
sources' numbers."""

from __future__ import annotations

import copy

import pytest

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
    assert rcp.unexpressible is not None and "up to 20 turns" in rcp.unexpressible
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


MILES = RUNS["miles-docs-qwen3.8-27b-grpo-colocate-8gpu"]


def test_the_miles_page_figures_agree_with_each_other() -> None:
    # radixark/miles docs/models/qwen/qwen3-8.md (bb6f7dbd) section 4.2: rollout 307 s, train
    # 415 s (ref log-probs 100 s + actor log-probs 33 s + backward/optimizer), weight sync 2.5 s
    ph = MILES["published_phases"]
    assert MILES["published"] == 307 + 415 + 2.5 == sum(ph.values())
    assert ph["ref_logprob_s"] + ph["old_logprob_s"] + ph["training_s"] == 415
    # perf/tokens_per_gpu_per_sec 478 = response tokens / rollout time / rollout GPUs
    # (slime/ray/rollout.py _log_rollout_data), with the page's mean response of 4585 tokens
    tokens = MILES["prompts_per_step"] * MILES["samples_per_prompt"] * MILES["mean_response_len"]
    assert round(tokens / ph["generation_s"] / MILES["gpus"]) == 478
    assert arg(MILES, "--sglang-mem-fraction-static") == "0.8"
    assert arg(MILES, "--tensor-model-parallel-size") == "4"


def test_the_miles_row_through_the_slime_importer() -> None:
    rcp = recipe(MILES)
    f = flags(MILES)
    assert rcp.query is not None and rcp.query.framework == "slime"
    assert f["--model"] == "Qwen/Qwen3.8-27B" and f["--gpus"] == 8
    assert (f["--tp"], f["--rollout-tp"], f["--gpu-memory-utilization"]) == (4, 1, 0.8)
    assert "optimizer" in str(f["--offload"]).split(",")  # --optimizer-cpu-offload
    # one optimizer step per rollout (256 / 256), yet miles runs the old log-prob forward
    assert "--recompute-logprobs" in f
    assert any("miles runs it every step" in c for c in rcp.choices)
    actor = rcp.overlay["models"]["actor"]
    assert actor["linear_layers"] == 48 and actor["head_dim"] == 256


def test_the_miles_row_carries_the_published_truncated_share() -> None:
    # radixark/miles docs/models/qwen/qwen3-8.md (bb6f7dbd) section 4.2: "Mean response length
    # 4585 tokens, 33 % truncated at the 8192 cap"; the mean counts the truncated responses
    from rlmcost.placement.lengths import parse_length_dist, rest_mean

    f = flags(MILES)
    assert f["--length-dist"] == "lognormal:4585,0.67,8192,0.33"
    assert round(rest_mean(4585, 8192, 0.33)) == 2808  # the other 67 %: (4585 - 0.33 x 8192) / 0.67
    lengths = parse_length_dist(f["--length-dist"]).lengths(256, 8192)
    assert sum(1 for n in lengths if n == 8192) >= round(0.33 * 256)
    assert abs(sum(lengths) / 256 - 4585) < 0.01 * 4585


def test_the_qwen3_5_config_matches_transformers() -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "Qwen3_5ForCausalLM"):
        pytest.skip("transformers without Qwen3.5")
    from rlmcost.evaluation.deployment import spec_params
    from rlmcost.reports.rl_runs import model_spec
    from rlmcost.specs import ModelSpec

    cfg = MILES["model_config"]
    with torch.device("meta"):
        hf = transformers.Qwen3_5ForCausalLM(transformers.Qwen3_5TextConfig(
            hidden_size=cfg["hidden"], intermediate_size=cfg["ffn"],
            num_hidden_layers=cfg["layers"], num_attention_heads=cfg["heads"],
            num_key_value_heads=cfg["kv_heads"], head_dim=cfg["head_dim"],
            vocab_size=cfg["vocab"], linear_num_key_heads=cfg["linear_key_heads"],
            linear_num_value_heads=cfg["linear_value_heads"],
            linear_key_head_dim=cfg["linear_head_dim"],
            linear_value_head_dim=cfg["linear_head_dim"],
            linear_conv_kernel_dim=cfg["linear_conv_kernel"],
            full_attention_interval=cfg["full_attention_interval"],
            tie_word_embeddings=False))  # fmt: skip
    spec = ModelSpec.model_validate(model_spec("m", cfg, "hf"))
    assert spec_params(spec) == sum(p.numel() for p in hf.parameters()) == 26_895_998_464
