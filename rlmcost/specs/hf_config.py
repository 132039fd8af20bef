"""Load a transformers ``config.json`` into a :class:`ModelSpec` (no transformers needed).

Supported ``model_type``: llama, mistral, qwen2, qwen3, qwen2_moe, qwen3_moe, mixtral, gpt2,
deepseek_v2, deepseek_v3 (multi-head latent attention, :func:`_deepseek_fields`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.specs.model import ModelSpec
from rlmcost.specs.validation import build

SUPPORTED = (
    "llama", "mistral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "mixtral", "gpt2",
    "deepseek_v2", "deepseek_v3",
)  # fmt: skip
UNSUPPORTED: dict[str, str] = {}


def _need(cfg: dict[str, Any], key: str, path: str) -> Any:
    if key not in cfg:
        raise SpecError(f"{path}: config has no '{key}'; is it a transformers config.json?")
    return cfg[key]


def _llama_like(cfg: dict[str, Any], path: str) -> dict[str, Any]:
    d = int(_need(cfg, "hidden_size", path))
    h = int(_need(cfg, "num_attention_heads", path))
    return dict(
        n_layers=_need(cfg, "num_hidden_layers", path),
        d_model=d,
        d_ff=_need(cfg, "intermediate_size", path),
        n_heads=h,
        n_kv_heads=cfg.get("num_key_value_heads") or h,
        head_dim=cfg.get("head_dim") or d // h,
        vocab=_need(cfg, "vocab_size", path),
        max_context=cfg.get("max_position_embeddings") or 0,
        ffn_kind="gated",
        norm="rmsnorm",
        tie_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        qkv_bias=bool(cfg.get("attention_bias", False)),
        out_bias=bool(cfg.get("attention_bias", False)),
        mlp_bias=bool(cfg.get("mlp_bias", False)),
    )


def _deepseek_fields(cfg: dict[str, Any], path: str) -> dict[str, Any]:
    """DeepSeek-V2/V3/R1 (``deepseek_v2``, ``deepseek_v3``): MLA attention and a DeepSeekMoE FFN.

    Source: transformers ``DeepseekV3Config`` / ``DeepseekV2Config`` and their model classes.
    MLA: q_lora_rank (null = plain q projection), kv_lora_rank, qk_nope_head_dim,
    qk_rope_head_dim, v_head_dim; head_dim is set to qk_nope + qk_rope (the config's own
    ``head_dim`` is the RoPE width) and n_kv_heads to the heads (keys and values are expanded per
    head). MoE: n_routed_experts (``num_local_experts`` in transformers 5 serializations),
    num_experts_per_tok, moe_intermediate_size, the shared experts as one MLP of width
    moe_intermediate_size x n_shared_experts, first_k_dense_replace leading dense layers of
    intermediate_size. Routing knobs (routed_scaling_factor, n_group, topk_group, topk_method,
    norm_topk_prob) change no FLOP or parameter count. The checkpoint's multi-token prediction
    layer (num_nextn_predict_layers) is not in transformers' model and is left out.
    """
    h = int(_need(cfg, "num_attention_heads", path))
    nope = int(_need(cfg, "qk_nope_head_dim", path))
    rope = int(_need(cfg, "qk_rope_head_dim", path))
    if cfg.get("mlp_bias"):
        raise SpecError(f"{path}: DeepSeek with mlp_bias=true is not supported")
    if cfg.get("moe_layer_freq", 1) != 1:
        raise SpecError(f"{path}: moe_layer_freq != 1 (interleaved dense layers) is not supported")
    fields = _llama_like(cfg, path)
    fields.update(
        n_heads=h,
        n_kv_heads=h,
        head_dim=nope + rope,
        q_lora_rank=cfg.get("q_lora_rank"),
        kv_lora_rank=_need(cfg, "kv_lora_rank", path),
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
        v_head_dim=_need(cfg, "v_head_dim", path),
    )
    n_experts = cfg.get("n_routed_experts") or cfg.get("num_local_experts") or 0
    first_dense = int(cfg.get("first_k_dense_replace") or 0)
    if n_experts and first_dense < int(fields["n_layers"]):  # else every layer is dense
        shared = int(cfg.get("n_shared_experts") or 0)
        d_expert = int(_need(cfg, "moe_intermediate_size", path))
        fields.update(
            n_experts=n_experts,
            top_k=_need(cfg, "num_experts_per_tok", path),
            d_expert=d_expert,
            n_shared_experts=1 if shared else 0,
            d_shared_expert=shared * d_expert,
            first_dense_layers=first_dense,
        )
    return fields


def spec_from_config(cfg: dict[str, Any], name: str, path: str = "config") -> ModelSpec:
    """A ModelSpec from a config dict; SpecError for unknown or unsupported model types."""
    try:
        return _spec_from_config(cfg, name, path)
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        if isinstance(exc, SpecError):
            raise
        raise SpecError(f"{path}: malformed config value ({exc})") from None


def _spec_from_config(cfg: dict[str, Any], name: str, path: str) -> ModelSpec:
    mt = cfg.get("model_type")
    if mt in UNSUPPORTED:
        raise SpecError(f"{path}: model_type '{mt}' is not supported: {UNSUPPORTED[mt]}")
    if mt not in SUPPORTED:
        raise SpecError(
            f"{path}: model_type {mt!r} is not supported; supported: {', '.join(SUPPORTED)}"
        )
    if mt in ("deepseek_v2", "deepseek_v3"):
        fields = _deepseek_fields(cfg, path)
    elif mt == "gpt2":
        d = int(_need(cfg, "n_embd", path))
        fields: dict[str, Any] = dict(
            n_layers=_need(cfg, "n_layer", path),
            d_model=d,
            d_ff=cfg.get("n_inner") or 4 * d,
            n_heads=_need(cfg, "n_head", path),
            vocab=_need(cfg, "vocab_size", path),
            n_positions=_need(cfg, "n_positions", path),
            max_context=cfg.get("n_positions", 0),
            ffn_kind="plain",
            norm="layernorm",
            qkv_bias=True,
            out_bias=True,
            mlp_bias=True,
            tie_embeddings=bool(cfg.get("tie_word_embeddings", True)),
        )
        fields["n_kv_heads"] = fields["n_heads"]
        fields["head_dim"] = d // int(fields["n_heads"])
    else:
        fields = _llama_like(cfg, path)
        if mt in ("qwen2", "qwen2_moe"):
            fields.update(qkv_bias=True, out_bias=False)
        if mt in ("qwen3", "qwen3_moe"):
            fields.update(qk_norm=True)
        if mt == "mixtral":
            fields.update(
                n_experts=_need(cfg, "num_local_experts", path),
                top_k=_need(cfg, "num_experts_per_tok", path),
                d_expert=fields["d_ff"],
            )
        if mt in ("qwen2_moe", "qwen3_moe"):
            if cfg.get("mlp_only_layers") or cfg.get("decoder_sparse_step", 1) != 1:
                raise SpecError(
                    f"{path}: interleaved dense/MoE layers (mlp_only_layers, "
                    "decoder_sparse_step != 1) are not supported"
                )
            # published configs say num_experts; transformers 5 serializes num_local_experts
            n_experts = cfg.get("num_experts") or _need(cfg, "num_local_experts", path)
            fields.update(
                n_experts=n_experts,
                top_k=_need(cfg, "num_experts_per_tok", path),
                d_expert=_need(cfg, "moe_intermediate_size", path),
            )
            shared = cfg.get("shared_expert_intermediate_size", 0) if mt == "qwen2_moe" else 0
            if shared:
                fields.update(n_shared_experts=1, d_shared_expert=shared, shared_expert_gate=True)
    fields.update(name=name, model_type=mt, family=mt, source=f"config.json at {path}")
    return build(ModelSpec, fields, f"{path}")


def load_config(path: str | Path) -> ModelSpec:
    """Read ``path`` (a config.json) into a ModelSpec; one-line SpecError when unreadable."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise SpecError(
            f"cannot read {p}: {exc.strerror or exc}; give a readable config.json"
        ) from None
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{p} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(cfg, dict):
        raise SpecError(f"{p} must hold a JSON object, the transformers config")
    return spec_from_config(
        cfg, name=p.stem if p.stem != "config" else p.parent.name or "custom", path=str(p)
    )
