"""Table III: the building blocks' work (FLOPs), depth and memory as sympy expressions.

Every function takes an :class:`~rlmcost.arch.Arch` (symbolic like ``CANONICAL`` or numeric
like Llama-3.1-70B) and token counts (symbols or integers) and returns a sympy expression; with
numeric inputs the result is an exact ``sympy.Integer``.

Conventions (seed paper, Table III caption):

* A FLOP is one add or one multiply; a length-x dot product costs 2x. Only matrix products are
  counted (linear layers, attention scores and values, the LM head), exactly as
  ``torch.utils.flop_counter.FlopCounterMode`` counts them: bias adds, norms, softmax,
  activations, rotary embeddings, embedding lookups and the router's top-k are left out
  (together < 1 % of the total for d >= 1024).
* Teacher-forced attention (prefill, assessment, training) is counted ``full`` by default (all
  S x S query-key pairs, the masked half too, which is what PyTorch's counter reports); pass
  ``AttnCounting.CAUSAL`` for the S(S+1)/2 unmasked pairs.
* A decode step "at context c" feeds one new token that attends to c positions (its own
  included). A rollout is a prefill of S prompt tokens (LM head on the last position only, as
  inference engines do) plus T decode steps at contexts S+1 ... S+T.
* Depths count the GEMM reduction chains: a length-x dot product is one multiply level plus
  ceil(log2 x) add levels. Suppressed (Table III caption): the logarithmic reductions of
  normalization, attention/vocabulary softmax, sampling and distributed collectives.
* Memory functions return elements unless their name ends in ``_bytes``; byte versions name
  the dtype they assume.

Multi-head latent attention (MLA: DeepSeek-V2/V3/R1, arXiv:2405.04434 §2.1, and transformers'
``DeepseekV3Attention``), with d_c = kv_lora_rank, d_cq = q_lora_rank, d_nope, d_rope, d_v:

* queries: ``q_a_proj`` d -> d_cq, RMSNorm, ``q_b_proj`` d_cq -> h (d_nope + d_rope) (or one
  ``q_proj`` d -> h (d_nope + d_rope) when q_lora_rank is None);
* keys/values: ``kv_a_proj_with_mqa`` d -> d_c + d_rope (the latent and one shared RoPE key),
  RMSNorm on the latent, ``kv_b_proj`` d_c -> h (d_nope + d_v); ``o_proj`` h d_v -> d.
* Teacher-forced passes (forward, prefill, training) run the expanded form: every token's
  latent goes through kv_b_proj, then h-head attention with q.k over d_nope + d_rope and
  values of d_v: 2 h (d_nope + d_rope + d_v) FLOPs per query-key pair. Inference engines
  prefill the same way (compute-bound), so both conventions agree there.
* A decode step has two conventions (``choices.MlaDecode``): ``reference`` re-expands all c
  cached latents through kv_b_proj every step (transformers' eager code, what FlopCounterMode
  counts); ``absorbed`` (the default, vLLM/SGLang/FlashMLA) folds W_UK into the query and W_UV
  into the output, so the per-token projections are the same weights and attention runs over
  the cached latent: 2 h (2 d_c + d_rope) FLOPs per key.
* The KV cache holds d_c + d_rope elements per token and layer (``Arch.kv_cache_width``): the
  latent, as engines cache it and as transformers' DynamicCache stores it for DeepSeek-V2/V3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import sympy as sp

from rlmcost.arch import Arch, is_zero
from rlmcost.choices import AttnCounting, Dtype, Head, MlaDecode
from rlmcost.logs import clog2, sum_clog2

Expr: TypeAlias = sp.Expr | int

# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


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
    if arch.qk_norm:
        p += 2 * arch.head_dim
    return sp.sympify(p)


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


def params_ffn(arch: Arch, width: Expr, bias: bool = False) -> sp.Expr:
    """Parameters of one FFN (or one expert) of inner width ``width``."""
    n_in = arch.ffn_kind.projections - 1  # projections into the inner width
    p = arch.ffn_kind.projections * arch.d_model * width
    if bias:
        p += n_in * width + arch.d_model
    return sp.sympify(p)


def params_moe_per_layer(arch: Arch) -> sp.Expr:
    """Parameters of one MoE FFN: router (d x E), routed experts, shared experts (+ gate)."""
    p = arch.d_model * arch.n_experts + arch.n_experts * params_ffn(arch, arch.d_expert)
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
    (two: pre-attention and pre-FFN; four with Gemma 2/3's post-attention/post-FFN norms)."""
    return (
        params_attention_per_layer(arch)
        + params_ffn(arch, arch.d_ff, arch.mlp_bias)
        + arch.norms_per_layer * params_norm(arch)
    )


