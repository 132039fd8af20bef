"""Captions that define their columns: `rlmcost placements` ("back to back", "weight sync") and
`rlmcost hardware` (HBM and usable).

"back to back" is the stages' roofline bounds summed (`PlacementEstimate.stage_sum_s`: 8.04 s
for PPO 8B on 16 H100 where the predicted iteration is 30.4 s), and "weight sync" the bytes sent
between device groups (`PlacementEstimate.weight_sync_bytes`, the cross-group syncs): the
co-located baseline shows 0 B while its engine is refitted in place (a 'weight-sync' transfer
of its group, which `rlmcost ppo --placement baseline` lists). The caption had called the first
"the stages' times summed" and left the second undefined.
"""

from typer.testing import CliRunner

import rlmcost
from rlmcost.cli import app


def test_the_columns_are_defined_as_computed():
    e = rlmcost.estimate("ppo", "llama-3.2-1b", gpus=8, placement="baseline").evaluation
    bounds = sum(s.time_lower_bound_s for s in e.stages.values())
    assert e.stage_sum_s == bounds  # back to back: the bounds, not the predicted times
    in_group = sum(t.bytes for g in e.groups for t in g.transfers if t.kind == "weight-sync")
    assert e.weight_sync_bytes == 0 < in_group  # the in-place refit is not in the column
    r = CliRunner().invoke(app, ["placements", "-m", "llama-3.2-1b", "--gpus", "8"],
                           env={"COLUMNS": "400"}, terminal_width=400)  # fmt: skip
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "back to back = the stages' bounds (>=) summed" in text
    assert "weight sync = bytes sent between device groups" in text


def test_hardware_caption_explains_usable_above_the_datasheet_reading():
    """`rlmcost hardware` prints an 80 GB H100 as "80 GB (74.5 GiB)" beside a usable 79.2 GiB
    (torch's report, rlmcost.specs): the caption says which one fit checks use and why the
    usable figure can be the larger."""
    from rlmcost.specs import get_hardware

    h100 = get_hardware("h100-sxm")
    assert h100.hbm_usable_bytes > h100.hbm_bytes  # the datasheet's 80 GB read as 10^9 B
    r = CliRunner().invoke(app, ["hardware"], env={"COLUMNS": "400"}, terminal_width=400)
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "fit checks use it, not the datasheet's figure" in text
    assert "exceeds where its datasheet's GB are nearer GiB" in text
