"""Host launch time of an eager decode step (no CUDA graphs), by layer kind.

An engine run with ``enforce_eager`` (vLLM) or Hugging Face ``generate`` launches every kernel
of every layer from Python each decode step; CUDA graphs replay them in one launch. The launches
are asynchronous, so the GPU runs behind the host: a step lasts the longer of its GPU work and
its launches, plus the host's serial work (scheduling, per-sequence processing), that is
``max(GPU, launch) + overheads`` (:meth:`rlmcost.perf.generation.Engine.launch_floor_s`). The
launch time, layer by layer (:func:`eager_launch_s`):

* **a dense layer**: :data:`~rlmcost.perf.rl_constants.EAGER_LAUNCH_S_PER_LAYER` (an
  engineering estimate: about 15 kernels x 7 us);
* **a MoE layer**: :data:`EAGER_MOE_LAYER_S`, measured. vLLM's fused-MoE path issues far more
  host work per layer than a dense FFN's two GEMMs and activation: the router GEMM, the
  top-k softmax, ``moe_align_block_size`` and its buffers, two Triton ``fused_moe_kernel``
  launches (Python-side launchers), the activation and ``moe_sum``
  (vllm/model_executor/layers/fused_moe/fused_moe.py ``fused_experts_impl``; Qwen3-MoE's
  attention adds the per-head q/k RMSNorms, vllm/model_executor/models/qwen3_moe.py).

**The MoE figure** is vLLM issue 45709 (vllm-project/vllm, "TTFT of graph mode is about 25 %
worse than that of eager mode", 2026-06-15): Qwen3-30B-A3B (48 MoE layers), TP 4, 3,500
input / 1,500 output tokens at max-concurrency 8, TPOT 33.92 ms eager against 10.03 ms with
CUDA graphs (``full-and-piecewise``), and 35.20 ms with torch.compile but no graphs
(``compile-only``): the gap is the graphs' (launch), not compilation's (fusion). The eager
step, 3.4x the GPU's, is launch-bound, so the launches take its time less the host's serial
work at 8 sequences (rlmcost's ``STEP_OVERHEAD_S`` + 8 ``VLLM_HOST_S_PER_SEQUENCE``): (33.92
- 1.0 - 0.58) / 48 = 0.674 ms per layer (value). low: (33.92 - 10.03) / 48 = 0.498 ms, the
gap itself (as if launches and GPU work did not overlap); high: 35.20 / 48 = 0.733 ms (the
compile-only step, all of it launches). One concurrency, RTX 4090D hosts (PCIe): other hosts
are assumed alike.

**Other layer shapes** (:func:`layer_launches`): the host time of a layer is taken in proportion
to the kernels it launches, counted from vLLM's model files, with the measured Qwen3-MoE layer
(:data:`QWEN3_MOE_LAYER_LAUNCHES` launches) as the unit. Per layer: two fused add + RMSNorms;
the attention (:func:`attention_launches`: qkv_proj, rotary, the KV-cache write, the attention
kernel, o_proj and its TP all-reduce, plus Qwen3's per-head q/k RMSNorms; an MLA layer
(``vllm/model_executor/models/deepseek_v2.py`` ``DeepseekV2MLAAttention`` and the MLA backends'
``MLACommonImpl._forward_decode``) launches q_a_proj, kv_a_proj_with_mqa, q_b_proj and the two
absorbed ``torch.bmm`` up-projections in place of qkv_proj, and the
:data:`~rlmcost.perf.decode_kernels.MLA_EXTRA_KERNELS` small kernels); the FFN
(:func:`ffn_launches`): gate_up, activation, down and the all-reduce for a dense FFN; for a
fused-MoE layer the router GEMM, the top-k, ``moe_align_block_size``, the two ``fused_moe``
Triton kernels, the activation, ``moe_sum`` and the all-reduce (``fused_moe.py``
``fused_experts_impl``), a shared expert's gate_up, activation, down and the add (Qwen2-MoE's
sigmoid gate: its GEMM, sigmoid and product more). DeepSeek's MoE block (``DeepseekV2MoE``,
``use_grouped_topk=True``) routes through ``grouped_topk``, which in the vLLM releases before
its fused CUDA kernel (v0.8.5, the image verl's DeepSeek-V3 recipe pins, among them) is a chain
of :data:`GROUPED_TOPK_TORCH_KERNELS` torch ops, and scales the routed output by
``routed_scaling_factor`` (one more kernel). Dense layers keep the dense estimate, scaled by
their launches over a plain GQA layer's 12 (models without MLA or q/k norms are unchanged).
Assumes every launch costs the host alike (Triton launchers cost more than ATen ops: the
Qwen3-MoE layer has two of them, the DeepSeek layer two as well).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.perf.decode_kernels import MLA_EXTRA_KERNELS
from rlmcost.perf.generation import STEP_OVERHEAD_S, VLLM_HOST_S_PER_SEQUENCE
from rlmcost.perf.rl_constants import EAGER_LAUNCH_S_PER_LAYER, Constant

if TYPE_CHECKING:
    from rlmcost.arch import Arch

QWEN3_30B_A3B_LAYERS = 48  # Qwen/Qwen3-30B-A3B config.json num_hidden_layers, all MoE

EAGER_MOE_LAYER_S = Constant(
    (33.92e-3 - STEP_OVERHEAD_S - 8 * VLLM_HOST_S_PER_SEQUENCE.value) / QWEN3_30B_A3B_LAYERS,
    (33.92e-3 - 10.03e-3) / QWEN3_30B_A3B_LAYERS,
    35.20e-3 / QWEN3_30B_A3B_LAYERS,
    "vllm-project/vllm issue 45709: Qwen3-30B-A3B TP4 TPOT eager 33.92, graphs 10.03 ms",
)  # fmt: skip
"""Host seconds to launch one MoE layer's kernels in an eager decode step (module doc)."""


