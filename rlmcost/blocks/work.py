"""Work (FLOPs) of the Table III blocks: per token, teacher-forced passes, prefill, decode, rollout.

Conventions in the package docstring (:mod:`rlmcost.blocks`); the keys each query attends to,
sliding windows included, come from :mod:`rlmcost.blocks.window`.
"""

from __future__ import annotations

import sympy as sp

from rlmcost.arch import Arch, is_zero
from rlmcost.blocks.attention import (
    Expr,
    _attention_weights_per_token,
    _mla_kv_b_weights,
    attention_flops_per_key_absorbed,
    attention_flops_per_pair,
    full_pair_delta,
    full_weights_delta,
    linear_attention_core_flops_per_token,
    linear_attention_weights_per_token,
    linear_decode_saving_per_token,
)
from rlmcost.blocks.ple import kv_shared_weights_delta, ple_weights_per_token
from rlmcost.blocks.sparse import (
    indexer_work_forward,
    indexer_work_per_token,
    indexer_work_rollout_decode,
)
from rlmcost.blocks.window import (
    attended_keys,
    attended_keys_sum,
    attended_pairs,
    full_keys,
    full_keys_sum,
    full_pairs,
)
from rlmcost.choices import AttnCounting, Head, MlaDecode


def _matmul_weights_ffn_per_token(arch: Arch) -> sp.Expr:
    """Weight elements one token multiplies in all FFNs (dense and MoE layers, router too)."""
    per_dense = arch.ffn_kind.projections * arch.d_model * arch.d_ff
    w = arch.n_dense_layers * per_dense
    if arch.is_moe:
        per_moe = arch.d_model * arch.n_experts + arch.top_k * (
            arch.ffn_kind.projections * arch.expert_width * arch.d_expert
        )
        per_moe += 2 * arch.d_model * arch.moe_latent  # a latent MoE's d -> l and l -> d
        if not is_zero(arch.n_shared_experts):
            per_moe += arch.n_shared_experts * (
                arch.ffn_kind.projections * arch.d_model * arch.d_shared_expert
            )
            if arch.shared_expert_gate:
                per_moe += arch.d_model
        w += arch.n_moe_layers * per_moe
        w -= arch.n_ffn_free_layers * per_moe  # FFN-free layers (Nemotron-H), MoE model
    else:
        w -= arch.n_ffn_free_layers * per_dense  # FFN-free layers (Nemotron-H), dense model
    return sp.sympify(w)


def _head_width(arch: Arch, head: Head) -> Expr:
    return 1 if head is Head.VALUE else arch.vocab


def work_linear_per_token(arch: Arch) -> sp.Expr:
    """Forward FLOPs of one token through every projection of the body (no attention, no head).

    2 x (weight elements multiplied): q, k, v, o projections and the FFN or the token's
    experts (top-k routed + shared, and the router d x E). MLA: q_a, q_b (or q_proj), kv_a,
    kv_b, o (expanded form; the absorbed decode multiplies the same weights per token).
    Linear-attention (Gated DeltaNet) layers: their projections and their per-token core
    (:func:`~rlmcost.blocks.attention.linear_attention_core_flops_per_token`), which does not
    grow with the context, so it sits here and not in the attention term. Gemma 4 E: the
    per-layer input embeddings' 3 L d p weights, the KV-shared layers' missing k/v
    projections and wider FFNs (:mod:`rlmcost.blocks.ple`).
    """
    attn = arch.n_softmax_layers * _attention_weights_per_token(arch)
    attn += arch.n_full_layers * full_weights_delta(arch)  # Gemma 4's full layers
    # Gemma 4 E: the per-layer input embeddings' projections, the KV-shared layers (blocks.ple)
    attn += ple_weights_per_token(arch) + kv_shared_weights_delta(arch)
    linear = arch.n_linear_layers * linear_attention_weights_per_token(arch)
    core = arch.n_linear_layers * linear_attention_core_flops_per_token(arch)
    return sp.expand(2 * (attn + linear + _matmul_weights_ffn_per_token(arch)) + core)


def work_attention_per_token(arch: Arch, context: Expr) -> sp.Expr:
    """Forward FLOPs of one query attending to ``context`` keys in every layer.

    Scores q.k (2 d_h per key and head) plus the weighted sum of values (2 d_h per key and
    head): 4 h d_h context per layer. Queries count for all h heads under GQA/MQA. MLA
    (expanded form): 2 h (d_nope + d_rope + d_v) context per layer. A sliding layer of window
    W sees min(context, W) keys (:func:`~rlmcost.blocks.window.attended_keys`). Full layers
    of their own head width (Gemma 4) add 4 h (d_full - d_h) per key they attend
    (:func:`~rlmcost.blocks.attention.full_pair_delta`).
    """
    full = full_pair_delta(arch) * full_keys(arch, context)
    return sp.expand(attention_flops_per_pair(arch) * attended_keys(arch, context) + full)


