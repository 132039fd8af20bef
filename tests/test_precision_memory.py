"""Memory as the frameworks allocate it: fp32 parameters under mixed precision, the caching
allocator's slack with and without expandable segments, and NeMo RL's refit offload.

Numbers are checked against hand arithmetic from published parameter counts (Llama-3.1-8B:
8,030,261,248 parameters, a 128,256 x 4,096 embedding and an untied head, Meta's config.json;
Qwen2.5-7B: 7,615,616,512, Qwen's config.json; GPT-2: 124,439,808, transformers'
GPT2LMHeadModel) and against the frameworks' sources named in each test.
"""

from __future__ import annotations

import json
from math import ceil

import pytest
from typer.testing import CliRunner

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.choices import Dtype
from rlmcost.cli import app
from rlmcost.compiled import memory as twin
from rlmcost.deployment.spec import (
    ALLOCATOR_SLACK,
    ALLOCATOR_SLACK_EXPANDABLE,
    ALLOCATOR_SLACK_SWITCHING,
    Overhead,
)
from rlmcost.evaluation.query import evaluate
from rlmcost.frameworks.presets import get_preset
from rlmcost.parallel.breakdown import Mode
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.memory import memory_per_rank
from rlmcost.run.spec import Run
from rlmcost.specs import Workload, get_model

runner = CliRunner()

LLAMA8B = 8_030_261_248
LLAMA8B_EMBEDDING = 128_256 * 4_096  # the largest unit FSDP gathers (embedding, untied head)
QWEN7B = 7_615_616_512
GPT2 = 124_439_808
FP32_PARAMS = Workload(param_dtype=Dtype.FP32)


def _both(layout: Layout, mode: Mode, workload: Workload):
    arch = get_model("llama-3.1-8b").arch()
    a = memory_per_rank(arch, layout, mode, 8, 1024, workload)
    b = twin.memory_per_rank(get_model("llama-3.1-8b"), layout, mode, 8, 1024, workload)
    assert a == b  # the symbolic module and its numeric twin
    return a


# --- fp32 parameters under mixed precision ---------------------------------------------------


def test_fp32_parameters_under_fsdp_hold_4_4_8_bytes_and_gather_bf16_units():
    """FSDP MixedPrecisionPolicy(param_dtype=bf16) over fp32 parameters (torch
    distributed/fsdp/_fully_shard/_fsdp_api.py: "The optimizer step uses the sharded parameter
    in the original dtype"): fp32 shard and gradient shard, Adam m and v, no master copy; the
    two units in flight are gathered in bf16 (2 x the 128,256 x 4,096 embedding x 2 B)."""
    m = _both(Layout(dp=8, zero=ZeroStage.OS_G_P), Mode.TRAIN, FP32_PARAMS)
    shard = LLAMA8B // 8
    assert LLAMA8B % 8 == 0
    assert (m.weights, m.gradients, m.optimizer) == (4 * shard, 4 * shard, 8 * shard)
    assert m.buffers == 2 * LLAMA8B_EMBEDDING * 2 == 2_101_346_304
    bf16 = _both(Layout(dp=8, zero=ZeroStage.OS_G_P), Mode.TRAIN, Workload())
    # 16 B/param either way (ZeRO paper: 2 + 2 + 12; fp32 storage: 4 + 4 + 8)
    assert m.weights + m.gradients + m.optimizer == bf16.weights + bf16.gradients + bf16.optimizer
    assert bf16.buffers == m.buffers


def test_fp32_parameters_without_sharding_cast_two_units_per_use():
    """ZeRO-1 over 8 ranks: whole fp32 weights and gradients, m and v sharded; the bf16 copy of
    the unit computing and the next is a transient at any stage (FSDP casts per unit)."""
    m = _both(Layout(dp=8, zero=ZeroStage.OS), Mode.TRAIN, FP32_PARAMS)
    assert (m.weights, m.gradients, m.optimizer) == (4 * LLAMA8B, 4 * LLAMA8B, LLAMA8B)
    assert m.buffers == 2 * LLAMA8B_EMBEDDING * 2
    assert _both(Layout(dp=8, zero=ZeroStage.OS), Mode.TRAIN, Workload()).buffers == 0


def test_forwards_keep_the_weight_dtype():
    """A forward-only invocation (a reference, or a frozen model) holds the bf16 weights."""
    m = _both(Layout(dp=8, zero=ZeroStage.NONE), Mode.FORWARD, FP32_PARAMS)
    assert m.weights == 2 * LLAMA8B and m.optimizer == 0


