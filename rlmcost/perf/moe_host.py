"""Host-bound MoE layers: the floor a Megatron-core MoE layer's host work puts under its pass.

A Megatron-core MoE layer runs eagerly (no CUDA graphs): Python issues its router, permutation,
all-to-all, grouped expert GEMMs and un-permutation kernel by kernel, and the all-to-all token
dispatcher blocks the host once per layer forward until the routing counts reach the CPU
(``MoEAlltoAllTokenDispatcher._maybe_dtoh_and_synchronize``, megatron/core/transformer/moe/
token_dispatcher.py, NVIDIA/Megatron-LM @d98e8a64dd: a D2H copy of ``tokens_per_expert`` and
the all-to-all split sizes, then ``d2h_event.synchronize()``). The host cannot run ahead of
the GPU past that point, so a layer whose kernels are short waits on its launches: one rank's
pass of a MoE layer takes max(GPU time, host time). (``--moe-pad-expert-input-to-capacity``
skips that sync; the floor is kept, :mod:`rlmcost.parallel.moe_capacity`.) Large
micro-batches hide the host time; small ones (RL's packed 4096-token micro-batches) expose it.

**The host time** :data:`MOE_LAYER_HOST_S` is a measured figure, not a fit to a validation
row: NVIDIA's Megatron-Bridge performance archive (NVIDIA-NeMo/Megatron-Bridge
docs/performance-summary-archive.md @067f987df) publishes Qwen3-30B-A3B (48 MoE layers)
pre-training on one DGX-B200 (8 GPUs, EP 8, TP = PP = CP = 1, seq 4096) at micro-batch 1:
9691 tokens/s/GPU (section '26.02 NeMo Container', MXFP8, GBS 512) and 9299 (section '25.11
NeMo Container', FP8-MX, GA 64). One 4096-token micro-batch then takes 4096 / 9691 = 0.423 s
(0.440 s), 8.8 ms (9.2 ms) per layer forward and backward, while its GPU work is far smaller
(rlmcost's BF16 kernels: 0.13 s per micro-batch; FP8 is faster still), and the same page's
micro-batch-4 rows reach 26,695 tokens/s/GPU on the same system ('26.02.01', 4x the tokens in
1.45x the time): the micro-batch-1 row is host-bound, and its time per layer is the host's.
The value is the 26.02 figure; low and high span it to the 25.11 one. That run is already
lighter on the host than an eager all-to-all layer: the recipe at the 26.02 page's commit
(scripts/performance/configs/qwen/qwen3_workload_base_configs.py @c0b9a0003,
``QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_*``) takes DeepEP's flex dispatcher (whose dropless path
still reads the token count back, "CPU sync" in token_dispatcher.py) and TE CUDA graphs over
``moe_router`` and ``moe_preprocess``; so a framework without them (NeMo RL's Megatron
recipes) spends at least this much. Megatron-core's MoE guide names the mechanism and its
cures (megatron/core/transformer/moe/README.md @d98e8a64dd, "CPU Overhead Bottleneck": gaps
between GPU kernels where the CPU cannot launch fast enough; CUDA graphs, or "increase
micro-batch size").

**Forward and backward.** The measured time is per layer forward and backward together. The
split follows the kernels the host issues: each forward GEMM has two backward GEMMs (data and
weight gradient) and each memory-bound kernel twice the traffic, so the host's share is taken
as 1/3 forward, 2/3 backward (an assumption; no published figure times the passes apart). A
forward-only pass (log-probs) is floored at the forward share.

Applied to every MoE layer, whatever the framework: other eager MoE implementations are assumed
no lighter on the host (Hugging Face transformers' sparse MoE blocks loop over the hit experts
in Python, one host read per layer to find them). The floor is below the GPU time of large
micro-batches, which it leaves unchanged (Qwen3-30B-A3B on 4 x 4096 tokens, Qwen3-235B-A22B at
4096 tokens on GB200 are near it); dense layers are not floored.

**Full recomputation.** Under ``--recompute-granularity full`` (NeMo RL's
``activation_checkpointing: true``: ``recompute_method`` uniform, ``recompute_num_layers`` 1,
nemo_rl/models/megatron/setup.py at v0.7.0) Megatron-core reruns each layer's forward inside
its backward (megatron/core/transformer/transformer_block.py ``checkpointed_forward`` @d98e8a64dd),
the MoE layer's token dispatcher and its host sync included, so the host issues the forward's
work again before the backward's: the backward then lasts at least the whole host time (the
forward share again plus the backward's), against the recomputed forward's and the backward's
GPU time together. Selective recomputation (Megatron's ``moe`` module) is not floored. The figure is
from a DGX-B200 (x86 host); other hosts are assumed alike. NeMo RL's fp64 router
(``moe_router_dtype``, :mod:`~rlmcost.perf.moe_router`) and Megatron-core's unfused permutation
(``moe_permute_fusion: false``: argsort, index_select and atomic scatter-adds,
:mod:`~rlmcost.perf.moe_permute`) add GPU time under it; the unfused path's extra launches are
not added to the floor (the measured run's recipe fuses it: qwen_provider.py's True).

**Checked and left out (issue 18).** (1) Per-expert GEMM launches (``SequentialMLP``, one GEMM
pair per local expert) do not apply to NeMo RL's Qwen3 MoE rows: grouped GEMM was on before
NeMo RL commit 905315492 made it a recipe key, through Megatron-Bridge's
``qwen3_moe_bridge.py`` (``moe_grouped_gemm = True`` at the commits NeMo RL v0.4.0, v0.5.0 and
v0.6.0 pin: 62f4704b, 1e9a459b, 95e5f38f) and NeMo's ``Qwen3MoEConfig`` (v0.3.0's NeMo
backend; read at NVIDIA/NeMo 00558c4f, not the pinned branch). (2) A Grace host: PyTorch
dispatches a Linear forward in 37.1 us on GB200 against 13.5 us on a DGX-H100's Xeon 8480C
(NVIDIA/TransformerEngine issue 2053), but the floor x 2.75 on GB200 moves the colocated GB200
Qwen3-30B-A3B rows to +21..+49 % while fixing their 1-step off-policy rows (-52 % -> +26 %), so no
single host factor fits both; not applied. (3) The forward share: no measurement separates the
passes, so the kernel-count share stays. Re-checked (issue 18, moe_imbalance's round): NeMo RL
v0.3's Qwen3-30B-A3B log-probs no longer reach the floor (14,524-token packed micro-batches,
4.5 ms of GPU time per layer forward against 2.9 ms); a 1/2 share moves 18 rows, all GB200 but
one, by up to 3.8 points, toward their figures (median 11.6 -> 11.4 %).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.layout import Checkpointing
from rlmcost.perf.rl_constants import Constant

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass

MOE_LAYER_HOST_S = Constant(
    4096 / (9691 * 48), 4096 / (9691 * 48), 4096 / (9299 * 48),
    "Megatron-Bridge performance-summary-archive.md @067f987df, Qwen3_30B_a3B DGX-B200 MBS 1",
)  # fmt: skip
"""Host seconds of one MoE layer's forward and backward for one micro-batch (module doc)."""

