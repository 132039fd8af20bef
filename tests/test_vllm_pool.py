"""vLLM's KV-cache pool as vLLM sizes it (rlmcost.deployment.vllm_profile,
rlmcost.placement.engine_budget): reservation - weights - the profile run's peak - non-torch
memory (vllm/v1/worker/gpu_worker.py determine_available_memory, v0.9-v0.20), and vLLM's
offline batch defaults by device (vllm/engine/arg_utils.py)."""

from __future__ import annotations

import json
from math import floor

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.compiled.memory import memory_per_rank
from rlmcost.deployment.overhead import COMMUNICATOR_BYTES
from rlmcost.deployment.vllm_profile import (
    available_kv_bytes,
    llm_class_defaults,
    non_torch_bytes,
    profile_peak_bytes,
)
from rlmcost.parallel.layout import Layout
from rlmcost.specs import get_hardware, get_model

runner = CliRunner()

# Llama-3.1-70B (config.json): d 8192, d_ff 28672, 64 heads of 128, 8 KV heads, V 128,256.
D, D_FF, Q, KV, V = 8192, 28672, 8192, 1024, 128_256
ARGS = ["grpo", "-m", "llama-3.1-70b", "-H", "h100", "--gpus", "8", "-B", "16", "-K", "4",
        "-S", "512", "-T", "1024", "--rollout-tp", "4", "--gpu-memory-utilization", "0.6",
        "--json"]  # fmt: skip


def _generation(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = result.stdout
    return json.loads(out[out.index("{") :])["stages"]["generation"]["memory_breakdown_bytes"]


def test_llm_class_defaults_follow_vllm_by_device() -> None:
    # vllm/engine/arg_utils.py: >= 70 GiB and "a100" not in the name -> 1024 / 16384, else
    # 256 / 8192 (PR 16158 kept 1024 for H100/H200; PR 17885's A100 exception).
    h100, a100, h20 = (get_hardware(n) for n in ("h100", "a100-80gb", "h20"))
    assert llm_class_defaults(h100.hbm_usable_bytes, h100.name) == (1024, 16384)
    assert llm_class_defaults(a100.hbm_usable_bytes, a100.name) == (256, 8192)
    assert llm_class_defaults(h20.hbm_usable_bytes, h20.name) == (1024, 16384)
    assert llm_class_defaults(40 * 2**30, "l40s") == (256, 8192)


def test_profile_peak_is_the_larger_of_forward_and_sampler() -> None:
    # Sampler: rows x V x 14 B (vLLM >= 0.17's Triton top-k/top-p) beside the hidden states.
    sampler = 1024 * V * 14 + 16384 * D * 2
    assert profile_peak_bytes(1, 1024, V, 16384 * D * 2, 14) == sampler
    assert profile_peak_bytes(sampler + 1, 1024, V, 16384 * D * 2, 14) == sampler + 1
    assert non_torch_bytes(1) == 0 and non_torch_bytes(4) == COMMUNICATOR_BYTES
    assert available_kv_bytes(100, 60, 30, 20) == -10


def test_70b_tp4_pool_at_util_06_is_vllms_formula_by_hand() -> None:
    """The pool of a Llama-3.1-70B TP4 engine at gpu_memory_utilization 0.6 on H100 under
    NeMo RL (vllm.LLM: max_num_seqs 1024, max_num_batched_tokens 16384 on H100), by hand."""
    gen = _generation(ARGS)
    tokens, rows = 16384, 1024
    # One layer's transients per token per TP rank: d + 2 (q + kv) / 4 + 2 d_ff / 4 (gated).
    forward = tokens * (D + 2 * Q // 4 + 2 * KV // 4 + 2 * D_FF // 4) * 2
    assert forward == 889_192_448
    # NeMo RL v0.7's vLLM 0.20: the Triton top-k/top-p sampler's 14 B a logit beside the
    # 16384 x 8192 bf16 hidden states (rlmcost.deployment.vllm_profile)
    sampler = rows * V * 14 + tokens * D * 2
    assert gen["activations"] == forward
    assert gen["logits"] == sampler - forward  # the sampler's peak above the forward's
    capacity = get_hardware("h100").hbm_usable_bytes
    weights = memory_per_rank(get_model("llama-3.1-70b").arch(), Layout(tp=4), "generate", 1,
                              1).weights  # fmt: skip
    pool = floor(0.6 * capacity) - weights - sampler - COMMUNICATOR_BYTES
    assert gen["kv_cache"] == pool


def test_max_num_batched_tokens_sizes_the_profiled_forward() -> None:
    per_token = (D + 2 * Q // 4 + 2 * KV // 4 + 2 * D_FF // 4) * 2
    gen = _generation([*ARGS, "--framework", "verl"])  # verl passes 8192 (rollout.yaml)
    assert gen["activations"] == 8192 * per_token
    gen = _generation([*ARGS, "--max-num-batched-tokens", "2048"])  # NeMo RL's async engine
    assert gen["activations"] == 2048 * per_token


def test_sglang_keeps_one_sequence_workspace() -> None:
    """SGLang's reservation is not vLLM's profile: its workspace stays one sequence's."""
    gen = _generation([*ARGS, "--engine", "sglang"])
    assert gen["activations"] == (512 + 1024) * (D + 2 * Q // 4 + 2 * KV // 4
                                                 + 2 * D_FF // 4) * 2  # fmt: skip