def params_layer_moe(arch: Arch) -> sp.Expr:
    """Parameters of one MoE Transformer layer: attention, MoE FFN, ``norms_per_layer`` norms."""
    return (
        params_attention_per_layer(arch)
        + params_moe_per_layer(arch)
        + arch.norms_per_layer * params_norm(arch)
    )


def params_embedding(arch: Arch) -> sp.Expr:
    """Token embedding (V x d) and learned position embedding, if any."""
    return sp.sympify(arch.vocab * arch.d_model + arch.n_positions * arch.d_model)


def params_head(arch: Arch, head: Head = Head.LM) -> sp.Expr:
    """Output head: d x V LM head (0 when tied to the embedding), or d x 1 value head."""
    if head is Head.VALUE:
        return sp.sympify(arch.d_model)
    return sp.Integer(0) if arch.tie_embeddings else sp.sympify(arch.vocab * arch.d_model)


def params(arch: Arch, head: Head = Head.LM) -> sp.Expr:
    """|M|: every parameter of the model, as ``sum(p.numel() for p in model.parameters())``.

    Source: layer structure of the transformers model classes (Llama, Mistral, Qwen2, Qwen3,
    GPT-2, Mixtral, Qwen2-MoE, Qwen3-MoE, Glm4-MoE, Gemma 2/3, Phi-3, DeepSeek-V2/V3; equal
    for every built-in model, tests/test_registry_configs.py, tests/test_mla.py); tied weights
    are counted once. DeepSeek-V3: 671,026,404,352 for ``DeepseekV3ForCausalLM`` (61 layers;
    the checkpoint's multi-token prediction layer 61 is not part of the class, and the
    routers' e_score_correction_bias, E fp32 values per MoE layer, is a buffer, not a
    parameter). A value head (critic, reward model) replaces the LM head by d x 1.

    >>> from rlmcost.arch import CANONICAL
    >>> params(CANONICAL)
    2*d*(2*L*d + L*d_ff + 2*L + V + 1)
    """
    body = arch.n_dense_layers * params_layer_dense(arch)
    if arch.is_moe:
        body += arch.n_moe_layers * params_layer_moe(arch)
    return sp.factor_terms(
        sp.expand(body + params_embedding(arch) + params_norm(arch) + params_head(arch, head)),
        radical=False,
    )


def params_active_per_token(arch: Arch, head: Head = Head.LM) -> sp.Expr:
    """Parameters one token touches: all but the routed experts it does not select."""
    if not arch.is_moe:
        return params(arch, head)
    unused = arch.n_moe_layers * (arch.n_experts - arch.top_k) * params_ffn(arch, arch.d_expert)
    return sp.expand(params(arch, head) - unused)


# --------------------------------------------------------------------------------------------
# Work (FLOPs)
# --------------------------------------------------------------------------------------------


def _matmul_weights_ffn_per_token(arch: Arch) -> sp.Expr:
    """Weight elements one token multiplies in all FFNs (dense and MoE layers, router too)."""
    per_dense = arch.ffn_kind.projections * arch.d_model * arch.d_ff
    w = arch.n_dense_layers * per_dense
    if arch.is_moe:
        per_moe = arch.d_model * arch.n_experts + arch.top_k * (
            arch.ffn_kind.projections * arch.d_model * arch.d_expert
        )
        if not is_zero(arch.n_shared_experts):
            per_moe += arch.n_shared_experts * (
                arch.ffn_kind.projections * arch.d_model * arch.d_shared_expert
            )
            if arch.shared_expert_gate:
                per_moe += arch.d_model
        w += arch.n_moe_layers * per_moe
    return sp.sympify(w)


