"""Attention widths: the projections one token multiplies and the FLOPs of one query-key pair.

Multi-head attention (MHA/GQA/MQA) and multi-head latent attention (MLA: DeepSeek-V2/V3/R1,
arXiv:2405.04434 §2.1, transformers' ``DeepseekV3Attention``); the conventions are in the
package docstring (:mod:`rlmcost.blocks`). Which keys a query meets is
:mod:`rlmcost.blocks.window`'s.
"""

from __future__ import annotations

from typing import TypeAlias

import sympy as sp

from rlmcost.arch import Arch

Expr: TypeAlias = sp.Expr | int


def _kv_latent(arch: Arch) -> Expr:
    """d_c (``kv_lora_rank``) of an MLA arch; only MLA code paths call this."""
    if arch.kv_lora_rank is None:
        raise ValueError(f"{arch.name} has no multi-head latent attention (kv_lora_rank is None)")
    return arch.kv_lora_rank


def _mla_matmul_weights_per_token(arch: Arch) -> sp.Expr:
    """Weight elements one token multiplies in one MLA block (expanded form, biases excluded).

    q_a d x d_cq + q_b d_cq x h (d_nope + d_rope) (or q_proj d x h (d_nope + d_rope)),
    kv_a d x (d_c + d_rope), kv_b d_c x h (d_nope + d_v), o h d_v x d.
    """
    q = (
        arch.d_model * arch.q_width
        if arch.q_lora_rank is None
        else arch.q_lora_rank * (arch.d_model + arch.q_width)
    )
    kv_a = arch.d_model * (_kv_latent(arch) + arch.qk_rope_head_dim)
    return sp.sympify(q + kv_a + _mla_kv_b_weights(arch) + arch.v_width * arch.d_model)


def _mla_kv_b_weights(arch: Arch) -> sp.Expr:
    """kv_b_proj: d_c x h (d_nope + d_v), the latent's up-projection to per-head keys and values
    (W_UK and W_UV of arXiv:2405.04434 eq. 10-11)."""
    return sp.sympify(_kv_latent(arch) * arch.n_heads * (arch.qk_nope_head_dim + arch.v_head_dim))


def _attention_weights_per_token(arch: Arch) -> Expr:
    """Weight elements one token multiplies in one attention block's projections."""
    if arch.is_mla:
        return _mla_matmul_weights_per_token(arch)
    w = arch.d_model * (arch.q_width + 2 * arch.kv_width) + arch.q_width * arch.d_model
    if arch.attn_output_gate:  # q_proj d -> 2 h d_h: queries and their gate (Qwen3NextAttention)
        w += arch.d_model * arch.q_width
    return w


def linear_attention_weights_per_token(arch: Arch) -> sp.Expr:
    """Weight elements one token multiplies in one Gated DeltaNet layer's projections.

    in_proj_qkvz d -> 2 H_k d_k + 2 H_v d_v (q, k, v and the output gate z), in_proj_ba
    d -> 2 H_v (the per-head beta and decay inputs), out_proj H_v d_v -> d. Source:
    transformers ``Qwen3NextGatedDeltaNet`` (models/qwen3_next/modeling_qwen3_next.py).
    """
    kd = arch.linear_key_heads * arch.linear_key_head_dim
    vd = arch.linear_value_heads * arch.linear_value_head_dim
    if arch.linear_mamba:  # :func:`mamba_weights_per_token`
        return mamba_weights_per_token(arch)
    return sp.sympify(
        arch.d_model * (2 * kd + 2 * vd) + arch.d_model * 2 * arch.linear_value_heads
        + vd * arch.d_model
    )


def mamba_weights_per_token(arch: Arch) -> sp.Expr:
    """Weight elements one token multiplies in one Mamba-2 mixer's projections.

    in_proj d -> 2 H P + 2 G N + H (the gate z, the conv input x, B and C, and dt per head),
    out_proj H P -> d. Source: transformers ``NemotronHMamba2Mixer``
    (models/nemotron_h/modeling_nemotron_h.py, 5.24: ``projection_size = intermediate_size +
    conv_dim + num_heads``); Megatron-Core ``MambaMixer`` (megatron/core/ssm/mamba_mixer.py)
    has the same in_proj and out_proj.
    """
    hp = arch.linear_value_heads * arch.linear_value_head_dim
    gn = arch.linear_key_heads * arch.linear_key_head_dim
    in_proj = arch.d_model * (2 * hp + 2 * gn + arch.linear_value_heads)
    return sp.sympify(in_proj + hp * arch.d_model)


