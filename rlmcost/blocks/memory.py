"""Memory of the Table III blocks: weights, KV cache, activations, logits, optimizer states.

Functions return elements unless their name ends in ``_bytes``; byte versions name the dtype
they assume (bf16 unless said otherwise; logits fp32).
"""

from __future__ import annotations

import sympy as sp

from rlmcost.arch import Arch
from rlmcost.blocks.attention import Expr, _kv_latent, full_cache_delta
from rlmcost.blocks.params import params
from rlmcost.blocks.ple import kv_shared_cache
from rlmcost.blocks.window import cached_positions
from rlmcost.choices import Dtype, Head


def memory_params_bytes(arch: Arch, dtype: Dtype = Dtype.BF16, head: Head = Head.LM) -> sp.Expr:
    """Weight bytes: |M| x bytes of ``dtype`` (bf16 by default)."""
    return params(arch, head) * dtype.bytes


def memory_kv_cache(arch: Arch, tokens: Expr, seqs: Expr = 1) -> sp.Expr:
    """M_KV: the KV cache of ``seqs`` sequences of ``tokens`` tokens each, all layers [elements].

    2 h_kv d_h per cached position and layer; GQA/MQA shrink it by h / h_kv. MLA caches the
    latent instead, d_c + d_rope per position and layer (arXiv:2405.04434 §2.1.2; vLLM,
    SGLang, FlashMLA; transformers' DynamicCache stores the same two tensors for
    DeepSeek-V2/V3: keys (B, 1, S, d_c) and values (B, 1, S, d_rope)): 576 elements per layer
    for DeepSeek-V3. A full layer caches all ``tokens`` positions, a sliding layer of window W
    the last min(tokens, W - 1), as transformers' ``DynamicSlidingWindowLayer`` keeps them
    (:func:`~rlmcost.blocks.window.cached_positions`; vLLM rounds that out to whole blocks).
    The window applies per sequence, hence ``seqs``: without one, M_KV(tokens, seqs) =
    M_KV(seqs x tokens). A linear-attention (Gated DeltaNet) layer caches no keys or values
    but keeps ``Arch.linear_state_width`` elements per sequence (its recurrent and conv
    states), counted here in the cache's dtype.
    """
    kv = arch.kv_cache_width * cached_positions(arch, tokens)
    kv += full_cache_delta(arch) * arch.n_full_layers * tokens  # Gemma 4's full layers
    kv -= kv_shared_cache(arch, tokens)  # Gemma 4 E's layers that reuse others' keys and values
    # linear-attention layers keep a fixed state per sequence, whatever its length
    return sp.expand((kv + arch.n_linear_layers * arch.linear_state_width) * seqs)


def memory_kv_cache_bytes(
    arch: Arch, tokens: Expr, dtype: Dtype = Dtype.BF16, seqs: Expr = 1
) -> sp.Expr:
    """M_KV in bytes for a KV cache of ``dtype`` (bf16 by default).

    Mistral-7B-v0.1 (32 layers, 8 KV heads of 128, W = 4096) after 4096 tokens: 4095 cached
    positions, 2 x 32 x 8 x 128 x 2 B x 4095 = 536,739,840 bytes in bf16.
    """
    return memory_kv_cache(arch, tokens, seqs) * dtype.bytes


def memory_activations_paper(arch: Arch, tokens: Expr) -> sp.Expr:
    """M_Act, the paper's leading term: tokens x L x d [elements] (§III-G).

    Constant factors for Q/K/V, FFN intermediates and norms are suppressed.
    """
    return sp.expand(tokens * arch.n_layers * arch.d_model)


