"""NeMo RL performance-summary.md 'NeMo RL v0.6' rows of rl_runs.json (tag v0.6.0 = branch
r0.6.0 c339070f for every GRPO row): each row's recipe settings against the table's own columns,
and the prompt length the page's own figures imply."""

from __future__ import annotations

import re
import statistics

import pytest

from rlmcost.reports.rl_runs import load_runs

RUNS = [r for r in load_runs()["runs"] if r["source"] == "nemo_rl_v0.6"]

# performance-summary.md at v0.6.0, section 'NeMo RL v0.6': 18 GRPO rows (H100 BF16 9, H100 FP8
# 1, GB200 BF16 8); the SWE row (Nemotron-3-Nano, 131,072 tokens, multi-turn) is not a GRPO row
PAGE_GRPO_ROWS = 18


def _columns(cite: str) -> tuple[list[int], list[int]]:
    gen = re.search(r"Generation \[TP,PP\] \[(\d+),(\d+)\]", cite)
    train = re.search(r"Training \[TP,CP,EP,PP,VPP\] \[(\d+),(\d+),(\d+),(\d+),n/a\]", cite)
    assert gen and train, cite
    return [int(x) for x in gen.groups()], [int(x) for x in train.groups()]


def _recipe(run: dict) -> str:
    found = re.search(r"recipe (examples/configs/\S+\.yaml)", run["cite"])
    assert found, run["id"]
    return found.group(1)


def _v07_counterpart(run: dict) -> dict:
    """The v0.7 section's row of the same recipe file on the same GPUs."""
    (row,) = [r for r in load_runs()["runs"] if r["source"] == "nemo_rl_v0.7"
              and _recipe(r) == _recipe(run) and r["gpus"] == run["gpus"]]  # fmt: skip
    return row


def test_every_grpo_row_of_the_section_is_in() -> None:
    assert len(RUNS) == PAGE_GRPO_ROWS
    assert len({r["id"] for r in RUNS}) == PAGE_GRPO_ROWS
    tables = {re.search(r"table '([^']+)'", r["cite"]).group(1) for r in RUNS}  # type: ignore[union-attr]
    assert tables == {"H100 BF16 Benchmarks", "H100 FP8 Benchmarks", "GB200 BF16 Benchmarks"}


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r["id"])
def test_settings_give_the_tables_layout(run: dict) -> None:
    """The table's Generation [TP,PP] and Training [TP,CP,EP,PP] columns are the recipe's keys,
    or the row's assumptions name the key where table and recipe part: the recipe's value is kept
    where the table's does not fit the training GPUs, or where the v0.7 section lists the same
    recipe file with the recipe's value (grpo-deepseek-v3-64n8g.yaml and -64n4g.yaml:10 at v0.6.0
    and v0.7.0, expert_model_parallel_size 32)."""
    (gtp, gpp), (tp, cp, ep, pp) = _columns(run["cite"])
    s = run["framework_settings"]
    m = "policy.megatron_cfg."
    assert s["policy.generation.vllm_cfg.tensor_parallel_size"] == gtp
    assert s["policy.generation.vllm_cfg.pipeline_parallel_size"] == gpp
    got = (s[m + "tensor_model_parallel_size"], s[m + "context_parallel_size"],
           s[m + "expert_model_parallel_size"], s[m + "pipeline_model_parallel_size"])  # fmt: skip
    said = " ".join(run["assumptions"])
    for name, want, have in zip(("tensor_model", "context", "expert_model", "pipeline_model"),
                                (tp, cp, ep, pp), got, strict=True):  # fmt: skip
        if have != want and f"keeps the recipe's {name}_parallel_size {have}" in said:
            # the v0.7 section lists the same (unchanged) recipe file with the recipe's value
            assert f"the table's {want} repeats" in said, run["id"]
            assert _v07_counterpart(run)["framework_settings"][m + f"{name}_parallel_size"] == have
        elif have != want:
            assert f"{name}_parallel_size {have} of the recipe: the table's {want} does not " \
                   "fit" in said, run["id"]  # fmt: skip
            train = run["gpus_by_role"]["training"]
            assert want * tp * cp * pp > train
        else:
            assert f"{name}_parallel_size {want} as the table row's layout" not in said
    roles = run["gpus_by_role"]
    assert sum(roles.values()) == run["gpus"]
    if run["off_policy_steps"]:
        gen = (s["policy.generation.colocated.resources.num_nodes"]
               * s["policy.generation.colocated.resources.gpus_per_node"])  # fmt: skip
        assert roles["generation"] == gen and not s["policy.generation.colocated.enabled"]
    else:
        assert roles == {"colocated": run["gpus"]} and s["policy.generation.colocated.enabled"]


def test_prompt_length_is_the_median_the_page_implies() -> None:
    """Tokens/sec/GPU x step time x GPUs / G-GBS is the tokens per sample; less G-Average Seq len
    it leaves the prompt. Median over the section's 18 rows: 112 (99..121 for 15 rows)."""
    implied = []
    for r in RUNS:
        o = r["published_other"]
        per_sample = o["tokens_per_s_per_gpu"] * r["published"] * r["gpus"] / (
            r["prompts_per_step"] * r["samples_per_prompt"])  # fmt: skip
        implied.append(per_sample - o["g_average_seq_len"])
    assert round(statistics.median(implied)) == 112
    assert sum(98.5 <= x < 121.5 for x in implied) == 15  # 99..121 rounded
    assert {r["prompt_len"] for r in RUNS} == {112}
