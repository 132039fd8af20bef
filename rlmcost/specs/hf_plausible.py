"""Plausibility checks of a transformers ``config.json`` before a ModelSpec is built from it
(rlmcost.specs.hf_config): every size an integer in a plausible range, every flag a boolean,
and the head split that transformers itself requires of the model types that require one."""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

#: key -> (smallest, largest) plausible value. Upper bounds are ~10-100x the largest published
#: models (Llama-3.1-405B: d = 16384, 126 layers; Gemma 3: V = 262208; GLM-4.5: 160 experts).
LIMITS: dict[str, tuple[int, int]] = {
    "hidden_size": (1, 2**20),
    "n_embd": (1, 2**20),
    "intermediate_size": (1, 2**22),
    "n_inner": (1, 2**22),
    "moe_intermediate_size": (1, 2**22),
    "shared_expert_intermediate_size": (0, 2**22),
    "num_hidden_layers": (1, 10**4),
    "n_layer": (1, 10**4),
    "num_attention_heads": (1, 2**14),
    "n_head": (1, 2**14),
    "num_key_value_heads": (1, 2**14),
    "head_dim": (1, 2**14),
    "vocab_size": (1, 10**7),
    "max_position_embeddings": (0, 2**30),
    "n_positions": (1, 2**30),
    "num_experts": (1, 2**16),
    "num_local_experts": (1, 2**16),
    "n_routed_experts": (1, 2**16),
    "num_experts_per_tok": (1, 2**16),
    "n_shared_experts": (0, 2**10),
    "first_k_dense_replace": (0, 10**4),
    "decoder_sparse_step": (1, 10**4),
    "q_lora_rank": (1, 2**20),
    "kv_lora_rank": (1, 2**20),
    "qk_nope_head_dim": (1, 2**14),
    "qk_rope_head_dim": (1, 2**14),
    "v_head_dim": (1, 2**14),
    "sliding_window": (0, 2**30),
    "max_window_layers": (0, 10**4),
    "sliding_window_pattern": (1, 10**4),
    "num_nextn_predict_layers": (0, 10**4),
    "mtp_num_hidden_layers": (0, 10**4),
    "num_mtp_modules": (0, 10**4),
    "linear_num_key_heads": (1, 2**14),
    "linear_num_value_heads": (1, 2**14),
    "linear_key_head_dim": (1, 2**14),
    "linear_value_head_dim": (1, 2**14),
    "linear_conv_kernel_dim": (1, 2**10),
    "full_attention_interval": (1, 10**4),
}
FLAGS = ("tie_word_embeddings", "attention_bias", "mlp_bias", "use_qk_norm", "use_sliding_window",
         "use_bidirectional_attention", "attention_out_bias", "use_mtp")  # fmt: skip


WHOLE_HEADS = ("gpt2", "llama", "gemma2", "gemma3_text", "deepseek_v2")
"""Model types whose hidden_size transformers requires to be a multiple of the attention heads,
head_dim given or not: GPT2Attention.__init__ raises ValueError "`embed_dim` must be divisible
by num_heads" (transformers/models/gpt2/modeling_gpt2.py), and LlamaConfig, Gemma2Config,
Gemma3TextConfig and DeepseekV2Config refuse the config in ``validate_architecture`` ("The
hidden size ... is not a multiple of the number of attention heads"; configuration_llama.py,
configuration_gemma2.py, configuration_gemma3.py, configuration_deepseek_v2.py, transformers
5.24). The other types build a model of head_dim = hidden_size // heads (rounded down) or of
their given head_dim, which rlmcost costs as built."""


def check_plausible(cfg: dict[str, Any], path: str) -> None:
    """SpecError unless every size in ``cfg`` is an integer in :data:`LIMITS` and every flag
    a boolean (null counts as absent)."""
    for key, (lo, hi) in LIMITS.items():
        v = cfg.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            shown = f"{v:g}" if isinstance(v, float) else repr(v)
            raise SpecError(
                f"{path}: {key}={shown} is implausible (expected an integer in {lo}..{hi}); "
                "is this a transformers config.json?"
            )
    for key in FLAGS:
        v = cfg.get(key)
        if v is not None and not isinstance(v, bool):
            raise SpecError(f"{path}: {key}={v!r} must be true or false")


def check_heads(mt: str, d_model: int, n_heads: int, path: str) -> None:
    """SpecError when ``mt`` is one of :data:`WHOLE_HEADS` and its hidden size is not a
    multiple of its attention heads, which transformers refuses for it."""
    if mt in WHOLE_HEADS and d_model % n_heads:
        raise SpecError(
            f"{path}: hidden_size={d_model} is not a multiple of num_attention_heads={n_heads}, "
            f"which transformers refuses for model_type {mt!r}; mend one of them"
        )