def activation_bytes_per_token_layer(
    arch: Arch, dtype: Dtype = Dtype.BF16, fused_glu: Expr = False
) -> sp.Expr:
    """Bytes one token's layer saves for backward, no recomputation, fused attention.

    Adapted from Korthikanti et al. 2022 (arXiv:2205.05198, §4.1: 34 s b h + 5 a s^2 b per
    layer in fp16) to current kernels: no dropout (so no masks), FlashAttention (no s^2
    softmax terms, but an fp32 log-sum-exp per head), GQA widths and a gated FFN. With
    x = ``dtype`` bytes:

    * attention norm input d, QKV input d, q k v (h + 2 h_kv) d_h, output h d_h  -> x each;
      log-sum-exp h -> 4 bytes;
    * FFN norm input d and FFN input d -> x each; each further norm (Gemma 2/3's post-attention
      and post-FFN norms, ``norms_per_layer`` = 4) saves its input d -> x;
    * q/k RMSNorms (``qk_norm``: Qwen3, Gemma 3): their inputs, the projected q and k before
      the norm, (h + h_kv) d_h -> x, and the norm's 1 / rms of each head's row, h + h_kv -> 4
      bytes (fp32 in Transformer Engine's and Liger's RMSNorm and in transformers' eager one);
      full-width q/k norms (``qk_norm_full``: MiniMax-M2) keep one 1 / rms each, 2 -> 4 bytes;
      the d-wide norms' 1 / rms (4 bytes a token each) is left out;
    * plain FFN: activation input and down-projection input, 2 d_ff;
      gated FFN, unfused (``fused_glu`` false: transformers' ``down_proj(act_fn(gate_proj(x)) *
      up_proj(x))`` under autograd): gate, up, act(gate) and down-projection input, 4 d_ff;
      fused (``fused_glu`` true: Megatron-core's ``SwiGLUFunction`` / ``WeightedSwiGLUFunction``,
      Liger's ``LigerSiLUMulFunction``): the kernel's input, gate and up, and the
      down-projection input, 3 d_ff, and in a MoE layer each routed copy's routing weight,
      which ``WeightedSwiGLUFunction`` saves, in fp32 as the router's (MoE: per routed and
      shared expert copy of the token, plus the router logits E in fp32). ``fused_glu`` may be
      a 0/1 symbol (the generated functions' size).

    A latent MoE (``moe_latent`` l): the dispatched copies are l wide, and fc2_latent_proj
    keeps its input, the combined l-wide output (fc1_latent_proj's input is the FFN input).

    An FFN-free layer (``ffn_free_layers``: Nemotron-H's mixer-only blocks) keeps neither the
    FFN's norm input and input (2 d) nor the FFN's own. A Gated DeltaNet layer is counted as
    an attention layer of the model's widths (the specs' notes say so). A Mamba-2 layer
    (``linear_mamba``) keeps what Megatron-Core's ``MambaMixer._ssm_training`` saves
    (megatron/core/ssm/mamba_mixer.py @d98e8a64dd): the fused norm + in_proj's input and
    normalized input, 2 d; ``mamba_split_conv1d_scan_combined``'s zxBCdt, 2 H P + 2 G N + H,
    and its SSD output before the gate, H P (mamba_ssm ssd_combined.py
    ``MambaSplitConv1dScanCombinedFn``: ``save_for_backward(zxbcdt, ..., out_x, ...)``); the
    gated RMSNorm's input H P and its 1 / rms per group, G -> 4 bytes; out_proj's input H P.

    A lower bound of what unfused code keeps: transformers' eager Llama-family layers on the
    SDPA path save 6 % (fp32) to 26 % (bf16: fp32 RMSNorm temporaries, unfused RoPE) more,
    measured with autograd's saved-tensor hooks (tests/test_torch_exact.py).

    MLA, by the same rule (every GEMM's input once, norm inputs, the fused attention's q, k, v
    and output, its log-sum-exp): attention norm input and the down-projections' input, 2 d;
    the query latent before and after its RMSNorm, 2 d_cq (when q_lora_rank is set); the KV
    latent before and after its RMSNorm, 2 d_c (the RoPE key's pre-rotation input is not kept:
    the rotation's backward needs only cos/sin); expanded q and k, 2 h (d_nope + d_rope); v and
    the attention output, 2 h d_v. This is the expanded form that training runs (Megatron-Core
    ``MLASelfAttention``, transformers); latent tensors are counted whole on every TP rank.
    DeepSeek Sparse Attention: the indexer runs without gradient and saves nothing; the sparse
    attention's backward reads the k selected indices of each query, int32 (k x 4 bytes per
    token in each layer running an indexer; the layers that reuse them share the tensor: slime
    glm5.py's top-k holder); the MLA tensors as above (the absorbed kernels' saved q and
    latent output differ by a few per cent of them).
    """
    x = dtype.bytes
    if arch.is_mla:
        attn = x * (2 * arch.d_model + _mla_saved_widths(arch)) + 4 * arch.n_heads
    else:
        attn = x * (2 * arch.d_model + arch.q_width + 2 * arch.kv_width + arch.q_width)
        attn += 4 * arch.n_heads
    if arch.qk_norm:  # the q and k norms' inputs and their fp32 1 / rms per head (full: 2)
        rms = 2 if arch.qk_norm_full else arch.n_heads + arch.n_kv_heads
        attn += x * (arch.q_width + arch.kv_width) + 4 * rms
    norms = x * arch.norms_per_layer * arch.d_model
    gated = arch.ffn_kind.projections != 2
    fused = glu_flag(fused_glu)
    inner = 4 - fused if gated else 2

    def ffn(moe: bool) -> sp.Expr:
        if not moe:
            return sp.sympify(x * inner * arch.d_ff)
        width = arch.top_k * arch.d_expert + arch.n_shared_experts * arch.d_shared_expert
        copies = x * arch.expert_width * arch.top_k  # the dispatched copies of the token
        copies += x * arch.moe_latent  # a latent MoE: fc2_latent_proj's input, the combined l
        weights = 4 * arch.top_k * fused if gated else 0  # WeightedSwiGLUFunction's
        return sp.sympify(x * inner * width + copies + 4 * arch.n_experts + weights)

    total = arch.n_dense_layers * (attn + norms + ffn(False))
    if arch.linear_mamba:  # Mamba-2 layers: the mixer's own saved tensors in place of attn
        hp = arch.linear_value_heads * arch.linear_value_head_dim  # H P
        bc = 2 * arch.linear_key_heads * arch.linear_key_head_dim  # 2 G N
        mamba = x * (2 * arch.d_model + 5 * hp + bc + arch.linear_value_heads)
        total += arch.n_linear_layers * (mamba + 4 * arch.linear_key_heads - attn)
    if arch.is_moe:
        total += arch.n_moe_layers * (attn + norms + ffn(True))
    # FFN-free layers (Nemotron-H's mixer-only blocks) keep no FFN input, FFN norm input or FFN
    total -= arch.n_ffn_free_layers * (2 * x * arch.d_model + ffn(arch.is_moe))
    if arch.index_topk is not None:  # DSA: each indexer's top-k indices, int32 (blocks.sparse)
        total += 4 * arch.n_index_layers * arch.index_topk
    return sp.expand(total / arch.n_layers)