QWEN3_MOE_LAYER_LAUNCHES = 18
"""Kernel launches of one Qwen3-MoE decoder layer in an eager vLLM decode step (the layer of
:data:`EAGER_MOE_LAYER_S`; :func:`layer_launches` of Qwen3-30B-A3B): two norms, eight for the
attention (with the q/k norms), eight for the fused MoE block (module doc)."""

GQA_ATTENTION_LAUNCHES = 6
"""qkv_proj, rotary, KV-cache write, attention kernel, o_proj, all-reduce (module doc)."""

GROUPED_TOPK_TORCH_KERNELS = 16
"""Kernels of vLLM's torch ``grouped_topk`` for DeepSeek-V3's biased sigmoid routing (vLLM
v0.8.5 ``vllm/model_executor/layers/fused_moe/fused_moe.py`` ``grouped_topk``; the same op
chain as DeepSeek-V3's reference ``MoEGate``): sigmoid, bias add, group top-2, its sum, group
top-k, zeros_like, scatter_, the mask's expand-reshape copy, bool, logical not, masked_fill,
top-k, gather, the renormalising sum and division, the int32 cast of the ids. Later vLLM
releases route through a fused CUDA kernel instead, gated by ``VLLM_USE_FUSED_MOE_GROUPED_TOPK``
(``grouped_topk_router.py``, torch chain as the fallback); that v0.8.5 predates the gate is an
assumption from the release order (the store holds no v0.8.5 tree to check it against)."""

DENSE_FFN_LAUNCHES = 4  # gate_up, activation, down, all-reduce
MOE_BLOCK_LAUNCHES = 8  # router, top-k, align, two fused_moe kernels, activation, sum, all-reduce
SHARED_EXPERT_LAUNCHES = 4  # gate_up, activation, down, the add to the routed output
SHARED_EXPERT_GATE_LAUNCHES = 3  # Qwen2-MoE: gate GEMM, sigmoid, product