def _attention_weights_per_token(arch: Arch) -> Expr:
    """Weight elements one token multiplies in one attention block's projections."""
    if arch.is_mla:
        return _mla_matmul_weights_per_token(arch)
    return arch.d_model * (arch.q_width + 2 * arch.kv_width) + arch.q_width * arch.d_model


def attention_flops_per_pair(arch: Arch) -> sp.Expr:
    """Forward FLOPs of one query meeting one key in one layer, all heads (expanded form).

    q.k over d_h and the weighted sum of d_h-wide values, 2 d_h each per head: 4 h d_h. MLA:
    keys of d_nope + d_rope and values of d_v per head, 2 h (d_nope + d_rope + d_v).
    """
    if arch.is_mla:
        return sp.sympify(2 * arch.n_heads * (arch.head_dim + arch.v_head_dim))
    return sp.sympify(4 * arch.q_width)


def attention_flops_per_key_absorbed(arch: Arch) -> sp.Expr:
    """Decode FLOPs per cached position and layer of absorbed MLA, all heads.

    Per head the query is mapped into the latent space (q_nope W_UK, d_c wide) and
    concatenated with its RoPE part; scores against the cached [c_kv, k_rope] cost
    2 (d_c + d_rope), the weighted sum of the cached latents 2 d_c: 2 h (2 d_c + d_rope).
    Source: DeepSeek-V2, arXiv:2405.04434 §2.1.2 (absorption); vLLM ``MLACommonImpl``
    decode path and FlashMLA (a 576-wide q.k and a 512-wide p.v per head for DeepSeek-V3).
    """
    return sp.sympify(2 * arch.n_heads * (2 * _kv_latent(arch) + arch.qk_rope_head_dim))


def _head_width(arch: Arch, head: Head) -> Expr:
    return 1 if head is Head.VALUE else arch.vocab


def work_linear_per_token(arch: Arch) -> sp.Expr:
    """Forward FLOPs of one token through every projection of the body (no attention, no head).

    2 x (weight elements multiplied): q, k, v, o projections and the FFN or the token's
    experts (top-k routed + shared, and the router d x E). MLA: q_a, q_b (or q_proj), kv_a,
    kv_b, o (expanded form; the absorbed decode multiplies the same weights per token).
    """
    attn = _attention_weights_per_token(arch)
    return sp.expand(2 * (arch.n_layers * attn + _matmul_weights_ffn_per_token(arch)))


def work_attention_per_token(arch: Arch, context: Expr) -> sp.Expr:
    """Forward FLOPs of one query attending to ``context`` keys in every layer.

    Scores q.k (2 d_h per key and head) plus the weighted sum of values (2 d_h per key and
    head): 4 h d_h context per layer. Queries count for all h heads under GQA/MQA. MLA
    (expanded form): 2 h (d_nope + d_rope + d_v) context per layer.
    """
    return sp.expand(arch.n_layers * attention_flops_per_pair(arch) * context)


def work_head_per_token(arch: Arch, head: Head = Head.LM) -> sp.Expr:
    """Forward FLOPs of the output head for one position: 2 d V (LM) or 2 d (value)."""
    return sp.expand(2 * arch.d_model * _head_width(arch, head))


def work_forward_per_token(arch: Arch, context: Expr, head: Head = Head.LM) -> sp.Expr:
    """C_f^tok: forward FLOPs of one token at context ``context`` (Table III).

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import m
    >>> work_forward_per_token(CANONICAL, m)
    8*L*d**2 + 4*L*d*d_ff + 4*L*d*m + 2*V*d
    """
    return sp.expand(
        work_linear_per_token(arch)
        + work_attention_per_token(arch, context)
        + work_head_per_token(arch, head)
    )


def work_backward_per_token(arch: Arch, context: Expr, head: Head = Head.LM) -> sp.Expr:
    """C_b^tok = 2 C_f^tok: every GEMM Y = XW has two backward GEMMs of its size.

    dX = dY W^T and dW = X^T dY; the attention products likewise (dQ, dK and dP, dV). This is
    exact for FlopCounterMode when every input requires grad (the embedding is trainable).
    """
    return sp.expand(2 * work_forward_per_token(arch, context, head))