def work_head_per_token(arch: Arch, head: Head = Head.LM) -> sp.Expr:
    """Forward FLOPs of the output head for one position: 2 d V (LM) or 2 d (value)."""
    return sp.expand(2 * arch.d_model * _head_width(arch, head))


def work_forward_per_token(arch: Arch, context: Expr, head: Head = Head.LM) -> sp.Expr:
    """C_f^tok: forward FLOPs of one token at context ``context`` (Table III).

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import m
    >>> work_forward_per_token(CANONICAL, m)
    8*L*d**2 + 4*L*d*d_ff + 4*L*d*m + 2*V*d

    DeepSeek Sparse Attention adds the lightning indexers' projections and their scores of
    ``context`` keys (:func:`~rlmcost.blocks.sparse.indexer_work_per_token`).
    """
    return sp.expand(
        work_linear_per_token(arch)
        + work_attention_per_token(arch, context)
        + work_head_per_token(arch, head)
        + indexer_work_per_token(arch, context)
    )


def work_backward_per_token(arch: Arch, context: Expr, head: Head = Head.LM) -> sp.Expr:
    """C_b^tok = 2 C_f^tok: every GEMM Y = XW has two backward GEMMs of its size.

    dX = dY W^T and dW = X^T dY; the attention products likewise (dQ, dK and dP, dV). This is
    exact for FlopCounterMode when every input requires grad (the embedding is trainable).
    A DSA lightning indexer has no backward (no gradient reaches it: :mod:`rlmcost.blocks.sparse`).
    """
    fwd = work_forward_per_token(arch, context, head) - indexer_work_per_token(arch, context)
    return sp.expand(2 * fwd)


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
    attn = attention_flops_per_pair(arch) * attended_pairs(arch, seq, counting)
    attn += full_pair_delta(arch) * full_pairs(arch, seq, counting)  # Gemma 4's full layers
    indexer = indexer_work_forward(arch, seqs, seq, counting)  # DSA (blocks.sparse)
    return sp.expand(seqs * (seq * per_token + attn) + indexer)


def work_backward(
    arch: Arch,
    seqs: Expr,
    seq: Expr,
    counting: AttnCounting = AttnCounting.FULL,
    head: Head = Head.LM,
) -> sp.Expr:
    """Backward FLOPs of a teacher-forced pass: 2 x :func:`work_forward` (less a DSA
    indexer's forward, which has no backward: :mod:`rlmcost.blocks.sparse`)."""
    fwd = work_forward(arch, seqs, seq, counting, head)
    return sp.expand(2 * (fwd - indexer_work_forward(arch, seqs, seq, counting)))


def work_train(
    arch: Arch,
    seqs: Expr,
    seq: Expr,
    counting: AttnCounting = AttnCounting.FULL,
    head: Head = Head.LM,
) -> sp.Expr:
    """One training step (forward + backward) over ``seqs`` x ``seq`` tokens: 3 x forward
    (a DSA indexer's forward once)."""
    fwd = work_forward(arch, seqs, seq, counting, head)
    return sp.expand(3 * fwd - 2 * indexer_work_forward(arch, seqs, seq, counting))


def work_prefill(
    arch: Arch, prompt: Expr, seqs: Expr = 1, counting: AttnCounting = AttnCounting.FULL
) -> sp.Expr:
    """Prefill of ``prompt`` tokens per sequence: the body on every token, LM head on the last.

    Matches transformers' ``model(ids, logits_to_keep=1)`` and inference engines (vLLM),
    which compute logits only for the position that samples the first response token. MLA
    prefill is the expanded form (engines prefill that way too).
    """
    attn = attention_flops_per_pair(arch) * attended_pairs(arch, prompt, counting)
    attn += full_pair_delta(arch) * full_pairs(arch, prompt, counting)  # Gemma 4's full layers
    indexer = indexer_work_forward(arch, seqs, prompt, counting)  # DSA (blocks.sparse)
    return sp.expand(
        seqs * (prompt * work_linear_per_token(arch) + attn + work_head_per_token(arch)) + indexer
    )


def work_decode_step(
    arch: Arch, context: Expr, seqs: Expr = 1, mla: MlaDecode = MlaDecode.ABSORBED
) -> sp.Expr:
    """One decode step: one new token per sequence attending to ``context`` positions.

    Equals seqs * C_f^tok(context): the KV cache spares the recomputation of past tokens; a
    Mamba-2 layer runs its recurrent form (:func:`~rlmcost.blocks.attention.
    mamba_decode_core_flops_per_token`) in place of the chunked one C_f^tok counts. A
    sliding layer attends min(context, W) keys: the new token and the W - 1 positions
    transformers' ``DynamicSlidingWindowLayer`` keeps (:mod:`rlmcost.blocks.window`).
    MLA (``mla`` names the convention; ignored otherwise): ``absorbed`` is
    seqs * (C_lin + C_head + L 2 h (2 d_c + d_rope) context); ``reference`` is
    seqs * C_f^tok(context) plus kv_b_proj re-expanding the context - 1 cached latents,
    2 L d_c h (d_nope + d_v) (context - 1).
    """
    if arch.is_mla:
        return sp.expand(seqs * _mla_decode_per_seq(arch, context, mla))
    recurrent = arch.n_linear_layers * linear_decode_saving_per_token(arch)  # Mamba-2: recurrent
    return sp.expand(seqs * (work_forward_per_token(arch, context) - recurrent))