def attention_launches(arch: Arch) -> int:
    """Kernel launches of one layer's attention in an eager decode step (module doc).

    >>> from rlmcost.specs import get_model
    >>> attention_launches(get_model("deepseek-v3").arch()), attention_launches(
    ...     get_model("qwen3-30b-a3b").arch())
    (14, 8)
    """
    if arch.is_mla:  # q_a + kv_a + q_b (or q_proj + kv_a) + two bmm replace qkv_proj
        gemms = 5 if arch.q_lora_rank is not None else 4
        return GQA_ATTENTION_LAUNCHES - 1 + gemms + MLA_EXTRA_KERNELS
    return GQA_ATTENTION_LAUNCHES + (2 if arch.qk_norm else 0)


def ffn_launches(arch: Arch, moe: bool) -> int:
    """Kernel launches of one layer's FFN (``moe``: its fused-MoE block) in an eager decode
    step (module doc)."""
    if not moe:
        return DENSE_FFN_LAUNCHES
    out = MOE_BLOCK_LAUNCHES
    if arch.is_mla:  # DeepseekV2MoE: grouped_topk's torch chain for top-k, routed scaling
        out += GROUPED_TOPK_TORCH_KERNELS - 1 + 1
    if arch.n_shared_experts:
        out += SHARED_EXPERT_LAUNCHES
        out += SHARED_EXPERT_GATE_LAUNCHES if arch.shared_expert_gate else 0
    return out


def layer_launches(arch: Arch, moe: bool) -> int:
    """Kernel launches of one decoder layer of ``arch`` (``moe``: a MoE layer) in an eager
    decode step: two norms, the attention, the FFN (module doc).

    >>> from rlmcost.specs import get_model
    >>> layer_launches(get_model("qwen3-30b-a3b").arch(), True) == QWEN3_MOE_LAYER_LAUNCHES
    True
    >>> layer_launches(get_model("deepseek-v3").arch(), True)
    44
    """
    return 2 + attention_launches(arch) + ffn_launches(arch, moe)


def eager_launch_s(arch: Arch) -> float:
    """Seconds an eager decode step of ``arch`` spends launching what CUDA graphs would
    replay (the step's floor): its dense layers at :data:`EAGER_LAUNCH_S_PER_LAYER`, its MoE
    layers at :data:`EAGER_MOE_LAYER_S`, each scaled by its launches over the reference
    layer's (:func:`layer_launches`; module doc).

    >>> from rlmcost.specs import get_model
    >>> round(eager_launch_s(get_model("qwen3-30b-a3b").arch()) * 1e3, 2)  # 48 MoE layers
    32.34
    """
    moe = int(arch.n_moe_layers) if arch.is_moe else 0
    dense = int(arch.n_layers) - moe
    plain = 2 + GQA_ATTENTION_LAUNCHES + DENSE_FFN_LAUNCHES
    dense_s = EAGER_LAUNCH_S_PER_LAYER.value * layer_launches(arch, False) / plain
    moe_s = EAGER_MOE_LAYER_S.value * layer_launches(arch, True) / QWEN3_MOE_LAYER_LAUNCHES
    return dense * dense_s + moe * moe_s


EAGER_MOE_NOTE = (
    f"eager engine (enforce_eager): a decode step lasts at least its kernels' launches from "
    f"the host, {EAGER_LAUNCH_S_PER_LAYER.value * 1e3:.2f} ms per dense layer (estimate) and "
    f"{EAGER_MOE_LAYER_S.value * 1e3:.2f} ms per MoE layer (vLLM issue 45709, Qwen3-30B-A3B "
    "TP4 eager vs CUDA graphs; rlmcost.perf.eager_launch), each scaled by the layer's kernel "
    f"launches over the measured layer's {QWEN3_MOE_LAYER_LAUNCHES} (counted from vLLM's model "
    "code; an MLA + DeepSeek-MoE layer launches 44: its latent projections and, as in vLLM "
    f"v0.8.5, grouped_topk as {GROUPED_TOPK_TORCH_KERNELS} torch ops), plus the host's "
    "per-step work"
)
"""The output's note for an eager engine running a MoE model."""