def _attention_pairs(seq: Expr, counting: AttnCounting) -> sp.Expr:
    """Query-key pairs of one teacher-forced sequence: seq^2 (full) or seq(seq+1)/2 (causal)."""
    seq = sp.sympify(seq)
    return seq**2 if counting is AttnCounting.FULL else sp.sympify(seq) * (seq + 1) / 2


def work_forward(
    arch: Arch,
    seqs: Expr,
    seq: Expr,
    counting: AttnCounting = AttnCounting.FULL,
    head: Head = Head.LM,
) -> sp.Expr:
    """Teacher-forced forward FLOPs of ``seqs`` sequences of ``seq`` tokens (head on every
    position), as in Assessment and Training. Full counting: seqs * seq * C_f^tok(seq).

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import B, m
    >>> sp.factor(work_forward(CANONICAL, B, m) - B * m * work_forward_per_token(CANONICAL, m))
    0
    """
    per_token = work_linear_per_token(arch) + work_head_per_token(arch, head)
    attn = arch.n_layers * attention_flops_per_pair(arch) * _attention_pairs(seq, counting)
    return sp.expand(seqs * (seq * per_token + attn))


def work_backward(
    arch: Arch,
    seqs: Expr,
    seq: Expr,
    counting: AttnCounting = AttnCounting.FULL,
    head: Head = Head.LM,
) -> sp.Expr:
    """Backward FLOPs of a teacher-forced pass: 2 x :func:`work_forward`."""
    return sp.expand(2 * work_forward(arch, seqs, seq, counting, head))


def work_train(
    arch: Arch,
    seqs: Expr,
    seq: Expr,
    counting: AttnCounting = AttnCounting.FULL,
    head: Head = Head.LM,
) -> sp.Expr:
    """One training step (forward + backward) over ``seqs`` x ``seq`` tokens: 3 x forward."""
    return sp.expand(3 * work_forward(arch, seqs, seq, counting, head))


def work_prefill(
    arch: Arch, prompt: Expr, seqs: Expr = 1, counting: AttnCounting = AttnCounting.FULL
) -> sp.Expr:
    """Prefill of ``prompt`` tokens per sequence: the body on every token, LM head on the last.

    Matches transformers' ``model(ids, logits_to_keep=1)`` and inference engines (vLLM),
    which compute logits only for the position that samples the first response token. MLA
    prefill is the expanded form (engines prefill that way too).
    """
    attn = arch.n_layers * attention_flops_per_pair(arch) * _attention_pairs(prompt, counting)
    return sp.expand(
        seqs * (prompt * work_linear_per_token(arch) + attn + work_head_per_token(arch))
    )


def work_decode_step(
    arch: Arch, context: Expr, seqs: Expr = 1, mla: MlaDecode = MlaDecode.ABSORBED
) -> sp.Expr:
    """One decode step: one new token per sequence attending to ``context`` cached positions.

    Equals seqs * C_f^tok(context): the KV cache spares the recomputation of past tokens.
    MLA (``mla`` names the convention; ignored otherwise): ``absorbed`` is
    seqs * (C_lin + C_head + L 2 h (2 d_c + d_rope) context); ``reference`` is
    seqs * C_f^tok(context) plus kv_b_proj re-expanding the context - 1 cached latents,
    2 L d_c h (d_nope + d_v) (context - 1).
    """
    if arch.is_mla:
        return sp.expand(seqs * _mla_decode_per_seq(arch, context, mla))
    return sp.expand(seqs * work_forward_per_token(arch, context))


def _mla_decode_per_seq(arch: Arch, context: Expr, mla: MlaDecode) -> sp.Expr:
    """FLOPs of one MLA decode step of one sequence at ``context`` (see work_decode_step)."""
    if MlaDecode(mla) is MlaDecode.REFERENCE:
        expand = 2 * arch.n_layers * _mla_kv_b_weights(arch) * (context - 1)
        return work_forward_per_token(arch, context) + expand
    attn = arch.n_layers * attention_flops_per_key_absorbed(arch) * context
    return work_linear_per_token(arch) + work_head_per_token(arch) + attn


