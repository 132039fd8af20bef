"""A MoE layer's expert block on one rank (part of :mod:`~rlmcost.perf.step_pass`).

* :func:`routed_experts`: the router GEMM [T, E, d] (or NeMo RL's fp64 router,
  :mod:`~rlmcost.perf.moe_router`) and the grouped expert GEMMs on Megatron-core's expert grid:
  E / P_e local experts of width d_e / ETP, the stage's token copies spread over its P_t P_c P_d
  ranks in ETP groups, so ``T k ETP P_e / (P_t E)`` rows per local expert under balanced
  routing, the busiest rank's otherwise (:mod:`~rlmcost.perf.moe_imbalance`).
* :func:`ep_comm_s`: one pass side's dispatch and combine over the EP group
  (:mod:`~rlmcost.perf.ep_dispatch`) and, with ETP > 1 and ETP != TP, the expert-TP all-gather
  of the dispatched tokens and reduce-scatter of the outputs (Megatron-core
  ``MoEAlltoAllTokenDispatcher``), the busiest rank's bytes; under the ``allgather``
  dispatcher its all-gather and reduce-scatter over the expert-TP x EP group instead
  (:func:`~rlmcost.perf.ep_dispatch.allgather_comm_s`).
* With Megatron-core's capacity factor both are capped at, or padded to, the experts' capacity
  (:mod:`~rlmcost.parallel.moe_capacity`).

Both also give the forward seconds that Megatron-core's ``--recompute-modules moe`` reruns
(:mod:`~rlmcost.perf.selective_ac`): the step pass adds them to ``StagePass.modules``.

**Checked, left unchanged** (which part of a Megatron-core MoE layer on H100 is under-priced;
benchmarks/moe_layer_parts.py prints rlmcost's parts, tests/test_moe_grouped_gemm.py pins
the comparison):

* grouped expert GEMMs (``--moe-grouped-gemm``: TE ``GroupedLinear``, ``general_grouped_gemm``,
  multi-stream cuBLAS unless ``NVTE_USE_CUTLASS_GROUPED_GEMM``), priced as one batched GEMM of
  the tile model. NVIDIA/TransformerEngine PR 2045 measures on H100, BF16, (g, m, n, k) =
  (8, 4096, 768, 2048) and (16, 2048, 768, 2048): 627.9 and 553.9 TFLOP/s on TE 2.7 + CUDA
  12.9 (508.8 and 398.8 on TE 2.2); rlmcost prices both at 615, 0.98-1.11 x the stack the
  ModelZoo rows ran (Megatron-MoE-ModelZoo dockers/H100.Dockerfile @e865051: PyTorch 25.06,
  CUDA 12.9, TE 2.6), too close to carry their -3..-26 % / +8..+24 % errors. NeMo RL v0.3
  pins TE 2.3.0 (pyproject.toml at v0.3.0), nearer the TE 2.2 figures (1.21-1.54 x slower than
  priced); at 1.54 x its expert GEMMs would add about 0.7 ms per layer forward at 16k tokens,
  under 1 s of the 23 s log-prob phase (rlmcost 8.2 s), and stay under the training floor;
* the NVLink all-to-all: NCCL's achieved bus bandwidth on H100 for non-all-reduce collectives is
  about 370 of 450 GB/s (NCCL's maintainer, NVIDIA/nccl-tests issue 212); rlmcost's 0.8 x 450 =
  360 GB/s is that rate. Permutation and router (the ModelZoo's ``--moe-permute-fusion``,
  ``--moe-router-fusion``, model_configs/benchmarking/Qwen3-235B-A22B.yaml) stay memory-bound
  bytes: no per-kernel H100 figure was found;
* the ModelZoo long-context rows' error is flat (+8..+13 % forced balance, 16k-128k) while
  attention grows from 25 to 76 % of the step and the MoE layer's share shrinks: a MoE-only
  term would shrink the error with the length, so no single MoE part explains it;
* NeMo RL's trainer (v0.3 Qwen3-30B-A3B, 4096-token micro-batches): the layer's GPU parts
  (3.7 ms forward and backward, expert GEMMs 1.1 ms) sit under the host floor (8.8 ms,
  :mod:`~rlmcost.perf.moe_host`), so no GPU-side part moves those rows; the blog's 50 s against
  rlmcost's 29.7 s points at the eager all-to-all layer's host and synchronisation time, for
  which no H100 measurement with numbers was found (the floor is a B200 run with DeepEP and
  CUDA graphs). Not found either: a per-part H100 breakdown in Megatron-core's MoE README
  (@d98e8a64dd: "EP All-to-All can consume 30-40% of training time without optimization");
  ModelZoo issue 7's nsys profile is on B200.
* what the ModelZoo's H100 step-time rows ran (yanring/Megatron-MoE-ModelZoo 8017e11, the
  commit that published them, 2025-05-27; PR 2: TE 2.4, PyTorch 25.04): forced balance in all
  five (examples/qwen3/run_235b.sh, so no routing skew), Megatron's unfused cross-entropy (no
  ``--cross-entropy-loss-fusion`` in the yaml until 274316a; now priced: pp32-a2a -34.0 ->
  -26.0 %, its loss chunk sets the pace), no ``--moe-router-fusion`` (Megatron-core v0.14);
* per token or per micro-batch (issue 18, moeh100): Pai-Megatron-Patch issue 658 runs the
  pp32-a2a layout (PP 32 VPP 3, one layer per virtual stage, EP 8, all-to-all dispatcher, forced
  balance, no CUDA graphs) on 256 H800 at micro-batch 4 (16,384 tokens, full recompute) and 1
  (4,096), TP 1 and 2 (``validate`` source ``pai_megatron_patch``). Micro-batch 4 is reproduced
  within -1.4 / -5.8 %, micro-batch 1 missed by -14.7 / -25.5 %. Per slot (a micro-batch's pass
  of one virtual stage) the miss is 3.6 (TP 2) and 4.2 ms (TP 1) at micro-batch 1, 3.2 and 1.4
  ms at micro-batch 4; the ModelZoo rows at 4,096 tokens miss 4.0 (pp32-a2a, H100), 5.1
  (ep32-deepep) and 2.3 ms (tp4-ep8) per slot though their slots hold 1, 3 and 3 layers. A
  per-token part (grouped-GEMM rate, all-to-all or permutation bytes) would miss 4 x as much per
  slot at micro-batch 4, so it is at most 0.8 of TP 2's 3.6 ms (0.35 of TP 1's 4.2); a host
  floor (max(GPU, host)) cannot give both TP 1's 28.7 ms and TP 2's 14.3 ms slots at micro-batch
  1 (TP 1 also reruns the MoE forward: a third more host work at most); a time added to each
  slot, taken from the micro-batch-1 row of a TP (3.6 / 4.2 ms), puts its micro-batch-4 row
  within +0.9 / +2.7 %. Unsourced, not priced: no measurement
  separates what that time is (the interleaved schedule's host work per chunk step, the
  dispatcher's stream sync keeping the host from running ahead, or exposed pipeline receives;
  rlmcost prices the overlapped sends' exposed 0.07 s on pp32-a2a, 1.16 s unoverlapped, 0.7 ms
  per slot). The long-context rows' miss is another kind: 9.7-18.5 ms per slot of 74-222 ms
  (8-13 %, proportional). NeMo RL's Qwen3-30B-A3B trainer runs PP 1 (one slot per micro-batch of
  48 layers), so a per-slot time does not explain its 50 s against 29.7 s.
  Nor is it one kind across models: Qwen3-30B-A3B on 16 H800 (alibaba/Pai-Megatron-Patch issue
  643: TP 1, PP 2 or 4 without interleaving, EP 8 or 4, 8,192 tokens, capacity factor 1.0, no
  recompute, no CUDA graphs; 10.361 / 20.992 s; ``validate`` rows since the capacity factor is
  priced, :mod:`~rlmcost.parallel.moe_capacity`) is missed by 32 % at both PP sizes, 8.2-8.4 ms
  per layer (17.2-17.7 priced, 25.4-26.1 published) in slots of 24 and 12 layers alike: per
  layer, not per slot, at 4,096 (2,048) rows per local expert (TE PR 2045's shape class; the
  issue's image pai-megatron-patch:25.04 does not say its TE: on TE 2.2's rates, 1.21-1.54 x
  slower than priced, the grouped GEMMs would carry part of it).
  Re-checked after the three per-token terms (eager expert kernels, unfused permutation, the
  local-expert sort) took micro-batch 4 to +13.4 / +9.1 % (TP 1 / 2) and micro-batch 1 to
  -2.9 / -19.0 %: nothing is charged twice. Megatron-core at the issue's commit (Pai 2b201af's
  Megatron-LM-250624 = @6a6cd47883) reruns ``MoELayer.forward``'s router, dispatch, experts
  and combine once under full recomputation or the ``moe`` module, keeping no routing across
  the two forwards; rlmcost charges the all-to-alls three times per layer, as that code runs
  them (tests/test_moe_recompute_dispatch.py). The host floor does not bind on these rows.
  The micro-batch-4 excess is the unfused permutation's atomic scatter-adds (4.9-5.1 s of the
  step; fused, the rows would read +1.5 / -2.2 %): the rows ran it unfused (the example script
  passes no ``--moe-permute-fusion``, default off at @6a6cd47883), and no faster rate than PR
  175760's was found (tile-ai/TileOPs PR 608's PyTorch ``scatter_add_`` unpermute reference
  reaches 0.22-0.25 TB/s on H200 by its own count, top-2 at 512-2048 tokens, with its
  ``zeros`` inside the timed loop per TileOPs PR 733: slower still, not a rate). Fitting a
  per-token scale and a time per slot to each TP's two rows gives 0.84 and 5.6 ms (TP 1),
  0.84 and 4.7 ms (TP 2): one consistent split, unsourced, not applied.
* GPT-OSS 120B on Megatron-Bridge 25.11, BF16 (``validate`` source ``megatron_bridge``,
  tests/test_validate_bridge_rows.py: 128 experts of width 2880, top-4, expert biases, half the
  layers on a 128-key window, no CUDA graphs, alltoall, forced balance) is predicted fast on every
  system. What each GPT-OSS part ran as in the 25.11 container (Megatron-Bridge r0.2.0 @046518960,
  its Megatron-LM cba6b0ed, TE 2.9, cuDNN 9.13.1.26 per docs/releases/software-versions.md):
  attention is cuDNN's fused kernel on every layer (TE 2.9 disables FlashAttention for the
  learnable-sink softmax; its arbitrary-seqlen cuDNN backend takes sinks from 9.13.1 and the (128,
  0) window with a causal mask; the provider's fallback to MCore's local attention needs TE <
  2.8), priced as ``flash`` with the window's pairs; the clamped quick-GEGLU is one compiled
  kernel after an eager clamp and concatenation, and the second projection's bias a per-expert
  Python loop (both now priced, :mod:`~rlmcost.perf.moe_eager_ops`: H100 +41.5 -> +24.0 %, GB200
  +49.6 -> +44.9 %, B200 +127.7 -> +115.8 % at EP 8); the first projection's bias is TE's GEMM
  epilogue (no kernel). Hidden 2880 as K now pays Blackwell's per-tile fixed cost (K_0 = 358,
  :mod:`~rlmcost.perf.gemm_tile_cost`, OpenXLA's sm_100 table: GB200 +41.0 -> +38.9 %, B200
  +17.4 -> +16.1 %). Left as is: hidden 2880 as M or N (22.5 tiles of 128:
  ``Device.gemm_s``'s tile model pads them), 64-dim heads (within cuDNN's
  d <= 128), and
  ``torch.tensor(linear_offset, device=...)`` in ``weighted_bias_quick_geglu_impl``, a blocking
  host-to-device copy per call (no sourced time for the queue it drains; TEGroupedMLP's
  ``tokens_per_expert.tolist()`` already syncs once a layer).
  The all-to-all dispatcher's sort by local expert and back (:mod:`~rlmcost.perf.moe_sort_chunks`)
  moves them +24.0 -> +21.4 % (H100), +44.9 -> +43.3 % (GB200), +19.8 -> +18.6 % (B200); the
  missing time per layer pass is now 10.4 ms (H100, 99 passes), 4.3 ms (GB200, 720). The
  B200 row runs the container's preset EP 64 (scripts/performance/configs/gpt_oss/
  workload_base_configs.py @046518960, GPT_OSS_120B_B200_BF16_BASE_CONFIG), not the page's
  printed EP 8: the B200 preset first took EP 8 on 2026-03-20 (Megatron-Bridge 9d3647ff2, with
  HybridEP), after which the page shows 13722 tokens/s/GPU at EP 8 (26.02.01) against 8047 at
  EP 64 (26.02) beside 25.11's 8213; at EP 64 (all-to-all over the 8 nodes' InfiniBand)
  rlmcost predicts 9839 (+19.8 %; 17727, +115.8 %, at the printed EP 8), 9862 (+22.6 %) for
  26.02's batch, and at EP 8 21864 for 26.02.01's (+59.3 %). GB200's figure matches a later
  branch's settings (gaod/r0.2.0_test 2afd5bc6f: seq 8192, GBS 1280, MBS 1, EP 64,
  ``moe_flex_dispatcher_backend`` hybridep, no CUDA graphs), so that run may have used HybridEP
  rather than the alltoall priced; not priced (a test branch, not the release).
  GB200's prediction touched the host floor (:mod:`~rlmcost.perf.moe_host`) until attention took
  its head-dim-64 rate (below). Checked again (issue 18, gptoss), not priced: (1) the miss is per
  token, not per pass: the page's 26.02 GB200 row (GBS 1280, MBS 4, seq 4096, EP 64, the V2
  preset at Megatron-Bridge b19588a05: alltoall, no CUDA graphs) runs 15,784 tokens/s/GPU beside
  25.11's 15,876 at MBS 1 and seq 8192, 1.76 and 1.75 us per token and layer at 16,384 and 8,192
  tokens per pass, so neither a host floor per pass nor attention's length term carries it;
  rlmcost predicted 26,122 there (+65.5 %), about 1.1 us per token and layer (22,432, +42.1 %,
  with attention's head-dim-64 rate). H100 (26.02: MBS 1,
  5,993; 25.11: MBS 4) splits into about 4.8 ms per pass and 3.3 us per token (rlmcost 2.6).
  (2) Attention (7 % of GB200's step as first priced): cuDNN's own benchmark of GPT-OSS's heads
  (NVIDIA/cudnn-frontend sdpa_benchmark_training, 9.19.1 and 9.22) runs head dim 64 at 0.44
  (GB200) and 0.53 (H200) of the same run's head-dim-128 rate, and a 128-key window at 0.12 on
  GB200: now priced (:mod:`~rlmcost.perf.head_dim_attention`; FlashAttention-3's own head-dim
  ratio on H100 is milder, 0.77-0.84), GB200 +38.5 -> +25.3 %, B200 +15.8 -> +12.3 %, H100
  +18.8 -> +14.9 %, the 26.08 MXFP8 row +18.6 -> +7.7 %. (3) HybridEP, which the
  25.11 GB200 branch set and NVIDIA later called not performant on GPT-OSS (a13dad2a7): the 26.02
  run without it shows the same rate. (4) GB300 with CUDA graphs over attention, router and
  preprocessing and no recomputation (26.02, 19,412) is 23 % above GB200, while rlmcost's floor
  does not bind at 16,384 tokens: host time beyond the floor, per segment between the dispatcher's
  and the clamp's blocking copies, may remain; no measurement splits it. What is left is a
  Blackwell-wide per-token part (the GEMMs' rate at hidden 2880, the memory-bound kernels' rate
  on Blackwell, the NVL72 all-to-all) for which no sourced figure was found. A second round
  (the GB200 row's 'audit' note, tests/test_validate_bridge_rows.py) found the NVL72 all-to-all
  priced within 10 % of HybridEP's published GB200 rates (DeepEP docs/README_Hybrid-EP.md,
  branch hybrid-ep @94a9f8f6b: 448-484 GB/s at 32-36 ranks, 32 SMs, against 491), cuDNN's
  fused attention kept (TE 2.9's Blackwell filter needs a deterministic run), the loss TE's
  fused one, and no Grace host time per kernel derivable from the page's GB300/B300 pairs.
  YaRN RoPE runs unfused (Megatron-Bridge turns ``apply_rope_fusion`` off for ``yarn``, and
  Megatron-core's fused path refuses YaRN's mscale): priced kernel by kernel
  (:mod:`~rlmcost.perf.megatron_rope`), H100 +21.4 -> +18.8 %, GB200 +43.3 -> +41.0 %, B200
  +18.6 -> +17.4 %. Found and not priced, each under 1 % of these steps: GPTOSSProvider's
  ``bias_dropout_fusion`` False (Megatron-core's unfused ``_bias_dropout_add_func``,
  fusions/fused_bias_dropout.py @cba6b0ed: the attention output's bias add a kernel of its own,
  2 d x bytes a token), and the GQA query's ``reshape`` copy out of the split QKV output
  (``get_query_key_value_tensors``, transformer/attention.py @cba6b0ed), common to every
  Megatron-core GQA row.
* the MoE permutation without TE's fusion (issue 18, :mod:`~rlmcost.perf.moe_permute`), per row:
  off in Pai-Megatron-Patch issues 643 and 658 (``run_mcore_qwen3.sh`` passes no
  ``--moe-permute-fusion``; Megatron-core's default ``False``, transformer_config.py @6a6cd47883)
  and in NeMo RL v0.5/v0.6's Qwen3-30B-A3B recipes (grpo_math_1B.yaml ``false``, copied onto the
  model by megatron_policy_worker.py / megatron/setup.py); on in the ModelZoo's yaml, in
  Megatron-Bridge 25.11 (qwen_provider.py, gpt_oss_provider.py ``True`` @7e8111c23), in NeMo RL
  v0.3 (no key; NeMo's ``Qwen3MoEConfig.moe_permute_fusion = True``, read at NeMo 00558c4f), in
  v0.5/v0.6's Qwen3-235B and DeepSeek-V3 recipes and in v0.7 (base yaml ``true``, dd3e8b721).
  Priced, issue 643 moves -32.1/-32.4 -> -24.2/-24.7 % (about 6.2-6.4 ms per layer pass still
  missing, of 8.2-8.4); issue 658 micro-batch 1 -25.5/-14.7 -> -20.8/-6.7 %, micro-batch 4
  -1.4/-5.8 -> +9.2/+5.1 %. NeMo RL v0.3's 50 s training (fused) is not this mechanism.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlmcost.parallel.comm import Collective
from rlmcost.parallel.moe_capacity import capacity_rows, capped_count
from rlmcost.perf.ep_dispatch import EpDispatcher, allgather_comm_s, ep_all_to_all_s
from rlmcost.perf.moe_eager_ops import price_expert_eager_ops
from rlmcost.perf.moe_imbalance import busiest_rank_count
from rlmcost.perf.moe_router import price_router_fp64

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass, StepContext


def routed_experts(
    c: StepContext, gemm: Callable[..., None], out: StagePass
) -> tuple[int, int]:
    """Price the router and the routed experts' GEMMs through ``gemm`` (into ``out``); return
    the (rows, per-rank width) of the experts' activation."""
    arch, lay, opt = c.arch, c.layout, c.options
    e, k, etp, t = int(arch.n_experts), int(arch.top_k), lay.expert_tp, lay.tp
    T, d, p = c.tokens, int(arch.d_model), arch.ffn_kind.projections
    local = e // lay.ep  # the busiest rank's rows per local expert (moe_imbalance)
    mean = max(1, -(-T * k * etp * lay.ep // (t * e)))
    cap = capacity_rows(lay, T, k, e)  # Megatron-core's capacity factor (moe_capacity)
    busiest = busiest_rank_count(mean, opt.moe_rank_imbalance, lay.ep)
    per_expert = capped_count(busiest, mean, mean, cap, lay.moe_pad_to_capacity)
    price_router_fp64(c, out) if opt.router_fp64 else gemm(T, e, d, 1, False)  # a torch GEMM
    de, w, lat = int(arch.d_expert) // etp, int(arch.expert_width), int(arch.moe_latent)
    if lat:  # a latent MoE's fc1/fc2_latent_proj (Megatron-Core moe_layer.py: "duplicated")
        gemm(T, lat, d)
        gemm(T, d, lat)
    gemm(per_expert, (p - 1) * de, w, local)
    gemm(per_expert, w, de, local)
    price_expert_eager_ops(c, per_expert * local, local, de, out)  # clamp, fc2 bias (eager)
    return per_expert * local, de


def permuted_rows(c: StepContext) -> int:
    """The rank's token copies through the permutation and un-permutation, ``T k ETP / P_t``;
    under a capacity factor the kept ones, as Megatron-core's all-to-all dispatcher hands
    ``permute`` ``num_out_tokens``: ``num_local_tokens_per_expert.sum()`` of the masked routing
    map when dropping, ``capacity x num_experts`` when padded (``preprocess``, token_dispatcher.py
    @d98e8a64dd). The source rank's routing taken as balanced, so the count scales by the
    capacity's ratio to the mean rows (:func:`~rlmcost.parallel.moe_capacity.capped_count`, as
    :func:`ep_comm_s` scales its bytes). Exact int.
    """
    arch, lay = c.arch, c.layout
    e, k, t, T = int(arch.n_experts), int(arch.top_k), lay.tp, c.tokens
    rows = T * k * lay.expert_tp // t
    mean = max(1, -(-T * k * lay.expert_tp * lay.ep // (t * e)))
    return capped_count(rows, rows, mean, capacity_rows(lay, T, k, e), lay.moe_pad_to_capacity)


def ep_comm_s(c: StepContext) -> float:
    """Seconds of one pass side's EP communication of one MoE layer (module docstring)."""
    arch, lay, imb = c.arch, c.layout, c.options.moe_rank_imbalance
    t, etp, k = lay.tp, lay.expert_tp, int(arch.top_k)
    x, d, T = c.workload.activation_dtype.bytes, int(arch.expert_width), c.tokens
    tok = T * d * x // (t if lay.sp else 1)  # the rank's distinct tokens' bytes (latent: l)
    if c.options.ep_dispatcher is EpDispatcher.ALLGATHER:
        return allgather_comm_s(c, tok, 8 if c.options.router_fp64 else 4)
    mean = max(1, -(-T * k * etp * lay.ep // (t * int(arch.n_experts))))
    cap, pad = capacity_rows(lay, T, k, int(arch.n_experts)), lay.moe_pad_to_capacity

    def busiest(b: int) -> int:  # the busiest rank's bytes, capped (moe_capacity)
        return capped_count(busiest_rank_count(b, imb, lay.ep), b, mean, cap, pad)

    s = 2 * ep_all_to_all_s(c, busiest(tok * k), tok)
    if etp > 1 and etp != t:  # the expert-TP gather of the tokens, scatter of the outputs
        gathered = busiest(T * k * d * x * etp // t)
        s += c.comm(Collective.ALL_GATHER, gathered, etp, ("etp",))
        s += c.comm(Collective.REDUCE_SCATTER, gathered, etp, ("etp",))
    return s
