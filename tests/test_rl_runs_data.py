"""Integrity of rlmcost/perf/data/rl_runs.json, the published RL runs that RL predictions are
validated against: every run names a known source and says where its figure is, its model and
hardware resolve (or the model's config is given in full), its GPU roles add up, and the figures
that the sources publish twice agree with each other (NeMo RL's tokens/s/GPU against its step
time; the model sizes in the names against parameter counts from the configs)."""

from __future__ import annotations

import json
import math
from importlib import resources

import pytest

from rlmcost.specs import get_hardware, get_model

DATA = json.loads(resources.files("rlmcost.perf").joinpath("data", "rl_runs.json").read_text())
RUNS = DATA["runs"]
FRAMEWORKS = {"nemo-rl", "verl", "openrlhf", "deepspeed-chat", "trl", "slime", "miles", "areal",
              "realhf"}
ALGORITHMS = {"ppo", "grpo", "dapo", "rloo", "reinforce++", "remax", "dpo"}
CONFIG_FIELDS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")


def by_id(run_id: str) -> dict:
    return next(r for r in RUNS if r["id"] == run_id)


def test_size_and_spread() -> None:
    assert len(RUNS) >= 30
    frameworks = {r["framework"] for r in RUNS}
    assert len(frameworks) >= 5, frameworks
    assert frameworks <= FRAMEWORKS
    ids = [r["id"] for r in RUNS]
    assert len(ids) == len(set(ids))


def test_sources_are_described() -> None:
    for key, src in DATA["sources"].items():
        assert src["title"] and src["metric"], key
        assert src["url"].startswith("https://"), key
    used = {r["source"] for r in RUNS}
    assert used == set(DATA["sources"]), "every source is used and every run's source is listed"


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r["id"])
def test_run_fields(run: dict) -> None:
    missing = [k for k in DATA["required_keys"] if k not in run]
    assert not missing, missing
    assert run["source"] in DATA["sources"]
    assert run["algorithm"] in ALGORITHMS
    assert run["metric"] in {"step_time_s", "e2e_hours"}
    assert isinstance(run["published"], (int, float)) and run["published"] > 0
    if run["metric"] == "e2e_hours":
        assert "step_time_s" in run["conversion"]
    assert run["assumptions"] and all(isinstance(a, str) and a for a in run["assumptions"])
    assert isinstance(run["framework_settings"], dict) and run["framework_settings"]
    for key in ("gpus", "prompts_per_step", "samples_per_prompt", "prompt_len", "max_response_len"):
        assert isinstance(run[key], int) and run[key] > 0, key
    if "mean_response_len" in run:
        assert 0 < run["mean_response_len"] <= run["max_response_len"]
    if "mean_response_len_range" in run:
        lo, hi = run["mean_response_len_range"]
        assert 0 < lo <= run["mean_response_len"] <= hi <= run["max_response_len"]
    # a prompt length another source gives (prompt_len_source) has its range, the interval's ends
    assert ("prompt_len_range" in run) == bool(run.get("prompt_len_source"))
    if "prompt_len_range" in run:
        lo, hi = run["prompt_len_range"]
        assert 0 < lo <= run["prompt_len"] <= hi


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r["id"])
def test_mean_response_length_is_sourced_or_left_to_the_default(run: dict) -> None:
    """A mean response length is the run's own published figure (in its cite), all responses
    at the cap (said in the assumptions), or a figure from another publication named in
    ``mean_response_len_source``; a run with none gets the global default rule."""
    mean = run.get("mean_response_len")
    if mean is None:
        assert "mean_response_len_source" not in run and "mean_response_len_range" not in run
        return
    source = run.get("mean_response_len_source", "")
    if source:  # where, and which of the run-average or final value it is
        assert any(k in source for k in ("commit", "@", "Figure", "Table")), source
        assert "average" in source, source
    elif mean == run["max_response_len"]:
        assert any(f"full {mean} tokens" in a for a in run["assumptions"]), run["assumptions"]
    else:
        assert any(f in run["cite"] for f in (f"{mean}", f"{mean:,}")), run["cite"]
    roles = run.get("gpus_by_role")
    if roles:
        assert sum(roles.values()) == run["gpus"], roles


def published_text(run: dict) -> list[str]:
    """The ways the published figure may be printed in the cite (hours given as days too)."""
    v = run["published"]
    forms = {f"{v}", f"{v:g}", f"{v:.2f}", f"{v:,}"}
    if run["metric"] == "e2e_hours":
        forms.add(f"{v / 24:g} days")
    return sorted(forms)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r["id"])
