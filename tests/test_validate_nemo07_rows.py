"""NeMo RL performance-summary.md 'NeMo RL v0.7' rows of rl_runs.json: every GRPO row rlmcost can
express (23 of 27: the 4 Nemotron-3-Super rows are a hybrid Mamba-2 model it cannot build), each
row's published figures equal the page's cells, its recipe settings (tag v0.7.0) give the table's
layout, the prompt length the page's own figures imply, and each row's command rebuilds its Run.

Reference: the page's table rows, copied below (spaces around the cells dropped) from
NVIDIA-NeMo/RL docs/about/performance-summary.md at commit c31fb937 (section 'NeMo RL v0.7'; the
page at tag v0.7.0 still shows the v0.6 section)."""

from __future__ import annotations

import re
import shlex
import statistics

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_rows import validate_rl_runs

DATA = load_runs()
RUNS = [r for r in DATA["runs"] if r["source"] == "nemo_rl_v0.7"]

PAGE = """
H100 BF16 Benchmarks
|GRPO|DeepSeek V3|On policy|1,536|722|256|512|512|[32,1]|[1,1,16,16,n/a]|17.8|93|
|GRPO|DeepSeek V3|On policy|1,536|724|512|512|512|[32,1]|[1,1,32,16,n/a]|10.2|81.2|
|GRPO|DeepSeek V3|1-step Off|1,536|729|512|512|512|[32,1]|[1,1,16,16,n/a]|18|46.6|
|GRPO|Qwen3-235B-A22B|On policy|8,192|5,719|128|512|512|[16,1]|[2,2,16,8,n/a]|63.7|367|
|GRPO|Qwen3-235B-A22B|On policy|8,192|5,698|256|512|512|[16,1]|[2,2,16,8,n/a]|40.8|285|
|GRPO|Qwen3-235B-A22B|1-step Off|8,192|5,695|256|512|512|[8,1]|[4,1,16,8,n/a]|58.3|204|
|GRPO|Qwen3-30B-A3B|On policy|4,096|3,198|32|2,048|2,048|[2,1]|[1,1,8,1,n/a]|1,232|171|
|GRPO|Qwen3-30B-A3B|1-step Off|4,096|3,203|32|2,048|2,048|[2,1]|[1,1,8,2,n/a]|1,522|141|
|GRPO|Qwen3-30B-A3B|8-step Off|4,096|3,203|192|2,048|512|[2,1]|[1,1,8,1,n/a]|1,067|33.1|
|GRPO|Qwen3-32B|1-step Off|4,096|3,258|64|2,048|2,048|[4,1]|[4,1,1,4,n/a]|675|161|
|GRPO|Qwen3-32B|On policy|4,096|3,256|32|2,048|2,048|[4,1]|[4,1,1,4,n/a]|665|323|
|GRPO|Qwen3-30B-A3B|On policy|40,960|8,170|32|2,048|512|[2,1]|[4,8,8,1,n/a]|262|2,022|
|GRPO|Nemotron-3-Super-120B-A12B|On policy|8,192|3,197|256|256|256|[8,1]|[4,1,32,1,n/a]|30.7|108|
|GRPO|Nemotron-3-Super-120B-A12B|1-step Off|8,192|3,207|256|256|256|[8,1]|[4,1,32,1,n/a]|48.6|71.9|
H100 FP8 Benchmarks
|GRPO|DeepSeek V3|1-step Off|1,536|738|512|512|512|[16,1]|[1,1,16,16,n/a]|14|61.9|
GB200 BF16 Benchmarks
|GRPO|DeepSeek V3|On policy|1,536|719|128|512|512|[32,1]|[1,1,16,8,n/a]|42|78.5|
|GRPO|DeepSeek V3|On policy|1,536|728|256|512|512|[32,1]|[1,1,32,8,n/a]|23.6|70.7|
|GRPO|DeepSeek V3|1-step Off|1,536|719|256|512|512|[16,1]|[1,1,16,8,n/a]|47.9|35|
|GRPO|Qwen3-235B-A22B|On policy|8,192|5,707|64|512|512|[8,1]|[2,2,16,4,n/a]|174|268|
|GRPO|Qwen3-235B-A22B|On policy|8,192|5,711|128|512|512|[8,1]|[2,2,16,4,n/a]|111|210|
|GRPO|Qwen3-235B-A22B|1-step Off|8,192|5,699|128|512|512|[8,1]|[4,1,16,4,n/a]|146|160|
|GRPO|Qwen3-30B-A3B|On policy|4,096|3,198|16|2,048|2,048|[1,1]|[1,1,16,1,n/a]|2,265|186|
|GRPO|Qwen3-30B-A3B|1-step Off|4,096|3,200|16|2,048|2,048|[1,1]|[1,1,8,1,n/a]|1,748|242|
|GRPO|Qwen3-32B|1-step Off|4,096|3,255|32|2,048|2,048|[1,1]|[2,1,1,1,n/a]|1,539|140|
|GRPO|Qwen3-32B|On policy|4,096|3,254|16|2,048|2,048|[2,1]|[2,1,1,4,n/a]|1,458|295|
|GRPO|Nemotron-3-Super-120B-A12B|On policy|8,192|3,219|128|256|256|[4,1]|[2,1,16,1,n/a]|56.5|119|
|GRPO|Nemotron-3-Super-120B-A12B|1-step Off|8,192|3,177|128|256|256|[4,1]|[2,1,16,1,n/a]|92.2|76|
"""
COLUMNS = ("algorithm", "model", "policy", "t_max", "g_avg", "gpus", "g_gbs", "t_gbs",
           "generation", "training", "tokens_per_s_per_gpu", "step_s")  # fmt: skip
