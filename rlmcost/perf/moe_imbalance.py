"""Uneven expert loads: the busiest expert-parallel rank sets a dropless MoE layer's pace.

**Mechanism.** Megatron-core's dropless MoE (``moe_expert_capacity_factor: None``, the
all-to-all dispatcher; megatron/core/transformer/moe/token_dispatcher.py
``MoEAlltoAllTokenDispatcher``, NVIDIA/Megatron-LM @d98e8a64dd) sends every token copy to the
rank that holds its expert, whatever the count: ``preprocess`` reads the per-expert counts of
the routing map, the dispatch all-to-all moves each rank's copies with those split sizes, and
each rank's grouped GEMMs run the copies it received. The combine all-to-all that follows
cannot finish before the last rank's experts do, so a layer's expert phase lasts as long as
the busiest rank's: its received copies (grouped GEMMs, their activation) and its all-to-all
volume, ``gamma`` times the mean where ``gamma`` = max / mean copies over the P_e ranks of
the EP group. RL recipes route with the trained model's router and no balancing term: NeMo RL
sets ``moe_router_load_balancing_type: "none"``, ``moe_router_bias_update_rate: 0.0`` and
``freeze_moe_router: true`` (examples/configs/grpo_math_1B_megatron.yaml, NVIDIA-NeMo/RL v0.3.0
lines 86-89, kept through v0.7.0), and no cited RL trainer drops or pads tokens (where a layout
sets Megatron-core's capacity factor, :mod:`rlmcost.parallel.moe_capacity` caps the ratio at
it); a balancing loss would not even the routing of a given batch in any case (it acts on the
gradients).

**The ratio** :data:`EP_RANK_IMBALANCE_RATIO` is a published measurement, not a fit: UltraEP
(Wei et al., arXiv 2606.04101 v3, abstract) measures the inter-rank imbalance of real routing
without balancing at 1.30-4.01 across MoE models of 106B to 671B parameters (DeepSeek-V3 class),
in training and in serving prefill, in EP groups of up to a rack-scale node; a per-layer,
per-micro-batch balancer brings it to 1.01-1.04 and the throughput from 0.63 to 0.943 of the
force-balanced ideal (1.49x). The value is the low end of that range (an assumption: the
rlmcost rows' EP groups of 8 to 64 ranks with 2 to 32 experts each are taken to be no more
even than the most even of the paper's); ``high`` keeps the range's top.

**Applied** (:func:`busiest_rank_count`) to what the busiest rank runs: its grouped-GEMM rows
(``perf.step_pass``'s tokens per local expert), its expert activation and its dispatch and
combine all-to-all bytes (and ETP's gather and scatter where ETP > 1), forward and backward
(the backward replays the same routing); only where P_e > 1 (one rank holding every expert has
no other rank to wait for) and only in a framework's deployment (``placement.pass_options``;
the paper's idealized run and ``rlmcost train`` keep balanced routing, ``StepOptions``'s 1.0).
Left at the mean: the attention, the router, the source-side permutation and the host floor
(:mod:`~rlmcost.perf.moe_host`). Engines' rollouts (vLLM with expert parallelism) are not
touched here.

**Checked for issue 18** (MoE log-prob forwards 2-3x fast): this term moves them by a few
per cent only. At NeMo RL v0.3's packed 14,524-token forward micro-batches (Qwen3-30B-A3B, TP 2,
EP 8, H100) rlmcost's layer costs 4.5 ms of GPU time forward (GEMMs 1.7, all-to-all 1.3,
memory-bound 0.8, attention 0.5), above the host floor's 2.9 ms, while the blog's 23 s for the
two forwards implies about 16 ms per layer; the imbalance adds about 0.6 ms (7.4 -> 8.2 s).
Megatron-core's eager MoE training is slower than rlmcost's kernels at large micro-batches too,
with loads capped: Qwen3-30B-A3B on 16 H800 (TP 1, PP 2, EP 8, seq 8192, MBS 1, GBS 128,
capacity factor 1.0, no CUDA graphs) at 10.361 s per step, 6325 tokens/GPU/s
(alibaba/Pai-Megatron-Patch issue 643), is about 24 ms per layer forward and backward (10.361 s
/ 17 pipeline slots / 24 layers) where rlmcost prices 15.9 ms; the difference has no sourced
mechanism yet (candidates: per-sync host gaps of the dispatcher, NCCL all-to-all below the
link model, grouped-GEMM efficiency).

**Checked against a measured pair** (``validate`` source ``megatron_moe_modelzoo``): NVIDIA's
Megatron-MoE-ModelZoo (best_practice/qwen3/readme.md @e8650517d6, 'Long Context') trains
Qwen3-235B-A22B on 256 H100 (TP 4, PP 8, EP 8, CP 1-8, seq 16k-128k, DeepEP) both with
``--moe-router-force-load-balancing`` and dropless on the checkpoint's own router (aux loss
1e-3): 295/237, 335/277, 368/320, 389/357 TFLOPS. rlmcost's step grows linearly in the ratio
(the busiest rank's expert rows and all-to-all bytes, its MoE recompute included), and the
four ratios imply one value, 1.52-1.59 (tests/test_validate_modelzoo.py), inside UltraEP's
range and above its low end; priced at 1.30 the dropless rows are predicted 7-11 % fast. The
four rows hold the same 4096 tokens per EP rank and micro-batch (CP splits the longer
sequences) at one EP size, so they cannot say whether the ratio depends on tokens per rank
or EP size (DODOCO, arXiv 2605.20982 abstract, measures on H100 with real checkpoints, Qwen3-30B
among them, that EP 4-32 changes the per-expert max / mean token ratio by at most 5 % and that
real text shows no batch-size trend, mock tokens one: per expert, not the per-rank ratio priced
here, which also averages over the rank's experts); the constant stays the published low end (a
pre-training run with an auxiliary loss is no more uneven than RL's frozen, unbalanced
router, so 1.30 likely under-prices RL's MoE updates).
"""