def mamba_core_flops_per_token(arch: Arch) -> sp.Expr:
    """Forward FLOPs of one token through one Mamba-2 mixer in its chunked form (training,
    prefill), projections aside: the SSD of Dao & Gu 2024 (arXiv:2405.21060 §6, Listing 1)
    as the mamba_ssm Triton kernels run it (``mamba_chunk_scan_combined``:
    ``_bmm_chunk_fwd``, ``_chunk_state_fwd``, ``_chunk_scan_fwd``).

    Per token, with chunk Q, state N, head width P, H heads and G groups: the depthwise
    causal conv over x, B and C, 2 K (H P + 2 G N); the chunk's C B^T per group, 2 Q N G (a
    whole Q x Q block per chunk, as the kernels compute it); the intra-chunk output
    (C B^T o L) x, 2 Q P per head; the chunk's state B^T x, 2 N P per head; and the output
    from the previous chunks' state C h, 2 N P per head: 2 K conv + 2 Q N G + H (2 Q P + 4 N P).
    The inter-chunk state passing (a scan of decays), the gated RMSNorm, D x and the softplus
    of dt are elementwise and left out, as all elementwise work is. transformers' torch path
    (``mamba2_chunk_scan``) repeats B and C to every head (2 Q N H in place of 2 Q N G) and
    combines the chunk states by an einsum over (chunks + 1)^2 pairs; tests/
    test_nemotron_h.py counts both with FlopCounterMode.
    """
    q, n = arch.linear_chunk, arch.linear_key_head_dim
    heads, p, groups = arch.linear_value_heads, arch.linear_value_head_dim, arch.linear_key_heads
    conv = 2 * arch.linear_conv_kernel * arch.linear_conv_width
    return sp.sympify(conv + 2 * q * n * groups + heads * (2 * q * p + 4 * n * p))


def mamba_decode_core_flops_per_token(arch: Arch) -> sp.Expr:
    """Forward FLOPs of one decode token through one Mamba-2 mixer, projections aside: the
    recurrent form with its fixed state (arXiv:2405.21060 eq. 1; transformers
    ``mamba2_selective_state_update``, mamba_ssm ``selective_state_update``).

    The conv over its K-wide window, 2 K (H P + 2 G N); per head on its P x N state h: the
    decay exp(dt A) h (P N multiplies), the rank-1 input dt x B^T (P N multiplies) and its
    addition (P N adds), and the read-out h C (2 P N): 2 K conv + 5 H P N.
    """
    state = arch.linear_value_heads * arch.linear_value_head_dim * arch.linear_key_head_dim
    return sp.sympify(2 * arch.linear_conv_kernel * arch.linear_conv_width + 5 * state)


def linear_decode_saving_per_token(arch: Arch) -> sp.Expr:
    """FLOPs one decode token does not spend in one linear-attention layer against the per-token
    count of :func:`linear_attention_core_flops_per_token`: the Mamba-2 chunked core less its
    recurrent form (0 for a Gated DeltaNet, counted recurrent in both)."""
    if not arch.linear_mamba:
        return sp.Integer(0)
    return sp.expand(mamba_core_flops_per_token(arch) - mamba_decode_core_flops_per_token(arch))