OFF = {"On policy": 0, "1-step Off": 1, "8-step Off": 8}
M = "policy.megatron_cfg."


def _number(cell: str) -> int | float:
    v = float(cell.replace(",", ""))
    return int(v) if v.is_integer() else v


def _page() -> list[dict]:
    rows, table = [], ""
    for line in PAGE.strip().splitlines():
        if not line.startswith("|"):
            table = line
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append({"table": table, **dict(zip(COLUMNS, cells, strict=True))})
    return rows


PAGE_ROWS = _page()


def _page_row(run: dict) -> dict:
    """The page row a run cites: its table, model, policy, GPUs and T-Max."""
    cite = run["cite"]
    hits = [p for p in PAGE_ROWS
            if f"table '{p['table']}', row GRPO {p['model']} {p['policy']}, #-GPUs {p['gpus']}:"
            in cite and f"T-Max Sequence Length {p['t_max']}," in cite]  # fmt: skip
    assert len(hits) == 1, run["id"]
    return hits[0]


def test_every_expressible_row_of_the_section_is_in_once() -> None:
    assert len(PAGE_ROWS) == 27  # H100 BF16 14, H100 FP8 1, GB200 BF16 12
    assert len(RUNS) == 23 == len({r["id"] for r in RUNS})
    cited = [id(_page_row(r)) for r in RUNS]
    assert len(set(cited)) == 23
    left = [p for p in PAGE_ROWS if id(p) not in set(cited)]
    assert {p["model"] for p in left} == {"Nemotron-3-Super-120B-A12B"} and len(left) == 4
    assert "Mamba" in DATA["sources"]["nemo_rl_v0.7"]["title"]  # why they are left out


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r["id"])
def test_published_figures_are_the_pages_cells(run: dict) -> None:
    p = _page_row(run)
    s = run["framework_settings"]
    assert run["published"] == _number(p["step_s"])
    assert run["published_other"] == {"tokens_per_s_per_gpu": _number(p["tokens_per_s_per_gpu"]),
                                      "g_average_seq_len": _number(p["g_avg"])}  # fmt: skip
    assert run["mean_response_len"] == _number(p["g_avg"])
    assert run["gpus"] == _number(p["gpus"])
    assert run["prompts_per_step"] * run["samples_per_prompt"] == _number(p["g_gbs"])
    assert s["policy.train_global_batch_size"] == _number(p["t_gbs"])
    assert s["policy.max_total_sequence_length"] == _number(p["t_max"])
    assert run["off_policy_steps"] == OFF[p["policy"]]
    assert run["hardware"] == ("gb200" if p["table"].startswith("GB200") else "h100-sxm")
    assert ("fp8" in run["dtype"]) == ("FP8" in p["table"])


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r["id"])
def test_recipe_settings_give_the_tables_layout(run: dict) -> None:
    """Generation [TP,PP] and Training [TP,CP,EP,PP] are the recipe's keys at tag v0.7.0 for
    every row (no disagreement between table and recipe in this section)."""
    p = _page_row(run)
    s = run["framework_settings"]
    gen = [int(x) for x in p["generation"].strip("[]").split(",")]
    train = [int(x) for x in p["training"].strip("[]").split(",")[:4]]
    assert [s["policy.generation.vllm_cfg.tensor_parallel_size"],
            s["policy.generation.vllm_cfg.pipeline_parallel_size"]] == gen  # fmt: skip
    assert [s[M + k] for k in ("tensor_model_parallel_size", "context_parallel_size",
                               "expert_model_parallel_size", "pipeline_model_parallel_size")
            ] == train  # fmt: skip
    roles = run["gpus_by_role"]
    assert sum(roles.values()) == run["gpus"]
    if run["off_policy_steps"]:
        gen_gpus = (s["policy.generation.colocated.resources.num_nodes"]
                    * s["policy.generation.colocated.resources.gpus_per_node"])  # fmt: skip
        assert roles["generation"] == gen_gpus and not s["policy.generation.colocated.enabled"]
        assert s["grpo.async_grpo.max_trajectory_age_steps"] == run["off_policy_steps"]
    else:
        assert roles == {"colocated": run["gpus"]} and s["policy.generation.colocated.enabled"]
    assert "at tag v0.7.0" in run["cite"] and "at tag v0.7.0 is the configuration" in \
        run["assumptions"][0]  # fmt: skip


