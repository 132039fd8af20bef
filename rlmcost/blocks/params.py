"""|M| and its parts: the parameters of every block as ``sum(p.numel())`` counts them.

Layer structure after the transformers model classes (sources in :func:`params`).
"""

from __future__ import annotations

import sympy as sp

from rlmcost.arch import Arch, is_zero
from rlmcost.blocks.attention import (
    Expr,
    _kv_latent,
    _mla_matmul_weights_per_token,
    linear_attention_weights_per_token,
)
from rlmcost.blocks.ple import params_kv_shared_delta, params_ple_embedding, ple_layer_weights
from rlmcost.blocks.sparse import params_indexer
from rlmcost.choices import Head


def params_attention_per_layer(arch: Arch) -> sp.Expr:
    """Parameters of one attention block: q, k, v, o projections (+ biases, + q/k norms).

    MLA: :func:`params_mla_attention_per_layer`.
    """
    if arch.is_mla:
        return params_mla_attention_per_layer(arch)
    p = arch.d_model * (arch.q_width + 2 * arch.kv_width) + arch.q_width * arch.d_model
    if arch.qkv_bias:
        p += arch.q_width + 2 * arch.kv_width
    if arch.out_bias:
        p += arch.d_model
    if arch.qk_norm:  # per head: d_h each (Qwen3RMSNorm); full width: h d_h and h_kv d_h
        p += arch.q_width + arch.kv_width if arch.qk_norm_full else 2 * arch.head_dim
    if arch.attn_output_gate:  # q_proj d -> 2 h d_h (Qwen3NextAttention)
        p += arch.d_model * arch.q_width + (arch.q_width if arch.qkv_bias else 0)
    return sp.sympify(p)


def params_full_attention_delta(arch: Arch) -> sp.Expr:
    """Parameters a full-attention layer's attention block holds beyond a sliding one's
    (Gemma 4: its own head width and KV heads, q/k norms of that width, no v_proj with
    ``full_k_eq_v``; transformers ``Gemma4TextAttention``); 0 otherwise."""
    if arch.is_mla or not (arch.has_full_shape or arch.full_k_eq_v):
        return sp.Integer(0)
    full = arch.full_view()
    p = params_attention_per_layer(full) - params_attention_per_layer(arch)
    if arch.full_k_eq_v:  # no v_proj (nor its bias)
        p -= arch.d_model * full.kv_width + (full.kv_width if arch.qkv_bias else 0)
    return sp.expand(p)


def params_linear_attention_per_layer(arch: Arch) -> sp.Expr:
    """Parameters of one Gated DeltaNet token mixer (transformers ``Qwen3NextGatedDeltaNet``):
    its projections (:func:`~rlmcost.blocks.attention.linear_attention_weights_per_token`),
    the depthwise conv without bias (conv width x K), dt_bias and A_log (H_v each) and the
    gated RMSNorm's weight (d_v, shared by the heads).

    Mamba-2 (``linear_mamba``, transformers ``NemotronHMamba2Mixer``): in_proj and out_proj,
    the depthwise conv over x, B and C with its bias ((K + 1) x conv width, ``use_conv_bias``),
    dt_bias, A_log and D (H each) and the gated RMSNorm's weight (H P, normalized per group)."""
    if arch.linear_mamba:
        return sp.sympify(
            linear_attention_weights_per_token(arch)
            + arch.linear_conv_width * (arch.linear_conv_kernel + 1)
            + 3 * arch.linear_value_heads
            + arch.linear_value_heads * arch.linear_value_head_dim
        )
    return sp.sympify(
        linear_attention_weights_per_token(arch)
        + arch.linear_conv_width * arch.linear_conv_kernel
        + 2 * arch.linear_value_heads
        + arch.linear_value_head_dim
    )



