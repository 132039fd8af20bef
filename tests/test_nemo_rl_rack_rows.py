"""NeMo RL GB200 MoE rows that span NVL72 racks without ``cluster.segment_size`` (issue 18):
their note, and their commands in random host order (rlmcost.placement.rank_order).

Source of the note: NeMo RL docs/cluster.md 'Topology-Aware Placement for MoE', added at
r0.7.0 by commit 5f172beaa, which also adds ``cluster.segment_size`` to the v0.7.0 GB200
performance recipes; the v0.5.0 and r0.6.0 recipes set none.
"""

from __future__ import annotations

import json
from importlib import resources

from rlmcost.specs import get_hardware

NOTE = "rack span, modelled by the rank order (issue 18)"


def _rows() -> list[dict]:
    text = resources.files("rlmcost.perf").joinpath("data", "rl_runs.json").read_text()
    return [r for r in json.loads(text)["runs"] if r["framework"] == "nemo-rl"]


def _spans_racks(row: dict) -> bool:
    """More GPUs than one NVLink domain holds (a GB200 'node' is the 72-GPU NVL72 rack)."""
    return row["gpus"] > get_hardware(row["hardware"]).gpus_per_node


def _moe(row: dict) -> bool:
    return row["framework_settings"].get("policy.megatron_cfg.expert_model_parallel_size", 1) > 1


def test_every_pre_v07_multi_rack_gb200_moe_row_carries_the_note() -> None:
    noted = [r["id"] for r in _rows() if any(NOTE in a for a in r["assumptions"])]
    expected = [
        r["id"] for r in _rows()
        if r["hardware"] == "gb200" and _moe(r) and _spans_racks(r)
        and r["source"] in ("nemo_rl_v0.5", "nemo_rl_v0.6")
    ]  # fmt: skip
    # 128- and 256-GPU DeepSeek-V3 and Qwen3-235B-A22B rows of v0.5/v0.6; a 64-GPU job fits a rack
    assert len(expected) == 6
    assert sorted(noted) == sorted(expected)


def test_note_names_the_setting_and_the_v07_counterpart() -> None:
    (row,) = [r for r in _rows() if r["id"] == "nemo-rl-v0.6-gb200-qwen3-235b-a22b-grpo-128gpu"]
    (note,) = [a for a in row["assumptions"] if NOTE in a]
    assert "cluster.segment_size" in note and "5f172beaa" in note
    # the published pair the note rests on: 286 s on 64 GPUs, 345 s on 128 (v0.6); 210 s at v0.7
    published = {r["id"]: r["published"] for r in _rows()}
    assert published["nemo-rl-v0.6-gb200-qwen3-235b-a22b-grpo-64gpu"] == 286
    assert published["nemo-rl-v0.6-gb200-qwen3-235b-a22b-grpo-128gpu"] == 345
    assert published["nemo-rl-v0.7-gb200-qwen3-235b-a22b-grpo-128gpu"] == 210
    assert "286 s on 64 GPUs" in note and "345 s on 128" in note and "210 s on 128" in note


def test_note_cites_the_measured_speedup_of_the_fix() -> None:
    # NeMo RL PR 2779 (2026-06-11): PRs 2612 (topology-aware placement) and 2613 (NUMA binding)
    # give ~1.35x on GB200 DeepSeek-V3 against the v0.6.0 recipe
    for row in _rows():
        for a in row["assumptions"]:
            if NOTE in a:
                assert "PR 2779" in a and "PR 2612" in a and "1.35x" in a


def test_their_commands_order_hosts_at_random_and_v07_rows_do_not() -> None:
    # virtual_cluster.py at r0.5.0/r0.6.0 sorts hosts by Ray node id; v0.7.0 by NVLink domain
    from rlmcost.reports.rl_runs import recipes

    gb200 = [r for r in recipes("nemo-rl") if r.record["hardware"] == "gb200"]
    assert len(gb200) == 23  # 5 of v0.5, 8 of v0.6, 10 of v0.7
    for r in gb200:
        random = "--rank-order random" in r.command
        assert random == (r.record["source"] in ("nemo_rl_v0.5", "nemo_rl_v0.6")), r.id
