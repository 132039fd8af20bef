"""`rlmcost plan`'s GPU budget where --groups keeps every count.

`plan grpo -m 8b --groups "rollout=16@h20[tp=4],actor+reference=8@h100"` (a mixed pool as
issue 20 asks to plan) searched the default 8..64 budget (8, 16, 32, 64: `parse_gpus`), which
never holds the groups' 24 GPUs, and answered "every count is below one trainer replica plus one
engine replica; raise --gpus". Without --gpus the budget is now the groups' sum (as `rlmcost
grpo --groups` and `rlmcost placements` take it); a --gpus that leaves the sum out is one error
naming it. The sums below are the groups' own counts, added by hand.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.plan_query import DEFAULT_BUDGET, gpu_budget
from rlmcost.errors import SpecError

runner = CliRunner()
MIXED = "rollout=16@h20[tp=4],actor+reference=8@h100"


@pytest.mark.parametrize(("gpus", "groups", "budget"), [
    (None, None, DEFAULT_BUDGET),
    (None, MIXED, "24"),  # 16 + 8
    (None, "rollout=?,actor+reference=8", DEFAULT_BUDGET),  # a count to search: the range
    ("24", MIXED, "24"),
    ("8,24,32", MIXED, "8,24,32"),
    ("16", "rollout=?,actor+reference=8", "16"),
])  # fmt: skip
def test_the_budget(gpus: str | None, groups: str | None, budget: str) -> None:
    assert gpu_budget({"gpus": gpus, "groups": groups}) == budget


def test_a_budget_without_the_groups_sum_is_one_error() -> None:
    with pytest.raises(SpecError, match=r"24 GPUs in all, which --gpus 8\.\.64 \(8, 16, 32, 64\)"):
        gpu_budget({"gpus": "8..64", "groups": MIXED})
    res = runner.invoke(app, ["plan", "grpo", "-m", "8b", "--groups", MIXED, "--gpus", "16"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "give --gpus 24" in res.output


def test_fixed_groups_plan_on_their_sum() -> None:
    res = runner.invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--groups",
                              "rollout=2,actor+reference=2", "--top", "1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["query"]["gpus"] == [4]  # 2 + 2
    assert out["rows"] and all(row["gpus"] == 4 for row in out["rows"])