FORWARD_SHARE_RATIO = 1 / 3
"""Forward's share of the host time: 1 of the 3 GEMMs per weight (module doc; assumption)."""


MOE_HOST_NOTE = (
    f"MoE layers: each pass lasts at least the host's {MOE_LAYER_HOST_S.value * 1e3:.1f} ms per "
    "layer forward and backward (1/3 of it forward; under --ckpt full the backward reruns that "
    "third), Megatron-core's eager MoE layer measured host-bound by Megatron-Bridge "
    "(rlmcost.perf.moe_host); small micro-batches reach it"
)
"""The output's note on the floor (evaluation.deployment adds it for MoE models)."""


def floor_host_bound(layer: StagePass, host_s: float, recompute_s: float = 0.0,
                     ckpt: Checkpointing = Checkpointing.NONE) -> None:  # fmt: skip
    """Add to ``layer`` (one MoE layer's pass) the host time its GPU parts do not cover, as
    part ``host``: forward max(0, share x host_s - fwd), backward likewise with the rest; under
    full recomputation (``ckpt``) the backward max(0, host_s - bwd - ``recompute_s``), the
    rerun forward's host share on the backward's host time and its GPU seconds beside the
    backward's (module docstring)."""
    if host_s <= 0:
        return
    fwd_host = FORWARD_SHARE_RATIO * host_s
    fwd, bwd = layer.fwd_s, layer.bwd_s
    layer.fwd["host"] += max(0.0, fwd_host - fwd)
    if ckpt is Checkpointing.FULL:
        layer.bwd["host"] += max(0.0, host_s - bwd - recompute_s)
    else:
        layer.bwd["host"] += max(0.0, host_s - fwd_host - bwd)
