"""Host memory per node and the planner hint on groups of several accelerators
(``--groups rollout=8@h20,actor+reference=8@h100``). A node holds one accelerator: groups on
different accelerators are different machines (an H20 server and an H100 server; NVIDIA's
HGX H20 and DGX H100 are 8-GPU boards), each node as wide as its own accelerator's host
(a GB200 NVL72 compute tray: 4 GPUs, HardwareSpec.gpus_per_host)."""

from __future__ import annotations

import json
import re
import shlex

from typer.testing import CliRunner

from rlmcost.cli import app

runner = CliRunner()


def _json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _groups(out: dict) -> dict[str, tuple[str, int, int]]:
    return {g["name"]: (g["hardware"], g["gpus"], g["host_memory_bytes_per_device"])
            for g in out["placement_detail"]["groups"]}  # fmt: skip


PPO_8B = ("ppo", "-m", "8b", "--framework", "none", "--zero", "3",
          "--offload", "optimizer,params")  # fmt: skip


def test_groups_on_different_accelerators_share_no_node() -> None:
    # one accelerator: rollout fills node 0, the actor's 4 and the critic's 4 share node 1
    # (Ray PACK placement, placement/estimate.py), so their host bytes add up
    one = _json(*PPO_8B, "--groups", "rollout=8,actor+reference=4,critic+reward=4")
    g = _groups(one)
    shared = 4 * g["actor+reference"][2] + 4 * g["critic+reward"][2]
    assert one["host_memory_bytes_per_node"] == shared
    # the actor on H20s: its 4 GPUs are an H20 machine's, the critic's an H100 node's; the
    # figure is the busier of the two nodes, not their sum
    mixed = _json(*PPO_8B, "--groups", "rollout=8,actor+reference=4@h20,critic+reward=4@h100")
    g = _groups(mixed)
    assert g["actor+reference"][0] == "h20" and g["critic+reward"][0] == "h100-sxm"
    busiest = max(4 * g["actor+reference"][2], 4 * g["critic+reward"][2])
    assert 0 < mixed["host_memory_bytes_per_node"] == busiest < shared


def test_each_group_fills_its_own_accelerators_host() -> None:
    # a GB200 run (4-GPU compute trays) with the actor on 8 H100s: the H100 group puts its
    # 8 GPUs on one 8-GPU node, not two 4-GPU hosts of the run's accelerator
    out = _json(*PPO_8B, "-H", "gb200",
                "--groups", "rollout=4,actor+reference=8@h100,critic+reward=4")  # fmt: skip
    g = _groups(out)
    assert g["actor+reference"][:2] == ("h100-sxm", 8) and g["critic+reward"][0] == "gb200"
    h100_node, gb200_tray = 8 * g["actor+reference"][2], 4 * g["critic+reward"][2]
    assert h100_node > gb200_tray  # the H100 node is the busiest
    assert out["host_memory_bytes_per_node"] == h100_node


def test_the_line_names_the_busiest_node_on_a_mixed_run() -> None:
    res = runner.invoke(app, [*PPO_8B, "--groups",
                              "rollout=8,actor+reference=4@h20,critic+reward=4@h100"],
                        env={"COLUMNS": "200"})  # fmt: skip
    assert res.exit_code == 0, res.output
    # an HGX H20 server has no reference host: its memory unknown (placement/host_memory.py)
    assert re.search(r"host memory per node for offloaded states: [\d.]+ GiB "
                     r"\(the busiest node: 8 x h20\); its host's memory is unknown, not "
                     r"checked\.", res.output)  # fmt: skip
    one = runner.invoke(app, [*PPO_8B, "--groups", "rollout=8,actor+reference=4,critic+reward=4"])
    assert "busiest node" not in one.output  # one accelerator: the line as before
    # a DGX H100's 2 TB (NVIDIA DGX BasePOD reference architecture)
    assert re.search(r"host memory per node for offloaded states: [\d.]+ GiB of its host's "
                     r"1\.82 TiB\.", one.output)  # fmt: skip


def test_a_mixed_run_that_does_not_fit_names_the_plan_over_its_pool() -> None:
    # 70B GRPO on 2 H20 + 2 H100: nothing the advice tries fits; the planner query searches
    # the run's pool (plan --hardware NAME:GPUS,...: rlmcost.plan.pool), not the run's -H alone
    res = runner.invoke(app, ["grpo", "-m", "70b", "-B", "32", "-K", "4", "--rollout-tp", "2",
                              "--groups", "rollout=2@h20,actor+reference=2@h100"])  # fmt: skip
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    found = re.search(r"`(rlmcost plan [^`]+)` finds the fewest GPUs of the run's pool", text)
    assert found, text[-800:]
    cmd = found.group(1)
    assert " --hardware h20:2,h100-sxm:2 " in cmd and " -H " not in cmd
    ran = runner.invoke(app, shlex.split(cmd)[1:])  # the query runs as printed
    assert ran.exit_code == 0, ran.output
    assert "rollout=2@" in ran.output  # it searched splits of the pool's accelerators
