"""Every transfer of a group in front of one task names a schedule unit of its own
(``Transfer.unit_name``): the iteration's schedule keys a unit by kind, unit name, group and
task (``placement/iteration_units.py``), so two transfers of one name would be one unit and
the other's seconds would drop out of the iteration (the phases still summing both)."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from rlmcost.frameworks import presets
from rlmcost.reports.estimate import estimate


def _keys(e) -> Counter:  # noqa: ANN001
    return Counter((tr.kind, tr.unit_name, g.name, tr.before)
                   for g in e.evaluation.groups for tr in g.transfers)  # fmt: skip


@pytest.mark.parametrize("framework", ["none", "nemo-rl", "verl", "openrlhf", "trl", "slime"])
@pytest.mark.parametrize("placement", [None, "disaggregated", "async"])
def test_unit_names_are_unique_per_group_and_task(framework, placement) -> None:  # noqa: ANN001
    e = estimate("ppo", "llama-3.1-8b", hardware="h100", gpus=16, response_len=512,
                 framework=framework, placement=placement)  # fmt: skip
    keys = _keys(e)
    assert all(n == 1 for n in keys.values()), [k for k, n in keys.items() if n > 1]


def test_padded_batch_and_per_rank_shards_are_two_units(monkeypatch) -> None:  # noqa: ANN001
    # a Ray framework that sends both the padded batch (verl's DataProto) and each rank its
    # own shard (NeMo RL's): _call_data and _sharded_call_data both add a transfer in front
    # of every forward and training task; named alike, the schedule kept one of the two
    both = dataclasses.replace(presets.behaviour("nemo-rl"), padded_batch=True)
    monkeypatch.setitem(presets._BEHAVIOURS, "nemo-rl", both)
    e = estimate("grpo", "llama-3.1-8b", hardware="h100", gpus=8, response_len=333,
                 framework="nemo-rl")  # a length no other test asks: no kept estimate
    keys = _keys(e)
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1]
    train = [tr.unit_name for g in e.evaluation.groups for tr in g.transfers
             if tr.unit_name.startswith("driver data of actor train")]  # fmt: skip
    assert len(train) == 2
    assert all(u in e.evaluation.critical_path for u in train)
