"""Inputs the planner used to take silently (audit of issue 20): a GPU list with an empty
entry, a TP the actor's shape rules out, a budget above a pool's GPUs; and the price of a
mixed-hardware query through the API (``rlmcost.estimate(..., price=...)``, as
``rlmcost.plan`` and ``--price`` take it).

References: Llama-3.1-70B's config.json (64 query heads, 8 KV heads); the cost by hand,
predicted seconds x sum(GPUs x USD per GPU-hour) / 3600 (rlmcost.specs.prices' definition),
with the H100 SXM at its cited list price, 3.78 USD per GPU-hour (data/prices.json).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import rlmcost
from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.plan.kinds import parse_gpus
from rlmcost.specs.prices import list_prices

runner = CliRunner()


@pytest.mark.parametrize("text", ["8,,16", "8,", ",8", "8.."])
def test_a_gpu_list_with_an_empty_entry_is_refused(text: str) -> None:
    with pytest.raises(SpecError, match="not a GPU budget"):
        parse_gpus(text)
    res = runner.invoke(app, ["plan", "ppo", "-m", "70b", "--gpus", text])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "error: --gpus" in res.output


def test_the_range_error_says_what_is_wrong() -> None:
    with pytest.raises(SpecError, match="1 <= low <= high"):
        parse_gpus("64..8")
    assert parse_gpus("8..48") == (8, 16, 32, 48)  # the lower end, doubling, the upper end


@pytest.mark.parametrize(("flag", "value", "fragment"), [
    ("--rollout-tp", "3", "try one of 1, 2, 4, 8, 16"),  # 64 heads: the engine's divisors
    ("--tp", "3", "try one of 1, 2, 4, 8"),  # 8 KV heads bound the trainer's TP
    ("--tp", "16", "kv heads=8"),
    ("--tp", "2,3", "--tp 3"),
])  # fmt: skip
def test_a_tp_the_actor_rules_out_is_one_line_before_the_search(flag: str, value: str,
                                                                fragment: str) -> None:
    res = runner.invoke(app, ["plan", "ppo", "-m", "70b", "--gpus", "8", flag, value])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert fragment in res.output
    assert len([ln for ln in res.output.splitlines() if ln.strip()]) == 1


def test_a_budget_above_the_pool_is_said() -> None:
    res = runner.invoke(app, [
        "plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "--hardware", "h20:4,h100:4",
        "--gpus", "16", "--tp", "1", "--rollout-tp", "1", "--micro-batch", "1", "--ckpt",
        "full", "--placements", "baseline,split", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert "--gpus 16: more than the pool's 8 GPUs; searched 8" in out["notes"]
    assert out["rows"] and all(r["gpus"] <= 8 for r in out["rows"])


def test_estimate_takes_a_price_for_a_mixed_hardware_query() -> None:
    groups = "rollout=16@h20[tp=4],actor+reference=8@h100"
    run = rlmcost.run_of("grpo", "qwen2.5-32b", groups=groups, reward="rule", price="h20=1.2")
    assert run.cluster.prices == {"h20": 1.2}
    e = rlmcost.estimate("grpo", "qwen2.5-32b", groups=groups, reward="rule",
                         price={"h20": 1.2})  # fmt: skip
    j = e.to_json()
    # by hand: 16 H20 at the given 1.2 and 8 H100 SXM at the cited list price, per hour
    usd_per_s = (16 * 1.2 + 8 * list_prices()["h100-sxm"]) / 3600
    assert j["cost"]["per_iteration_usd"] == pytest.approx(j["iteration"]["time_s"] * usd_per_s)
    assert j["cost"]["usd_per_gpu_hour"] == {"h20": 1.2, "h100-sxm": 3.78}
    with pytest.raises(SpecError, match="positive number of USD per GPU-hour"):
        rlmcost.estimate("grpo", "qwen2.5-32b", price={"h20": -1})


def test_one_accelerator_families_on_a_pool_too_small_for_them_say_why() -> None:
    # the pool's largest type has 8 GPUs; async and combined run on one type (plan.pool)
    res = runner.invoke(app, ["plan", "ppo", "-m", "8b", "--hardware", "h20:8,h100:8",
                              "--placements", "async,combined", "--gpus", "16"])  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "run on one accelerator type (at most 8 GPUs here)" in res.output
    assert "raise --gpus" not in res.output  # more GPUs cannot help here


@pytest.mark.parametrize(("groups", "fragment"), [
    ("rollout=?[tp=3],actor+reference=?,critic+reward=?", "--groups rollout=?[tp=3]: the engine"),
    ("rollout=?,actor+reference=?[tp=3],critic+reward=?", "actor+reference=?[tp=3]: the trainer"),
])  # fmt: skip
def test_a_bracket_tp_the_actor_rules_out_is_one_line(groups: str, fragment: str) -> None:
    # Llama-3.1-70B: 64 heads, 8 KV heads (its config.json); before: 'nothing fits: raise --gpus'
    res = runner.invoke(app, ["plan", "ppo", "-m", "70b", "--gpus", "8", "--groups", groups])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert fragment in res.output


def test_a_cost_objective_for_training_layouts_is_one_line() -> None:
    """`plan train` prices nothing (its rows have no $ columns): --objective cost was a
    KeyError traceback from the bound's preselection; it is refused up front, in the CLI and
    the library, naming gpu-hours (the same order on one accelerator)."""
    res = runner.invoke(app, ["plan", "train", "-m", "llama-3.2-1b", "--gpus", "8",
                              "--objective", "cost"])  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "gpu-hours" in lines[0], res.output
    with pytest.raises(SpecError, match="gpu-hours"):
        rlmcost.plan("train", "llama-3.2-1b", 8, objective="cost")


@pytest.mark.parametrize("price", [[1.2], 1.2, ("h20", 1.2)])
def test_a_price_that_is_not_a_mapping_is_one_line(price: object) -> None:
    """``price=[1.2]`` was an AttributeError ('list' object has no attribute 'items') from
    both rlmcost.estimate and rlmcost.plan; a SpecError says what a price is."""
    with pytest.raises(SpecError, match="mapping hardware -> USD per GPU-hour"):
        rlmcost.estimate("grpo", "llama-3.2-1b", price=price)
    with pytest.raises(SpecError, match="mapping hardware -> USD per GPU-hour"):
        rlmcost.plan("grpo", "llama-3.2-1b", 8, price=price)


def test_groups_that_keep_more_gpus_than_the_budget_say_so() -> None:
    """`--groups rollout=12,actor+reference=?` on 8 GPUs was refused as "every count is below
    one trainer replica (tp*pp) plus one engine replica", which names neither the groups nor
    the 13 GPUs they need (12 kept, at least 1 for the '?' group)."""
    res = runner.invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "8",
                              "--groups", "rollout=12,actor+reference=?"])  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "needs at least 13 GPUs" in lines[0], res.output
    # at the budget they fit in, the same groups plan
    ok = runner.invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "16", "--reward",
                             "rule", "-B", "16", "-K", "4", "--groups",
                             "rollout=12,actor+reference=?", "--tp", "1", "--rollout-tp", "1",
                             "--micro-batch", "1", "--ckpt", "full", "--json"])  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert {r["groups"] for r in json.loads(ok.stdout)["rows"]} == {
        "rollout=12,actor+reference=4"}  # fmt: skip


def test_the_longest_response_on_a_pool_names_the_rows_accelerators() -> None:
    """`--max-response-len` on the pool h20:4,h100:4 printed "fits on 8 x h20" (the base
    Run's hardware) for a deployment on 4 H20 and 4 H100; the line names the row's GPUs."""
    args = ["plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "8", "-K", "4",
            "--hardware", "h20:4,h100:4", "--gpus", "8", "--placements", "split",
            "--tp", "1", "--rollout-tp", "1", "--micro-batch", "1", "--ckpt", "full",
            "--max-response-len"]  # fmt: skip
    res = runner.invoke(app, args, env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    row = json.loads(runner.invoke(app, [*args, "--json"]).stdout)["deployment"]
    (line,) = [ln for ln in res.output.splitlines() if ln.startswith("longest response")]
    assert line.startswith(f"longest response that fits on {row['hardware']}: "), line
    # engines apart on a pool of 4 + 4: each group on its own type, never 8 of one
    assert "4 x h20" in line and "4 x h100-sxm" in line, line


@pytest.mark.parametrize(("groups", "fragment"), [
    ("rollout=?@b200,actor+reference=?", "puts a group on b200, which the pool"),
    ("rollout=12@h20,actor+reference=?", "keeps at least 12 GPUs on h20"),
])  # fmt: skip
def test_groups_the_pool_cannot_hold_say_why(groups: str, fragment: str) -> None:
    """On the pool h20:8,h100:8 a group kept on a B200 or 12 GPUs kept on the H20 left no
    valid candidate, and the error advised --gpus up to 8 or other --placements, neither of
    which is the cause."""
    res = runner.invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--hardware",
                              "h20:8,h100:8", "--gpus", "16", "--groups", groups],
                        env={"COLUMNS": "400"})  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and fragment in lines[0], res.output


def test_a_budget_above_the_pool_searches_the_whole_pool() -> None:
    """--gpus 2..8 on a pool of 6 GPUs (h20:4,h100:2): 8 is more than the pool, so the pool's
    6 is searched in its place (it had been dropped: 2 and 4 alone, two of the six GPUs never
    used by any row)."""
    res = runner.invoke(app, [
        "plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "--hardware", "h20:4,h100:2",
        "--gpus", "2..8", "--tp", "1", "--rollout-tp", "1", "--micro-batch", "1", "--ckpt",
        "full", "--placements", "split", "--top", "40", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert "--gpus 8: more than the pool's 6 GPUs; searched 2, 4, 6" in out["notes"]
    assert out["query"]["gpus"] == [2, 4, 6]  # what was searched
    assert 6 in {r["gpus"] for r in out["best_per_topology"]}


def test_degrees_that_divide_no_gpu_count_are_refused_up_front() -> None:
    """--cp 3 on 8 GPUs: every candidate's evaluation rejects tp*pp*cp = 3 (dp = gpus /
    (tp*pp*cp), deployment/resolve.py resolve_layout), and the plan had printed every family
    as never fitting, "more GPUs do not mend it"; a budget with 12 in it is searched."""
    res = runner.invoke(app, ["plan", "grpo", "-m", "8b", "--gpus", "8", "--cp", "3"])
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "divides none of the budget's GPU counts (8)" in res.output
    assert "give --gpus a multiple of 3" in res.output
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.plan.rl_space import check_degrees

    check_degrees(RLSpace(cp=(3,)), "8,12")  # 12 holds it: no error
    check_degrees(RLSpace(tp=(8,)), "4")  # above every count: the search's own message
