"""`rlmcost plan` rows say the engine TP that runs, and the title the GPUs they run on, where
``--groups`` gives the engines their own TP (issue 20's mixed pool:
``--groups "rollout=16@h20[tp=4],actor+reference=8@h100"``).

A group's ``tp=`` sets its engine's layout too (``rlmcost.placement.inputs._replica``: the
group's settings over the engine's TP), so the rollout group generates at TP 4 whatever the
run-wide ``--rollout-tp`` says. The plan had shown the run-wide engine TP (1) in the row and
its command, enumerated four engine TPs that evaluate alike (merged afterwards), titled the
table "on h100-sxm" and lost the group's ``[tp=4]`` in the text table (rich read it as
markup). The reference for "what runs" is the evaluation itself: the generate job's layout
on the rollout group of the row's own Run.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import rlmcost
from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.plan.families import free_groups
from rlmcost.plan.rl import RLSpace
from rlmcost.plan.rl_candidates import _algorithm
from rlmcost.plan.rl_space import groups_engine_tp
from rlmcost.reports.estimate import run_of
from rlmcost.run.spec import Run

runner = CliRunner()
MIXED = "rollout=16@h20[tp=4],actor+reference=8@h100"


def _generate_tp(run: Run) -> int:
    """The TP the row's Run generates at: its rollout group's generate job's layout."""
    e = evaluate_deployment(run)
    (tp,) = {j.layout.tp for g in e.groups for j in g.jobs if j.task.kind == "generate"}
    return tp


def test_the_row_shows_the_rollout_groups_own_tp() -> None:
    res = runner.invoke(app, ["plan", "grpo", "-m", "8b", "--groups", MIXED, "--top", "3",
                              "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["rows"] and all(r["rollout_tp"] == 4 for r in out["rows"])
    assert all("--rollout-tp 4 " in r["command"] for r in out["rows"])
    assert _generate_tp(Run.from_data(out["rows"][0]["run"])) == 4
    # one engine TP tried, not the four (1, 2, 4, 8) that all generate at TP 4: the default
    # space's 4 trainer TPs x ckpt none, full x micro-batch 1, 2 x offload off, on (RLSpace)
    assert out["counts"]["enumerated"] == 4 * 2 * 2 * 2


def test_the_text_names_the_fleet_the_groups_and_the_engine_tp() -> None:
    res = runner.invoke(app, ["plan", "grpo", "-m", "8b", "--groups", MIXED, "--top", "2"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "plan: grpo 8b on 16 x h20 + 8 x h100-sxm, best by time" in lines[0]
    head = next(x for x in lines if "engine tp" in x).split("┃")
    row = next(x for x in lines if x.startswith("│ 1 ")).split("│")
    cell = {h.strip(): v.strip() for h, v in zip(head, row, strict=True)}
    assert cell["groups"] == "rollout=16@h20[tp=4],actor+reference=8@h100-sxm"
    assert cell["engine tp"] == "4"


def test_searched_counts_step_by_the_groups_engine_tp() -> None:
    res = runner.invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "12", "--groups",
                              "rollout=?[tp=4],actor+reference=?", "--top", "40", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["rows"]
    rollout = {int(r["groups"].split(",")[0].split("=")[1].split("[")[0]) for r in rows}
    assert rollout and all(n % 4 == 0 for n in rollout)  # whole TP-4 engines: 4, 8
    assert {r["rollout_tp"] for r in rows} == {4}


@pytest.mark.parametrize(("groups", "tp"), [
    ("rollout=?[tp=4],actor+reference=?", 4),
    ("rollout=?[tp=4;gmu=0.8],actor+reference=?[tp=2]", 4),
    ("rollout=?,actor+reference=?[tp=2]", None),  # the engines read the run-wide TP
    ("actor+reference=?[tp=2]", 2),  # the actor generates on its own group: its TP
    ("rollout=?,actor+reference=?", None),
])  # fmt: skip
def test_the_engine_tp_a_family_fixes(groups: str, tp: int | None) -> None:
    alg = _algorithm(run_of("grpo", "llama-3.2-1b", reward="rule"))
    assert groups_engine_tp(alg, free_groups(groups)) == tp


def test_the_library_refuses_a_budget_without_the_kept_sum() -> None:
    """rlmcost.plan.pool.check_groups: groups that keep every count run on their sum alone
    (16 + 8 = 24), which the budget 8..64 (8, 16, 32, 64) does not hold; the CLI's
    gpu_budget says so (tests/test_cli_plan_budget.py), the library too."""
    for gpus in ("8..64", 32):
        with pytest.raises(SpecError, match=r"keeps every count, 24 GPUs in all, which the "
                                            r"GPU counts searched \((8, 16, 32, 64|32)\)"):
            rlmcost.plan("grpo", "8b", gpus, space=RLSpace(groups=MIXED), top=1)
    df = rlmcost.plan("grpo", "8b", 24, space=RLSpace(groups=MIXED), top=1)
    assert list(df["gpus"]) == [24] and list(df["rollout_tp"]) == [4]
