"""Load a transformers ``config.json`` into a :class:`ModelSpec` (no transformers needed).

Supported ``model_type``: llama, mistral, qwen2, qwen3, qwen2_moe, qwen3_moe, mixtral, gpt2,
glm4_moe (GLM-4.5/4.6), gemma2, gemma3 (the language model of the multimodal checkpoint, from
its ``text_config``), gemma3_text, phi3 (Phi-3, Phi-3.5, Phi-4), glm4, gpt_oss, seed_oss,
minimax_m2, glm4_moe_lite, olmo2, olmo3, ministral3 and mistral3 (the language model of
Mistral Small 3.1 / Medium 3.5) (:mod:`rlmcost.specs.hf_families`), deepseek_v32
and glm_moe_dsa (DeepSeek Sparse Attention, :mod:`rlmcost.specs.hf_dsa`); kimi_k2
and mimo read as deepseek_v3 and qwen2 (:mod:`rlmcost.specs.hf_families`). Parameter counts equal
``sum(p.numel())`` of the transformers class built from the same config (tests/
test_registry_configs.py). Sliding-window attention is read as transformers reads it
(:mod:`rlmcost.specs.hf_window`). What the costs approximate (layers transformers does not
build, a vision tower left out, the models that still treat a window as full attention) goes
to the spec's ``notes``. deepseek_v2 and deepseek_v3 carry multi-head latent attention
(:func:`_deepseek_fields`); qwen2_vl and qwen2_5_vl are a Qwen2 decoder, glm4v (GLM-4.1V) a
GLM-4 one, glm4v_moe (GLM-4.5V/4.6V) a GLM-4.5-Air one and kimi_k25 (Kimi K2.5) Kimi K2's,
plus a vision tower counted in ``encoder_params`` (:mod:`rlmcost.specs.hf_vision`);
qwen3_next mixes Gated DeltaNet and gated full-attention layers (:mod:`rlmcost.specs.hf_linear`);
qwen3_vl(_moe) is a Qwen3(-MoE) decoder plus the Qwen3-VL tower, qwen3_5(_moe) Qwen3-Next's
hybrid (dense or MoE FFN) plus the Qwen3.5 tower, qwen3_5(_moe)_text its language model alone
(:mod:`rlmcost.specs.hf_qwen3`); nemotron_h mixes Mamba-2, attention, MLP and MoE
blocks (:mod:`rlmcost.specs.hf_nemotron_h`).

Before anything is built, every size is checked to be an integer in a plausible range
(:data:`rlmcost.specs.hf_plausible.LIMITS`), so an absurd config (hidden_size 1e40, -1, 4096.5,
"big") is a one-line SpecError, not an evaluation; so is a head split that transformers refuses
(:func:`rlmcost.specs.hf_plausible.check_heads`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.specs.hf_dropout import dropout_fields
from rlmcost.specs.hf_dsa import DSA_NOTE, DSA_TYPES, dsa_config, dsa_fields
from rlmcost.specs.hf_families import (
    PIXTRAL_NOTE,
    READ_AS,
    family_fields,
    glm4_moe_lite_config,
    mistral3_text,
)
from rlmcost.specs.hf_gemma4 import GEMMA4_TYPES, gemma4_spec
from rlmcost.specs.hf_linear import LINEAR_NOTE, linear_attention_fields
from rlmcost.specs.hf_nemotron_h import MAMBA_NOTE, nemotron_h_fields
from rlmcost.specs.hf_plausible import check_heads, check_plausible
from rlmcost.specs.hf_quant import quant_of
from rlmcost.specs.hf_qwen3 import HYBRID, QWEN3_TYPES, qwen3_family
from rlmcost.specs.hf_vision import (
    VL_DECODER,
    decoder_config,
    vision_flops_per_patch,
    vision_note,
    vision_params,
    vision_shape,
)
from rlmcost.specs.hf_window import window_fields, window_note
from rlmcost.specs.model import ModelSpec
from rlmcost.specs.validation import build

SUPPORTED: tuple[str, ...] = (
    "llama", "mistral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "mixtral", "gpt2",
    "glm4_moe", "gemma2", "gemma3", "gemma3_text", "phi3", "deepseek_v2", "deepseek_v3",
    "qwen2_vl", "qwen2_5_vl", "qwen3_next", "glm4", "gpt_oss", "mimo", "kimi_k2",
    "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text",
    "seed_oss", "minimax_m2", "glm4_moe_lite", "glm4v", "nemotron_h",
    "olmo2", "olmo3", "glm4v_moe", "kimi_k25", "ministral3", "mistral3",
)  # fmt: skip
SUPPORTED += DSA_TYPES  # DeepSeek Sparse Attention: DeepSeek-V3.2, GLM-5 (specs.hf_dsa)
SUPPORTED += GEMMA4_TYPES  # Gemma 4's 31B and 26B-A4B (specs.hf_gemma4)
UNSUPPORTED: dict[str, str] = {}

#: ``transformers.Gemma3TextConfig()`` defaults: the multimodal Gemma 3 checkpoints leave these
#: keys out of ``text_config`` (tests check them against transformers).
GEMMA3_TEXT_DEFAULTS: dict[str, Any] = dict(
    vocab_size=262208,
    hidden_size=2304,
    intermediate_size=9216,
    num_hidden_layers=26,
    num_attention_heads=8,
    num_key_value_heads=4,
    head_dim=256,
    max_position_embeddings=131072,
    sliding_window=4096,
    tie_word_embeddings=True,
)
#: head_dim when a config omits it: the config class's default, else hidden_size / heads.
HEAD_DIM_DEFAULT = {"qwen3": 128, "gemma2": 256, "gemma3_text": 256, "qwen3_next": 256,
                    "glm4": 128, "gpt_oss": 64, "qwen3_5_text": 256,
                    "qwen3_5_moe_text": 256, "seed_oss": 128, "minimax_m2": 128,
                    "ministral3": 128}  # fmt: skip
#: tie_word_embeddings when a config omits it (the config classes' defaults).
TIE_DEFAULT = {"gemma2": True, "gemma3_text": True, "gpt2": True}


def _need(cfg: dict[str, Any], key: str, path: str) -> Any:
    if cfg.get(key) is None:
        raise SpecError(f"{path}: config has no '{key}'; is it a transformers config.json?")
    return cfg[key]


def _llama_like(cfg: dict[str, Any], mt: str, path: str) -> dict[str, Any]:
    d = _need(cfg, "hidden_size", path)
    h = _need(cfg, "num_attention_heads", path)
    bias = bool(cfg.get("attention_bias") or False)
    tie = cfg.get("tie_word_embeddings")
    return dict(
        n_layers=_need(cfg, "num_hidden_layers", path),
        d_model=d,
        d_ff=_need(cfg, "intermediate_size", path),
        n_heads=h,
        n_kv_heads=cfg.get("num_key_value_heads") or h,
        head_dim=cfg.get("head_dim") or HEAD_DIM_DEFAULT.get(mt) or d // h,
        vocab=_need(cfg, "vocab_size", path),
        max_context=cfg.get("max_position_embeddings") or 0,
        ffn_kind="gated",
        norm="rmsnorm",
        tie_embeddings=TIE_DEFAULT.get(mt, False) if tie is None else tie,
        qkv_bias=bias,
        out_bias=bias,
        mlp_bias=bool(cfg.get("mlp_bias") or False),
    )


def _gpt2(cfg: dict[str, Any], path: str) -> dict[str, Any]:
    d = _need(cfg, "n_embd", path)
    h = _need(cfg, "n_head", path)
    tie = cfg.get("tie_word_embeddings")
    return dict(
        n_layers=_need(cfg, "n_layer", path),
        d_model=d,
        d_ff=cfg.get("n_inner") or 4 * d,
        n_heads=h,
        n_kv_heads=h,
        head_dim=d // h,
        vocab=_need(cfg, "vocab_size", path),
        n_positions=_need(cfg, "n_positions", path),
        max_context=cfg.get("n_positions", 0),
        ffn_kind="plain",
        norm="layernorm",
        qkv_bias=True,
        out_bias=True,
        mlp_bias=True,
        tie_embeddings=True if tie is None else tie,
    )


def _moe(cfg: dict[str, Any], mt: str, fields: dict[str, Any], path: str) -> None:
    """Routed/shared expert fields of the MoE model types, in place."""
    if mt == "mixtral":
        fields.update(
            n_experts=_need(cfg, "num_local_experts", path),
            top_k=_need(cfg, "num_experts_per_tok", path),
            d_expert=fields["d_ff"],
        )
    elif mt in ("qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_5_moe_text"):
        if cfg.get("mlp_only_layers") or (cfg.get("decoder_sparse_step") or 1) != 1:
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
        shared = cfg.get("shared_expert_intermediate_size", 0) if mt != "qwen3_moe" else 0
        if shared:
            fields.update(n_shared_experts=1, d_shared_expert=shared, shared_expert_gate=True)
    elif mt == "glm4_moe":
        # Glm4MoeMoE: router d x E (its score-correction bias is a buffer), E routed experts,
        # one shared MLP of width moe_intermediate_size x n_shared_experts; the first
        # first_k_dense_replace layers keep the dense MLP. q/k/v carry biases, o_proj none.
        d_e = _need(cfg, "moe_intermediate_size", path)
        n_shared = cfg.get("n_shared_experts") or 0
        fields.update(
            n_experts=_need(cfg, "n_routed_experts", path),
            top_k=_need(cfg, "num_experts_per_tok", path),
            d_expert=d_e,
            n_shared_experts=n_shared,
            d_shared_expert=d_e if n_shared else 0,
            first_dense_layers=cfg.get("first_k_dense_replace") or 0,
            out_bias=False,
            qk_norm=bool(cfg.get("use_qk_norm") or False),
        )


def spec_from_config(cfg: dict[str, Any], name: str, path: str = "config") -> ModelSpec:
    """A ModelSpec from a config dict; SpecError for unknown, unsupported or implausible ones."""
    try:
        return _spec_from_config(cfg, name, path)
    except (TypeError, ValueError, ZeroDivisionError, AttributeError) as exc:
        if isinstance(exc, SpecError):
            raise
        raise SpecError(f"{path}: malformed config value ({exc})") from None


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
    fields = _llama_like(cfg, "deepseek_v3", path)
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


def _spec_from_config(cfg: dict[str, Any], name: str, path: str) -> ModelSpec:
    mt = cfg.get("model_type")
    if mt in UNSUPPORTED:
        raise SpecError(f"{path}: model_type '{mt}' is not supported: {UNSUPPORTED[mt]}")
    if mt not in SUPPORTED:
        raise SpecError(
            f"{path}: model_type {mt!r} is not supported; supported: {', '.join(SUPPORTED)}"
        )
    notes: list[str] = []
    quant = quant_of(cfg)  # its quantization_config, before text_config replaces cfg
    if mt in GEMMA4_TYPES:  # full-attention layers of their own shape (specs.hf_gemma4)
        return build(ModelSpec, gemma4_spec(cfg, name, path, quant), path)
    declared, mt = mt, READ_AS.get(mt, mt)  # (specs.hf_families)
    if mt == "gemma3":
        text = cfg.get("text_config")
        if not isinstance(text, dict):
            raise SpecError(f"{path}: a gemma3 config needs a text_config object")
        cfg = {**GEMMA3_TEXT_DEFAULTS, **{k: v for k, v in text.items() if v is not None}}
        notes.append(
            "the language model only: the vision encoder and projector of the multimodal "
            "checkpoint are not counted"
        )
        mt = "gemma3_text"
    elif mt == "mistral3":  # Mistral Small 3.1, Mistral Medium 3.5 (specs.hf_families)
        cfg, mt = mistral3_text(cfg, path)
        notes.append(PIXTRAL_NOTE)
    elif mt == "gemma3_text":
        cfg = {**GEMMA3_TEXT_DEFAULTS, **{k: v for k, v in cfg.items() if v is not None}}
    vl = mt if mt in VL_DECODER else None
    shape: dict[str, int] | None = None
    if mt in QWEN3_TYPES:  # Qwen3-VL, Qwen3.5 (specs.hf_qwen3)
        cfg, mt, shape, more = qwen3_family(cfg, mt, path)
        notes += more
    if vl is not None:
        # a Qwen2 (GLM-4: glm4v) decoder (its keys top-level in the published Qwen configs,
        # in text_config as transformers 5 writes them) plus a vision tower (specs.hf_vision)
        shape = vision_shape(cfg, vl, path)
        text = cfg.get("text_config")
        if text is not None and not isinstance(text, dict):
            raise SpecError(f"{path}: text_config of a {vl} config must be an object")
        cfg = {**{k: v for k, v in cfg.items() if k != "vision_config"}, **(text or {})}
        notes.append(vision_note(shape))
        mt = VL_DECODER[vl]
    if mt in DSA_TYPES:  # transformers' defaults for the keys left out (specs.hf_dsa)
        cfg = dsa_config(cfg, mt)
    check_plausible(cfg, path)
    if vl is not None:  # GLM-4.1V's and GLM-4.5V's text attention (specs.hf_vision)
        cfg = decoder_config(cfg, vl, path)
    if mt == "glm4_moe_lite":  # DeepSeek-V3's attention and MoE (specs.hf_families)
        cfg, lite_notes = glm4_moe_lite_config(cfg, path)
        notes += lite_notes
    if mt in ("deepseek_v2", "deepseek_v3", "glm4_moe_lite", *DSA_TYPES):
        fields = _deepseek_fields(cfg, path)
        if mt in DSA_TYPES:  # MLA plus a lightning indexer (specs.hf_dsa, blocks.sparse)
            fields.update(dsa_fields(cfg, mt, int(fields["n_layers"]), path))
            notes.append(DSA_NOTE)
    elif mt == "nemotron_h":  # Mamba-2 / attention / FFN blocks (specs.hf_nemotron_h)
        fields = nemotron_h_fields(cfg, path)
        notes.append(MAMBA_NOTE)
    elif mt == "gpt2":
        fields = _gpt2(cfg, path)
    else:
        fields = _llama_like(cfg, mt, path)
        _moe(cfg, mt, fields, path)
        notes += family_fields(cfg, mt, fields, path)
    check_heads(mt, fields["d_model"], fields["n_heads"], path)
    if mt in ("qwen2", "qwen2_moe"):
        fields.update(qkv_bias=True, out_bias=False)
    if mt in ("qwen3", "qwen3_moe"):
        fields.update(qk_norm=True)
    if mt in HYBRID:
        fields.update(linear_attention_fields(cfg, int(fields["n_layers"]), path), qk_norm=True)
        notes.append(LINEAR_NOTE)
    if mt in ("gemma2", "gemma3_text"):
        # pre- and post-attention, pre- and post-FFN RMSNorms (Gemma2DecoderLayer)
        fields.update(norms_per_layer=4, qk_norm=mt == "gemma3_text")
        if cfg.get("attn_logit_softcapping") or cfg.get("final_logit_softcapping"):
            notes.append(
                "logit soft-capping (tanh) is elementwise: no matmul FLOPs, left out as all "
                "elementwise work is"
            )
    window = window_fields(cfg, mt, int(fields["n_layers"]), path)
    fields.update(window, **dropout_fields(cfg, mt, path))  # (specs.hf_dropout)
    notes += window_note(window, int(fields["n_layers"]))
    if mt == "phi3":  # fused qkv_proj and gate_up_proj, no biases
        fields.update(qkv_bias=False, out_bias=False, mlp_bias=False)
    if mt in HYBRID and cfg.get("mtp_num_hidden_layers"):
        notes.append(
            "the multi-token-prediction layer (mtp_num_hidden_layers) is left out, as in "
            "transformers"
        )
    if declared == "mimo" and cfg.get("num_nextn_predict_layers"):
        notes.append(
            "the multi-token-prediction layers (num_nextn_predict_layers) are left out: MiMo's "
            "decoder is costed as Qwen2's, as verl's FLOP counter does"
        )
    if mt == "glm4_moe" and cfg.get("num_nextn_predict_layers"):
        notes.append(
            "the multi-token-prediction layer (num_nextn_predict_layers) is left out, as in "
            "transformers"
        )
    if shape is not None:
        if int(fields["d_model"]) != shape["d_out"]:
            raise SpecError(
                f"{path}: vision_config output width {shape['d_out']} differs from the "
                f"language model's hidden_size {fields['d_model']}; mend one of them"
            )
        fields.update(
            encoder_params=vision_params(shape),
            encoder_flops_per_patch=vision_flops_per_patch(shape),
            encoder_patches_per_token=shape["m"] ** 2,
            encoder_width=shape["d_v"],
            encoder_heads=shape["heads"],
            encoder_ffn_width=shape["width"],
            encoder_ffn_gated=bool(shape["gated"]),
            encoder_layers=shape["depth"],
            encoder_full_attention_layers=shape["full"],
            encoder_window_patches=shape["window"],
        )
    mt = declared if declared in READ_AS or declared in QWEN3_TYPES else vl or mt
    mtp = cfg.get("num_nextn_predict_layers") or cfg.get("mtp_num_hidden_layers") or 0
    fields.update(name=name, model_type=mt, family=mt, source=f"config.json at {path}", notes=notes,
                  mtp_layers=mtp, checkpoint_quant=quant)  # fmt: skip
    return build(ModelSpec, fields, f"{path}")


def load_config(path: str | Path) -> ModelSpec:
    """Read ``path`` (a config.json, or a checkpoint folder holding one) into a ModelSpec;
    one-line SpecError when unreadable."""
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:  # missing, a folder, not UTF-8 text
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else exc.strerror or exc
        raise SpecError(f"cannot read {p}: {why}; give a readable config.json") from None
    try:
        cfg = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" (line {exc.lineno}: {exc.msg})" if isinstance(exc, json.JSONDecodeError) else ""
        raise SpecError(f"{p} is not valid JSON{where}") from None
    if not isinstance(cfg, dict):
        raise SpecError(f"{p} must hold a JSON object, the transformers config")
    return spec_from_config(
        cfg, name=p.stem if p.stem != "config" else p.parent.name or "custom", path=str(p)
    )
