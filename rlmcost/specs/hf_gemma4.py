"""Gemma 4 (``gemma4``, its ``text_config``, and ``gemma4_text``) read as transformers builds it.

transformers 5.24 ``models/gemma4/configuration_gemma4.py`` and ``modeling_gemma4.py``:

* ``layer_types`` (default: layer i slides when (i + 1) % 6, the last layer forced full) says
  which layers slide through ``sliding_window`` (default 512) and which attend to everything;
* a full layer's heads are ``global_head_dim`` wide (default 512) and it has
  ``num_global_key_value_heads`` KV heads when ``attention_k_eq_v`` is set (otherwise
  ``num_key_value_heads``: ``Gemma4TextConfig.__post_init__`` builds ``per_layer_config``
  so); with ``attention_k_eq_v`` a full layer has no ``v_proj`` (``Gemma4TextAttention``);
* every layer has q/k RMSNorms of its head width (and a v norm without weight), four
  d-wide RMSNorms and a dense gated FFN of ``intermediate_size``;
* with ``enable_moe_block`` each layer adds ``num_experts`` routed experts of
  ``moe_intermediate_size``, top ``top_k_experts``, beside the dense FFN (counted as one
  shared expert of ``intermediate_size``), a router d x E with a d-wide scale (after an
  unweighted RMSNorm) and a per-expert scale, and three more d-wide RMSNorms
  (``Gemma4TextDecoderLayer``): eight d-wide weights a layer in all.

Not costed: the per-layer input embeddings (``hidden_size_per_layer_input`` > 0) and the layers
that reuse another's keys and values (``num_kv_shared_layers``) of the E2B / E4B models, and
``use_double_wide_mlp``; a config with any of them is refused.
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError
from rlmcost.specs.hf_window import window_note

GEMMA4_TYPES = ("gemma4", "gemma4_text")

#: ``transformers.Gemma4TextConfig()`` defaults for the keys a config may leave out (5.24).
GEMMA4_TEXT_DEFAULTS: dict[str, Any] = dict(
    vocab_size=262144, hidden_size=2304, intermediate_size=9216, num_hidden_layers=30,
    num_attention_heads=8, num_key_value_heads=4, head_dim=256, max_position_embeddings=131072,
    sliding_window=512, tie_word_embeddings=True, attention_bias=False,
    hidden_size_per_layer_input=256, num_kv_shared_layers=0, attention_k_eq_v=False,
    enable_moe_block=False, use_double_wide_mlp=False,
)  # fmt: skip

#: 5.24 ``Gemma4TextConfig.__post_init__``'s ``global_head_dim`` when the config omits it.
GLOBAL_HEAD_DIM_DEFAULT = 512

UNCOUNTED_NOTE = ("the routers' per-expert scales ({n:,} parameters: {e} a layer, "
                  "Gemma4TextRouter.per_expert_scale) are not counted; no matmul FLOPs")


def gemma4_text(cfg: dict[str, Any], path: str) -> tuple[dict[str, Any], list[str]]:
    """The language model's config of a ``gemma4`` / ``gemma4_text`` config.json, with
    transformers' defaults, and the notes on what is left out."""
    notes = []
    if cfg.get("model_type") == "gemma4":
        text = cfg.get("text_config")
        if not isinstance(text, dict):
            raise SpecError(f"{path}: a gemma4 config needs a text_config object")
        cfg = text
        notes.append("the language model only: the vision (and audio) encoders and projectors "
                     "of the multimodal checkpoint are not counted")  # fmt: skip
    cfg = {**GEMMA4_TEXT_DEFAULTS, **{k: v for k, v in cfg.items() if v is not None}}
    if cfg["hidden_size_per_layer_input"] or cfg["num_kv_shared_layers"] or \
            cfg["use_double_wide_mlp"]:  # fmt: skip
        raise SpecError(
            f"{path}: Gemma 4's per-layer input embeddings (hidden_size_per_layer_input="
            f"{cfg['hidden_size_per_layer_input']}), KV-sharing layers (num_kv_shared_layers="
            f"{cfg['num_kv_shared_layers']}) and double-wide MLPs (the E2B / E4B models) are "
            "not supported; gemma-4-31B and gemma-4-26B-A4B are"
        )
    if cfg.get("use_bidirectional_attention") == "all":
        raise SpecError(f"{path}: use_bidirectional_attention='all' is an encoder; rlmcost "
                        "costs causal decoders only")  # fmt: skip
    if cfg.get("final_logit_softcapping"):
        notes.append("logit soft-capping (tanh) is elementwise: no matmul FLOPs, left out as "
                     "all elementwise work is")  # fmt: skip
    return cfg, notes


