"""What the RL plan reports beside its rows: why a family never fit (a memory term, or why it
is invalid, never a 0 B memory), what ``--min-gpus`` ranks under an objective, and the
advice of a pool no family spans (only families the asked framework launches)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.plan.families import FRAMEWORK_FAMILIES
from rlmcost.plan.rl import _failed, plan_rl
from rlmcost.plan.rl_candidates import RLSpace
from rlmcost.run.spec import Run

runner = CliRunner()
HBM = 80 * 10**9


def _cli(*args: str) -> tuple[int, str]:
    res = runner.invoke(app, list(args), env={"COLUMNS": "250"})
    return res.exit_code, res.output


def test_a_family_with_a_member_short_of_memory_reports_its_memory_term() -> None:
    # PPO 70B, 2 prompts on 8 H100s: the engines apart at a 0.5 reservation leave no KV room
    # for one sequence (a problem, no memory term), the others run out of memory; the family's
    # line named the problem with 0 bytes. Its leanest member's memory term says more.
    code, out = _cli("plan", "ppo", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-B", "2", "-K",
                     "1", "-S", "1024", "-T", "1024", "--gpus", "8", "--placements", "split",
                     "--json")  # fmt: skip
    assert code == 0, out
    never = json.loads(out)["never_fit"]
    assert never
    for f in never:
        assert not f.get("invalid") and f["binding_term_bytes"] > 0, f


def test_a_family_every_member_of_which_is_invalid_says_why() -> None:
    # GRPO 8B, 1 prompt x 2 samples: 2 sequences cannot feed 4 or more engine replicas
    # (placement/inputs.py's replica rule); more GPUs do not mend it
    args = ["plan", "grpo", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-B", "1", "-K", "2",
            "--gpus", "16", "--placements", "split", "--rollout-tp", "1"]  # fmt: skip
    code, out = _cli(*args, "--json")
    assert code == 0, out
    never = json.loads(out)["never_fit"]
    assert never and all(f.get("invalid") and "cannot feed" in f["binding_term"] for f in never)
    code, text = _cli(*args)
    assert code == 0 and " 0 B " not in text and "│ invalid │" in text, text
    assert "more GPUs do not mend it" in text


def test_a_memory_failure_outranks_an_invalid_member_of_the_same_family() -> None:
    failures: dict = {}
    invalid = {"binding_term": "rejected: no", "invalid": True}
    short = {"binding_term": "weights (actor train on all)", "binding_term_bytes": 9,
             "shortfall_bytes": 5}  # fmt: skip
    _failed(failures, "f", invalid, HBM)
    _failed(failures, "f", short, HBM)  # replaces the invalid one
    _failed(failures, "f", invalid, HBM)  # does not replace the memory term
    assert failures["f"]["binding_term"].startswith("weights")
    assert failures["f"]["invalid"] is False


def test_min_gpus_ranks_every_deployment_of_the_fewest_gpus_by_the_objective() -> None:
    # before, --min-gpus stopped at the first batch of leanest candidates that fit and ranked
    # those: $1.850 an iteration on 8 GPUs where the count's cheapest is $1.830
    query = ["plan", "ppo", "-m", "llama-3.1-70b", "-H", "h100-sxm", "-B", "64", "-K", "1",
             "-S", "1024", "-T", "1024", "--objective", "cost", "--json"]  # fmt: skip
    code, out = _cli(*query, "--min-gpus")
    assert code == 0, out
    fewest = json.loads(out)
    g = fewest["rows"][0]["gpus"]
    code, out = _cli(*query, "--gpus", str(g), "--top", str(len(fewest["rows"])))
    assert code == 0, out
    every = json.loads(out)
    assert [r["command"] for r in fewest["rows"]] == [r["command"] for r in every["rows"]]
    assert any("best by cost of every deployment on that count" in n for n in fewest["notes"])


@pytest.mark.parametrize("framework", sorted(FRAMEWORK_FAMILIES))
def test_the_pool_advice_names_only_families_the_framework_launches(framework: str) -> None:
    # 4 H20 + 4 H100 for 8 GPUs: only families of groups apart can span two types
    base = Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.1-8b"},
        "workload": {"prompts": 16, "samples_per_prompt": 4},
        "deployment": {"framework": framework}, "cluster": {"hardware": "h20"}})  # fmt: skip
    space = RLSpace(placements=("baseline",), pool=(("h20", 4), ("h100-sxm", 4)))
    with pytest.raises(SpecError) as err:
        plan_rl(base, 8, space=space)
    text = str(err.value)
    launched = FRAMEWORK_FAMILIES[framework]
    if "--placements " in text:
        named = text.split("--placements ")[1].split(" ")[0].split(",")
        assert set(named) <= set(launched), (framework, named)
    else:  # verl: its hybrid engine co-locates everything (baseline, hybrid)
        assert f"--framework {framework} launches only" in text
        assert f"{framework}:" not in text.split("groups apart can each take a type")[1]
