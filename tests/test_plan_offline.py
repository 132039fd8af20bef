"""`rlmcost plan dpo`: an offline method runs no generation in its loop (Algorithm.offline,
Table IV's dagger), so the plan searches no family with a rollout group or an overlap
(rlmcost.plan.families.OFFLINE_FAMILIES) and its rows name no engine. It had searched the
default five families: 1600 of 2368 candidates evaluated for 8B on 16 GPUs, 53 families listed
as never fitting ("rejected: --placement async overlaps rollout with training, but dpo is
offline"), and rows that differed only in an engine reservation no engine reads (0.5, 0.9)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import rlmcost
from rlmcost.cli import app
from rlmcost.plan.families import OFFLINE_FAMILIES, searched_families


def test_the_default_families_of_an_offline_method_run_no_rollout() -> None:
    assert searched_families(None, None, None, offline=True) == ("baseline",)
    assert searched_families(None, None, "verl", offline=True) == ("baseline", "hybrid")
    assert searched_families(None, None, "slime", offline=True) == ("baseline",)
    # what the user names is searched as named (the evaluation says why it does not apply)
    assert searched_families(("split",), None, None, offline=True) == ("split",)
    assert set(OFFLINE_FAMILIES) >= {"baseline"}


def test_dpo_rows_name_no_engine_and_nothing_is_rejected() -> None:
    res = CliRunner().invoke(app, ["plan", "dpo", "-m", "llama-3.2-1b", "--gpus", "8",
                                   "--top", "40", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    rows = [*data["rows"], *data["best_per_topology"]]
    assert rows and data["never_fit"] == []
    assert {r["family"] for r in rows} == {"baseline"}
    for r in rows:
        assert (r["rollout_tp"], r["gpu_memory_utilization"], r["kv_buffer_gib"]) == \
            (None, None, None)  # fmt: skip
        assert all(g["engine"] is None for g in r["group_layouts"])
    # no two rows are the same deployment (the reservation had doubled them)
    keys = [(r["tp"], r["zero"], r["ckpt"], r["micro_batch"], r["offload"])
            for r in data["rows"]]  # fmt: skip
    assert len(set(keys)) == len(keys) > 1


def test_the_library_plans_it_alike() -> None:
    df = rlmcost.plan("dpo", "llama-3.2-1b", 8, top=3)
    assert set(df["family"]) == {"baseline"} and df["rollout_tp"].isna().all()
