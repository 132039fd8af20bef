"""The init-time peak: a model materialised whole before it is sharded.

Parameter counts come from transformers' ``Qwen2ForCausalLM`` built on the meta device from
Qwen's published config.json values (Qwen2.5-7B: 7,615,616,512; Qwen2.5-14B), the load modes
from the frameworks' sources named in :mod:`rlmcost.deployment.init` (OpenRLHF
``openrlhf/cli/train_ppo.py``: ``actor.to(torch.cuda.current_device())`` before
``deepspeed.initialize``; verl ``fsdp_workers.py`` and NeMo RL ``dtensor_policy_worker.py``:
rank 0 loads the whole model into host memory in float32).
"""

from __future__ import annotations

import json
from functools import cache

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.init import InitLoad, Loaded, transient
from rlmcost.deployment.spec import load_deployment
from rlmcost.errors import SpecError
from rlmcost.frameworks.openrlhf import import_openrlhf
from rlmcost.frameworks.presets import get_preset

runner = CliRunner()

QWEN7B = {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
          "num_attention_heads": 28, "num_key_value_heads": 4}  # fmt: skip
QWEN14B = {"hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 48,
           "num_attention_heads": 40, "num_key_value_heads": 8}  # fmt: skip
"""Qwen/Qwen2.5-7B and Qwen2.5-14B config.json (vocab 152,064, untied embeddings)."""


@cache
def _meta_params(**config: int) -> int:
    """Parameters of transformers' Qwen2ForCausalLM built on the meta device."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = transformers.Qwen2Config(vocab_size=152064, tie_word_embeddings=False, **config)
    with torch.device("meta"):
        model = transformers.Qwen2ForCausalLM(cfg)
    return sum(p.numel() for p in model.parameters())


def _timeline(*args: str, model: str = "qwen2.5-7b", gpus: int = 8) -> dict:
    r = runner.invoke(app, ["grpo", "-m", model, "--gpus", str(gpus), "--framework", "none",
                            "--reward", "rule", "--no-kl", "-B", "8", "-K", "4", "-T", "512",
                            "--timeline", "--json", *args])  # fmt: skip
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _init(out: dict) -> dict:
    (group,) = out["memory_timeline"]
    return group


def _bytes(group: dict) -> list[dict]:
    """A group's entries without their words."""
    return [{k: v for k, v in e.items() if k != "what"} for e in group["entries"]]


def test_qwen7b_count_on_meta_is_the_published_one():
    assert _meta_params(**QWEN7B) == 7_615_616_512


def test_init_on_gpu_holds_the_actor_whole_in_its_load_dtype():
    """ZeRO-3 over 8 GPUs, fp32 parameters: sharded, the actor keeps 4P/8 weights and 4P/8
    gradients per device; loaded whole on the GPU it holds 4P and no gradient buffer yet."""
    p = _meta_params(**QWEN7B)
    base = ["--zero", "3", "--param-dtype", "fp32"]
    sharded, whole = _init(_timeline(*base)), _init(_timeline(*base, "--init-on-gpu"))
    t0, t1 = sharded["entries"][0]["terms_bytes"], whole["entries"][0]["terms_bytes"]
    assert (t0["weights"], t0["gradients"]) == (4 * p // 8, 4 * p // 8)
    assert (t1["weights"], t1["gradients"]) == (4 * p, 0)
    assert t1["engine"] == t0["engine"]  # the rest of the entry as before
    assert "actor whole on each GPU before sharding (fp32" in whole["entries"][0]["what"]
    # the first step and the phases are the steady state, unchanged
    assert whole["entries"][1:] == sharded["entries"][1:]
    # built in host memory first, one copy per process: 8 on an 8-GPU node
    host = (sharded["init_host_bytes_per_node"], whole["init_host_bytes_per_node"])
    assert host == (0, 8 * 4 * p)


@pytest.mark.parametrize(("mode", "copies"), [("host-rank0", 1), ("host-each", 8)])
@pytest.mark.parametrize(("dtype", "width"), [("fp32", 4), ("bf16", 2)])
def test_host_loads_leave_the_device_and_fill_host_memory(mode, copies, dtype, width):
    p = _meta_params(**QWEN7B)
    base = ["--zero", "3", "--param-dtype", dtype]
    sharded, host = _init(_timeline(*base)), _init(_timeline(*base, "--init-load", mode))
    assert _bytes(host) == _bytes(sharded)  # the device as before
    assert "host memory per node" in host["entries"][0]["what"]
    assert host["init_host_bytes_per_node"] == copies * width * p


def test_a_gpu_load_adds_nothing_where_the_steady_state_keeps_the_whole_model():
    """ZeRO-2 keeps the bf16 weights whole on every device: .to(cuda) before
    deepspeed.initialize holds no more than the steady state."""
    base = ["--zero", "2", "--param-dtype", "bf16"]
    assert _bytes(_init(_timeline(*base, "--init-on-gpu"))) == _bytes(_init(_timeline(*base)))


def test_the_verdict_says_when_a_run_fails_only_at_init():
    """Qwen2.5-14B, fp32 parameters, ZeRO-3 over 16 A100-40GB: the steady state fits; the
    actor whole on one GPU (4P bytes, 55 GiB) does not."""
    p = _meta_params(**QWEN14B)
    base = ["-H", "a100-40gb", "--zero", "3", "--param-dtype", "fp32", "--rollout-tp", "4"]
    fits = _timeline(*base, model="qwen2.5-14b", gpus=16)
    fails = _timeline(*base, "--init-on-gpu", model="qwen2.5-14b", gpus=16)
    assert fits["fits"] and not fits["problems"]
    assert not fails["fits"]
    (problem,) = fails["problems"]
    assert problem.startswith("does not fit at init: on all, actor loaded whole on each GPU")
    assert "--init-load sharded" in problem
    init = _init(fails)["entries"][0]
    assert init["terms_bytes"]["weights"] - _init(fits)["entries"][0]["terms_bytes"]["weights"] \
        == 4 * p - 4 * p // 16  # fmt: skip
    assert init["device_bytes"] > _init(fails)["capacity_bytes_per_device"]
    # the text verdict: one line naming the init, with its hint
    r = runner.invoke(app, ["grpo", "-m", "qwen2.5-14b", "--gpus", "16", "--framework", "none",
                            "--reward", "rule", "--no-kl", "-B", "8", "-K", "4", "-T", "512",
                            *base, "--init-on-gpu"])  # fmt: skip
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if "does not fit at init" in ln]
    assert len(lines) == 1 and lines[0].startswith("problem: does not fit at init:")