from __future__ import annotations

import math

from rlmcost.errors import SpecError
from rlmcost.perf.rl_constants import Constant

EP_RANK_IMBALANCE_RATIO = Constant(
    1.30, 1.30, 4.01,
    "UltraEP, arXiv 2606.04101 v3 abstract: inter-rank imbalance 1.30-4.01 without balancing",
)  # fmt: skip
"""Max / mean token copies over an EP group's ranks under real, unbalanced routing (module doc)."""

MOE_IMBALANCE_NOTE = (
    f"MoE expert parallelism: each layer's experts wait for the busiest EP rank, "
    f"{EP_RANK_IMBALANCE_RATIO.value:.2f} x the mean token copies (its grouped GEMMs, "
    "activation and all-to-all bytes), the low end of the 1.30-4.01 inter-rank imbalance "
    "UltraEP (arXiv 2606.04101) measures for unbalanced routing; RL recipes route without "
    "balancing (NeMo RL: moe_router_load_balancing_type none, frozen router; "
    "rlmcost.perf.moe_imbalance)"
)
"""The output's note where a framework's deployment runs experts over P_e > 1 ranks."""


def busiest_rank_count(mean: int, imbalance: float, ep: int) -> int:
    """Token copies (or their bytes) on the busiest of ``ep`` expert-parallel ranks when the
    ranks hold ``mean`` on average and ``imbalance`` = max / mean: ``ceil(imbalance x mean)``
    for ``ep`` > 1, else ``mean`` (module doc). Exact int.

    >>> busiest_rank_count(4096, 1.30, 8)
    5325
    >>> busiest_rank_count(4096, 1.30, 1)  # one rank holds every expert
    4096
    >>> busiest_rank_count(4096, 1.0, 8)  # balanced routing
    4096
    """
    if ep < 2 or imbalance == 1.0:
        return mean
    if imbalance < 1.0:
        raise SpecError(f"MoE rank imbalance = max / mean load is at least 1, got {imbalance}")
    return math.ceil(imbalance * mean)