def test_cite_shows_the_published_figure(run: dict) -> None:
    assert any(form in run["cite"] for form in published_text(run)), (
        run["cite"],
        published_text(run),
    )


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r["id"])
def test_model_and_hardware_resolve(run: dict) -> None:
    get_hardware(run["hardware"])
    if run["model_builtin"]:
        get_model(run["model"])
        assert "model_config" not in run
    else:
        cfg = run["model_config"]
        for field in CONFIG_FIELDS:
            assert isinstance(cfg[field], int) and cfg[field] > 0, field
        assert cfg["heads"] % cfg["kv_heads"] == 0
        assert "head_dim" in cfg or cfg["hidden"] % cfg["heads"] == 0  # else head_dim given
    for role in ("critic", "reward"):
        if isinstance(run.get(role), dict):
            assert all(isinstance(run[role]["model_config"][f], int) for f in CONFIG_FIELDS)


def params(cfg: dict) -> int:
    """Parameter count from a config, as transformers builds the model.

    OPT (transformers/models/opt/modeling_opt.py): token embedding V x p (tied head),
    learned positions (max_position + 2) x d, project_in/out when p != d, per layer q/k/v/o
    with biases, fc1/fc2 with biases and two LayerNorms, and a final LayerNorm. Llama
    (modeling_llama.py): untied embedding and head, q/o d x d, k/v d x (kv_heads x head_dim),
    gated MLP 3 d f, two RMSNorms per layer and a final one.
    """
    d, f, layers, v = cfg["hidden"], cfg["ffn"], cfg["layers"], cfg["vocab"]
    if cfg["family"] == "opt":
        p = cfg.get("word_embed_proj_dim", d)
        total = v * p + (cfg["max_position"] + 2) * d + (2 * p * d if p != d else 0)
        per_layer = 4 * (d * d + d) + (d * f + f) + (f * d + d) + 2 * 2 * d
        return total + layers * per_layer + 2 * d
    kv = cfg["kv_heads"] * (d // cfg["heads"])
    per_layer = 2 * d * d + 2 * d * kv + 3 * d * f + 2 * d
    return 2 * v * d + layers * per_layer + d


NOMINAL = {  # billions, from the model names (OPT paper Table 1; Code Llama paper)
    "opt-6.7b": 6.7,
    "opt-13b": 13,
    "opt-30b": 30,
    "opt-66b": 66,
    "opt-175b": 175,
    "codellama-34b": 34,
}


@pytest.mark.parametrize("name", sorted(NOMINAL))
def test_given_configs_match_the_model_size(name: str) -> None:
    cfg = next(r["model_config"] for r in RUNS if r["model"] == name)
    assert params(cfg) == pytest.approx(NOMINAL[name] * 1e9, rel=0.04)


NEMO = [r for r in RUNS if r["framework"] == "nemo-rl" and r["source"] != "nemo_rl_v0.3_blog"]
"""NeMo RL's performance-page rows (the v0.3 blog publishes phases, not tokens/s/GPU)."""


@pytest.mark.parametrize("run", NEMO, ids=lambda r: r["id"])
def test_nemo_rows_agree_with_their_own_throughput(run: dict) -> None:
    """The page defines tokens/s/GPU = tokens used in training / (step time x GPUs). With
    G-Average Seq len as the mean generated length plus the row's prompt (the medians these
    figures imply per section: v0.5 108 tokens for the Qwen3/DeepSeek rows, 130 for Llama; v0.6
    112; v0.7 110), the two published figures agree within 0.93..1.06 (rounding of the
    published figures, mean of 5 steps). A mistyped step time, GPU count or length falls
    outside; a row whose own figures disagree on the page says so in its assumptions (and must
    then fall outside)."""
    other = run["published_other"]
    per_sample = run["prompt_len"] + other["g_average_seq_len"]
    tokens = per_sample * run["prompts_per_step"] * run["samples_per_prompt"]
    implied = tokens / (run["published"] * run["gpus"])
    agree = 0.93 <= implied / other["tokens_per_s_per_gpu"] <= 1.06
    said = any(a.startswith("the page's two figures disagree") for a in run["assumptions"])
    assert agree != said
    assert run["mean_response_len"] == other["g_average_seq_len"]
    s = run["framework_settings"]
    assert s["grpo.num_prompts_per_step"] == run["prompts_per_step"]
    assert s["cluster.num_nodes"] * s["cluster.gpus_per_node"] == run["gpus"]
    assert run["prompt_len"] + run["max_response_len"] == s["policy.max_total_sequence_length"]


def test_deepspeed_chat_conversion() -> None:
    """264,292 samples (BenckmarkSetting.md: 135,317,504 tokens / 512) at <= 1024 per step; the
    published hours convert over the step count of the batch the row runs."""
    from rlmcost.reports.rl_runs import published_step_s

    steps = math.ceil(264292 / 1024)
    assert steps * 1024 >= 135_317_504 // 512
    run = by_id("deepspeed-chat-blog-opt-13b-a100-80gb-8gpu-step3")
    assert run["batch_rule"] == "largest_fitting" and "largest" in run["conversion"]
    assert published_step_s(run) == pytest.approx(9.0 * 3600 / steps)
    half = {**run, "prompts_per_step": 512}
    assert published_step_s(half) == pytest.approx(9.0 * 3600 / math.ceil(264292 / 512))