def _mla_decode_per_seq(arch: Arch, context: Expr, mla: MlaDecode) -> sp.Expr:
    """FLOPs of one MLA decode step of one sequence at ``context`` (see work_decode_step).

    The cached latents kv_b_proj re-expands are the attended keys but the new one, per layer.
    DSA: the indexers score all ``context`` keys; ``absorbed`` attends the top min(c, k),
    ``reference`` (transformers' eager path) every key, masked (:func:`_dense`).
    """
    if arch.is_dsa:
        indexer = indexer_work_per_token(arch, context)
        if MlaDecode(mla) is MlaDecode.REFERENCE:
            return _mla_decode_per_seq(_dense(arch), context, mla) + indexer
        keys = attended_keys(arch, context)
        attn = attention_flops_per_key_absorbed(arch) * keys
        return work_linear_per_token(arch) + work_head_per_token(arch) + attn + indexer
    keys = attended_keys(arch, context)
    if MlaDecode(mla) is MlaDecode.REFERENCE:
        expand = 2 * _mla_kv_b_weights(arch) * (keys - arch.n_layers)
        return work_forward_per_token(arch, context) + expand
    attn = attention_flops_per_key_absorbed(arch) * keys
    return work_linear_per_token(arch) + work_head_per_token(arch) + attn


def work_rollout(
    arch: Arch,
    prompt: Expr,
    response: Expr,
    counting: AttnCounting = AttnCounting.FULL,
    mla: MlaDecode = MlaDecode.ABSORBED,
) -> sp.Expr:
    """C_gen^roll: one rollout = prefill(S) + sum_{t=1}^{T} decode_step(S + t) (Table III).

    Closed form of the decode sum: T (C_lin + C_head) + 4 h d_h K(S, T) with K the attended
    keys of the T steps, L (T S + T (T + 1) / 2) without a window
    (:func:`~rlmcost.blocks.window.attended_keys_sum`). MLA: the per-key term of ``mla``
    (:func:`work_decode_step`) replaces 4 h d_h; ``reference`` adds kv_b_proj over the cached
    latents, K(S, T) - L T (L (T S + T (T - 1) / 2) without a window).
    """
    if arch.is_dsa and MlaDecode(mla) is MlaDecode.REFERENCE:  # transformers' dense path
        dense = work_rollout(_dense(arch), prompt, response, counting, mla)
        return sp.expand(dense + indexer_work_forward(arch, 1, prompt, counting)
                         + indexer_work_rollout_decode(arch, prompt, response))  # fmt: skip
    per_token = work_linear_per_token(arch) + work_head_per_token(arch)
    keys = attended_keys_sum(arch, prompt, response)
    if arch.is_dsa:  # the indexers' decode steps (the prefill's are in work_prefill)
        decode_sum = response * per_token + attention_flops_per_key_absorbed(arch) * keys
        decode_sum += indexer_work_rollout_decode(arch, prompt, response)
        return sp.expand(work_prefill(arch, prompt, 1, counting) + decode_sum)
    if arch.is_mla:
        decode_sum = response * per_token + _mla_decode_keys_sum(arch, keys, response, mla)
        return sp.expand(work_prefill(arch, prompt, 1, counting) + decode_sum)
    per_token -= arch.n_linear_layers * linear_decode_saving_per_token(arch)  # Mamba-2 decode
    decode_sum = response * per_token + 4 * arch.q_width * keys
    decode_sum += full_pair_delta(arch) * arch.n_full_layers * full_keys_sum(prompt, response)
    return sp.expand(work_prefill(arch, prompt, 1, counting) + decode_sum)


def _mla_decode_keys_sum(arch: Arch, keys: Expr, response: Expr, mla: MlaDecode) -> sp.Expr:
    """Context-dependent MLA decode FLOPs of the T steps whose attended keys sum to ``keys``."""
    if MlaDecode(mla) is MlaDecode.REFERENCE:
        cached = keys - arch.n_layers * response  # each step's keys but its own, per layer
        return attention_flops_per_pair(arch) * keys + 2 * _mla_kv_b_weights(arch) * cached
    return attention_flops_per_key_absorbed(arch) * keys


def _dense(arch: Arch) -> Arch:
    """``arch`` without DeepSeek Sparse Attention: MLA over every key, as transformers' eager
    path attends (the unselected keys masked), for ``MlaDecode.REFERENCE``."""
    return arch.with_(index_topk=None, index_heads=0, index_head_dim=0, index_layers=0)