def work_rollout(
    arch: Arch,
    prompt: Expr,
    response: Expr,
    counting: AttnCounting = AttnCounting.FULL,
    mla: MlaDecode = MlaDecode.ABSORBED,
) -> sp.Expr:
    """C_gen^roll: one rollout = prefill(S) + sum_{t=1}^{T} decode_step(S + t) (Table III).

    Closed form of the decode sum: T (C_lin + C_head) + 4 L h d_h (T S + T (T + 1) / 2).
    MLA: the per-key term of ``mla`` (:func:`work_decode_step`) replaces 4 h d_h; ``reference``
    adds kv_b_proj over sum_{t=1}^{T} (S + t - 1) = T S + T (T - 1) / 2 cached latents.
    """
    per_token = work_linear_per_token(arch) + work_head_per_token(arch)
    if arch.is_mla:
        decode_sum = response * per_token + _mla_decode_keys_sum(arch, prompt, response, mla)
        return sp.expand(work_prefill(arch, prompt, 1, counting) + decode_sum)
    # sum_{t=1}^{T} (S + t), exact for integers too
    attn_pairs = response * prompt + sp.sympify(response) * (response + 1) / 2
    decode_sum = response * per_token + 4 * arch.n_layers * arch.q_width * attn_pairs
    return sp.expand(work_prefill(arch, prompt, 1, counting) + decode_sum)


def _mla_decode_keys_sum(arch: Arch, prompt: Expr, response: Expr, mla: MlaDecode) -> sp.Expr:
    """Context-dependent MLA decode FLOPs summed over the steps at contexts S+1 .. S+T."""
    attn_pairs = response * prompt + sp.sympify(response) * (response + 1) / 2  # sum (S + t)
    if MlaDecode(mla) is MlaDecode.REFERENCE:
        cached = response * prompt + sp.sympify(response) * (response - 1) / 2  # sum (S + t - 1)
        return arch.n_layers * (
            attention_flops_per_pair(arch) * attn_pairs + 2 * _mla_kv_b_weights(arch) * cached
        )
    return arch.n_layers * attention_flops_per_key_absorbed(arch) * attn_pairs


# --------------------------------------------------------------------------------------------
# Depth (critical path, in reduction levels)
# --------------------------------------------------------------------------------------------


def _gemm_depth(reduction: Expr) -> sp.Expr:
    """One multiply level plus a ceil(log2 x) add tree over the reduction length x."""
    return 1 + clog2(sp.sympify(reduction))


def _ffn_inner_width(arch: Arch) -> tuple[Expr, Expr]:
    """(dense, MoE) FFN widths that a token's down projection reduces over."""
    return arch.d_ff, arch.d_expert


def depth_layer_forward(arch: Arch, context: Expr, moe: bool = False) -> sp.Expr:
    """Forward critical path of one layer at context ``context``.

    Chain: QKV projection (reduce over d) -> scores (d_h) -> weighted values (context) ->
    output projection (h d_h) -> FFN up/gate (d) -> FFN down (d_ff or d_e); an MoE layer puts
    the router (d) before its experts; experts and heads run side by side.

    MLA (expanded form, also used for decode steps): the down-projections (d) are followed by
    the up-projections q_b (d_cq) and kv_b (d_c) side by side, max(d_cq, d_c), before the
    scores (d_nope + d_rope); the output projection reduces over h d_v.
    """
    dense_w, moe_w = _ffn_inner_width(arch)
    depth = (
        _gemm_depth(arch.d_model)
        + _gemm_depth(arch.head_dim)
        + _gemm_depth(context)
        + _gemm_depth(arch.v_width)
        + _gemm_depth(arch.d_model)
        + _gemm_depth(moe_w if moe else dense_w)
    )
    if arch.is_mla:
        depth += _gemm_depth(_mla_max(arch.q_lora_rank, arch.kv_lora_rank))
    if moe:
        depth += _gemm_depth(arch.d_model)
    return depth


