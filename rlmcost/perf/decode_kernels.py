"""The parts of an engine's layer that an MHA + dense-FFN layer lacks: multi-head latent
attention (MLA, DeepSeek-V2/V3) as vLLM runs it (its GEMMs, its decode attention per cached
token, its extra small kernels), and the fused-MoE routing kernels.

**MoE routing** (:data:`MOE_ROUTING_KERNELS`): besides the router GEMM, the two grouped
expert GEMMs and the activation (priced in :mod:`~rlmcost.perf.generation`), vLLM's fused MoE
launches per MoE layer a top-k kernel (``topk_softmax``, or for DeepSeek-V3's grouped,
biased routing ``ops.grouped_topk``), ``moe_align_block_size`` (sorts the routed rows into
expert blocks) and ``moe_sum`` (sums each token's k expert outputs):
``vllm/model_executor/layers/fused_moe/fused_moe.py`` (``fused_topk``, ``grouped_topk``,
``fused_experts_impl``), ``vllm/_custom_ops.py``. Each moves at most [m, E] or [m, k, d]
elements. The top-k and ``moe_sum`` are priced by their launch gaps; ``moe_align_block_size``
by its measured time, :data:`MOE_ALIGN_S` (about 20 us at decode sizes: one block's
histogram and prefix sum over the experts, latency-bound whatever the batch;
:func:`moe_routing_s`). The versions of vLLM whose ``grouped_topk`` is a chain of torch ops
(sigmoid, bias add, group top-2 sums, group top-k, mask, top-k, gather, renormalisation)
launch more: counted as one kernel, an understatement there.

**MLA.**

Source: vLLM ``vllm/model_executor/models/deepseek_v2.py`` (``DeepseekV2MLAAttention``) and the
MLA backends' common implementation ``vllm/v1/attention/backends/mla/common.py``
(``MLACommonImpl``: ``process_weights_after_loading``, ``_forward_decode``, ``_v_up_proj``);
the absorbed form is DeepSeek-V2's (arXiv 2405.04434, §2.1.2 "the matrices W^UK and W^UV can
be absorbed"). Per layer, on one of ``P_t`` TP ranks with ``h' = h / P_t`` local heads and
``m`` tokens:

* ``fused_qkv_a_proj`` [m, d_cq + d_c + d_rope, d], replicated on every rank
  (``MergedColumnParallelLinear(..., disable_tp=True)``): q_a_proj and kv_a_proj_with_mqa
  in one GEMM; without a query latent (``q_lora_rank`` None) a column-parallel q_proj
  [m, h' (d_nope + d_rope), d] beside a replicated kv_a_proj_with_mqa [m, d_c + d_rope, d];
* ``q_b_proj`` [m, h' (d_nope + d_rope), d_cq] (column parallel);
* the absorbed key up-projection: ``h'`` batched [m, d_c, d_nope] GEMMs (``torch.bmm`` of
  q_nope with ``W_UK_T``), and after attention the value up-projection ``h'`` batched
  [m, d_v, d_c] (``W_UV``). Their weights are kv_b_proj's, which vLLM dequantizes to the
  activation dtype at load (``get_and_maybe_dequant_weights``), so they are priced in the
  activation dtype. For a prefill chunk vLLM instead up-projects the latents with kv_b_proj
  [m, h' (d_nope + d_v), d_c]: the same FLOPs and weight bytes, so one form prices both;
* ``o_proj`` [m, d, h' d_v] (row parallel);
* decode attention over the latent cache (FlashMLA-class, absorbed): per cached token it
  reads the ``d_c + d_rope`` cached elements once for all local heads (the cache is not split
  by TP: every rank holds the whole latent), and per local head does a (d_c + d_rope)-dot
  for the score and a d_c-axpy for the output, 2 (2 d_c + d_rope) FLOPs;
* :data:`MLA_EXTRA_KERNELS` small kernels that an MHA layer does not launch: the
  q_a_layernorm and kv_a_layernorm RMSNorms (``RMSNorm(q_lora_rank)``,
  ``RMSNorm(kv_lora_rank)``), the concatenation of the absorbed q_nope with q_pe for the
  decode kernel, and the copy of the transposed ``W_UV`` output into o_proj's input
  (``_v_up_proj``: ``.transpose(0, 1).reshape``). Each moves [m, a few thousand] activations:
  priced by bytes plus the launch gap (:meth:`~rlmcost.perf.efficiency.Device.elementwise_s`).

Leaves out: the FlashMLA split-KV combine kernel and its per-step metadata, the
head padding of the decode kernel to 64 query rows (FLOPs only; the kernel is memory-bound
at the cached latent's 1-2 bytes per element).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rlmcost.arch import Arch
from rlmcost.choices import Dtype
from rlmcost.perf.efficiency import Device
from rlmcost.perf.rl_constants import Constant

MOE_ROUTING_KERNELS = 3
"""Routing kernels of one fused-MoE layer beyond its GEMMs and activation (module docstring):
top-k, ``moe_align_block_size``, ``moe_sum``."""

MOE_ALIGN_S = Constant(
    19.936e-6, 16.736e-6, 31.616e-6,
    "sgl-kernel bench_moe_align_block_size.py on an H200, SGLang PR 4327",
)  # fmt: skip
"""GPU seconds of one ``moe_align_block_size`` call at decode sizes, per MoE layer.

