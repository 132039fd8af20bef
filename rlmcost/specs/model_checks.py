"""The structural checks of a :class:`~rlmcost.specs.model.ModelSpec` (its validator calls
:func:`check_structure`): multi-head latent attention, DeepSeek Sparse Attention, sliding
windows, linear-attention layers and Mamba-2 layers, each a one-line SpecError naming the
fields to mend."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.specs.model import ModelSpec


def check_structure(spec: ModelSpec) -> None:
    """Every check of this module, in the order the fields depend on each other."""
    _mla(spec)
    _dsa(spec)
    _window(spec)
    _full_shape(spec)
    _gemma4e(spec)
    _linear(spec)
    _mamba(spec)


def _full_shape(spec: ModelSpec) -> None:
    """Gemma 4's full-attention layers of their own shape: a window (so that some layers are
    full and some slide), both sizes set, KV heads dividing the query heads, no MLA."""
    if not (spec.full_head_dim or spec.full_kv_heads or spec.full_k_eq_v):
        return
    if (spec.sliding_window is None or not spec.full_attention_layers or spec.is_mla
            or not spec.full_head_dim or not spec.full_kv_heads):  # fmt: skip
        raise SpecError(
            f"model {spec.name}: full_head_dim / full_kv_heads / full_k_eq_v shape the full-"
            "attention layers of a sliding-window model (Gemma 4): they need sliding_window, "
            "full_attention_layers > 0, both full_head_dim and full_kv_heads, and no MLA"
        )
    if spec.n_heads % spec.full_kv_heads:
        raise SpecError(f"model {spec.name}: full_kv_heads={spec.full_kv_heads} must divide "
                        f"n_heads={spec.n_heads}")


def _gemma4e(spec: ModelSpec) -> None:
    """Gemma 4 E's per-layer embeddings and KV-shared layers: a table with the width, shared
    layers within the stack (full ones among the full layers) and an earlier layer of each
    kind whose keys and values they reuse; no MLA or linear attention."""
    if bool(spec.ple_dim) != bool(spec.ple_vocab):
        raise SpecError(f"model {spec.name}: ple_dim and ple_vocab go together (Gemma 4's "
                        "hidden_size_per_layer_input and vocab_size_per_layer_input)")
    shared, full = spec.kv_shared_layers, spec.kv_shared_full_layers
    if not (shared or full or spec.kv_shared_wide_ffn):
        return
    n_full = spec.full_attention_layers if spec.sliding_window is not None else spec.n_layers
    if (spec.is_mla or spec.linear_layers or not shared or full > shared
            or full > n_full - 1 or shared - full > spec.n_layers - n_full - 1
            or shared >= spec.n_layers):  # fmt: skip
        raise SpecError(
            f"model {spec.name}: kv_shared_layers={shared} (kv_shared_full_layers={full}) must "
            f"leave an earlier layer of each kind to share from ({n_full} of {spec.n_layers} "
            "layers full); no MLA or linear attention"
        )


def _mamba(spec: ModelSpec) -> None:
    if spec.linear_mamba != bool(spec.linear_chunk) or (spec.linear_mamba
                                                        and not spec.linear_layers):
        raise SpecError(
            f"model {spec.name}: linear_mamba needs linear_layers > 0 and linear_chunk > 0 "
            "(the SSD chunk length), and linear_chunk needs linear_mamba"
        )
    if spec.ffn_free_layers >= spec.n_layers or (spec.ffn_free_layers
                                                 and spec.first_dense_layers):
        raise SpecError(
            f"model {spec.name}: ffn_free_layers={spec.ffn_free_layers} must be below "
            f"n_layers={spec.n_layers} and cannot go with first_dense_layers"
        )


def _linear(spec: ModelSpec) -> None:
    sizes = (spec.linear_key_heads, spec.linear_value_heads, spec.linear_key_head_dim,
             spec.linear_value_head_dim, spec.linear_conv_kernel)  # fmt: skip
    if not spec.linear_layers:
        if any(sizes):
            raise SpecError(
                f"model {spec.name}: linear attention sizes (linear_*) set without "
                "linear_layers; give linear_layers or drop them"
            )
        return
    if not all(sizes):
        raise SpecError(
            f"model {spec.name}: linear_layers={spec.linear_layers} needs "
            "linear_key_heads, linear_value_heads, linear_key_head_dim, "
            "linear_value_head_dim and linear_conv_kernel > 0"
        )
    if spec.linear_layers > spec.n_layers:
        raise SpecError(
            f"model {spec.name}: linear_layers={spec.linear_layers} "
            f"exceeds n_layers={spec.n_layers}"
        )
    if spec.linear_value_heads % spec.linear_key_heads:
        raise SpecError(
            f"model {spec.name}: linear_key_heads={spec.linear_key_heads} must divide "
            f"linear_value_heads={spec.linear_value_heads}"
        )
    if spec.sliding_window is not None or spec.kv_lora_rank is not None:
        raise SpecError(
            f"model {spec.name}: linear attention layers with a sliding window or MLA are "
            "not supported; drop sliding_window / kv_lora_rank"
        )


def _window(spec: ModelSpec) -> None:
    if spec.sliding_window is None:
        if spec.full_attention_layers:
            raise SpecError(
                f"model {spec.name}: full_attention_layers={spec.full_attention_layers} "
                "without a sliding_window; give sliding_window or drop full_attention_layers"
            )
        return
    if spec.full_attention_layers >= spec.n_layers:
        raise SpecError(
            f"model {spec.name}: full_attention_layers={spec.full_attention_layers} leaves no "
            f"sliding layer of n_layers={spec.n_layers}; use 0..{spec.n_layers - 1}, or drop "
            "sliding_window for full attention everywhere"
        )


def _dsa(spec: ModelSpec) -> None:
    sizes = (spec.index_heads, spec.index_head_dim, spec.index_layers)
    if spec.index_topk is None:
        if any(sizes):
            raise SpecError(
                f"model {spec.name}: DSA fields (index_heads, index_head_dim, index_layers) "
                "set without index_topk; give index_topk or drop them"
            )
        return
    if not all(sizes) or spec.index_layers > spec.n_layers:
        raise SpecError(
            f"model {spec.name}: DeepSeek Sparse Attention (index_topk set) needs "
            f"index_heads, index_head_dim > 0 and index_layers in 1..{spec.n_layers}"
        )
    if spec.q_lora_rank is None or spec.sliding_window is not None or spec.linear_layers:
        raise SpecError(
            f"model {spec.name}: DeepSeek Sparse Attention needs MLA with a query latent "
            "(q_lora_rank, kv_lora_rank; the indexer reads the query latent) and no "
            "sliding_window or linear_layers"
        )


def _mla(spec: ModelSpec) -> None:
    mla = (spec.qk_nope_head_dim, spec.qk_rope_head_dim, spec.v_head_dim)
    if spec.kv_lora_rank is None:
        if any(mla) or spec.q_lora_rank is not None:
            raise SpecError(
                f"model {spec.name}: MLA fields (q_lora_rank, qk_*_head_dim, v_head_dim) "
                "set without kv_lora_rank; give kv_lora_rank or drop them"
            )
        return
    if not all(mla):
        raise SpecError(
            f"model {spec.name}: MLA (kv_lora_rank set) needs qk_nope_head_dim, "
            "qk_rope_head_dim and v_head_dim > 0"
        )
    if spec.head_dim != spec.qk_nope_head_dim + spec.qk_rope_head_dim:
        raise SpecError(
            f"model {spec.name}: MLA head_dim={spec.head_dim} must equal qk_nope_head_dim + "
            f"qk_rope_head_dim = {spec.qk_nope_head_dim + spec.qk_rope_head_dim}"
        )
    if spec.n_kv_heads != spec.n_heads:
        raise SpecError(
            f"model {spec.name}: MLA expands keys and values per head; set "
            f"n_kv_heads={spec.n_heads} (= n_heads)"
        )