def _mla_max(a: Expr | None, b: Expr) -> Expr:
    """max(a, b) of two widths (b when a is None), symbolic when either is a symbol."""
    return b if a is None else sp.Max(a, b)


def _layers_sum(arch: Arch, per_layer: Callable[[bool], Expr]) -> sp.Expr:
    total = arch.n_dense_layers * per_layer(False)
    if arch.is_moe:
        total += arch.n_moe_layers * per_layer(True)
    return sp.sympify(total)


def depth_forward(arch: Arch, context: Expr, head: Head = Head.LM) -> sp.Expr:
    """D_f: forward critical path of one token at context ``context``: L layers then the head.

    Independent of the batch: tokens and sequences run side by side.

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import m
    >>> depth_forward(CANONICAL, m)
    L*(3*clog2(d) + clog2(d_ff) + clog2(m) + clog2(d/h) + 6) + clog2(d) + 1
    """
    return _layers_sum(arch, lambda moe: depth_layer_forward(arch, context, moe)) + _gemm_depth(
        arch.d_model
    )


def depth_layer_backward(arch: Arch, context: Expr, moe: bool = False) -> sp.Expr:
    """Backward (input-gradient) critical path of one layer, reversed forward chain.

    FFN down^T (reduce over d) -> FFN up^T (d_ff or d_e, and the router's E) -> output
    projection^T (d) -> dP = dO V^T (d_h) -> dQ = dS K (context) -> QKV^T ((h + 2 h_kv) d_h).

    MLA: dP reduces over d_v; then the up-projections^T side by side (q_b^T over
    h (d_nope + d_rope), kv_b^T over h (d_nope + d_v)) and the down-projections^T (q_a^T over
    d_cq, kv_a^T over d_c + d_rope), each pair taken at its longer reduction (q_proj^T over
    h (d_nope + d_rope) when q_lora_rank is None).
    """
    dense_w, moe_w = _ffn_inner_width(arch)
    if arch.is_mla:
        up = sp.Max(arch.q_width, arch.n_heads * (arch.qk_nope_head_dim + arch.v_head_dim))
        attn_in = _gemm_depth(up) + _gemm_depth(_mla_max(arch.q_lora_rank, arch.kv_cache_width))
        head_reduce = arch.v_head_dim
    else:
        attn_in = _gemm_depth(arch.q_width + 2 * arch.kv_width)
        head_reduce = arch.head_dim
    depth = (
        _gemm_depth(arch.d_model)
        + _gemm_depth(moe_w if moe else dense_w)
        + _gemm_depth(arch.d_model)
        + _gemm_depth(head_reduce)
        + _gemm_depth(context)
        + attn_in
    )
    if moe:
        depth += _gemm_depth(arch.n_experts)
    return depth


def depth_backward(arch: Arch, context: Expr, tokens: Expr, head: Head = Head.LM) -> sp.Expr:
    """D_b: head^T (reduce over V), L layers of input gradients, then the last weight gradient.

    Parameter-gradient accumulation dW = X^T dY reduces over all ``tokens`` of the batch
    (1 + ceil(log2 tokens)); each layer's dW overlaps the propagation to earlier layers, so
    only the first layer's stays on the critical path.
    """
    return (
        _gemm_depth(_head_width(arch, head))
        + _layers_sum(arch, lambda moe: depth_layer_backward(arch, context, moe))
        + _gemm_depth(tokens)
    )


def depth_train(arch: Arch, context: Expr, tokens: Expr, head: Head = Head.LM) -> sp.Expr:
    """D_tr = D_f + D_b (Table IV caption)."""
    return depth_forward(arch, context, head) + depth_backward(arch, context, tokens, head)


def depth_prefill(arch: Arch, prompt: Expr) -> sp.Expr:
    """Prefill critical path: one forward at context S (prompt tokens run side by side)."""
    return depth_forward(arch, prompt)


def depth_decode_step(arch: Arch, context: Expr) -> sp.Expr:
    """One decode step: a forward of one token at context ``context``."""
    return depth_forward(arch, context)