def test_prompt_length_is_the_median_the_page_implies() -> None:
    """Tokens/sec/GPU x step time x GPUs / G-GBS is the tokens per sample; less G-Average Seq len
    it leaves the prompt. Median over the 23 rows: 109.8 (93..122 for 17 rows)."""
    implied = []
    for r in RUNS:
        o = r["published_other"]
        per_sample = o["tokens_per_s_per_gpu"] * r["published"] * r["gpus"] / (
            r["prompts_per_step"] * r["samples_per_prompt"])  # fmt: skip
        implied.append(per_sample - o["g_average_seq_len"])
    assert round(statistics.median(implied)) == 110
    assert sum(92.5 <= x < 122.5 for x in implied) == 17
    assert {r["prompt_len"] for r in RUNS} == {110}
    for r in RUNS:
        assert r["prompt_len"] + r["max_response_len"] == r["framework_settings"][
            "policy.max_total_sequence_length"]  # fmt: skip


@pytest.fixture(scope="module")
def report():
    return validate_rl_runs(run_from_argv, "nemo_rl_v0.7")


def test_every_row_is_predicted_and_its_command_rebuilds_it(report) -> None:
    assert [r.recipe.id for r in report.rows] == [r["id"] for r in RUNS]
    for r in report.rows:
        assert r.status == "ok" and r.run is not None and r.predicted_s
        words = shlex.split(r.recipe.command)
        assert words[:2] == ["rlmcost", r.recipe.query.algorithm]
        rebuilt = run_from_argv(words[1], words[2:])
        assert (rebuilt.replace(**r.recipe.overlay) if r.recipe.overlay else rebuilt) == r.run


def test_force_on_policy_ratio_drops_the_old_log_prob_forward(report) -> None:
    """loss_fn.force_on_policy_ratio (nemo_rl/algorithms/grpo.py at v0.7.0: skip_prev_logprobs):
    true in 21 recipes, false in the 40,960-token and 8-step off-policy ones (T-GBS 512 < G-GBS
    2,048); the prediction then has no old-log-prob phase."""
    forced = 0
    for r in report.rows:
        s = r.recipe.record["framework_settings"]
        words = r.recipe.argv
        phases = dict(r.predicted_phases_s)
        if s["loss_fn.force_on_policy_ratio"]:
            forced += 1
            assert "--no-recompute-logprobs" in words, r.recipe.id
            assert s["policy.train_global_batch_size"] == r.recipe.record["prompts_per_step"] * \
                r.recipe.record["samples_per_prompt"]  # fmt: skip
        else:
            assert "--no-recompute-logprobs" not in words, r.recipe.id
        assert ("old log-prob" in phases) != bool(s["loss_fn.force_on_policy_ratio"]), r.recipe.id
    assert forced == 21


def test_deepseek_rows_decode_speculatively_with_the_mtp_layer(report) -> None:
    """The DeepSeek-V3 recipes at v0.7.0 (commit 2369c0aec) set vllm_kwargs.speculative_config
    method deepseek_mtp, num_speculative_tokens 1: the importer maps it to
    --speculative-tokens 1 (the MTP draft), the rows say so, and no other row speculates."""
    for r in report.rows:
        s = r.recipe.record["framework_settings"]
        spec = s.get("policy.generation.vllm_kwargs.speculative_config.method")
        said = any(a.startswith("speculative decoding modelled")
                   for a in r.recipe.record["assumptions"])  # fmt: skip
        words = r.recipe.argv
        flagged = "--speculative-tokens" in words
        assert (spec == "deepseek_mtp") == (r.recipe.record["model"] == "deepseek-v3") == said \
            == flagged, r.recipe.id  # fmt: skip
        if flagged:
            assert words[words.index("--speculative-tokens") + 1] == "1", r.recipe.id
            assert r.run is not None and r.run.deployment.engine.speculative_tokens == 1


def test_ids_name_hardware_policy_and_gpus() -> None:
    for r in RUNS:
        hw = "gb200" if r["hardware"] == "gb200" else "h100"
        assert re.fullmatch(rf"nemo-rl-v0\.7-{hw}-{re.escape(r['model'])}-grpo(-40k)?"
                            rf"(-{r['off_policy_steps']}off)?(-fp8)?-{r['gpus']}gpu", r["id"])
        assert bool(r["off_policy_steps"]) == (f"-{r['off_policy_steps']}off-" in r["id"])