def _full_layers(cfg: dict[str, Any], n_layers: int, path: str) -> int:
    types = cfg.get("layer_types")
    if types is None:
        types = ["sliding_attention" if (i + 1) % 6 else "full_attention"
                 for i in range(n_layers)]  # fmt: skip
    if not isinstance(types, list) or len(types) != n_layers or \
            set(types) - {"sliding_attention", "full_attention"}:  # fmt: skip
        raise SpecError(f"{path}: layer_types must list 'sliding_attention' or "
                        f"'full_attention' for each of the {n_layers} layers")
    return sum(t == "full_attention" for t in types[:-1]) + 1  # the last layer is full


def gemma4_fields(cfg: dict[str, Any], path: str) -> tuple[dict[str, Any], list[str]]:
    """The ModelSpec shape fields of a Gemma 4 language model config (:func:`gemma4_text`'s)
    and the notes on what its costs approximate."""
    n, kv = int(cfg["num_hidden_layers"]), int(cfg["num_key_value_heads"])
    full = _full_layers(cfg, n, path)
    k_eq_v = bool(cfg["attention_k_eq_v"])
    global_kv = cfg.get("num_global_key_value_heads")
    fields: dict[str, Any] = dict(
        n_layers=n, d_model=cfg["hidden_size"], d_ff=cfg["intermediate_size"],
        n_heads=cfg["num_attention_heads"], n_kv_heads=kv, head_dim=cfg["head_dim"],
        vocab=cfg["vocab_size"], max_context=cfg["max_position_embeddings"],
        ffn_kind="gated", norm="rmsnorm", tie_embeddings=bool(cfg["tie_word_embeddings"]),
        qk_norm=True, norms_per_layer=4, qkv_bias=bool(cfg["attention_bias"]),
        out_bias=bool(cfg["attention_bias"]),
        full_head_dim=cfg.get("global_head_dim") or GLOBAL_HEAD_DIM_DEFAULT,
        full_kv_heads=int(global_kv) if k_eq_v and global_kv else kv, full_k_eq_v=k_eq_v,
    )  # fmt: skip
    notes: list[str] = []
    if cfg["enable_moe_block"]:
        e = int(cfg.get("num_experts") or 0)
        if not e or not cfg.get("top_k_experts") or not cfg.get("moe_intermediate_size"):
            raise SpecError(f"{path}: enable_moe_block needs num_experts, top_k_experts and "
                            "moe_intermediate_size")  # fmt: skip
        fields.update(n_experts=e, top_k=cfg["top_k_experts"],
                      d_expert=cfg["moe_intermediate_size"], n_shared_experts=1,
                      d_shared_expert=cfg["intermediate_size"], norms_per_layer=8)  # fmt: skip
        notes.append(UNCOUNTED_NOTE.format(n=n * e, e=e))
    if full < n:
        fields.update(sliding_window=cfg["sliding_window"], full_attention_layers=full)
    else:  # no layer slides: every layer is shaped as a full one
        fields.update(head_dim=fields.pop("full_head_dim"), n_kv_heads=fields.pop("full_kv_heads"))
        fields.pop("full_k_eq_v")
        if k_eq_v:
            raise SpecError(f"{path}: attention_k_eq_v without a sliding layer is not supported")
    notes += window_note(fields, n)
    if full < n:
        notes.append(
            f"full-attention layers ({full}): heads of {fields['full_head_dim']} and "
            f"{fields['full_kv_heads']} KV heads" + (", no v_proj (attention_k_eq_v; keys and "
            "values both cached)" if k_eq_v else "") + f", against {fields['head_dim']} and "
            f"{kv} in the sliding layers: parameters, FLOPs, KV cache and the kernel models "
            "count each kind at its own shape (rlmcost.perf.full_layers)"
        )
    return fields, notes


def gemma4_spec(cfg: dict[str, Any], name: str, path: str, quant: str | None) -> dict[str, Any]:
    """Every ModelSpec field of a ``gemma4`` / ``gemma4_text`` config.json."""
    from rlmcost.specs.hf_plausible import check_plausible

    mt = cfg.get("model_type")
    text, notes = gemma4_text(cfg, path)
    check_plausible(text, path)
    fields, more = gemma4_fields(text, path)
    return {**fields, "name": name, "model_type": mt, "family": mt, "notes": notes + more,
            "source": f"config.json at {path}", "mtp_layers": 0, "checkpoint_quant": quant}
