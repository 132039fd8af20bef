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

The E2B / E4B models add (``Gemma4TextModel``, ``Gemma4TextDecoderLayer``, ``Gemma4TextMLP``):

* per-layer input embeddings (``hidden_size_per_layer_input`` p > 0): a table of
  ``vocab_size_per_layer_input`` rows x L p, a d -> L p projection with a p-wide norm, and in
  each layer a d -> p gate, a p -> d projection and one more d-wide RMSNorm
  (``post_per_layer_input_norm``: ``norms_per_layer`` 5);
* ``num_kv_shared_layers``: the last layers reuse the keys and values of the last earlier
  layer of their kind (``Gemma4TextConfig.kv_sharing_modes``): no k/v projections, no k norm,
  no cache; with ``use_double_wide_mlp`` their FFN is 2 ``intermediate_size`` wide.

(``rlmcost.blocks.ple`` counts them.)
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
    if cfg.get("use_bidirectional_attention") == "all":
        raise SpecError(f"{path}: use_bidirectional_attention='all' is an encoder; rlmcost "
                        "costs causal decoders only")  # fmt: skip
    if cfg.get("final_logit_softcapping"):
        notes.append("logit soft-capping (tanh) is elementwise: no matmul FLOPs, left out as "
                     "all elementwise work is")  # fmt: skip
    return cfg, notes


def _layer_types(cfg: dict[str, Any], n_layers: int, path: str) -> list[bool]:
    """Whether each layer attends to every position (transformers' ``layer_types``)."""
    types = cfg.get("layer_types")
    if types is None:
        types = ["sliding_attention" if (i + 1) % 6 else "full_attention"
                 for i in range(n_layers)]  # fmt: skip
    if not isinstance(types, list) or len(types) != n_layers or \
            set(types) - {"sliding_attention", "full_attention"}:  # fmt: skip
        raise SpecError(f"{path}: layer_types must list 'sliding_attention' or "
                        f"'full_attention' for each of the {n_layers} layers")
    return [t == "full_attention" for t in types[:-1]] + [True]  # the last layer is full


def _ple_and_sharing(cfg: dict[str, Any], full_at: list[bool], path: str) -> dict[str, Any]:
    """The E models' per-layer embedding and KV-sharing fields (none when they have none)."""
    n, p, shared = len(full_at), int(cfg["hidden_size_per_layer_input"] or 0), \
        int(cfg["num_kv_shared_layers"] or 0)  # fmt: skip
    out: dict[str, Any] = {}
    if p:
        out.update(ple_dim=p, ple_vocab=int(cfg.get("vocab_size_per_layer_input")
                                            or GEMMA4_TEXT_DEFAULTS["vocab_size"]),
                   norms_per_layer=5)  # fmt: skip
    if shared:
        if shared >= n:  # transformers' kv_sharing_modes: every layer "reuse", nothing to share
            raise SpecError(f"{path}: num_kv_shared_layers={shared} leaves no layer of the "
                            f"{n} to take keys and values from")  # fmt: skip
        tail, head = full_at[n - shared:], full_at[:n - shared]
        if set(tail) - set(head):  # transformers raises the same for a kind with no producer
            raise SpecError(f"{path}: a KV-shared layer's kind has no earlier layer to share "
                            "keys and values with")  # fmt: skip
        out.update(kv_shared_layers=shared, kv_shared_full_layers=sum(tail),
                   kv_shared_wide_ffn=bool(cfg["use_double_wide_mlp"]))  # fmt: skip
    return out


def ple_notes(fields: dict[str, Any]) -> list[str]:
    """What the E models' per-layer embeddings and KV-shared layers cost, in words."""
    notes, n, d = [], int(fields["n_layers"]), int(fields["d_model"])
    if fields.get("ple_dim"):
        p, v = int(fields["ple_dim"]), int(fields["ple_vocab"])
        notes.append(
            f"per-layer input embeddings: a {v:,} x {n * p:,} table ({v * n * p:,} parameters) "
            "held as the token embedding is (first pipeline stage, vocabulary-parallel under "
            "TP, sharded by ZeRO with the rest), its lookup a gather; the d -> L p projection "
            f"and each layer's gate and projection multiply {3 * n * d * p:,} weights a token"
        )
    if fields.get("kv_shared_layers"):
        k, kf = int(fields["kv_shared_layers"]), int(fields["kv_shared_full_layers"])
        notes.append(
            f"the last {k} layers ({kf} full-attention) reuse earlier layers' keys and values: "
            "no k/v projections and no KV cache of their own" + (
                "; their FFN is twice as wide (use_double_wide_mlp)"
                if fields["kv_shared_wide_ffn"] else "") + ". Every token passes through them "
            "(transformers' generate skips them for earlier prompt positions outside flash "
            "attention, _maybe_slice_kv_shared_inputs; not modelled)"
        )
    return notes


def gemma4_fields(cfg: dict[str, Any], path: str) -> tuple[dict[str, Any], list[str]]:
    """The ModelSpec shape fields of a Gemma 4 language model config (:func:`gemma4_text`'s)
    and the notes on what its costs approximate."""
    n, kv = int(cfg["num_hidden_layers"]), int(cfg["num_key_value_heads"])
    full_at = _layer_types(cfg, n, path)
    full = sum(full_at)
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
    fields.update(_ple_and_sharing(cfg, full_at, path))
    notes: list[str] = ple_notes(fields)
    if cfg["enable_moe_block"]:
        e = int(cfg.get("num_experts") or 0)
        if not e or not cfg.get("top_k_experts") or not cfg.get("moe_intermediate_size"):
            raise SpecError(f"{path}: enable_moe_block needs num_experts, top_k_experts and "
                            "moe_intermediate_size")  # fmt: skip
        fields.update(n_experts=e, top_k=cfg["top_k_experts"],
                      d_expert=cfg["moe_intermediate_size"], n_shared_experts=1,
                      d_shared_expert=cfg["intermediate_size"],
                      norms_per_layer=fields["norms_per_layer"] + 4)  # fmt: skip
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
