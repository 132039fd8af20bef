"""Host memory is a capacity: a node whose offloaded states exceed its host's memory does not
fit (rlmcost/placement/host_memory.py).

Independent figures: the reference systems' host memory from the vendors' datasheets (NVIDIA
DGX H100/H200: 2 TB per 8 GPUs, NVIDIA DGX BasePOD reference architecture; DGX A100 640GB:
2 TB, 320GB: 1 TB; DGX B200 user guide: 2 TB, upgradable to 4 TB; GB200 NVL72 datasheet: up
to 480 GB LPDDR5X per Grace CPU, two per 4-GPU compute tray; OLCF Frontier: 512 GB DDR4 per
node of 4 MI250X = 8 GCDs), and ZeRO-Offload's host states (Ren et al. 2021, arXiv:2101.06840
§4: fp32 parameters, gradients and Adam's m, v on the CPU: 16 B per parameter) of Qwen3-235B-
A22B (235,093,634,560 parameters with the LM head, its config.json as rlmcost counts it)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.placement.host_memory import GIB, host_check, node_bytes
from rlmcost.run.spec import Run
from rlmcost.specs import get_hardware
from rlmcost.specs.registry import hardware as list_hardware

runner = CliRunner()
TB = 10**12
QWEN3_235B_PARAMS = 235_093_634_560


def _run(gpus: int, host_gib: float | None = None, hardware: str = "h100") -> Run:
    """GRPO on Qwen3-235B-A22B under NeMo RL's preset with every trainer state offloaded
    (ZeRO-3, --offload optimizer,params,grads) and vLLM TP 8 at 0.9: what `rlmcost plan grpo
    -m qwen3-235b-a22b -H h100 --min-gpus` answered 8 GPUs for before host memory counted."""
    cluster: dict[str, Any] = {"hardware": hardware, "gpus": gpus}
    if host_gib is not None:
        cluster["host_memory_gib"] = host_gib
    return Run.from_data({
        "algorithm": {"name": "grpo"}, "models": {"actor": "qwen3-235b-a22b"},
        "deployment": {"framework": "nemo-rl",
                       "train": {"zero": "3", "offload": ["optimizer", "params", "grads"]},
                       "engine": {"tp": 8, "gpu_memory_utilization": 0.9}},
        "cluster": cluster,
    })  # fmt: skip


def test_reference_hosts_from_the_datasheets() -> None:
    expect = {"h100-sxm": 2 * TB, "h200": 2 * TB, "a100-80gb": 2 * TB, "a100-40gb": 1 * TB,
              "b200": 2 * TB, "gb200": 960 * 10**9, "mi250x-gcd": 512 * 10**9}  # fmt: skip
    for name, b in expect.items():
        hw = get_hardware(name)
        assert hw.host_memory_bytes == b, name
        assert hw.host_memory_source and ":" in hw.host_memory_source  # "<system>: ..."
    assert get_hardware("gb200").host_gpus == 4  # one compute tray: 2 Grace CPUs, 4 GPUs
    # HGX-only platforms (no reference system): unknown, never guessed
    for name in ("h20", "h800", "a800-80gb", "l40s", "mi300x", "mi325x", "h100-pcie"):
        assert get_hardware(name).host_memory_bytes is None, name
    for hw in list_hardware():  # every figure has its source
        assert (hw.host_memory_bytes is None) == (hw.host_memory_source is None), hw.name


def test_a_spec_with_host_memory_needs_its_source() -> None:
    data = get_hardware("h100").model_dump()
    data.update(name="x", host_memory_source=None)
    with pytest.raises(ValueError, match="host_memory_source"):
        type(get_hardware("h100")).model_validate(data)


def test_node_bytes_pack_groups_onto_hosts() -> None:
    h100, gb200 = get_hardware("h100"), get_hardware("gb200")
    # 12 GPUs of 3 B then 8 of 1 B on 8-GPU hosts: node 0 = 8 x 3, node 1 = 4 x 3 + 4 x 1,
    # node 2 = 4 x 1
    assert node_bytes([(h100, 12, 3), (h100, 8, 1)]) == {
        ("h100-sxm", 0): 24, ("h100-sxm", 1): 16, ("h100-sxm", 2): 4}  # fmt: skip
    # GB200's host is its 4-GPU tray, not the 72-GPU rack
    assert node_bytes([(gb200, 8, 5)]) == {("gb200", 0): 20, ("gb200", 1): 20}


def test_host_check_capacity_override_and_unknown() -> None:
    h100, h20 = get_hardware("h100"), get_hardware("h20")
    over = host_check([(h100, 8, TB // 4 + 1)], None)  # 8 x (250 GB + 1 B) on one 2 TB host
    assert len(over.problems) == 1
    assert over.binding == ("host memory per node (h100-sxm)", 2 * TB + 8)
    assert host_check([(h100, 8, TB // 4)], None).problems == ()  # exactly full
    # two groups sharing a host add up: 4 x 300 GB + 4 x 250 GB + 4 B = 2.2 TB
    assert host_check([(h100, 4, 3 * TB // 10), (h100, 4, TB // 4 + 1)], None).problems
    # a full host at the larger group's 300 GB would be 2.4 TB, but the node holds 4 of each:
    # 4 x 300 GB + 4 x 200 GB = 2 TB, which fits
    assert host_check([(h100, 4, 3 * TB // 10), (h100, 4, TB // 5)], None).problems == ()
    # an 8-GPU group after a 4-GPU group that offloads nothing spans two hosts, 4 GPUs each:
    # 4 x 300 GB, which fits, where all 8 on one host (2.4 TB) would not
    assert host_check([(h100, 4, 0), (h100, 8, 3 * TB // 10)], None).problems == ()
    assert host_check([(h100, 8, 3 * TB // 10)], None).problems
    # --host-memory-gib: GiB per host, for every accelerator
    assert host_check([(h100, 8, TB // 4 + 1)], 2000).problems == ()  # 2,147 GB
    assert host_check([(h100, 8, 251 * GIB)], 2000).problems  # 2,008 GiB > 2,000
    # H20 (HGX board, no reference host): not checked, said in a note; an override checks it
    unknown = host_check([(h20, 8, TB)], None)
    assert unknown.problems == () and "not checked" in (unknown.unchecked or "")
    assert host_check([(h20, 8, TB)], 1000).problems
    assert host_check([(h20, 8, 0)], None) == host_check([], None)  # nothing offloaded


def test_the_235b_query_on_one_node_exceeds_its_host() -> None:
    e = evaluate_deployment(_run(8))
    # ZeRO-Offload's fp32 parameters, gradients and Adam m, v: 16 B per parameter, all of
    # them on the one node's host, already 3.76 TB > a DGX H100's 2 TB
    assert e.host_memory_bytes_per_node >= 16 * QWEN3_235B_PARAMS > 2 * TB
    assert all(g.fits for g in e.groups)  # HBM alone fits: host memory is what fails
    assert not e.fits and e.shortfall_bytes == 0
    problem = e.problems[-1]
    assert problem.startswith("host memory: a node of 8 x h100-sxm holds")
    for words in ("1.82 TiB (2.00 TB", "DGX H100", "more GPUs", "--offload",
                  "--host-memory-gib"):  # the bytes, the capacity, its source, the mends
        assert words in problem, words
    assert e.host_memory_capacity_bytes_per_node == 2 * TB


def test_more_nodes_share_the_offloaded_states() -> None:
    sixteen, thirty_two = evaluate_deployment(_run(16)), evaluate_deployment(_run(32))
    # the sharded states halve per node from 2 to 4 nodes; each node's engine (vLLM TP 8,
    # asleep: its weights in host memory) stays
    assert sixteen.host_memory_bytes_per_node > 2 * TB > thirty_two.host_memory_bytes_per_node
    assert not sixteen.fits and thirty_two.fits
    # servers with 4,000 GiB of host memory run it on 2 nodes
    bigger = evaluate_deployment(_run(16, host_gib=4000))
    assert bigger.fits and bigger.host_memory_capacity_bytes_per_node == 4000 * GIB
    assert bigger.host_memory_bytes_per_node == sixteen.host_memory_bytes_per_node


def test_unknown_host_memory_is_not_checked_and_says_so() -> None:
    e = evaluate_deployment(_run(8, hardware="h200"))  # a DGX H200: checked
    assert any(p.startswith("host memory:") for p in e.problems)
    # an HGX H20 server: no reference host; the same run is not failed for it, and a note says
    e = evaluate_deployment(_run(16, hardware="h20"))
    assert not any(p.startswith("host memory:") for p in e.problems)
    assert e.host_memory_capacity_bytes_per_node is None
    assert any(n.startswith("host memory not checked: a node of 8 x h20") for n in e.notes)
    checked = evaluate_deployment(_run(16, host_gib=1000, hardware="h20"))
    assert any(p.startswith("host memory:") for p in checked.problems)


def test_the_override_round_trips_and_reaches_the_command_line() -> None:
    run = _run(16, host_gib=1862.5)
    again = Run.from_data(json.loads(json.dumps(run.to_json())))
    assert again == run and again.cluster.host_memory_gib == 1862.5
    assert "--host-memory-gib 1862.5" in run.to_command()


def _cli(*args: str) -> Any:
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


Q235 = ("grpo", "-m", "qwen3-235b-a22b", "-H", "h100", "--framework", "nemo-rl", "--zero", "3",
        "--offload", "optimizer,params,grads", "--rollout-tp", "8",
        "--gpu-memory-utilization", "0.9")  # fmt: skip


def test_cli_flag_json_and_problem_line() -> None:
    res = _cli(*Q235, "--gpus", "8", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["fits"] is False and out["host_memory_capacity_bytes_per_node"] == 2 * TB
    assert any(p.startswith("host memory:") for p in out["problems"])
    res = _cli(*Q235, "--gpus", "16", "--host-memory-gib", "4000", "--json")
    out = json.loads(res.stdout)
    assert out["fits"] is True and out["run"]["cluster"]["host_memory_gib"] == 4000
    text = _cli(*Q235, "--gpus", "8").output
    assert "problem: host memory: a node of 8 x h100-sxm" in text
    for bad in ("0", "nan", "inf", "-5"):  # one line, no traceback, exit 2
        res = _cli("grpo", "-m", "8b", "--host-memory-gib", bad)
        assert res.exit_code == 2 and "Traceback" not in res.output, bad
        assert "host-memory-gib" in res.output


def test_plan_answers_the_fewest_gpus_whose_nodes_hold_the_offload() -> None:
    """`rlmcost plan grpo -m qwen3-235b-a22b -H h100 --min-gpus` answered 8 GPUs, 4.3 TiB of
    offloaded states on a 2 TB host; now the smallest count whose busiest node holds its
    host's 2 TB, and with --host-memory-gib 4000 (4.3 TB hosts) fewer."""
    res = _cli("plan", "grpo", "-m", "qwen3-235b-a22b", "-H", "h100", "--min-gpus", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    rows = [r for r in out["rows"] if r["fits"]]
    assert rows and min(r["gpus"] for r in rows) >= 16
    assert any(f["binding_term"].startswith("host memory per node")
               for f in out["never_fit"])  # fmt: skip
    res = _cli("plan", "grpo", "-m", "qwen3-235b-a22b", "-H", "h100", "--min-gpus",
               "--host-memory-gib", "4000", "--json")  # fmt: skip
    more = json.loads(res.stdout)
    assert min(r["gpus"] for r in more["rows"]) < min(r["gpus"] for r in rows)