def params_mla_attention_per_layer(arch: Arch) -> sp.Expr:
    """Parameters of one multi-head latent attention block (DeepSeek-V2/V3).

    Source: transformers ``DeepseekV3Attention`` / ``DeepseekV2Attention`` (arXiv:2405.04434
    §2.1): the projections of :func:`_mla_matmul_weights_per_token`, the RMSNorm weights of the
    query latent (d_cq, when q_lora_rank is set) and of the KV latent (d_c), and with
    ``attention_bias`` the biases of q_a_proj (d_cq), kv_a_proj_with_mqa (d_c + d_rope) and
    o_proj (d) (``qkv_bias`` / ``out_bias``).
    """
    p = _mla_matmul_weights_per_token(arch) + arch.norm.vectors * _kv_latent(arch)
    if arch.q_lora_rank is not None:
        p += arch.norm.vectors * arch.q_lora_rank
    if arch.qkv_bias:
        p += _kv_latent(arch) + arch.qk_rope_head_dim
        if arch.q_lora_rank is not None:
            p += arch.q_lora_rank
    if arch.out_bias:
        p += arch.d_model
    return sp.sympify(p)


def params_linear_mixer_delta(arch: Arch) -> sp.Expr:
    """Parameters a linear-attention layer holds beyond an attention layer: its Gated DeltaNet
    less the attention block it replaces (0 without linear attention)."""
    return sp.expand(params_linear_attention_per_layer(arch) - params_attention_per_layer(arch))


def params_ffn_free_delta(arch: Arch) -> sp.Expr:
    """Parameters an FFN-free layer (Nemotron-H's mixer-only block) holds less than a full one:
    minus its FFN (the MoE block in a MoE model, else the dense FFN) and the FFN's norm."""
    ffn = params_moe_per_layer(arch) if arch.is_moe else params_ffn(arch, arch.d_ff, arch.mlp_bias)
    return sp.expand(-(ffn + params_norm(arch)))


def params_ffn(arch: Arch, width: Expr, bias: bool = False) -> sp.Expr:
    """Parameters of one FFN (or one expert) of inner width ``width``."""
    n_in = arch.ffn_kind.projections - 1  # projections into the inner width
    p = arch.ffn_kind.projections * arch.d_model * width
    if bias:
        p += n_in * width + arch.d_model
    return sp.sympify(p)


def params_routed_expert(arch: Arch) -> sp.Expr:
    """Parameters of one routed expert: its projections between the expert width (d, or the
    latent l of a latent MoE: transformers ``NemotronHExperts``, input_dim = moe_latent_size)
    and its inner width d_e; no biases."""
    return sp.sympify(arch.ffn_kind.projections * arch.expert_width * arch.d_expert)


def params_latent_proj(arch: Arch) -> sp.Expr:
    """Parameters of one latent MoE's fc1_latent_proj (d x l) and fc2_latent_proj (l x d),
    without biases (transformers 5.24 ``NemotronHMoE``); 0 without a latent."""
    return sp.sympify(2 * arch.d_model * arch.moe_latent)


def params_moe_per_layer(arch: Arch) -> sp.Expr:
    """Parameters of one MoE FFN: router (d x E), routed experts, the latent projections of a
    latent MoE, shared experts (+ gate)."""
    p = arch.d_model * arch.n_experts + arch.n_experts * params_routed_expert(arch)
    p += params_latent_proj(arch)
    if not is_zero(arch.n_shared_experts):
        p += arch.n_shared_experts * params_ffn(arch, arch.d_shared_expert)
        if arch.shared_expert_gate:
            p += arch.d_model
    return sp.sympify(p)


def params_norm(arch: Arch) -> sp.Expr:
    """Parameters of one normalization layer (weight, and bias for LayerNorm)."""
    return sp.sympify(arch.norm.vectors * arch.d_model)


def params_layer_dense(arch: Arch) -> sp.Expr:
    """Parameters of one dense Transformer layer: attention, FFN, ``norms_per_layer`` norms
    (two: pre-attention and pre-FFN; four with Gemma 2/3's post-attention/post-FFN norms),
    Gemma 4 E's per-layer input gate and projection (:mod:`rlmcost.blocks.ple`)."""
    return (
        params_attention_per_layer(arch)
        + params_ffn(arch, arch.d_ff, arch.mlp_bias)
        + arch.norms_per_layer * params_norm(arch)
        + ple_layer_weights(arch)
    )


