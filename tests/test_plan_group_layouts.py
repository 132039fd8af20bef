"""`rlmcost plan --json` rows say what each device group runs (``group_layouts``,
rlmcost.plan.rl_groups): a group's ``--groups`` bracket replaces the row's run-wide trainer
values on that group, so a planner reading the row's ``tp`` alone could not tell a PPO
critic's TP from the actor's. The independent reference is the row's command evaluated by
`rlmcost <algorithm> --json`: the layout each job of its ``placement_detail`` ran with.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
from typer.testing import CliRunner

import rlmcost
from rlmcost.cli import app
from rlmcost.plan.rl_candidates import RLSpace

runner = CliRunner()

KINDS = {"train": "train", "forward": "forward", "generate": "engine"}


def _json(*args: str) -> dict[str, Any]:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _agrees_with_its_command(row: dict[str, Any]) -> None:
    """Each job of the row's command's own evaluation ran with its group's entry (dp, tp,
    pp, and zero but for an engine: what a job's JSON layout lists), and the groups are the
    same (a command of groups apart: its ``placement_detail``)."""
    detail = _json(*shlex.split(row["command"])[1:])["placement_detail"]
    own = {g["name"]: g for g in row["group_layouts"]}
    assert [g["name"] for g in detail["groups"]] == list(own)
    for g in detail["groups"]:
        assert (own[g["name"]]["gpus"], own[g["name"]]["hardware"]) == (g["gpus"], g["hardware"])
        ran = {KINDS[j["kind"]] for j in g["jobs"]}
        assert {k for k in KINDS.values() if own[g["name"]][k] is not None} == ran
        for j in g["jobs"]:
            entry = own[g["name"]][KINDS[j["kind"]]]
            shared = {"dp", "tp", "pp"} | ({"zero"} if j["kind"] != "generate" else set())
            assert {k: entry[k] for k in shared} == {k: j["layout"][k] for k in shared}


def test_a_critic_without_the_bracket_trains_at_the_run_wide_tp() -> None:
    out = _json("plan", "ppo", "-m", "8b", "--groups",
                "rollout=8,actor+reference=8[tp=2;offload=optimizer],critic+reward=8",
                "--top", "8")  # fmt: skip
    rows = out["rows"]
    assert len({r["tp"] for r in rows}) > 1  # the critic's TP stays searched
    for row in rows:
        groups = {g["name"]: g for g in row["group_layouts"]}
        actor, critic = groups["actor+reference"], groups["critic+reward"]
        assert (actor["train"]["tp"], actor["forward"]["tp"]) == (2, 2)
        assert actor["train"]["offload"] == "optimizer"
        assert critic["train"]["tp"] == critic["forward"]["tp"] == row["tp"]
        assert critic["train"]["offload"] == row["offload"]
        assert groups["rollout"]["engine"]["tp"] == row["rollout_tp"]
        assert groups["rollout"]["train"] is groups["rollout"]["forward"] is None
        assert actor["engine"] is None
    _agrees_with_its_command(rows[0])
    _agrees_with_its_command(next(r for r in rows if r["tp"] != 2))


def test_a_hybrid_row_trains_at_tp_1_under_zero_3_whatever_its_tp() -> None:
    """Under hybrid execution training runs ZeRO-3 over the whole group at TP 1, generation
    and forwards at the row's TPs (the source paper's hybrid configuration, §IV-D;
    placement.inputs._replica): a row's ``tp`` is its forwards'."""
    rows = _json("plan", "grpo", "-m", "8b", "--placements", "hybrid", "--gpus", "8",
                 "--tp", "2", "--top", "2")["rows"]  # fmt: skip
    assert rows and {r["tp"] for r in rows} == {2}
    for row in rows:
        (g,) = row["group_layouts"]
        assert (g["name"], g["gpus"]) == ("all", 8)
        assert (g["train"]["tp"], g["train"]["dp"], g["train"]["zero"]) == (1, 8, "3")
        assert (g["forward"]["tp"], g["forward"]["dp"]) == (2, 4)
        assert g["engine"]["tp"] == row["rollout_tp"]
    got = _json(*shlex.split(rows[0]["command"])[1:])
    assert got["iteration"]["time_s"] == pytest.approx(rows[0]["time_s"], rel=1e-12)


def test_every_shown_row_has_them_and_the_api_frame_too() -> None:
    out = _json("plan", "grpo", "-m", "8b", "--gpus", "16", "--top", "2")
    shown = [*out["rows"], *out["pareto"], *out["best_per_topology"]]
    assert len({r["family"] for r in shown}) > 2
    for row in shown:
        groups = row["group_layouts"]
        assert sum(g["gpus"] for g in groups) == row["gpus"]
        assert sum(g["engine"] is not None for g in groups) >= 1
        assert sum(g["train"] is not None for g in groups) >= 1
    df = rlmcost.plan("grpo", "8b", 24, top=1, space=RLSpace(
        groups="rollout=16,actor+reference=8[tp=2]"))  # fmt: skip
    (actor,) = [g for g in df["group_layouts"][0] if g["name"] == "actor+reference"]
    assert actor["train"]["tp"] == 2


def test_the_table_marks_what_a_group_runs_apart_from_the_row() -> None:
    """No brackets, yet the hybrid group trains at TP 1 (its group_layouts, checked against the
    row's command above): the table's tp cell is marked; its ZeRO 3 and micro-batch, which
    the group's training runs as the row says, are not."""
    args = ["plan", "grpo", "-m", "8b", "--placements", "hybrid", "--gpus", "8", "--tp", "2",
            "--top", "2"]  # fmt: skip
    rows = _json(*args)["rows"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    head = next(x for x in lines if "engine tp" in x).split("┃")
    cells = [{h.strip(): v.strip() for h, v in zip(head, x.split("│"), strict=True)}
             for x in lines if x.startswith("│ ")]  # fmt: skip
    assert len(cells) == len(rows)
    for c, row in zip(cells, rows, strict=True):
        (g,) = row["group_layouts"]
        assert g["train"]["tp"] != row["tp"] and c["tp"] == f"{row['tp']}*"
        assert (c["zero"], c["mb"]) == (row["zero"], str(row["micro_batch"]))
        assert c["engine tp"] == str(row["rollout_tp"])  # the engine runs the row's rollout TP