def test_the_load_is_in_the_run_and_its_command(tmp_path):
    out = _timeline("--zero", "3", "--init-on-gpu")
    assert out["run"]["deployment"]["init_load"] == "gpu"
    path = tmp_path / "out.json"
    path.write_text(json.dumps(out))
    r = runner.invoke(app, ["run", str(path), "--command"])
    assert r.exit_code == 0, r.output
    assert "--init-load gpu" in r.stdout


def test_presets_follow_the_frameworks_sources():
    want = {"verl": "host-rank0", "nemo-rl": "host-rank0", "openrlhf": "host-each",
            "trl": "host-each", "slime": "sharded"}  # fmt: skip
    for fw, mode in want.items():
        assert get_preset(fw).deployment_data()["init_load"] == mode


def test_openrlhf_importer_reads_actor_init_on_gpu():
    """train_ppo_ray.py parses --actor_init_on_gpu and reads it nowhere (only train_ppo.py
    did): the importer reads it, says so, and keeps the Ray actors' host load; under ZeRO-3
    the model is built inside deepspeed.zero.Init (sharded)."""
    args = ["--pretrain", "Qwen/Qwen2.5-7B", "--reward_pretrain", "Qwen/Qwen2.5-7B",
            "--actor_init_on_gpu"]  # fmt: skip
    q2 = import_openrlhf(args)
    q3 = import_openrlhf([*args, "--zero_stage", "3"])
    assert "--actor_init_on_gpu" not in q2.ignored
    assert any(n.startswith("--actor_init_on_gpu: train_ppo_ray.py parses it") for n in q2.notes)
    assert "--init-load" not in dict(q2.flags) and "--init-on-gpu" not in dict(q2.flags)
    assert dict(q3.flags)["--init-load"] == "sharded"


def test_transient_by_hand():
    """Two models loaded one after another: the larger single load is the peak."""
    actor = Loaded("actor", 400, 50, 50, trained=True)
    ref = Loaded("reference", 200, 25, 0, trained=False)
    assert transient(InitLoad.GPU, [actor, ref], 16, 8) == \
        transient(InitLoad.GPU, [actor], 16, 8)  # fmt: skip
    t = transient(InitLoad.GPU, [actor, ref], 16, 8)
    assert (t.role, t.device_extra_bytes, t.host_bytes_per_node) == ("actor", 300, 8 * 400)
    t = transient(InitLoad.HOST_RANK0, [actor, ref], 16, 8)
    assert (t.device_extra_bytes, t.host_bytes_per_node) == (0, 400)
    t = transient(InitLoad.HOST_EACH, [ref], 4, 8)  # a 4-GPU group: 4 processes on its node
    assert t.host_bytes_per_node == 4 * 200
    assert transient(InitLoad.GPU, [ref], 8, 8).role is None  # nothing trained: no GPU load
    assert transient(InitLoad.SHARDED, [actor], 8, 8).host_bytes_per_node == 0


@pytest.mark.parametrize(("args", "message"), [
    (["--init-load", "cpu"], "'cpu' is not one of 'sharded', 'gpu', 'host-rank0', 'host-each'"),
    (["--init-on-gpu", "--init-load", "sharded"], "--init-on-gpu is --init-load gpu"),
])  # fmt: skip
def test_bad_values_are_one_line_errors(args, message):
    r = runner.invoke(app, ["grpo", "-m", "qwen2.5-7b", "--gpus", "8", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_a_bad_value_in_a_deployment_file_is_one_line(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"init_load": "cpu"}))
    with pytest.raises(SpecError) as err:
        load_deployment(path)
    assert "init_load" in str(err.value) and "\n" not in str(err.value)