def params_layer_moe(arch: Arch) -> sp.Expr:
    """Parameters of one MoE Transformer layer: attention, MoE FFN, ``norms_per_layer`` norms."""
    return (
        params_attention_per_layer(arch)
        + params_moe_per_layer(arch)
        + arch.norms_per_layer * params_norm(arch)
        + ple_layer_weights(arch)
    )


def params_embedding(arch: Arch) -> sp.Expr:
    """Token embedding (V x d) and learned position embedding, if any; Gemma 4 E's per-layer
    embedding table, its model projection and norm (:func:`~rlmcost.blocks.ple.
    params_ple_embedding`)."""
    return sp.sympify(arch.vocab * arch.d_model + arch.n_positions * arch.d_model
                      + params_ple_embedding(arch))


def params_head(arch: Arch, head: Head = Head.LM) -> sp.Expr:
    """Output head: d x V LM head (0 when tied to the embedding), or d x 1 value head."""
    if head is Head.VALUE:
        return sp.sympify(arch.d_model)
    return sp.Integer(0) if arch.tie_embeddings else sp.sympify(arch.vocab * arch.d_model)


def params(arch: Arch, head: Head = Head.LM) -> sp.Expr:
    """|M|: every parameter of the model, as ``sum(p.numel() for p in model.parameters())``.

    Source: layer structure of the transformers model classes (Llama, Mistral, Qwen2, Qwen3,
    GPT-2, Mixtral, Qwen2-MoE, Qwen3-MoE, Glm4-MoE, Gemma 2/3, Phi-3, DeepSeek-V2/V3/V3.2,
    GLM-5 with its lightning indexers (:func:`~rlmcost.blocks.sparse.params_indexer`); equal
    for every built-in model, tests/test_registry_configs.py, tests/test_mla.py); tied weights
    are counted once. DeepSeek-V3: 671,026,404,352 for ``DeepseekV3ForCausalLM`` (61 layers;
    the checkpoint's multi-token prediction layer 61 is not part of the class, and the
    routers' e_score_correction_bias, E fp32 values per MoE layer, is a buffer, not a
    parameter). ``encoder_params`` (a vision tower, rlmcost.specs.hf_vision) is added whole.
    A value head (critic, reward model) replaces the LM head by d x 1.

    >>> from rlmcost.arch import CANONICAL
    >>> params(CANONICAL)
    2*d*(2*L*d + L*d_ff + 2*L + V + 1)
    """
    body = arch.n_dense_layers * params_layer_dense(arch)
    if arch.is_moe:
        body += arch.n_moe_layers * params_layer_moe(arch)
    # full-attention layers shaped their own way (Gemma 4)
    body += arch.n_full_layers * params_full_attention_delta(arch)
    # Gemma 4 E's KV-shared layers: no k/v projections, a wider FFN (blocks.ple)
    body += params_kv_shared_delta(arch)
    # linear-attention layers: a Gated DeltaNet in place of the attention block
    body += arch.n_linear_layers * params_linear_mixer_delta(arch)
    # layers of one kind each (Nemotron-H): some hold a mixer and no FFN
    body += arch.n_ffn_free_layers * params_ffn_free_delta(arch)
    if arch.is_dsa:  # DeepSeek Sparse Attention: a lightning indexer (blocks.sparse)
        body += arch.n_index_layers * params_indexer(arch)
    return sp.factor_terms(
        sp.expand(
            body
            + params_embedding(arch)
            + params_norm(arch)
            + params_head(arch, head)
            + arch.encoder_params
        ),
        radical=False,
    )


def params_active_per_token(arch: Arch, head: Head = Head.LM) -> sp.Expr:
    """Parameters one text token touches: all but the routed experts it does not select and
    the encoder (a vision tower) it does not pass through."""
    if not arch.is_moe:
        return params(arch, head) - arch.encoder_params
    idle_experts = (arch.n_moe_layers - arch.n_ffn_free_layers) * (arch.n_experts - arch.top_k)
    unused = arch.encoder_params + idle_experts * params_routed_expert(arch)
    return sp.expand(params(arch, head) - unused)