def depth_generation(arch: Arch, prompt: Expr, response: Expr, closed_form: bool = True) -> sp.Expr:
    """D_gen = D_prefill(S) + sum_{t=1}^{T} D_dec(S + t): T sequential decode steps.

    Exact closed form: only the attention-value reduction depends on t, and
    sum_{t=1}^{T} ceil(log2(S+t)) is summed in closed form (``logs.sum_clog2``).
    ``closed_form=False`` gives the upper bound D_prefill(S) + T D_dec(S + T), the form the
    Big-O tables use: Theta(T * D_f(S + T)) as §II-F states.
    """
    if not closed_form:
        return sp.expand(
            depth_prefill(arch, prompt) + response * depth_decode_step(arch, prompt + response)
        )
    x = sp.Dummy("context", integer=True, positive=True)
    per_step = sp.expand(depth_decode_step(arch, x))
    n_attn = per_step.coeff(clog2(x))
    rest = sp.expand(per_step - n_attn * clog2(x))
    return sp.expand(
        depth_prefill(arch, prompt)
        + response * rest
        + n_attn * sum_clog2(sp.sympify(prompt) + 1, sp.sympify(prompt) + response)
    )


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------


def memory_params_bytes(arch: Arch, dtype: Dtype = Dtype.BF16, head: Head = Head.LM) -> sp.Expr:
    """Weight bytes: |M| x bytes of ``dtype`` (bf16 by default)."""
    return params(arch, head) * dtype.bytes


def memory_kv_cache(arch: Arch, tokens: Expr) -> sp.Expr:
    """M_KV: key and value vectors of every layer for ``tokens`` cached positions [elements].

    2 L h_kv d_h per token; GQA/MQA shrink it by h / h_kv. MLA caches the latent instead,
    L (d_c + d_rope) per token (arXiv:2405.04434 §2.1.2; vLLM, SGLang, FlashMLA; transformers'
    DynamicCache stores the same two tensors for DeepSeek-V2/V3: keys (B, 1, S, d_c) and
    values (B, 1, S, d_rope)): 576 elements per layer for DeepSeek-V3.
    """
    if arch.is_mla:
        return sp.expand(arch.n_layers * arch.kv_cache_width * tokens)
    return sp.expand(2 * arch.n_layers * arch.kv_width * tokens)


def memory_kv_cache_bytes(arch: Arch, tokens: Expr, dtype: Dtype = Dtype.BF16) -> sp.Expr:
    """M_KV in bytes for a KV cache of ``dtype`` (bf16 by default)."""
    return memory_kv_cache(arch, tokens) * dtype.bytes


def memory_activations_paper(arch: Arch, tokens: Expr) -> sp.Expr:
    """M_Act, the paper's leading term: tokens x L x d [elements] (§III-G).

    Constant factors for Q/K/V, FFN intermediates and norms are suppressed.
    """
    return sp.expand(tokens * arch.n_layers * arch.d_model)


def activation_bytes_per_token_layer(arch: Arch, dtype: Dtype = Dtype.BF16) -> sp.Expr:
    """Bytes one token's layer saves for backward, no recomputation, fused attention.

    Adapted from Korthikanti et al. 2022 (arXiv:2205.05198, §4.1: 34 s b h + 5 a s^2 b per
    layer in fp16) to current kernels: no dropout (so no masks), FlashAttention (no s^2
    softmax terms, but an fp32 log-sum-exp per head), GQA widths and a gated FFN. With
    x = ``dtype`` bytes:

    * attention norm input d, QKV input d, q k v (h + 2 h_kv) d_h, output h d_h  -> x each;
      log-sum-exp h -> 4 bytes;
    * FFN norm input d and FFN input d -> x each; each further norm (Gemma 2/3's post-attention
      and post-FFN norms, ``norms_per_layer`` = 4) saves its input d -> x;
    * plain FFN: activation input and down-projection input, 2 d_ff;
      gated FFN: gate, up, act(gate) and down-projection input, 4 d_ff (MoE: per routed and
      shared expert copy of the token, plus the router logits E in fp32).

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
    """
    x = dtype.bytes
    if arch.is_mla:
        attn = x * (2 * arch.d_model + _mla_saved_widths(arch)) + 4 * arch.n_heads
    else:
        attn = x * (2 * arch.d_model + arch.q_width + 2 * arch.kv_width + arch.q_width)
        attn += 4 * arch.n_heads
    norms = x * arch.norms_per_layer * arch.d_model
    inner = 2 if arch.ffn_kind.projections == 2 else 4

    def ffn(moe: bool) -> sp.Expr:
        if not moe:
            return sp.sympify(x * inner * arch.d_ff)
        width = arch.top_k * arch.d_expert + arch.n_shared_experts * arch.d_shared_expert
        copies = x * arch.d_model * arch.top_k  # the dispatched copies of the token
        return sp.sympify(x * inner * width + copies + 4 * arch.n_experts)

    total = arch.n_dense_layers * (attn + norms + ffn(False))
    if arch.is_moe:
        total += arch.n_moe_layers * (attn + norms + ffn(True))
    return sp.expand(total / arch.n_layers)


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


