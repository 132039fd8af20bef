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
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

READ_AS = {"kimi_k2": "deepseek_v3", "mimo": "qwen2"}
"""model_type -> the supported model_type whose reading gives its shape (module docstring)."""


def gpt_oss_uncounted(n_layers: int, d: int, n_heads: int, n_experts: int, d_expert: int) -> int:
    """Parameters of a GPT-OSS model that ``blocks.params`` leaves out: per layer the experts'
    biases E x (2 d_e + d) (``GptOssExperts.gate_up_proj_bias``, ``down_proj_bias``), the
    router's bias E (``GptOssTopKRouter.bias``) and one sink per head (``GptOssAttention.sinks``).

    >>> gpt_oss_uncounted(36, 2880, 64, 128, 2880)  # gpt-oss-120b
    39820032
    """
    return n_layers * (n_experts * (2 * d_expert + d) + n_experts + n_heads)


def family_fields(cfg: dict[str, Any], mt: str, fields: dict[str, Any], path: str) -> list[str]:
    """Update ``fields`` (read by ``hf_config._llama_like``) with what ``glm4`` and
    ``gpt_oss`` carry beyond it; the notes to add. Other types are left as they are."""
    bias = bool(cfg.get("attention_bias", True))
    if mt == "glm4":
        fields.update(norms_per_layer=4, qkv_bias=bias, out_bias=False, mlp_bias=False)
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