def _training(args: list[str]) -> dict:
    r = runner.invoke(app, ["grpo", "-m", "qwen2.5-7b", "--gpus", "8", "--zero", "3",
                            "--json", *args])  # fmt: skip
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize(("dtype", "w", "k"), [("fp32", 4, 8), ("bf16", 2, 12)])
def test_param_dtype_flag_sets_the_trainers_states(dtype: str, w: int, k: int):
    out = _training(["--framework", "none", "--reward", "rule", "--no-kl", "--param-dtype",
                     dtype])  # the actor alone: no reference or reward model beside it
    m = out["stages"]["training"]["memory_breakdown_bytes"]
    assert (m["weights"], m["gradients"], m["optimizer"]) == (w * QWEN7B // 8, w * QWEN7B // 8,
                                                              k * QWEN7B // 8)  # fmt: skip
    # generation's engine keeps its own bf16 copy (vLLM loads the checkpoint's dtype)
    assert out["inputs"]["dtypes"]["trained_parameters"] == dtype


def test_verl_and_nemo_rl_store_fp32_parameters_and_a_flag_overrides():
    """verl/workers/fsdp_workers.py: model_dtype None -> torch.float32 for the actor;
    NeMo RL dtensor_policy_worker.py: "Always load the model in float32"."""
    for fw in ("verl", "nemo-rl"):
        assert get_preset(fw).deployment_data()["train"]["param_dtype"] == "fp32"
        out = _training(["--framework", fw])
        assert out["run"]["deployment"]["train"]["param_dtype"] == "fp32"
        assert "--param-dtype fp32" in out["command"] or "--param-dtype" not in out["command"]
    out = _training(["--framework", "verl", "--param-dtype", "bf16"])
    assert out["stages"]["training"]["memory_breakdown_bytes"]["optimizer"] == 12 * QWEN7B // 8


def test_command_reproduces_the_param_dtype(tmp_path):
    out = _training(["--framework", "verl", "--param-dtype", "bf16"])
    path = tmp_path / "out.json"
    path.write_text(json.dumps(out))
    r = runner.invoke(app, ["run", str(path), "--command"])
    assert r.exit_code == 0, r.output
    assert "--param-dtype bf16" in r.stdout and "--expandable-segments" in r.stdout


def test_importers_read_the_stored_dtype():
    """verl ``fsdp_config.model_dtype`` (default fp32 for the actor); NeMo RL's DTensor policy
    always fp32."""
    verl = "tests/data/frameworks/verl_grpo.yaml"
    override = "actor_rollout_ref.actor.fsdp_config.model_dtype=bf16"
    for extra, want in (([], "fp32"), ([override], "bf16")):
        r = runner.invoke(app, ["import", "verl", verl, "--json", *extra])
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["run"]["deployment"]["train"]["param_dtype"] == want
    bad = runner.invoke(app, ["import", "verl", verl, "actor_rollout_ref.actor.fsdp_config."
                              "model_dtype=int8"])  # fmt: skip
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "model_dtype" in bad.output and len(bad.output.strip().splitlines()) == 1


# --- the caching allocator's slack ------------------------------------------------------------


def test_slack_follows_expandable_segments_and_switching():
    o = Overhead()
    assert o.allocator_slack_for(switches=False) == ALLOCATOR_SLACK == 0.05
    assert o.allocator_slack_for(switches=True) == ALLOCATOR_SLACK_SWITCHING == 0.10
    on = Overhead(expandable_segments=True)
    assert on.allocator_slack_for(True) == on.allocator_slack_for(False) == 0.02
    assert ALLOCATOR_SLACK_EXPANDABLE == 0.02
    assert Overhead(allocator_slack=0.3).allocator_slack_for(True) == 0.3  # given wins


def _overhead(args: list[str]) -> tuple[int, int]:
    """(overhead, allocated) bytes of the training stage's peak on 8 GPUs."""
    m = _training(args)["stages"]["training"]["memory_breakdown_bytes"]
    allocated = sum(v for k, v in m.items() if k not in ("overhead", "engine"))
    return m["overhead"], allocated


@pytest.mark.parametrize(("flag", "slack"), [("--no-expandable-segments", 0.10),
                                             ("--expandable-segments", 0.02)])  # fmt: skip
def test_colocated_training_overhead_is_context_communicator_and_slack(flag: str, slack: float):
    """A colocated group (generation and training on the same GPUs, the engine asleep while
    the trainer runs): CUDA context + NCCL buffers (512 MiB each) + the slack of the
    allocated peak."""
    overhead, allocated = _overhead(["--framework", "none", flag])
    assert overhead == 2 * 512 * 2**20 + ceil(allocated * slack)


def test_a_group_that_only_trains_keeps_the_plain_slack():
    """Generation on GPUs of its own: the trainer's GPUs never switch (5%)."""
    r = runner.invoke(app, ["grpo", "-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64",
                            "--framework", "none", "--reward", "rule", "--gpus", "4",
                            "--groups", "rollout=2,actor+reference=2", "--json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    detail = json.loads(r.stdout)["placement_detail"]["groups"]
    trainer = next(g for g in detail if g["name"] == "actor+reference")
    job = next(j for j in trainer["jobs"] if j["what"] == "actor train")
    m = job["memory_breakdown_bytes"]
    allocated = sum(v for k, v in m.items() if k not in ("overhead", "engine", "total"))
    assert m["overhead"] == 2 * 512 * 2**20 + ceil(allocated * 0.05)


# --- NeMo RL's refit offload ------------------------------------------------------------------


NEMO_RL_TRAIN = {"zero": "3", "param_dtype": "fp32", "offload": ["optimizer-idle", "params-idle"]}
"""The NeMo RL preset's trainer fields this section reads (a Run states its fields; the CLI's
``--framework`` starts from the preset)."""


def _gpt2(framework: str, **deployment: object):
    run = Run(
        models={"actor": "gpt-2"},
        algorithm={"name": "grpo", "rule_reward": True, "recompute_logprobs": True},
        workload={"prompts": 8, "prompt_len": 64, "response_len": 64},
        deployment={"framework": framework, **deployment},
        cluster={"gpus": 2, "host_bandwidth_gb_per_s": 1.0},
    )
    (group,) = evaluate(run).evaluation.groups
    return group


def test_nemo_rl_moves_the_policy_to_the_host_during_generation():
    """nemo_rl/models/policy/workers/dtensor_policy_worker.py: offload_before_refit moves the
    optimizer states to the CPU, offload_after_refit the model (grpo.py
    refit_policy_generation, colocated): generation holds neither; the update holds both."""
    assert get_preset("nemo-rl").deployment_data()["train"]["offload"] == [
        "optimizer-idle", "params-idle"]  # fmt: skip
    preset = get_preset("nemo-rl").deployment_data()["train"]
    assert {k: preset[k] for k in NEMO_RL_TRAIN} == NEMO_RL_TRAIN
    on = _gpt2("nemo-rl", train=NEMO_RL_TRAIN)
    off = _gpt2("nemo-rl", train={**NEMO_RL_TRAIN, "offload": []})

    def job(g, kind):
        return next(j for j in g.jobs if j.task.kind is kind and j.task.role is Role.ACTOR)

    shard = GPT2 // 2
    assert GPT2 % 2 == 0
    gen_on, gen_off = job(on, Kind.GENERATE).memory, job(off, Kind.GENERATE).memory
    assert gen_off.optimizer - gen_on.optimizer == 8 * shard  # fp32 parameters: m and v
    assert gen_off.weights - gen_on.weights == 4 * shard  # the fp32 parameter shard
    train_on, train_off = job(on, Kind.TRAIN).memory, job(off, Kind.TRAIN).memory
    assert (train_on.weights, train_on.optimizer) == (train_off.weights, train_off.optimizer)


def test_nemo_rl_moves_the_weights_once_per_iteration_verl_per_phase():
    """Host-link bytes per iteration of the between-phases offload: each state out and back;
    NeMo RL's weights once (offload_after_refit, then prepare_for_lp_inference), verl's
    around each of the actor's three phases (weight sync, log-prob, update:
    verl/workers/fsdp_workers.py). At 1 GB/s the seconds are bytes / 1e9. verl's log-prob
    forward loads and offloads inside its own timer (compute_log_prob): that trip is the
    forward's transfer, the update carries the other two."""
    offload = ["optimizer-idle", "params-idle"]
    for framework, trips in (("nemo-rl", 1), ("verl", 2)):
        g = _gpt2(framework, train={**NEMO_RL_TRAIN, "offload": offload})
        train = next(j for j in g.jobs if j.task.kind is Kind.TRAIN)
        expected = 2 * (train.own.optimizer + trips * train.own.weights)
        assert train.own.weights == 4 * GPT2 // 2
        assert train.predicted_parts_s["offload_s"] == pytest.approx(expected / 1e9, rel=1e-12)
        trip = [t for t in g.transfers if t.what.endswith("around its forward")]
        if framework == "verl":
            assert [t.bytes_per_device for t in trip] == [2 * train.own.weights]
        else:
            assert trip == []


def test_nemo_rl_importer_offloads_when_colocated_only(tmp_path):
    base = "tests/data/frameworks/nemo_rl_grpo_math.yaml"
    r = runner.invoke(app, ["import", "nemo-rl", base, "--json"])
    assert r.exit_code == 0, r.output
    train = json.loads(r.stdout)["run"]["deployment"]["train"]
    assert train["offload"] == ["optimizer-idle", "params-idle"]
    assert train["param_dtype"] == "fp32"


def test_lora_adapters_follow_the_stored_dtype():
    """verl loads the LoRA actor in fp32 too (fsdp_workers.py): the adapters' gradients are
    fp32 and Adam keeps m and v only, 8 of the 12 bytes per adapter parameter of bf16."""
    def train_job(param_dtype: str):
        g = _gpt2("verl", train={"zero": "3", "param_dtype": param_dtype},
                  lora={"rank": 8})  # fmt: skip
        return next(j for j in g.jobs if j.task.kind is Kind.TRAIN).own

    fp32, bf16 = train_job("fp32"), train_job("bf16")
    assert fp32.optimizer * 12 == bf16.optimizer * 8 and fp32.optimizer > 0
    assert fp32.gradients == 2 * bf16.gradients
