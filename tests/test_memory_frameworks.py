"""Memory as each framework allocates it: forward-only models sharded as the framework shards
them, per-group options, offload kinds, the engine's refit buffer.

Numbers are checked against hand arithmetic from published parameter counts (Llama-3.1-70B:
70,553,706,496 parameters, 128,256 x 8,192 embedding, Meta's model card / config.json) and
against the frameworks' semantics named in each test.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app

runner = CliRunner()

LLAMA70B_PARAMS = 70_553_706_496  # Llama-3.1-70B (Meta model card; config.json shapes)
LLAMA70B_EMBEDDING = 128_256 * 8_192  # vocab x d_model: the largest ZeRO-3 gather unit

ORLHF_70B = [
    "--pretrain", "llama-3.1-70b", "--remote_rm_url", "http://rm", "--advantage_estimator",
    "group_norm", "--ref_num_nodes", "4", "--ref_num_gpus_per_node", "8",
    "--actor_num_nodes", "4", "--actor_num_gpus_per_node", "8", "--vllm_num_engines", "8",
    "--vllm_tensor_parallel_size", "4", "--zero_stage", "3", "--adam_offload",
    "--gradient_checkpointing", "--rollout_batch_size", "128", "--n_samples_per_prompt", "8",
    "--train_batch_size", "128", "--micro_train_batch_size", "1", "--prompt_max_len", "1024",
    "--generate_max_len", "4096", "--init_kl_coef", "0.001",
]  # fmt: skip
"""An OpenRLHF GRPO launch of a 70B actor: reference on 4 x 8 A800 under --zero_stage 3,
Adam offload (train_ppo_ray.py arguments)."""


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = result.stdout
    return json.loads(out[out.index("{") :])


def _groups(out: dict) -> dict[str, dict]:
    detail = out.get("estimate", out)
    detail = detail.get("placement_detail", detail)
    return {g["name"]: g for g in detail["groups"]}


def _job(group: dict, what: str) -> dict:
    return next(j for j in group["jobs"] if j["what"] == what)


# --- 1. forward-only models sharded as the framework shards them -----------------------------


def test_openrlhf_70b_reference_is_sharded_under_zero3() -> None:
    """OpenRLHF wraps the reference in the actor's DeepSpeed strategy (--zero_stage applies to
    every DeepSpeed model, openrlhf/trainer/ray/launcher.py): under ZeRO-3 each of the 32 GPUs
    keeps 1/32 of the bf16 weights, plus two gathered units (the computing and the prefetched
    layer; the largest unit is the 128,256 x 8,192 embedding/head)."""
    out = _json(["import", "openrlhf", "--json", "-H", "a800", "--", *ORLHF_70B])
    groups = _groups(out)
    ref = _job(groups["reference"], "reference forward")
    assert ref["layout"]["zero"] == "3" and ref["layout"]["dp"] == 32
    m = ref["memory_breakdown_bytes"]
    assert LLAMA70B_PARAMS % 32 == 0
    assert m["weights"] == LLAMA70B_PARAMS // 32 * 2 == 4_409_606_656  # bf16, 1/32 each
    assert m["buffers"] == 2 * LLAMA70B_EMBEDDING * 2 == 4_202_692_608  # two bf16 units
    assert m["gradients"] == m["optimizer"] == 0
    assert groups["reference"]["fits"]  # whole, 141 GB of bf16 weights would not fit 80 GB


def test_openrlhf_adam_offload_keeps_the_gradient_partition_on_the_host() -> None:
    """--adam_offload is DeepSpeed's offload_optimizer (openrlhf/utils/deepspeed_utils.py
    get_train_ds_config), and ZeRO-3 then allocates every gradient partition on the CPU
    (deepspeed/runtime/zero/stage3.py v0.13.2: ``self.device`` is the CPU under
    offload_optimizer, line 226; ``grad_partitions_flat_buffer`` on it, line 500): the actor's
    update keeps only its bf16 parameter shard, 1/32 on each of the 32 GPUs."""
    out = _json(["import", "openrlhf", "--json", "-H", "a800", "--", *ORLHF_70B])
    assert out["run"]["deployment"]["train"]["offload"] == ["optimizer", "grads"]
    m = _job(_groups(out)["actor"], "actor train")["memory_breakdown_bytes"]
    assert m["weights"] == LLAMA70B_PARAMS // 32 * 2  # bf16 shard
    assert m["gradients"] == m["optimizer"] == 0


@pytest.mark.parametrize("zero, whole", [("3", False), ("2", True), ("0", True)])
def test_forward_only_group_follows_the_forward_zero(zero: str, whole: bool) -> None:
    """ZeRO-0..2 shard no parameters: the forward-only model is whole on each GPU; ZeRO-3
    shards it 1/dp (DeepSpeed ZeRO stages, Rajbhandari et al. 2020 §5)."""
    out = _json(["rlvr", "-m", "llama-3.1-8b", "-B", "8", "-T", "256", "--framework", "none",
                 "--zero", zero, "--groups", "rollout=4,actor=4,reference=4",
                 "--json"])  # fmt: skip
    ref = _job(_groups(out)["reference"], "reference forward")
    m = ref["memory_breakdown_bytes"]
    params = 8_030_261_248  # Llama-3.1-8B (Meta model card)
    assert m["weights"] == (params * 2 if whole else params // 4 * 2)
    assert (m["buffers"] == 0) is whole


def test_group_zero_option_is_honoured_on_a_forward_only_group() -> None:
    base = ["rlvr", "-m", "llama-3.1-8b", "-B", "8", "-T", "256", "--framework", "none",
            "--zero", "0", "--json", "--groups"]  # fmt: skip
    plain = _groups(_json([*base, "rollout=4,actor=4,reference=4"]))
    sharded = _groups(_json([*base, "rollout=4,actor=4,reference=4[zero=3]"]))
    w_plain = _job(plain["reference"], "reference forward")["memory_breakdown_bytes"]["weights"]
    w_sharded = _job(sharded["reference"], "reference forward")["memory_breakdown_bytes"]
    assert w_sharded["weights"] * 4 == w_plain
    assert plain["actor"]["peak_memory_bytes_per_device"] == (
        sharded["actor"]["peak_memory_bytes_per_device"]
    )


@pytest.mark.parametrize(
    "groups, option",
    [
        ("rollout=4,actor=4,reference=4[offload=optimizer]", "reference[offload=optimizer]"),
        ("rollout=4,actor=4,reference=4[ckpt=full]", "reference[ckpt=full]"),
        ("rollout=4[zero=3],actor=4,reference=4", "rollout[zero=3]"),
    ],
)
def test_option_that_does_not_apply_is_a_one_line_error(groups: str, option: str) -> None:
    result = runner.invoke(app, ["rlvr", "-m", "llama-3.1-8b", "-B", "8", "-T", "256",
                                 "--groups", groups])  # fmt: skip
    assert result.exit_code != 0
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in result.output


def test_group_offload_option_applies_to_its_trainer() -> None:
    base = ["rlvr", "-m", "llama-3.1-8b", "-B", "8", "-T", "256", "--framework", "none",
            "--json", "--groups"]  # fmt: skip
    on = _groups(_json([*base, "rollout=4,actor=4[zero=3;offload=optimizer],reference=4"]))
    off = _groups(_json([*base, "rollout=4,actor=4[zero=3],reference=4"]))
    train_on = _job(on["actor"], "actor train")["memory_breakdown_bytes"]
    train_off = _job(off["actor"], "actor train")["memory_breakdown_bytes"]
    assert train_on["optimizer"] == 0 < train_off["optimizer"]
    params = 8_030_261_248
    assert train_off["optimizer"] == 12 * params // 4  # fp32 master + 2 moments over 4 ranks
    assert on["actor"]["host_memory_bytes_per_device"] == train_off["optimizer"]


def test_rlvr_and_placements_give_the_same_group_sizes() -> None:
    groups = "rollout=4[tp=2],actor=4,reference=4[zero=3]"
    args = ["-m", "llama-3.1-8b", "-B", "8", "-T", "256", "--zero", "3", "--groups", groups,
            "--json"]  # fmt: skip
    one = _groups(_json(["rlvr", *args]))
    out = _json(["placements", "-a", "rlvr", *args])
    other = _groups(out["placements"][0] if "placements" in out else out)
    assert {n: g["peak_memory_bytes_per_device"] for n, g in one.items()} == {
        n: g["peak_memory_bytes_per_device"] for n, g in other.items()
    }


# --- 2. offload kinds: CPU Adam versus between-phases offload ----------------------------------

QWEN7B_PARAMS = 7_615_616_512  # Qwen2.5-7B, untied head (Qwen's config.json shapes)
VERL = "tests/data/frameworks/verl_grpo.yaml"
VERL_OFFLOAD = [
    "actor_rollout_ref.actor.fsdp_config.param_offload=True",
    "actor_rollout_ref.actor.fsdp_config.optimizer_offload=True",
]


def _stages(extra: list[str]) -> dict[str, dict]:
    return _json(["import", "verl", VERL, "--json", *extra])["estimate"]["stages"]


def test_verl_fsdp_offload_maps_to_phase_offload() -> None:
    out = _json(["import", "verl", VERL, "--json", *VERL_OFFLOAD])
    assert out["run"]["deployment"]["train"]["offload"] == ["params-idle", "optimizer-idle"]


def test_verl_fsdp_offload_lowers_the_other_phases_not_the_update() -> None:
    """verl's param_offload / optimizer_offload move the FSDP shard and the Adam states to the
    host between phases and back for update_actor (verl/workers/fsdp_workers.py): the update's
    peak is unchanged; generation loses the actor's Adam m and v (8 B/param / 8 GPUs) and its
    fp32 parameter shard (4 B/param / 8: verl loads the actor in fp32, fsdp_workers.py
    torch_dtype = torch.float32 if self._is_actor), the actor's log-prob forward the Adam
    states."""
    off, on = _stages([]), _stages(VERL_OFFLOAD)
    shard, adam = QWEN7B_PARAMS // 8 * 4, QWEN7B_PARAMS // 8 * 8
    assert QWEN7B_PARAMS % 8 == 0
    assert on["training"]["memory_bytes_per_device"] == off["training"]["memory_bytes_per_device"]
    assert on["training"]["memory_breakdown_bytes"]["optimizer"] == adam
    gen_off, gen_on = (s["generation"]["memory_breakdown_bytes"] for s in (off, on))
    assert gen_off["optimizer"] - gen_on["optimizer"] == adam
    assert gen_off["weights"] - gen_on["weights"] == shard
    assert (on["generation"]["host_memory_bytes_per_device"]
            - off["generation"]["host_memory_bytes_per_device"]) == adam + shard  # fmt: skip
    fwd_off, fwd_on = (
        next(i for i in s["assessment"]["invocations"] if i["what"].startswith("actor forward"))
        for s in (off, on)
    )
    assert fwd_on["host_memory_bytes_per_device"] - fwd_off["host_memory_bytes_per_device"] == adam
    peak = "memory_bytes_per_device"
    assert on["generation"][peak] < off["generation"][peak]


def test_cpu_adam_removes_the_optimizer_at_update_time() -> None:
    """CPU Adam (DeepSpeed offload_optimizer, OpenRLHF --adam_offload) keeps the states on the
    host for the step too: the update's peak loses them, unlike the phase offload above
    (bf16 parameters: the fp32 master, m and v, 12 B/param / 8 GPUs)."""
    base = ["rlvr", "-m", "qwen2.5-7b", "-B", "8", "-T", "256", "--gpus", "8", "--zero", "3",
            "--param-dtype", "bf16", "--json", "--offload"]  # fmt: skip
    cpu = _json([*base, "optimizer"])["stages"]["training"]["memory_breakdown_bytes"]
    phase = _json([*base, "optimizer-idle"])["stages"]["training"]["memory_breakdown_bytes"]
    assert cpu["optimizer"] == 0 and phase["optimizer"] == QWEN7B_PARAMS // 8 * 12


# --- 3. the engine's refit buffer -------------------------------------------------------------

TRL = "tests/data/frameworks/trl_grpo.yaml"
ACCEL = "tests/data/frameworks/trl_accelerate_zero3.yaml"
QWEN7B_EMBEDDING = 152_064 * 3_584  # vocab x hidden (Qwen2.5-7B config.json)


def test_trl_separate_engine_leaves_room_for_the_refit_tensor() -> None:
    """TRL's vLLM server receives each parameter whole (trl/scripts/vllm_serve.py
    update_named_param: torch.empty(shape), NCCL broadcast, load_weights in place): the
    largest, the bf16 embedding, is in flight beside the whole reservation. The recommended
    gpu_memory_utilization f is the largest hundredth with
    (refit)(1 + slack) + f x capacity + CUDA context <= capacity (one GPU: no communicator)."""
    out = _json(["import", "trl", TRL, "--accelerate", ACCEL, "-H", "h20", "--json"])
    est = out["estimate"]
    gen = _job(_groups(out)["rollout"], "actor generate")["memory_breakdown_bytes"]
    refit = QWEN7B_EMBEDDING * 2
    assert gen["buffers"] == refit == 1_089_994_752
    cap = est["capacity_bytes_per_device"]
    context, slack = 512 * 2**20, 0.05
    by_hand = int((cap - context - refit * (1 + slack)) / cap * 100) / 100
    without = int((cap - context) / cap * 100) / 100
    assert est["recommended_gpu_memory_utilization"] == by_hand < without
    f = est["recommended_gpu_memory_utilization"]
    assert (1 - f) * cap >= refit * (1 + slack) + context


def test_sleeping_engine_refit_precedes_its_kv_pool() -> None:
    """verl refits a woken engine before it allocates its KV cache (wake_up(tags=["weights"])
    then ["kv_cache"], verl/workers/sharding_manager/fsdp_vllm.py): one full tensor is far
    below the pool it precedes, so the generation peak does not grow."""
    out = _json(["import", "verl", VERL, "--json"])
    assert out["run"]["deployment"]["engine"]["sleep"] is True
    gen = out["estimate"]["stages"]["generation"]["memory_breakdown_bytes"]
    assert gen["buffers"] == 0 < QWEN7B_EMBEDDING * 2 < gen["kv_cache"]