# --------------------------------------------------------------------------------------------
# Big-O
# --------------------------------------------------------------------------------------------


def big_o(expr: sp.Expr, regime: dict[sp.Symbol, sp.Expr] | None = None) -> sp.Expr:
    """Asymptotic form of an explicit expression, derived rather than written by hand.

    Steps: apply the regime (e.g. d_ff -> d for d_ff = O(d); d_h -> d), replace
    ceil(log2 x) by log x, expand, drop numeric coefficients, then drop every term that another
    term dominates (all symbols >= 1: a term divides the other, with logs as factors >= 1).
    The result is the sum inside O(.).

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import m, d_ff, d
    >>> big_o(work_forward_per_token(CANONICAL, m), {d_ff: d})
    L*d**2 + L*d*m + V*d
    """
    from rlmcost.logs import to_log

    e = sp.sympify(expr)
    if regime:
        e = e.xreplace(regime)
    e = to_log(e)
    e = e.xreplace({lg: _log_upper(lg.args[0]) for lg in e.atoms(sp.log)})
    e = sp.expand(e)
    terms = []
    for term in sp.Add.make_args(e):
        coeff, rest = term.as_coeff_Mul()
        if coeff > 0:
            terms.append(rest)
    terms = list(dict.fromkeys(terms))
    kept = [t for t in terms if not any(o != t and _dominates(o, t) for o in terms)]
    return sp.Add(*kept)


def _upper(term: sp.Expr) -> sp.Expr:
    """Replace h_kv by its bound h, then h by d when no head width d_h pairs with it (outside
    logs): the counts are bounded by the widths they split (h_kv <= h <= d)."""
    from rlmcost import symbols as sy

    bounds = {sy.h_kv: sy.h}
    term = term.xreplace(bounds)
    if sy.d_h not in term.free_symbols:
        bounds = {sy.h: sy.d}
    factors = []
    for f, p in term.as_powers_dict().items():
        factors.append(bounds.get(f, f) ** p if f in bounds and p.is_positive else f**p)
    return sp.Mul(*factors)


def _log_upper(arg: sp.Expr) -> sp.Expr:
    """log of a product as a sum of logs of its symbolic numerator factors: log(d/h) -> log d,
    log(3 d) -> log d, log(B m) -> log B + log m (an upper bound up to a constant)."""
    num, _ = sp.fraction(sp.factor(arg))
    logs = [sp.log(f) for f in num.as_powers_dict() if not f.is_number]
    return sp.Add(*logs) if logs else sp.Integer(1)


def _dominates(big: sp.Expr, small: sp.Expr) -> bool:
    """True when big >= small for all symbols >= 1: upper(small) divides big, with the ratio a
    product of non-negative powers; on a tie the term that needed no bound wins."""
    ratio = sp.powsimp(big / _upper(small))
    if ratio == 1:
        return _upper(small) != small and _upper(big) == big
    for factor, power in ratio.as_powers_dict().items():
        if factor.is_number:
            return False
        if not (power.is_number and power >= 0):
            return False
    return True
