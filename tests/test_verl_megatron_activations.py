"""The activations of verl's Megatron actor for Qwen3-235B-A22B on 32 H20, as `rlmcost import
verl` reads the example examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh (issue 18: 97.7 GiB
predicted for a 95.0 GiB device, 53.0 GiB of it activations).

Each factor of the figure comes from a source apart from rlmcost's own code:

- micro-batches: verl's Megatron actor under ``use_dynamic_bsz`` cuts a mini-batch into
  min(sequences, ceil(tokens / max_token_len)) Karmarkar-Karp micro-batches
  (verl/utils/seqlen_balancing.py ``rearrange_micro_batches`` @b178a3cd, called from
  verl/workers/actor/megatron_actor.py with ``ppo_max_token_len_per_gpu x CP`` = 11,680): at
  the maximum lengths (2,048 + 9,632 = 11,680 tokens a sequence) one sequence each, 128 of them
  per mini-batch (16 prompts x 8 responses, TP 4 x PP 8 = 32 GPUs: one data-parallel rank);
- in flight: Megatron-core's 1F1B without interleaving runs ``pipeline_parallel_size -
  pipeline_parallel_rank - 1`` warm-up forwards, then one more before its first backward
  (megatron/core/pipeline_parallel/schedules.py @core_v0.15.0, the Megatron-core verl's
  docker/Dockerfile.stable.vllm pins): p - s micro-batches on stage s, 7 on stage 1;
- layers: ``account_for_embedding_in_pipeline_split`` and ``account_for_loss_in_pipeline_split``
  make 94 + 2 = 96 slots, 12 a stage: 11 layers on the first and last, 12 on the others;
- bytes a token keeps per layer on a TP 4 rank with SP, flash attention, no dropout
  (Qwen3-235B-A22B config.json: d 4096, 64 query and 4 KV heads of 128, 128 experts of 1,536,
  top 8; bf16): the norm and QKV inputs 2 x 2 x 4096 / 4 = 4,096; q, k, v 2 x (8192 + 2 x 512)
  / 4 = 4,608; the attention output 2 x 8192 / 4 = 4,096; the fp32 log-sum-exp 4 x 64 / 4 = 64;
  the FFN norm and router inputs 2 x 2 x 4096 / 4 = 4,096; the 8 dispatched copies 2 x 8 x 4096
  / 4 = 16,384; the fp32 router logits 4 x 128 / 4 = 128 (Korthikanti et al. 2022,
  arXiv:2205.05198 §4, with the terms rlmcost.parallel.activations lists); and as Megatron-core
  (core_v0.15.0, Transformer Engine 2.10) keeps them, the two terms an unfused count of 58,048
  (gate, up, act and down input 2 x 4 x 8 x 1536 / 4 = 24,576; no q/k norm) has otherwise:
  the example's fused SwiGLU (``bias_activation_fusion=True``, also mbridge's Qwen3-MoE
  default) saves each copy's input and the down projection's, 2 x 3 x 8 x 1536 / 4 = 18,432
  (fusions/fused_bias_swiglu.py ``WeightedSwiGLUFunction``), and its fp32 routing weight,
  4 x 8 / 4 = 8; Qwen3's q and k RMSNorms (TENorm ``q_layernorm`` / ``k_layernorm``) save their
  inputs, 2 x (8192 + 512) / 4 = 4,352, and their fp32 1 / rms a head, 4 x 68 / 4 = 68.
  Sum 56,332.

By that count the peak stage allocates 93.2 GiB of weights, gradients and activations (51.5 GiB
of them activations; 53.0 GiB by the unfused count), 1.8 GiB under the H20's 95.0 GiB before the
CUDA context, communicators and allocator slack (rlmcost: 2.9 GiB): at the device's edge.

The version of the script whose 4-node run verl's PR #3019 (65c59c71) shows recomputed every
layer (``recompute_granularity=full``, ``recompute_method=uniform``, ``recompute_num_layers=1``);
PR #3174 (f6f91006) dropped the recomputation with no 235 B run shown. Without it the example
is at or past an H20's memory at its maximum lengths; with it, training takes 47.3 GiB.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.parallel.activations import saved_bytes_per_token_layer
from rlmcost.specs import get_model

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "frameworks"
NOW = DATA / "verl_run_qwen3-235b_megatron_96gb.sh"  # @b178a3cd, no recomputation
RAN = DATA / "verl_run_qwen3-235b_megatron_96gb_pr3019.sh"  # @65c59c71, full recomputation


def _training(script: Path) -> dict:
    res = runner.invoke(app, ["import", "verl", str(script), "--hardware", "h20", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout[res.stdout.index("{"):])
    return out["estimate"]["stages"]["training"]


def test_a_moe_layer_token_keeps_megatron_cores_terms_on_a_tp4_sp_rank() -> None:
    arch = get_model("qwen3-235b-a22b").arch()
    attention = 4096 + 4608 + 4096 + 64
    qk_norms = 4352 + 68
    ffn = 4096 + 16384 + 128
    fused = saved_bytes_per_token_layer(arch, 4, True, moe=True, fused_glu=True)
    assert fused == attention + qk_norms + ffn + 18432 + 8 == 56332
    unfused = saved_bytes_per_token_layer(arch.with_(qk_norm=False), 4, True, moe=True)
    assert unfused == attention + ffn + 24576 == 58048  # the count before either term


def test_the_examples_activations_are_megatrons_1f1b_peak_of_verls_micro_batches() -> None:
    """Stage 1 (12 layers, 7 micro-batches in flight) holds the device's peak: its weights and
    fp32 gradient buffer are a layer larger than the first stage's (11 layers, 8 in flight)."""
    training = _training(NOW)
    assert training["memory_breakdown_bytes"]["activations"] == 7 * 12 * 11680 * 56332
    assert training["fits"] is False
    # 1.06 GiB short of an H20's 95.0 GiB (96 GB) with rlmcost's 2.9 GiB of CUDA context,
    # communicators and allocator slack: within 3 % of the device, at its edge
    short = training["shortfall_bytes"]
    assert 0 < short < 0.03 * (training["memory_bytes_per_device"] - short)


def test_the_version_verl_ran_on_four_h20_nodes_fits() -> None:
    """Full recomputation keeps each layer's SP-sharded input (2 x 4096 / 4 bytes a token) for
    the 8 micro-batches of the first stage's 12 layers (94 - 10 on the last = 84 over 7), plus
    one layer rebuilt for one micro-batch."""
    training = _training(RAN)
    kept = 8 * 12 * 11680 * 2048 + 11680 * 56332
    assert training["memory_breakdown_bytes"]["activations"] == kept
    assert training["fits"] is True
