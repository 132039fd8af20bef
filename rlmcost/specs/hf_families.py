"""Model types read through a supported one, and the shape keys only they carry.

* ``kimi_k2`` (moonshotai/Kimi-K2-Instruct, Kimi-K2-Thinking): the DeepSeek-V3 architecture
  (config.json ``architectures: DeepseekV3ForCausalLM``); slime converts its weights with the
  DeepSeek mapping (slime/backends/megatron_utils/hf_to_megatron/__init__.py @624b824a:
  ``"kimi_k2": deepseek_hf_tensor``) and asks to rename the type to ``deepseek_v3`` before
  conversion (docs/en/get_started/quick_start.md @624b824a). transformers has no ``kimi_k2``.
* ``mimo`` (XiaomiMiMo/MiMo-7B-Base, -RL): a Qwen2 decoder (q/k/v biases, no o_proj bias) plus
  ``num_nextn_predict_layers`` multi-token-prediction layers, shipped as remote code
  (``MiMoForCausalLM``); transformers has no ``mimo`` class. verl counts its FLOPs as Qwen2's
  (verl/utils/flops_counter.py @b178a3cd: ``"mimo": _estimate_qwen2_flops``); the MTP layer is
  left out of the costs, as for the other types.
* ``glm4`` (THUDM/GLM-4-9B-0414, GLM-Z1-9B-0414): transformers ``Glm4DecoderLayer`` has four
  RMSNorms (input, post_self_attn, post_attention, post_mlp), q/k/v biases
  (``attention_bias``, default true), no o_proj bias, a fused gate_up_proj without bias;
  ``head_dim`` defaults to 128 (``Glm4Config``); the partial rotary factor changes no FLOP.
* ``gpt_oss`` (openai/gpt-oss-20b, -120b): transformers ``GptOssConfig`` / ``GptOssModel``:
  ``num_local_experts`` routed experts of width ``intermediate_size``, top
  ``num_experts_per_tok``, no dense or shared FFN; q/k/v and o_proj biases
  (``attention_bias``, default true); ``layer_types`` alternating sliding (window 128) and full
  attention (the config's default when absent: layer i slides when (i + 1) % 2). The experts'
  gate_up/down biases, the router's bias and the per-head attention sinks are parameters
  ``blocks.params`` does not count (no matmul FLOPs): their number goes to the spec's notes,
  as :func:`gpt_oss_uncounted` gives it.
* ``seed_oss`` (ByteDance-Seed/Seed-OSS-36B-Base, -Instruct): transformers ``SeedOssAttention``
  / ``SeedOssMLP`` (models/seed_oss/modeling_seed_oss.py, transformers 5.24): Llama's layer
  (two RMSNorms, a gated MLP with ``mlp_bias``) with q/k/v biases from ``attention_bias``
  (default true) and the o_proj bias from a key of its own, ``attention_out_bias`` (default
  false); ``head_dim`` defaults to 128 (``SeedOssConfig``). Its ``residual_dropout`` (default
  0.1) after o_proj and down_proj, inside the two modules, is read by
  :mod:`rlmcost.specs.hf_dropout`.
* ``minimax_m2`` (MiniMaxAI/MiniMax-M2, -M2.5, -M2.7): transformers ``MiniMaxM2Attention`` /
  ``MiniMaxM2SparseMoeBlock`` (models/minimax_m2/modeling_minimax_m2.py, transformers 5.24):
  no bias anywhere; ``q_norm`` and ``k_norm`` are RMSNorms over all heads' width
  (``MiniMaxM2RMSNorm(num_attention_heads * head_dim)``, ``num_key_value_heads * head_dim``),
  built whatever ``use_qk_norm`` / ``qk_norm_type`` say: ``qk_norm_full``; every layer is MoE:
  ``num_local_experts`` routed experts of width ``intermediate_size``, top
  ``num_experts_per_tok``, a router d x E (its ``e_score_correction_bias`` is a buffer), no
  shared or dense FFN; ``head_dim`` defaults to 128 (``MiniMaxM2Config``); the partial RoPE
  (``rotary_dim``) and the sigmoid routing change no matmul FLOP. Like every norm, the q/k
  norms add parameters, not FLOPs (``blocks``: norms, softmax and activations are elementwise
  and left out of the work); their saved input and 1 / rms are in the activations. Under TP
  each rank holds its heads' share of the norms' weights, and Megatron-Bridge's ``FullDimQNorm``
  / ``FullDimKNorm`` all-reduce each token's sum of squares over the TP group
  (src/megatron/bridge/models/minimax_m2/minimax_m2_provider.py @067f987d): two fp32 values a
  token and layer, left out of the communication. The
  checkpoint's multi-token-prediction modules (``use_mtp``, ``num_mtp_modules``) are not built
  by transformers and are left out (a note says so).
* ``glm4_moe_lite`` (zai-org/GLM-4.7-Flash): transformers ``Glm4MoeLiteAttention`` /
  ``Glm4MoeLiteMoE`` (models/glm4_moe_lite/modeling_glm4_moe_lite.py, transformers 5.24) are
  DeepSeek-V3's: multi-head latent attention with the same projections, latent RMSNorms and
  ``attention_bias`` biases (q_a_proj, kv_a_proj_with_mqa, o_proj), and a DeepSeekMoE FFN
  (router d x E with a buffer bias, one shared MLP of moe_intermediate_size x
  n_shared_experts); so it is read by ``hf_config._deepseek_fields``. Which layers are dense:
  ``mlp_layer_types`` ("dense" / "sparse" per layer), which ``Glm4MoeLiteConfig`` fills with
  one dense layer then sparse ones when absent: ``first_k_dense_replace`` is not read by
  transformers (:func:`glm4_moe_lite_config`).
* ``olmo2``, ``olmo3`` (allenai/OLMo-2-*, Olmo-3-*): transformers ``Olmo2Attention`` /
  ``Olmo2DecoderLayer`` (models/olmo2/modeling_olmo2.py, transformers 5.24; ``Olmo3*`` the
  same, models/olmo3/modeling_olmo3.py): Llama's projections, all four attention projections
  with ``attention_bias`` (default false), no MLP bias; two RMSNorms a layer, placed after
  the attention and after the MLP (``post_attention_layernorm``,
  ``post_feedforward_layernorm``) instead of before them, which changes no matmul and no
  parameter count; ``q_norm`` and ``k_norm`` are RMSNorms over all heads' width
  (``Olmo2RMSNorm(num_attention_heads * head_dim)``, ``num_key_value_heads * head_dim``):
  ``qk_norm_full``, as MiniMax-M2's; head_dim is hidden_size / heads (the configs have no
  ``head_dim``). OLMo 3 slides a window (``sliding_window``, default 4096) in the layers
  ``layer_types`` marks, three of every four by default (``Olmo3Config``), read by
  :mod:`rlmcost.specs.hf_window`.
* ``ministral3`` (the decoder of mistralai/Mistral-Medium-3.5-128B, Devstral-2-123B): transformers
  ``Ministral3Attention`` / ``Ministral3MLP`` (models/ministral3/modeling_ministral3.py,
  transformers 5.24) are Mistral's projections, no biases, a gated MLP; the Llama-4 attention
  temperature it multiplies the queries by (``llama_4_scaling_beta``) is elementwise. Its config
  class differs from ``MistralConfig`` in the defaults: no sliding window, head_dim 128,
  262,144 positions, untied (``Ministral3Config``).
* ``mistral3`` (Mistral Small 3.1, Mistral Medium 3.5: ``Mistral3ForConditionalGeneration``):
  the language model of ``text_config`` (``mistral`` when the key names none, as
  ``Mistral3Config`` builds it, or ``ministral3``) is read; the Pixtral vision tower and the
  multimodal projector are left out, as for a Gemma 3 checkpoint (:func:`mistral3_text`).
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

READ_AS = {"kimi_k2": "deepseek_v3", "mimo": "qwen2"}
"""model_type -> the supported model_type whose reading gives its shape (module docstring)."""

PIXTRAL_NOTE = ("the language model only: the Pixtral vision encoder and multimodal projector of "
                "the checkpoint are not counted")


def mistral3_text(cfg: dict[str, Any], path: str) -> tuple[dict[str, Any], str]:
    """A ``mistral3`` config's language model (module docstring): its ``text_config`` keys
    and model_type (``mistral`` when absent, ``Mistral3Config``'s default)."""
    text = cfg.get("text_config")
    if not isinstance(text, dict):
        raise SpecError(f"{path}: a mistral3 config needs a text_config object")
    mt = text.get("model_type") or "mistral"
    if mt not in ("mistral", "ministral3"):
        raise SpecError(f"{path}: mistral3 text_config model_type {mt!r} is not supported; "
                        "supported: mistral, ministral3")
    return {k: v for k, v in text.items() if v is not None}, mt


def gpt_oss_uncounted(n_layers: int, d: int, n_heads: int, n_experts: int, d_expert: int) -> int:
    """Parameters of a GPT-OSS model that ``blocks.params`` leaves out: per layer the experts'
    biases E x (2 d_e + d) (``GptOssExperts.gate_up_proj_bias``, ``down_proj_bias``), the
    router's bias E (``GptOssTopKRouter.bias``) and one sink per head (``GptOssAttention.sinks``).

    >>> gpt_oss_uncounted(36, 2880, 64, 128, 2880)  # gpt-oss-120b
    39820032
    """
    return n_layers * (n_experts * (2 * d_expert + d) + n_experts + n_heads)


def family_fields(cfg: dict[str, Any], mt: str, fields: dict[str, Any], path: str) -> list[str]:
    """Update ``fields`` (read by ``hf_config._llama_like``) with what ``glm4``, ``seed_oss``
    and ``gpt_oss`` carry beyond it; the notes to add. Other types are left as they are."""
    bias = bool(cfg.get("attention_bias", True))
    if mt == "seed_oss":
        fields.update(qkv_bias=bias, out_bias=bool(cfg.get("attention_out_bias") or False))
        return []
    if mt == "glm4":
        fields.update(norms_per_layer=4, qkv_bias=bias, out_bias=False, mlp_bias=False)
        return []
    if mt == "minimax_m2":
        return _minimax_m2(cfg, fields, path)
    if mt in ("olmo2", "olmo3"):  # module docstring: post-norms, full-width q/k norms
        bias = bool(cfg.get("attention_bias") or False)
        fields.update(qkv_bias=bias, out_bias=bias, mlp_bias=False, qk_norm=True,
                      qk_norm_full=True)  # fmt: skip
        return []
    if mt != "gpt_oss":
        return []
    for key in ("num_local_experts", "num_experts_per_tok"):
        if cfg.get(key) is None:
            raise SpecError(f"{path}: gpt_oss config has no '{key}'")
    n_experts = int(cfg["num_local_experts"])
    d_expert = int(fields["d_ff"])
    fields.update(n_experts=n_experts, top_k=cfg["num_experts_per_tok"], d_expert=d_expert,
                  qkv_bias=bias, out_bias=bias, mlp_bias=True)  # fmt: skip
    n_layers, d, h = int(fields["n_layers"]), int(fields["d_model"]), int(fields["n_heads"])
    extra = gpt_oss_uncounted(n_layers, d, h, n_experts, d_expert)
    return [
        f"the experts' and the router's biases ({n_experts} x (2 x {d_expert} + {d}) + "
        f"{n_experts} per layer) and the attention sinks ({h} per layer) are not counted: "
        f"{extra:,} parameters, no matmul FLOPs"
    ]


def _minimax_m2(cfg: dict[str, Any], fields: dict[str, Any], path: str) -> list[str]:
    """``fields`` of a ``minimax_m2`` config (module docstring); the notes to add."""
    for key in ("num_local_experts", "num_experts_per_tok"):
        if cfg.get(key) is None:
            raise SpecError(f"{path}: minimax_m2 config has no '{key}'")
    fields.update(n_experts=cfg["num_local_experts"], top_k=cfg["num_experts_per_tok"],
                  d_expert=fields["d_ff"], qkv_bias=False, out_bias=False, mlp_bias=False,
                  qk_norm=True, qk_norm_full=True)  # fmt: skip
    mtp = cfg.get("num_mtp_modules") if cfg.get("use_mtp") else 0
    if not mtp:
        return []
    return [f"the {mtp} multi-token-prediction modules (num_mtp_modules) are left out, as in "
            "transformers"]


GLM4_MOE_LITE_DEFAULTS = {"n_shared_experts": 1, "q_lora_rank": 768}
"""``Glm4MoeLiteConfig``'s defaults of the shape keys a config.json may leave out where
``hf_config._deepseek_fields`` would read absence otherwise (no shared expert, a plain q
projection); transformers 5.24 configuration_glm4_moe_lite.py (tests check them)."""


def glm4_moe_lite_config(cfg: dict[str, Any], path: str) -> tuple[dict[str, Any], list[str]]:
    """A ``glm4_moe_lite`` config with ``first_k_dense_replace`` set to the leading dense
    layers transformers builds (module docstring), for ``hf_config._deepseek_fields``; the
    notes to add. SpecError for an ``mlp_layer_types`` rlmcost cannot say (a dense layer after
    a sparse one) or that is not one "dense" / "sparse" entry per layer.

    >>> glm4_moe_lite_config({"num_hidden_layers": 3}, "c.json")[0]["first_k_dense_replace"]
    1
    """
    cfg = {**GLM4_MOE_LITE_DEFAULTS, **cfg}
    n_layers = cfg.get("num_hidden_layers")
    types = cfg.get("mlp_layer_types")
    if types is None:
        types = ["dense"] + ["sparse"] * (int(n_layers or 1) - 1)
    if not isinstance(types, list) or len(types) != n_layers or set(types) - {"dense", "sparse"}:
        raise SpecError(f"{path}: mlp_layer_types must list 'dense' or 'sparse' for each of the "
                        f"{n_layers} layers")  # fmt: skip
    dense = types.count("dense")
    if types[:dense] != ["dense"] * dense:
        raise SpecError(f"{path}: mlp_layer_types has a dense layer after a sparse one; "
                        "rlmcost costs leading dense layers only (first_k_dense_replace)")
    notes = []
    given = cfg.get("first_k_dense_replace")
    if given is not None and given != dense and "mlp_layer_types" not in cfg:
        notes.append(f"first_k_dense_replace={given} is not read by transformers' "
                     f"Glm4MoeLiteConfig, which builds {dense} dense layer(s) (mlp_layer_types)")
    if cfg.get("num_nextn_predict_layers"):
        notes.append("the multi-token-prediction layer (num_nextn_predict_layers) is left out, "
                     "as in transformers")
    return {**cfg, "first_k_dense_replace": dense}, notes
