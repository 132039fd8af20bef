"""Qwen3-VL and Qwen3.5 configs (``qwen3_vl``, ``qwen3_vl_moe``, ``qwen3_5``, ``qwen3_5_moe``,
and the text-only ``qwen3_5_text``, ``qwen3_5_moe_text``): the language model and the tower.

Sources: transformers 5.24 ``models/qwen3_vl``, ``models/qwen3_vl_moe``, ``models/qwen3_5``,
``models/qwen3_5_moe`` (configuration and modular files).

* ``qwen3_vl``: ``Qwen3VLTextModel`` is a Qwen3 decoder (q/k RMSNorms per head, no biases unless
  ``attention_bias``, ``head_dim`` default 128, no sliding window: ``Qwen3VLTextAttention``
  reads none); ``qwen3_vl_moe``: ``Qwen3VLMoeTextModel`` is a Qwen3-MoE decoder (router E x d,
  routed experts of ``moe_intermediate_size``, no shared expert; ``mlp_only_layers`` and
  ``decoder_sparse_step`` as in Qwen3-MoE; ``head_dim`` default hidden_size / heads).
* ``qwen3_5``: ``Qwen3_5TextModel`` is Qwen3-Next's hybrid (``layer_types`` or
  ``full_attention_interval`` of Gated DeltaNet and gated full-attention layers, zero-centred
  RMSNorms of the same size, ``head_dim`` default 256) with a dense gated MLP of
  ``intermediate_size`` in every layer (``Qwen3_5DecoderLayer``); its DeltaNet splits Qwen3-Next's
  ``in_proj_qkvz`` / ``in_proj_ba`` into ``in_proj_qkv``, ``in_proj_z``, ``in_proj_b``,
  ``in_proj_a`` of the same total size, so parameters and FLOPs are Qwen3-Next's.
  ``qwen3_5_moe``: ``Qwen3_5MoeDecoderLayer`` puts Qwen3-Next's sparse block (router, routed
  experts, one shared expert with a sigmoid gate) in every layer: the config's
  ``mlp_only_layers``, ``decoder_sparse_step`` and ``intermediate_size`` are not read.
* The multimodal configs carry the decoder under ``text_config`` (older layouts top-level) and
  the tower under ``vision_config`` (:mod:`rlmcost.specs.hf_vision`); whether the LM head is
  tied is the top-level ``tie_word_embeddings`` (default false, ``Qwen3VLConfig``), which the
  ``...ForConditionalGeneration`` class reads, not the one ``text_config`` may hold.
* The multi-token-prediction layer (``mtp_num_hidden_layers``) is not built by transformers
  (``_keys_to_ignore_on_load_unexpected = [r"^mtp.*"]``) and is left out, as for Qwen3-Next.
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError
from rlmcost.specs.hf_vision import vision_note, vision_shape

#: model_type -> (the decoder's reading in hf_config, the tower's in hf_vision or None).
QWEN3_TYPES: dict[str, tuple[str, str | None]] = {
    "qwen3_vl": ("qwen3", "qwen3_vl"), "qwen3_vl_moe": ("qwen3_moe", "qwen3_vl"),
    "qwen3_5": ("qwen3_5_text", "qwen3_5"), "qwen3_5_moe": ("qwen3_5_moe_text", "qwen3_5"),
    "qwen3_5_text": ("qwen3_5_text", None), "qwen3_5_moe_text": ("qwen3_5_moe_text", None),
}  # fmt: skip
#: the decoder readings with Gated DeltaNet layers (rlmcost.specs.hf_linear).
HYBRID = ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text")
#: keys the Qwen3-VL / Qwen3.5 decoders do not read (their config classes drop or ignore them).
_UNREAD = {
    "qwen3": ("sliding_window", "use_sliding_window", "max_window_layers", "layer_types"),
    "qwen3_moe": ("sliding_window", "use_sliding_window", "max_window_layers", "layer_types"),
    "qwen3_5_moe_text": ("mlp_only_layers", "decoder_sparse_step"),
}


def qwen3_family(
    cfg: dict[str, Any], mt: str, path: str
) -> tuple[dict[str, Any], str, dict[str, int] | None, list[str]]:
    """(the language model's config keys, the model type they read as, the tower's shape or
    None, notes) of a ``mt`` config (one of :data:`QWEN3_TYPES`); one-line SpecError for a
    malformed ``text_config`` or ``vision_config``."""
    text_mt, tower = QWEN3_TYPES[mt]
    notes: list[str] = []
    shape = None
    if tower is None:
        text = dict(cfg)
    else:
        inner = cfg.get("text_config")
        if inner is not None and not isinstance(inner, dict):
            raise SpecError(f"{path}: text_config of a {mt} config must be an object")
        text = {**{k: v for k, v in cfg.items() if k not in ("vision_config", "text_config")},
                **(inner or {})}  # fmt: skip
        text["tie_word_embeddings"] = cfg.get("tie_word_embeddings", False)
        if cfg.get("vision_config") is None:
            notes.append(f"a {mt} config without vision_config: the language model only")
        else:
            shape = vision_shape(cfg, tower, path)
            notes.append(vision_note(shape))
            if shape.get("deepstack"):
                notes.append(
                    f"the {shape['deepstack']} deepstack mergers' outputs are added into the "
                    "first decoder layers' image positions: elementwise, no matmul FLOPs"
                )
    for key in _UNREAD.get(text_mt, ()):
        text.pop(key, None)
    if text_mt == "qwen3_5_moe_text" and text.get("moe_intermediate_size"):
        # no layer is dense (Qwen3_5MoeTextConfig drops intermediate_size): d_ff unused
        text.setdefault("intermediate_size", text["moe_intermediate_size"])
    return text, text_mt, shape, notes