Measured: SGLang PR 4327 (sgl-project/sglang, 2025-03-12, "refine
sgl_moe_align_block_size_benchmark", ``sgl-kernel/benchmark/bench_moe_align_block_size.py`` on an
H200): 16 tokens, 128 experts, top-8: 19.936 us for SGLang's kernel (value; Qwen3-MoE's 128
experts), 31.616 us for vLLM's in the same run (high); 16.736 us at 32 experts, top-2 (low).
Of the same order: SGLang PR 7794 (2025-07) 20.5 us at 1-16 tokens, 128 experts, top-8;
vLLM PR 55225 (2026-09) "a fixed ~20-27 us ... per dispatch" on H100. The time does not
shrink with the batch below some hundreds of tokens (the kernels sort and prefix-sum over the
experts in one thread block), so it is a fixed cost of every decode step's MoE layer, ten
times the launch gap it was priced at before. Later kernels are faster on other parts (vLLM PR
29642, 2025-11, 5-6 us on an RTX 4090): not carried, an assumption that disfavours the newest
engines. Checked on the MoE engine rows of ``rlmcost validate --engine``: SGLang on one H20 at
batch 1 (Qwen3-30B-A3B, Qwen3-235B-A22B TP 8) -13..-36 % -> -9..-24 %, B200 vLLM
Qwen3-30B-A3B -7.3 / -5.6 % -> +3.2 / -1.2 %, H200 SGLang DeepSeek-R1 TP 8 -2.5..-7.6 % ->
+3.6..-4.4 %, H200 vLLM Mixtral -4.8 -> -1.0 %, H100 SGLang DeepSeek-R1 TP 16 -55 -> -51 %;
worse: the four H100 vLLM Qwen3-30B-A3B rows (+6.0..+29.8 % -> +12.7..+35.0 %), which were
already slow."""

FUSED_MOE_MMA_ROWS = 16
"""Rows a fused-MoE expert GEMM pads a small batch to: the Triton kernel's block rows, not the
part's tensor-core instruction. vLLM's tuned configs give ``BLOCK_SIZE_M`` 16 up to 256 tokens
(``vllm/model_executor/layers/fused_moe/configs/E=128,N=768,device_name=NVIDIA_H20.json`` @
a0aaf7fd, Qwen3-30B-A3B's shape), and a Triton dot of fewer than 64 rows runs the warp-level
``mma.sync`` m16n8k16 (Hopper's ``wgmma`` takes 64 rows:
:data:`~rlmcost.perf.gemm_tile_cost.WGMMA_ROWS`)."""


def expected_experts_touched(experts: int, top_k: int, tokens: int) -> float:
    """Expected distinct experts that ``tokens`` routed tokens reach in one MoE layer, each
    choosing ``top_k`` of ``experts`` uniformly and independently of the others:
    E (1 - (1 - k/E)^b) (an expert is missed by one token with probability 1 - k/E).

    **Uniform is an upper bound.** With per-token selection probabilities q_i (sum k) and
    independent tokens the expectation is sum_i 1 - (1 - q_i)^b, concave in q, so any skew
    lowers it (Jensen); the b tokens of a decode step come from b different requests, so the
    request mix's per-expert frequencies are the q_i. No published q_i or per-batch count of
    distinct experts was found for Qwen3-30B-A3B, Qwen3-235B-A22B, DeepSeek-V3/R1 or Mixtral
    (searched: SGLang's expert distribution recorder and EPLB issues and PRs, vLLM's EPLB, MBU
    and routing-simulator PRs, DeepSeek's EPLB, MoE-CAP, the inference papers), only summaries,
    which do not fix the count: Qwen3-30B-A3B per-layer concentration (1 - normalised entropy)
    0.111, top expert 4.3 % of selections, 65 of 128 experts for 90 % of them (gpu-container
    handbook 'Routing De-risk', llama.cpp imatrix counts, ~1k tokens; a Zipf shape of that
    entropy, exponent 0.78, gives 10.7 % and 93 instead, so no one-parameter shape meets all
    three), routing Gini for Qwen3-30B between 0.105-0.15 and 0.24 on real text (arXiv
    2605.20982, DODOCO, abstract), and aiconfigurator's power-law alpha 1.2 (Qwen3-235B) /
    1.01 (DeepSeek-R1), which its authors estimated by matching latency
    (ai-dynamo/aiconfigurator collector power-law doc). A skew would lower the B200 and H200
    MoE rows as much as the H100 ones (that Zipf, exponent 0.78, on every model: H100 vLLM
    Qwen3-30B-A3B +12.7..+35.0 % -> -2.8..+15.6 %, B200 +3.2 / -1.2 % -> -7.3 / -6.5 %,
    H200 DeepSeek-R1 +2.0..-4.4 % -> -5.0..-17.5 %), so it is not what sets the H100 rows
    apart.

    >>> round(expected_experts_touched(128, 8, 8), 2)
    51.62
    """
    return experts * (1 - (1 - top_k / experts) ** tokens)


def moe_routing_s(kernel_gap_s: float) -> float:
    """Seconds of one MoE layer's routing kernels beyond its GEMMs and activation: the top-k
    and ``moe_sum`` at their launch gaps, ``moe_align_block_size`` at :data:`MOE_ALIGN_S`.

    >>> round(moe_routing_s(2e-6) * 1e6, 3)
    23.936
    """
    return (MOE_ROUTING_KERNELS - 1) * kernel_gap_s + MOE_ALIGN_S.value


MLA_EXTRA_KERNELS = 4
"""Small kernels of one MLA layer beyond an MHA layer's (module docstring): two latent
RMSNorms, the q concatenation, the value up-projection's output copy."""


def _activation_device(dev: Device, activation_bytes: int) -> Device:
    """``dev`` with its GEMM operands in the activation dtype (the absorbed W_UK / W_UV: 16-bit
    batched GEMMs under W4A4 too, not FP4 ones: :mod:`rlmcost.perf.fp4_gemm`)."""
    if getattr(dev, "fp4", False):  # a Device (tests pass stand-ins)
        dev = replace(dev, fp4=False)
    if dev.dtype.bytes == activation_bytes:
        return dev
    return replace(dev, dtype=Dtype.BF16 if activation_bytes == 2 else Dtype.FP32)


def mla_layer_gemms_s(dev: Device, arch: Arch, tp: int, m: int, activation_bytes: int) -> float:
    """Seconds of one MLA layer's projections for ``m`` tokens on one of ``tp`` ranks
    (module docstring): the latent down-projections, q_b_proj, the absorbed up-projections
    and o_proj."""
    d, h = int(arch.d_model), int(arch.n_heads) // tp
    nope, rope = int(arch.qk_nope_head_dim), int(arch.qk_rope_head_dim)
    dc, dv = int(arch.kv_lora_rank or 0), int(arch.v_head_dim)
    q_out = h * (nope + rope)
    if arch.q_lora_rank is not None:
        dcq = int(arch.q_lora_rank)
        total = dev.gemm_s(m, dcq + dc + rope, d) + dev.gemm_s(m, q_out, dcq)
    else:
        total = dev.gemm_s(m, q_out, d) + dev.gemm_s(m, dc + rope, d)
    up = _activation_device(dev, activation_bytes)
    total += up.gemm_s(m, dc, nope, h) + up.gemm_s(m, dv, dc, h)
    return total + dev.gemm_s(m, d, h * dv)


def mla_decode_attention_per_token(arch: Arch, tp: int, kv_bytes: int) -> tuple[int, int]:
    """(FLOPs, bytes) of one layer's absorbed decode attention per cached token on one of
    ``tp`` ranks: 2 (2 d_c + d_rope) FLOPs per local head, the latent cache entry read once.

    >>> from rlmcost.specs import get_model
    >>> mla_decode_attention_per_token(get_model("deepseek-v3").arch(), 16, 2)
    (17408, 1152)
    """
    dc, rope = int(arch.kv_lora_rank or 0), int(arch.qk_rope_head_dim)
    heads = int(arch.n_heads) // tp
    return 2 * (2 * dc + rope) * heads, (dc + rope) * kv_bytes


def dsa_decode_per_token(arch: Arch, flops: float, nbytes: float, options: Any) -> tuple[
        float, float]:  # fmt: skip
    """(FLOPs, bytes) a DSA decode step spends per context token, from MLA's over every key
    (``flops``, ``nbytes``, all layers): the sparse attention reads the indexer's top k of a
    sequence's c keys (``options.window_read``: sum min(c, k) / sum c over the rollout,
    rlmcost.perf.engine_step.window_read, as FlashMLA's sparse decode reads only the indexed
    latents); the indexers score every key, 2 H_I (d_I + 1) FLOPs each, reading its fp8 key and
    fp32 scale per 128 (d_I + d_I / 32 bytes: vLLM's and SGLang's indexer caches, DeepGEMM
    ``fp8_paged_mqa_logits``), in each layer that runs one, replicated on every TP rank and split
    over DP-attention ranks as the latents are."""
    keep, dp = options.window_read, options.attention_dp
    heads, dim, n = int(arch.index_heads), int(arch.index_head_dim), int(arch.n_index_layers)
    return (flops * keep + n * 2 * heads * (dim + 1) / dp,
            nbytes * keep + n * (dim + dim // 32) / dp)  # fmt: skip


def dsa_bound_per_token(arch: Arch) -> tuple[int, int]:
    """(FLOPs, bytes) per context token that a DSA decode step does at least, for the rollout's
    roofline bound (:class:`~rlmcost.placement.rollout.DecodeCost`'s ``f1`` and
    ``kv_bytes_per_token``): the indexers score and read every key (2 H_I (d_I + 1) FLOPs and
    d_I fp8 bytes per key in each indexer layer, the scales left out), while the sparse
    attention touches at most the top k keys of a sequence, a constant a bound linear in the
    context cannot hold, so left out: a lower bound at every context (MLA's per-key FLOPs and
    latent reads over the whole context would exceed the step's own kernels past k keys). The
    bytes are a sequence's on each GPU that attends for it (every TP rank holds the indexer's
    keys whole; SGLang's data-parallel attention ranks hold 1 / N of the sequences: the caller
    divides).

    >>> from rlmcost.specs import get_model
    >>> dsa_bound_per_token(get_model("glm-5").arch())  # 78 x 2 x 32 x 129, 78 x 128
    (643968, 9984)
    """
    heads, dim, n = int(arch.index_heads), int(arch.index_head_dim), int(arch.n_index_layers)
    return n * 2 * heads * (dim + 1), n * dim


def mla_extra_kernels_s(dev: Device, arch: Arch, tp: int, m: int, activation_bytes: int) -> float:
    """Seconds of one layer's :data:`MLA_EXTRA_KERNELS` for ``m`` tokens: the two latent
    norms (read and write d_cq and d_c), the q concatenation (h' (d_c + d_rope) written, read
    back) and the output copy (h' d_v)."""
    h = int(arch.n_heads) // tp
    dc, rope, dv = int(arch.kv_lora_rank or 0), int(arch.qk_rope_head_dim), int(arch.v_head_dim)
    dcq = int(arch.q_lora_rank or 0)
    per_token = 2 * (dcq + dc) + 2 * h * (dc + rope) + 2 * h * dv
    return dev.elementwise_s(m * per_token * activation_bytes, MLA_EXTRA_KERNELS)
