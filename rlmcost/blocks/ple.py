"""Gemma 4 E2B / E4B: per-layer input embeddings (PLE), layers that reuse earlier keys and values.

Source: transformers 5.24 ``models/gemma4/modeling_gemma4.py``.

* ``Gemma4TextModel`` holds ``embed_tokens_per_layer``, a second embedding table of
  ``vocab_size_per_layer_input`` rows x L p (``Arch.ple_vocab``, ``Arch.ple_dim`` = p, all
  layers' slices packed in one row: a lookup, no matmul), ``per_layer_model_projection``
  (a d -> L p Linear over every token's input embedding) and ``per_layer_projection_norm`` (one
  p-wide RMSNorm). Each ``Gemma4TextDecoderLayer`` gates its slice in after the FFN:
  ``per_layer_input_gate`` d -> p, an activation, the product with the slice,
  ``per_layer_projection`` p -> d and ``post_per_layer_input_norm`` (a d-wide RMSNorm, counted
  in ``norms_per_layer``). A token multiplies d L p + L (2 d p) = 3 L d p weights.
* The last ``num_kv_shared_layers`` layers (``Arch.kv_shared_layers``; ``kv_shared_full_layers``
  of them full-attention) take the keys and values of the last earlier layer of their kind
  (``Gemma4TextConfig.kv_sharing_modes``, ``Gemma4TextAttention.is_kv_shared_layer``): no
  ``k_proj`` / ``v_proj`` / ``k_norm`` and nothing cached of their own; their queries still
  attend, so the attention FLOPs are unchanged. With ``use_double_wide_mlp``
  (``Arch.kv_shared_wide_ffn``) their ``Gemma4TextMLP`` is 2 d_ff wide.

Every term is 0 for a model without PLE (p = 0) or shared layers.
"""

from __future__ import annotations

import sympy as sp

from rlmcost.arch import Arch
from rlmcost.blocks.attention import Expr
from rlmcost.blocks.window import _window


def ple_layer_weights(arch: Arch) -> Expr:
    """Weight elements of one layer's PLE gate (d -> p) and projection (p -> d): 2 d p."""
    return 2 * arch.d_model * arch.ple_dim


def params_ple_embedding(arch: Arch) -> sp.Expr:
    """Parameters beside the token embedding: the per-layer table V_p x L p, the d -> L p model
    projection and its p-wide norm: p (L (V_p + d) + 1). Held as the embedding is (first
    pipeline stage; the table vocabulary-parallel under TP, :func:`~rlmcost.parallel.shard.
    tp_shard` splits V_p as it splits V; the projection and norm whole on each rank)."""
    return sp.sympify(arch.ple_dim * (arch.n_layers * (arch.ple_vocab + arch.d_model) + 1))


def ple_weights_per_token(arch: Arch) -> sp.Expr:
    """Weight elements one token multiplies in the PLE path: d L p (the model projection) +
    L 2 d p (each layer's gate and projection) = 3 L d p. The table lookup is a gather."""
    return sp.sympify(arch.n_layers * (arch.d_model * arch.ple_dim + ple_layer_weights(arch)))


def _shared_kv_weights(arch: Arch) -> Expr:
    """k/v projection weight elements the shared layers do not hold: 2 d h_kv d_h per sliding
    one, d h_kv,full d_full (once with ``full_k_eq_v``, else twice) per full one."""
    sliding = arch.kv_shared_layers - arch.kv_shared_full_layers
    full = arch.full_view()
    per_full = (1 if arch.full_k_eq_v else 2) * full.kv_width
    return arch.d_model * (sliding * 2 * arch.kv_width + arch.kv_shared_full_layers * per_full)


def kv_shared_weights_delta(arch: Arch) -> sp.Expr:
    """Weight elements a token multiplies in all layers beyond what every layer at its own
    attention shape would: minus the shared layers' k/v projections, plus their second FFN
    width with ``kv_shared_wide_ffn`` (projections x d x d_ff each)."""
    w = -_shared_kv_weights(arch)
    if arch.kv_shared_wide_ffn:
        w += arch.kv_shared_layers * arch.ffn_kind.projections * arch.d_model * arch.d_ff
    return sp.sympify(w)


def params_kv_shared_delta(arch: Arch) -> sp.Expr:
    """Parameters of all shared layers beyond the same layers holding their own keys and
    values: minus k/v projections (and biases), minus k norms (d_h or d_full each, with
    ``qk_norm``; v_norm has no weight), plus a second FFN width (``kv_shared_wide_ffn``)."""
    sliding = arch.kv_shared_layers - arch.kv_shared_full_layers
    full = arch.full_view()
    p = -_shared_kv_weights(arch)
    if arch.qkv_bias:
        per_full = (1 if arch.full_k_eq_v else 2) * full.kv_width
        p -= sliding * 2 * arch.kv_width + arch.kv_shared_full_layers * per_full
    if arch.qk_norm:
        p -= sliding * arch.head_dim + arch.kv_shared_full_layers * full.head_dim
    if arch.kv_shared_wide_ffn:
        ffn = arch.ffn_kind.projections * arch.d_model * arch.d_ff
        if arch.mlp_bias:
            ffn += (arch.ffn_kind.projections - 1) * arch.d_ff
        p += arch.kv_shared_layers * ffn
    return sp.sympify(p)


def kv_shared_cache(arch: Arch, tokens: Expr) -> sp.Expr:
    """Elements the shared layers would cache for one sequence of ``tokens`` tokens and do not:
    a sliding one's min(tokens, W - 1) positions, a full one's ``tokens``, each of its own
    width (vLLM's Gemma 4 attention passes ``kv_sharing_target_layer_name``: no cache)."""
    full = arch.full_view().kv_cache_width * arch.kv_shared_full_layers * tokens
    if not arch.has_window:
        return sp.sympify(full)
    sliding = arch.kv_shared_layers - arch.kv_shared_full_layers
    return sp.sympify(full + sliding * arch.kv_cache_width * sp.Min(tokens, _window(arch) - 1))