def glu_flag(fused_glu: Expr) -> Expr:
    """``fused_glu`` as 0/1 (a bool) or as given (a 0/1 symbol), for sympy's arithmetic."""
    return int(fused_glu) if isinstance(fused_glu, bool) else fused_glu


def _mla_saved_widths(arch: Arch) -> Expr:
    """Elements per token an MLA block keeps beyond its d-wide inputs (see the caller)."""
    latents = 2 * _kv_latent(arch) + (0 if arch.q_lora_rank is None else 2 * arch.q_lora_rank)
    return latents + 2 * arch.q_width + 2 * arch.v_width


def memory_activations_bytes(arch: Arch, tokens: Expr, dtype: Dtype = Dtype.BF16) -> sp.Expr:
    """M_Act in bytes: per-layer saved activations x L x tokens, plus the final-norm input.

    The logits are separate (:func:`memory_logits_bytes`).
    """
    per_token = arch.n_layers * activation_bytes_per_token_layer(arch, dtype)
    per_token += dtype.bytes * arch.d_model
    return sp.expand(tokens * per_token)


def memory_inference_buffer(arch: Arch, tokens: Expr) -> sp.Expr:
    """M_Inf: activations alive during a forward-only pass, one layer at a time [elements].

    The residual stream (d) plus one layer's largest transients side by side: q, k, v and
    attention output ((2 h + 2 h_kv) d_h) and the FFN inner activations ((proj - 1) x width).
    An upper bound; FlashAttention keeps no context x context matrix. MLA: the latents d_cq
    and d_c + d_rope plus the larger of the two forms' per-head tensors: expanded q, k, v and
    output, 2 h (d_nope + d_rope) + 2 h d_v, or absorbed q, latent query, latent output and
    output, h (d_nope + d_rope) + h (d_c + d_rope) + h d_c + h d_v (larger whenever
    2 d_c + d_rope > d_nope + d_rope + d_v, as for DeepSeek-V2/V3).
    """
    width = (
        arch.d_ff
        if not arch.is_moe
        else arch.top_k * arch.d_expert + (arch.n_shared_experts * arch.d_shared_expert)
    )
    inner = (arch.ffn_kind.projections - 1) * width
    if arch.is_mla:
        q_latent = 0 if arch.q_lora_rank is None else arch.q_lora_rank
        h, latent = arch.n_heads, _kv_latent(arch)
        absorbed = arch.q_width + h * (2 * latent + arch.qk_rope_head_dim) + arch.v_width
        heads = sp.Max(2 * arch.q_width + 2 * arch.v_width, absorbed)
        attn = heads + q_latent + arch.kv_cache_width
        return sp.expand(tokens * (arch.d_model + attn + inner))
    return sp.expand(tokens * (arch.d_model + 2 * arch.q_width + 2 * arch.kv_width + inner))


def memory_inference_buffer_bytes(arch: Arch, tokens: Expr, dtype: Dtype = Dtype.BF16) -> sp.Expr:
    """M_Inf in bytes for activations of ``dtype`` (bf16 by default)."""
    return memory_inference_buffer(arch, tokens) * dtype.bytes


def memory_logits(arch: Arch, tokens: Expr) -> sp.Expr:
    """The logits tensor: tokens x V [elements]. At long responses it dominates peak memory."""
    return sp.expand(tokens * arch.vocab)


def memory_logits_bytes(arch: Arch, tokens: Expr, dtype: Dtype = Dtype.FP32) -> sp.Expr:
    """Logits bytes, fp32 by default: log-probs are taken in fp32 for stability."""
    return memory_logits(arch, tokens) * dtype.bytes


def memory_adam_states(n_params: Expr) -> sp.Expr:
    """Adam model states in the paper's element abstraction: parameters, gradients and two
    moments, 4 |M| elements (§III-G1)."""
    return sp.expand(4 * n_params)


def memory_adam_states_bytes_rajbhandari2020(n_params: Expr) -> sp.Expr:
    """Mixed-precision Adam model states, 16 |M| bytes (Rajbhandari et al. 2020, ZeRO §3.1).

    bf16/fp16 parameters (2) and gradients (2) plus K = 12 bytes of fp32 master parameters,
    momentum and variance.
    """
    return sp.expand(16 * n_params)
