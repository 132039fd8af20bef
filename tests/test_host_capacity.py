"""Offloaded states are checked against a node's host DRAM (``HardwareSpec.host_memory_bytes``,
``PlacementEstimate.host_problem``): the busiest node's host bytes
(``host_memory_bytes_per_node``) beyond its host's DRAM make the run not fit, say by how much
and how to mend it, and the planner looks past such deployments.

Independent figures: a DGX H100 node holds 2 TB of DRAM (NVIDIA DGX H100 datasheet, 32 DIMMs
of 64 GB: 2 TiB; MLCommons inference v3.1's Dell XE9680 8x H100 SXM: host_memory_capacity
2 TB). PPO on Llama-3.1-70B with four 70.55 B-parameter models on 8 H100s, every state of the
actor and critic offloaded (fp32 parameters, gradients, Adam m and v: 16 B a parameter) and
the reference and reward model kept in host memory (fp32 under NeMo RL: 4 B a parameter),
puts up to 2 x 16 x 70.55e9 + 2 x 4 x 70.55e9 = 2.82e12 B on the one node (the busiest phase
holds most of it, the states of the model on the GPUs aside): more than 2 TiB = 2.2e12 B.
`rlmcost plan ppo -m llama-3.1-70b --min-gpus` had answered 8 GPUs with that deployment."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.specs import get_hardware

PPO = ["ppo", "--model", "llama-3.1-70b", "-B", "64", "-K", "1", "-S", "1024", "-T", "1024",
       "--zero", "3", "--ckpt", "none", "--micro-batch", "1", "--offload",
       "optimizer,params,grads", "--rollout-tp", "8", "--gpu-memory-utilization", "0.5",
       "--placement", "baseline", "--json"]  # fmt: skip
TIB = 2**40


def _run(*extra: str) -> dict:
    res = CliRunner().invoke(app, [*PPO, *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_dgx_hosts_hold_their_datasheet_dram() -> None:
    assert get_hardware("h100-sxm").host_memory_bytes == 2 * TIB
    assert get_hardware("h200").host_memory_bytes == 2 * TIB
    assert get_hardware("a100-80gb").host_memory_bytes == 2 * TIB
    assert get_hardware("a100-40gb").host_memory_bytes == TIB
    assert get_hardware("h20").host_memory_bytes is None  # HGX H20 servers vary: not checked


def test_a_node_whose_host_cannot_hold_the_offloaded_states_does_not_fit() -> None:
    out = _run("--gpus", "8")
    host = out["host_memory_bytes_per_node"]
    assert 2 * TIB < host <= 2.83e12  # the hand count above
    assert out["fits"] is False
    (problem,) = [p for p in out["problems"] if p.startswith("host memory per node")]
    assert "exceeds the 2.00 TiB DRAM of one h100-sxm host" in problem
    assert "--offload" in problem and "--gpus" in problem
    # two nodes share the states: each host holds half
    two = _run("--gpus", "16")
    assert two["host_memory_bytes_per_node"] <= 2 * TIB and two["fits"] is True


def test_an_unknown_host_is_not_checked() -> None:
    out = _run("--gpus", "8", "-H", "h20")
    assert out["host_memory_bytes_per_node"] > 2 * TIB
    assert not [p for p in out["problems"] if p.startswith("host memory per node")]


def test_the_planner_looks_past_a_host_that_cannot_hold_the_states() -> None:
    res = CliRunner().invoke(app, ["plan", "ppo", "-m", "llama-3.1-70b", "-B", "64", "-K", "1",
                                   "-S", "1024", "-T", "1024", "--min-gpus", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["rows"]
    assert rows and all(r["gpus"] == 16 for r in rows)


def test_tables_say_the_host_not_the_device_is_short() -> None:
    # the devices hold the run (no device shortfall): the fits cell names the host's excess
    args = [a for a in PPO if a not in ("--placement", "baseline", "--json")]
    res = CliRunner().invoke(app, ["compare", *args, "--gpus", "8"])
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "fits" in ln)
    assert "NO (host +" in line and "NO (+0 B)" not in line
