"""Activation offload (verl ``model.enable_activation_offload``; rlmcost.parallel.act_offload,
rlmcost.perf.act_offload).

Independent references: under full recomputation a layer keeps its input, 2 s b h bytes in
16-bit (Korthikanti et al. 2022, arXiv:2205.05198 §4.1, "full activation recomputation"),
counted by hand below; verl's handler keeps two layers' saved tensors on the device
(verl/utils/activation_offload.py @b178a3cd, ``AsyncDoubleBufferGroupOffloadHandler``: "at most
two activation groups in GPU memory"); verl's own launch script for the importer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.compiled.memory import memory_per_stage as compiled_memory
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.memory import memory_per_stage as exact_memory
from rlmcost.specs import get_model
from rlmcost.specs.workload import Workload

runner = CliRunner()
SCRIPT = Path(__file__).parent / "data" / "frameworks" / "verl_run_qwen3_prefix_grouper.sh"
QUERY = ["grpo", "-m", "qwen2.5-7b", "-H", "h100", "--gpus", "8", "-B", "16", "-K", "4",
         "-S", "1024", "-T", "1024", "--zero", "3", "--ckpt", "full", "--micro-batch", "2",
         "--json"]  # fmt: skip


def _training(*extra: str) -> dict:
    res = runner.invoke(app, [*QUERY, *extra])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout[res.stdout.index("{"):])
    update = next(p for p in out["phases"] if p["name"] == "update actor")
    return {**out["stages"]["training"], "update_s": update["time_s"]}


def test_the_device_keeps_two_layer_inputs_of_the_twenty_eight() -> None:
    plain, offloaded = _training(), _training("--activation-offload")
    # Qwen2.5-7B: 28 layers of d = 3,584; a micro-batch of 2 sequences of 2,048 tokens; each
    # layer keeps its bf16 input under full recomputation: 26 layers' go to the host
    saved = plain["memory_breakdown_bytes"]["activations"] - \
        offloaded["memory_breakdown_bytes"]["activations"]  # fmt: skip
    assert saved == 26 * (2 * 3584) * (2 * 2048) == 763_363_328
    # every layer's but the last sits in pinned host memory, kept by the caching host allocator
    host = offloaded["host_memory_bytes_per_device"] - plain["host_memory_bytes_per_device"]
    assert host == 27 * (2 * 3584) * (2 * 2048) == 792_723_456
    # verl's own reentrant checkpoint reruns each layer whole (no early stop), and the copies
    # can only add: never faster
    assert offloaded["update_s"] >= plain["update_s"]


@pytest.mark.parametrize("name", ["qwen2.5-7b", "qwen3-30b-a3b", "deepseek-v3"])
@pytest.mark.parametrize("ckpt", [Checkpointing.FULL, Checkpointing.NONE])
def test_both_memory_paths_agree(name: str, ckpt: Checkpointing) -> None:
    arch = get_model(name).arch()
    for offload in (False, True):
        layout = Layout(dp=8, zero=ZeroStage.OS_G_P, ckpt=ckpt, micro_batch=2,
                        act_offload=offload)  # fmt: skip
        a = compiled_memory(arch, layout, "train", 64, 4096, Workload())
        b = exact_memory(arch, layout, "train", 64, 4096, Workload())
        assert a == b
    full = compiled_memory(arch, layout.with_(act_offload=False), "train", 64, 4096, Workload())
    assert a[0].activations < full[0].activations


def test_verls_key_imports_as_the_flag() -> None:
    from verl_rows import import_verl_json

    on = import_verl_json(SCRIPT, "actor_rollout_ref.model.enable_activation_offload=True",
                          hardware="h100")  # fmt: skip
    off = import_verl_json(SCRIPT, hardware="h100")
    assert "--activation-offload" in on["query"]["argv"]
    assert "--activation-offload" not in off["query"]["argv"]
    assert on["run"]["deployment"]["train"]["activation_offload"] is True
    peak = [o["estimate"]["stages"]["training"]["memory_bytes_per_device"] for o in (on, off)]
    assert peak[0] < peak[1]


def test_a_group_gives_it_and_a_forward_layout_cannot() -> None:
    res = runner.invoke(app, [*QUERY, "--placement", "hybrid", "--groups",
                              "rollout=2,actor+reference=6[activation-offload]"])  # fmt: skip
    assert res.exit_code == 0, res.output
    groups = json.loads(res.stdout[res.stdout.index("{"):])["run"]["deployment"]["groups"]
    own = next(g for g in groups if g["members"] == "actor+reference")
    assert own["train"]["activation_offload"] is True
    from rlmcost.deployment.spec import Deployment
    from rlmcost.errors import SpecError

    with pytest.raises(SpecError, match="activation_offload = True is not read"):
        Deployment(forward={"activation_offload": True})
