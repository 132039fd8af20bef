"""Hosts in random rank order (``--rank-order random``, rlmcost.placement.rank_order).

Sources: NeMo RL nemo_rl/distributed/virtual_cluster.py at r0.6.0 ``_get_sorted_bundle_indices``
sorts the placement group's bundles by (Ray node id, GPU id), and a Ray node id is random
(``ray.NodeID.from_random()``, python/ray/_private/node.py); v0.7.0 adds ``cluster.segment_size``
(``segment_size: null`` in examples/configs/grpo_math_1B.yaml) and sorts by NVLink domain
(``_sort_bundle_indices_by_topology``). A GB200 NVL72 rack holds 72 GPUs on compute trays of 4
(NVIDIA DGX GB200 user guide); a DGX H100 is one host of 8 GPUs on one NVLink domain.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.placement.rank_order import nvlink_reach, spans_domains
from rlmcost.specs import get_hardware

BASE = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"


def test_random_order_over_racks_leaves_a_group_one_tray_of_nvlink() -> None:
    gb200, h100 = get_hardware("gb200"), get_hardware("h100")
    assert nvlink_reach(gb200, "random", 128).gpus_per_node == 4  # two racks: one tray
    assert nvlink_reach(gb200, "random", 72).gpus_per_node == 72  # fits one rack
    assert nvlink_reach(gb200, "topology", 256).gpus_per_node == 72
    assert nvlink_reach(h100, "random", 512) is h100  # the host is the NVLink domain
    assert not spans_domains(h100, "random", None)


def test_bad_or_unknowable_input_is_a_clear_error() -> None:
    with pytest.raises(SpecError, match="needs --gpus"):
        spans_domains(get_hardware("gb200"), "random", None)
    with pytest.raises(SpecError, match="topology, random"):
        spans_domains(get_hardware("gb200"), "shuffled", 128)


def _flags(overrides: list[str]) -> dict[str, object]:
    return dict(import_nemo_rl(BASE, overrides).flags)


def test_a_config_before_v07_reads_as_random_order_on_several_hosts() -> None:
    many = ["cluster.num_nodes=32", "cluster.gpus_per_node=4"]
    assert _flags(many).get("--rank-order") == "random"  # no segment_size key: r0.6.0's
    assert "--rank-order" not in _flags([*many, "cluster.segment_size=null"])  # v0.7.0's base
    assert "--rank-order" not in _flags([*many, "cluster.segment_size=16"])
    assert "--rank-order" not in _flags([])  # one node: nothing to order


def _step(*extra: str) -> dict:
    argv = ["rlvr", "--model", "qwen3-30b-a3b", "--hardware", "gb200", "--tp", "1", "--ep", "8",
            "--rollout-tp", "8", "--batch", "64", "--group", "8", "--prompt-len", "256",
            "--response-len", "1024", "--json", *extra]  # fmt: skip
    out = subprocess.run([sys.executable, "-m", "rlmcost", *argv], capture_output=True,
                         text=True, check=True)  # fmt: skip
    return json.loads(out.stdout)


def test_the_cli_slows_groups_over_trays_only_past_one_rack() -> None:
    fast = _step("--gpus", "128")
    slow = _step("--gpus", "128", "--rank-order", "random")
    assert slow["run"]["cluster"]["rank_order"] == "random"
    assert slow["iteration"]["time_s"] > fast["iteration"]["time_s"]  # TP-8 engines, EP-8 a2a
    inside = _step("--gpus", "64", "--rank-order", "random")
    assert inside["iteration"]["time_s"] == _step("--gpus", "64")["iteration"]["time_s"]
