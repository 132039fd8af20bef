"""Rollout buffers (rlmcost.frameworks.buffers, rlmcost.deployment.buffers) and over-budget
samples packed alone (rlmcost.placement.group_own._apply_token_budget)."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.buffers import Routes, present, rollout_buffer_bytes, sample_bytes
from rlmcost.frameworks.buffers import FRAMEWORK_BUFFERS, Copy, Needs

runner = CliRunner()


def run_json(*args: str) -> dict:
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def _bytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def test_one_slime_sample_on_the_gpu_counted_from_its_tensors():
    # The tensors slime's actor holds per sample during the update of a GRPO run with a
    # reference, built with the dtypes its source gives (slime/backends/megatron_utils/
    # actor.py _get_rollout_data: tokens torch.long, loss_masks torch.int, rollout log-probs
    # torch.float32, rollout_mask_sums torch.float32; forward_only's log_probs and
    # ref_log_probs, compute_advantages_and_returns' kl and returns, fp32 per response token).
    prompt, response = 1024, 3072
    tokens = torch.zeros(prompt + response, dtype=torch.long)
    loss_masks = torch.ones(response, dtype=torch.int)
    mask_sum = torch.zeros(1, dtype=torch.float32)
    fp32 = [torch.zeros(response, dtype=torch.float32) for _ in range(5)]
    by_hand = _bytes(tokens, loss_masks, mask_sum, *fp32)
    assert by_hand == 106_500
    tensors = present(FRAMEWORK_BUFFERS["slime"], Copy.DEVICE, {Needs.REFERENCE}, train=True)
    assert sample_bytes(tensors, prompt, response, Routes()) == by_hand
    # a log-prob forward holds neither the KL nor the returns yet
    fwd = present(FRAMEWORK_BUFFERS["slime"], Copy.DEVICE, {Needs.REFERENCE}, train=False)
    assert sample_bytes(fwd, prompt, response, Routes()) == by_hand - _bytes(*fp32[:2])


def test_one_verl_sample_in_the_driver_counted_from_its_dataproto():
    # verl's DataProto after compute_advantage (verl/trainer/ppo/ray_trainer.py), GRPO with a
    # reference, no critic: prompts (S) + responses (T), input_ids, attention_mask,
    # position_ids int64 over S + T; response_mask int64; old_log_probs, entropys,
    # ref_log_prob, token_level_scores, token_level_rewards, advantages, returns fp32 over T.
    s, t = 512, 1536
    ctx = [torch.zeros(s + t, dtype=torch.long) for _ in range(4)]
    resp = [torch.zeros(t, dtype=torch.long)] + [torch.zeros(t) for _ in range(7)]
    tensors = present(FRAMEWORK_BUFFERS["verl"], Copy.HOST_BATCH, {Needs.REFERENCE}, True)
    assert sample_bytes(tensors, s, t, Routes()) == _bytes(*ctx, *resp) == 120_832


def test_routed_experts_of_one_sample_as_slime_decodes_them():
    # slime/utils/types.py: int32 ids reshaped (len(tokens) - 1, num_layers, moe_router_topk);
    # Qwen3-30B-A3B: 48 layers, 8 experts per token (its config.json)
    ids = torch.zeros((2048 - 1, 48, 8), dtype=torch.int32)
    tensors = [t for t in FRAMEWORK_BUFFERS["slime"].tensors
               if t.copy is Copy.HOST_BATCH and t.needs is Needs.ROUTING_REPLAY]  # fmt: skip
    assert sample_bytes(tensors, 1024, 1024, Routes(48 * 8, 48 * 8)) == _bytes(ids)


def test_buffers_scale_with_the_batch_and_shard_over_data_parallel_ranks():
    one = rollout_buffer_bytes("slime", True, 1024, (1024,) * 512, 8, 1, 8, {Needs.REFERENCE})
    two = rollout_buffer_bytes("slime", True, 1024, (1024,) * 1024, 8, 1, 8, {Needs.REFERENCE})
    assert two.device == 2 * one.device and two.host == 2 * one.host
    wide = rollout_buffer_bytes("slime", True, 1024, (1024,) * 512, 4, 1, 8, {Needs.REFERENCE})
    assert wide.device == 2 * one.device  # every TP rank of a DP group holds the shard
    assert rollout_buffer_bytes(None, True, 1024, (1024,) * 512, 8, 1, 8, ()).device == 0
    # verl moves one micro-batch at a time to the GPU: no growth with the batch there
    v1 = rollout_buffer_bytes("verl", True, 1024, (1024,) * 512, 8, 2, 8, ())
    v2 = rollout_buffer_bytes("verl", True, 1024, (1024,) * 1024, 8, 2, 8, ())
    assert v1.device == v2.device > 0 and v2.host == 2 * v1.host


SLIME_COLOCATED = ("grpo", "-m", "qwen3-8b", "--gpus", "8", "--hardware", "h100-sxm",
                   "--framework", "slime", "--sleep", "--zero", "1",
                   "--offload", "params-idle,optimizer-idle,grads-idle", "-S", "1024",
                   "-T", "4096", "--no-sized-defaults")  # fmt: skip
# (slime's argument defaults under those flags: TP 1, no reference; not its Qwen3-4B example's
# TP 2 and KL reference that --framework slime takes for an 8 B actor)


def _training(d: dict) -> dict:
    return d["stages"]["training"]


def test_a_slime_colocated_runs_peak_grows_with_samples_per_step():
    # slime --colocate (trainer states paused during generation: the *-idle offloads; engine
    # asleep during training), Qwen3-8B on 8 H100, Megatron distributed optimizer, 1024 +
    # 4096 tokens: 128 prompts x 512 samples (65,536 per step) against 512 x 16 (8,192)
    big = run_json(*SLIME_COLOCATED, "-B", "128", "-K", "512")
    small = run_json(*SLIME_COLOCATED, "-B", "512", "-K", "16")
    peak = max(s["memory_bytes_per_device"] for s in big["stages"].values())
    assert peak > max(s["memory_bytes_per_device"] for s in small["stages"].values())
    assert peak == _training(big)["memory_bytes_per_device"]  # at the rollout -> train switch
    # by hand: 65,536 / 8 DP ranks = 8,192 samples per GPU, each tokens int64 x 5120, loss
    # mask int32 x 4096, rollout log-probs, log-probs, KL, returns fp32 x 4096, mask sum fp32
    per_sample = 8 * 5120 + 4 * 4096 + 4 * 4 * 4096 + 4
    assert _training(big)["memory_breakdown_bytes"]["rollout"] == 8192 * per_sample
    assert _training(small)["memory_breakdown_bytes"]["rollout"] == 1024 * per_sample
    assert big["stages"]["generation"]["memory_breakdown_bytes"]["rollout"] == 0


def test_routing_replay_keeps_the_routed_experts_in_host_memory():
    base = ("grpo", "-m", "qwen3-30b-a3b", "--gpus", "8", "--framework", "slime", "--ep", "8")
    off, on = run_json(*base), run_json(*base, "--routing-replay")
    # 64 x 8 samples of 1024 + 1024 tokens; per sample 2047 x 48 x 8 int32 ids: the object
    # store's whole batch over 8 GPUs plus each rank's pinned copy of its shard (pp = 1)
    ids = 2047 * 48 * 8 * 4
    grown = _training(on)["host_memory_bytes_per_device"] - _training(off)[
        "host_memory_bytes_per_device"]
    assert grown == 512 * ids // 8 * 2
    assert on["run"]["deployment"]["routing_replay"] is True


def test_the_timeline_shows_the_rollout_term_where_it_is_resident():
    d = run_json("grpo", "-m", "qwen3-8b", "--gpus", "8", "--framework", "slime", "--timeline",
                 "--no-sized-defaults")  # fmt: skip
    entries = {e["what"]: e for e in d["memory_timeline"][0]["entries"]}
    # 512 samples / 8 DP ranks = 64 per GPU of 1024 + 1024 tokens (slime's argument defaults:
    # TP 1, no reference)
    fwd = 8 * 2048 + 4 * 1024 + 4 + 2 * 4 * 1024
    assert entries["actor forward"]["terms_bytes"]["rollout"] == 64 * fwd
    assert entries["actor train"]["terms_bytes"]["rollout"] == 64 * (fwd + 2 * 4 * 1024)
    assert entries["actor generate"]["terms_bytes"]["rollout"] == 0


def test_no_rollout_buffers_without_generation_or_under_the_ideal_iteration():
    ideal = run_json("grpo", "-m", "qwen3-8b", "--gpus", "8", "--ideal")
    assert all(s["memory_breakdown_bytes"]["rollout"] == 0 for s in ideal["stages"].values())
    dpo = run_json("dpo", "-m", "qwen3-8b", "--gpus", "8", "--framework", "openrlhf")
    assert all(s["memory_breakdown_bytes"]["rollout"] == 0 for s in dpo["stages"].values())


@pytest.mark.parametrize("framework", ["none", "slime"])
def test_a_sample_over_the_token_budget_runs_alone_in_its_micro_batch(framework):
    zero = "1" if framework == "slime" else "3"  # slime: Megatron-LM's distributed optimizer
    base = ("grpo", "-m", "8b", "--gpus", "8", "--zero", zero, "--framework", framework)
    # 1024 + 1024 tokens per sequence: a budget of 1000 holds none of them, so each runs
    # alone, a micro-batch of one 2048-token sequence, as a budget of exactly 2048 gives
    over = run_json(*base, "--max-tokens-per-gpu", "1000")
    exact = run_json(*base, "--max-tokens-per-gpu", "2048")
    for stage in ("assessment", "training"):
        a, b = over["stages"][stage], exact["stages"][stage]
        assert a["memory_breakdown_bytes"]["activations"] == b["memory_breakdown_bytes"][
            "activations"] > 0
        assert a["memory_bytes_per_device"] == b["memory_bytes_per_device"]
    # the output says the budget batched nothing (a silent micro-batch 1 otherwise)
    said = [n for n in over["notes"] if n.startswith("--max-tokens-per-gpu 1000 is below one")]
    assert len(said) == 1 and "give at least 2048" in said[0], over["notes"]
    assert not any("is below one sequence" in n for n in exact["notes"])
    # a budget that holds two sequences doubles the micro-batch
    two = run_json(*base, "--max-tokens-per-gpu", "4096")
    act = two["stages"]["training"]["memory_breakdown_bytes"]["activations"]
    assert act > exact["stages"]["training"]["memory_breakdown_bytes"]["activations"]


def test_the_default_frameworks_budget_below_one_sequence_is_said():
    # the default framework (nemo-rl) does not refuse it (frameworks.buffers.OVER_BUDGET_REFUSED
    # names verl alone): the update runs one 1024 + 1024-token sequence per micro-batch
    out = run_json("grpo", "-m", "8b", "--gpus", "8", "--max-tokens-per-gpu", "100")
    said = [n for n in out["notes"] if "is below one sequence" in n]
    assert len(said) == 1 and "(2,048 tokens per GPU of a 2,048-token sequence)" in said[0]
    assert "update actor" in said[0]


def test_nemo_rl_carries_the_routes_in_the_narrowest_integer_on_device_and_host():
    base = ("grpo", "-m", "qwen3-30b-a3b", "--gpus", "8", "--framework", "nemo-rl", "--ep", "8")
    off, on = run_json(*base), run_json(*base, "--routing-replay")
    # routed_experts [B, S, L_moe, top_k] (nemo_rl/algorithms/grpo.py), int8 for 128 experts
    # (nemo_rl/models/generation/interfaces.py resolve_routed_experts_dtype): per sample of
    # 1024 + 1024 padded positions, 48 MoE layers x 8
    ids = torch.zeros((1, 2048, 48, 8), dtype=torch.int8)
    per_sample = _bytes(ids)
    assert per_sample == 786_432
    dev = [_training(d)["memory_breakdown_bytes"]["rollout"] for d in (off, on)]
    host = [_training(d)["host_memory_bytes_per_device"] for d in (off, on)]
    assert on["layout"]["dp"] == 8
    assert dev[1] - dev[0] == 512 // 8 * per_sample  # each GPU's DP shard (data.to("cuda"))
    assert host[1] - host[0] == 512 * per_sample // 8  # the driver's batch over 8 GPUs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "qwen3-8b", "--routing-replay"], "qwen3-8b is dense"),
        (["-m", "qwen3-30b-a3b", "--ep", "8", "--framework", "openrlhf", "--routing-replay"],
         "not for --framework openrlhf"),
    ],
)
def test_routing_replay_without_routes_to_keep_is_a_one_line_error(args, message):
    r = runner.invoke(app, ["grpo", "--gpus", "8", *args])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_one_trl_sample_as_grpo_trainer_buffers_it_on_the_gpu():
    # trl/trainer/grpo_trainer.py _generate_and_score_completions' output with vLLM and the
    # defaults (beta 0: no reference; importance sampling 'sequence_mask'): prompt and
    # completion ids and masks torch.long, sampler's and recomputed log-probs fp32 per
    # completion token, advantage and importance ratio fp32 per sample
    s, t = 256, 768
    ids = [torch.zeros(n, dtype=torch.long) for n in (s, t, s, t)]
    logps = [torch.zeros(t) for _ in range(2)]
    per_sample = [torch.zeros(1), torch.zeros(1, 1)]
    tensors = present(FRAMEWORK_BUFFERS["trl"], Copy.DEVICE, (), train=True)
    assert sample_bytes(tensors, s, t, Routes()) == _bytes(*ids, *logps, *per_sample)
    d = run_json("grpo", "-m", "qwen3-8b", "--gpus", "8", "--framework", "trl", "-S", "256",
                 "-T", "768")
    # 64 x 8 samples over 8 processes, padded to the longest (all 768 here)
    assert _training(d)["memory_breakdown_bytes"]["rollout"] == 64 * _bytes(
        *ids, *logps, *per_sample)


def test_per_sample_tensors_keep_their_lengths_and_padded_ones_take_the_longest():
    slime = present(FRAMEWORK_BUFFERS["slime"], Copy.DEVICE, (), train=True)
    nemo = present(FRAMEWORK_BUFFERS["nemo-rl"], Copy.DEVICE, (), train=True)
    lengths = (100, 300, 300, 900)
    one = rollout_buffer_bytes("slime", True, 50, lengths, 2, 1, 2, ())
    # slime balances the DP shards by tokens (slime/utils/dp_schedule.py): half the batch each
    whole = sum(sample_bytes(slime, 50, t, Routes()) for t in lengths)
    assert one.device == -(-whole // 2)
    # NeMo RL pads every sample to the longest (BatchedDataDict): 2 samples per shard
    padded = rollout_buffer_bytes("nemo-rl", True, 50, lengths, 2, 1, 2, ())
    assert padded.device == 2 * sample_bytes(nemo, 50, 900, Routes())