def linear_attention_core_flops_per_token(arch: Arch) -> sp.Expr:
    """Forward FLOPs of one token through one Gated DeltaNet layer, projections aside.

    The depthwise causal conv over the q, k, v channels, 2 K per channel, and the gated delta
    rule in its recurrent form (Yang et al. 2024, arXiv:2412.06464 eq. 10; transformers
    ``torch_recurrent_gated_delta_rule``), per value head on its d_k x d_v state S: the read
    S^T k, the rank-1 update k (beta (v - S^T k))^T and the output S^T q, 2 d_k d_v each:
    6 H_v d_k d_v, the same for every context length. Decay, beta, L2 norms and the gated
    RMSNorm are elementwise and left out, as all elementwise work is. The chunked form used
    for prefill and training (chunk 64) does the same work up to intra-chunk terms of
    O(chunk) per token and head, which this count leaves out.
    """
    if arch.linear_mamba:  # a Mamba-2 mixer: :func:`mamba_core_flops_per_token`
        return mamba_core_flops_per_token(arch)
    core = 6 * arch.linear_value_heads * arch.linear_key_head_dim * arch.linear_value_head_dim
    return sp.sympify(2 * arch.linear_conv_kernel * arch.linear_conv_width + core)


def attention_flops_per_pair(arch: Arch) -> sp.Expr:
    """Forward FLOPs of one query meeting one key in one layer, all heads (expanded form).

    q.k over d_h and the weighted sum of d_h-wide values, 2 d_h each per head: 4 h d_h. MLA:
    keys of d_nope + d_rope and values of d_v per head, 2 h (d_nope + d_rope + d_v). DSA
    (``Arch.index_topk``): the absorbed form its sparse kernels run in every pass,
    :func:`attention_flops_per_key_absorbed` (:mod:`rlmcost.blocks.sparse`).
    """
    if arch.is_dsa:
        return attention_flops_per_key_absorbed(arch)
    if arch.is_mla:
        return sp.sympify(2 * arch.n_heads * (arch.head_dim + arch.v_head_dim))
    return sp.sympify(4 * arch.q_width)


def full_weights_delta(arch: Arch) -> Expr:
    """Weight elements one token multiplies in a full-attention layer's projections beyond a
    sliding one's: Gemma 4's full layers have heads of ``full_head_dim`` and ``full_kv_heads``
    KV heads, and with ``full_k_eq_v`` no v_proj (transformers ``Gemma4TextAttention``:
    ``v_proj`` is None where ``attention_k_eq_v`` and the layer is not sliding). 0 when the
    full layers are shaped as the others."""
    if arch.is_mla or not (arch.has_full_shape or arch.full_k_eq_v):
        return 0
    full = arch.full_view()
    no_v = arch.d_model * full.kv_width if arch.full_k_eq_v else 0
    return sp.expand(_attention_weights_per_token(full) - no_v - _attention_weights_per_token(arch))


def full_pair_delta(arch: Arch) -> Expr:
    """FLOPs of one query-key pair in a full-attention layer beyond a sliding one's:
    4 h (d_full - d_h) (Gemma 4's 512-wide global heads against 256); 0 otherwise."""
    if arch.is_mla or not arch.has_full_shape:
        return 0
    return sp.expand(attention_flops_per_pair(arch.full_view()) - attention_flops_per_pair(arch))


def full_cache_delta(arch: Arch) -> Expr:
    """Elements a full-attention layer caches per position beyond a sliding one's:
    2 (h_kv,full d_full - h_kv d_h). With ``full_k_eq_v`` keys and values are still both
    cached (transformers' ``cache.update`` takes both; vLLM's Gemma 4 attention writes a key
    and a value cache). 0 when the full layers are shaped as the others."""
    if arch.is_mla or not arch.has_full_shape:
        return 0
    return sp.expand(arch.full_view().kv_cache_width - arch.kv_cache_width)


def attention_flops_per_key_absorbed(arch: Arch) -> sp.Expr:
    """Decode FLOPs per cached position and layer of absorbed MLA, all heads.

    Per head the query is mapped into the latent space (q_nope W_UK, d_c wide) and
    concatenated with its RoPE part; scores against the cached [c_kv, k_rope] cost
    2 (d_c + d_rope), the weighted sum of the cached latents 2 d_c: 2 h (2 d_c + d_rope).
    Source: DeepSeek-V2, arXiv:2405.04434 §2.1.2 (absorption); vLLM ``MLACommonImpl``
    decode path and FlashMLA (a 576-wide q.k and a 512-wide p.v per head for DeepSeek-V3).
    """
    return sp.sympify(2 * arch.n_heads * (2 * _kv_latent(arch) + arch.qk_rope_head_dim))
