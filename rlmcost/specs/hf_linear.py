"""Hybrid linear/full attention of Qwen3-Next (``qwen3_next``), from its config.json.

transformers ``Qwen3NextConfig`` / ``Qwen3NextDecoderLayer``
(models/qwen3_next/{configuration,modeling}_qwen3_next.py): ``layer_types`` names each layer's
token mixer, ``"linear_attention"`` (a Gated DeltaNet, ``Qwen3NextGatedDeltaNet``) or
``"full_attention"`` (``Qwen3NextAttention``, whose q_proj also yields a sigmoid output gate);
without ``layer_types`` every ``full_attention_interval``-th layer (default 4) is a full one.
The DeltaNet's sizes: ``linear_num_key_heads``, ``linear_num_value_heads``,
``linear_key_head_dim``, ``linear_value_head_dim`` and ``linear_conv_kernel_dim`` (defaults
16, 32, 128, 128, 4). The FFN is the Qwen2-MoE block (routed experts, one gated shared expert).
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

#: ``transformers.Qwen3NextConfig()`` defaults for the linear-attention keys.
LINEAR_DEFAULTS = dict(linear_num_key_heads=16, linear_num_value_heads=32, linear_key_head_dim=128,
                       linear_value_head_dim=128, linear_conv_kernel_dim=4)  # fmt: skip
LAYER_KINDS = ("linear_attention", "full_attention")

LINEAR_NOTE = (
    "linear-attention (Gated DeltaNet) layers: their core is counted in its recurrent form, "
    "6 H_v d_k d_v FLOPs per token (arXiv:2412.06464), and their state as a fixed per-sequence "
    "cache; their saved activations are estimated as for attention layers"
)


def linear_attention_fields(cfg: dict[str, Any], n_layers: int, path: str) -> dict[str, Any]:
    """Arch fields of the hybrid layers; one-line SpecError naming a bad ``layer_types``."""
    types = cfg.get("layer_types")
    if types is None:
        k = cfg.get("full_attention_interval") or 4
        types = ["linear_attention" if (i + 1) % k else "full_attention" for i in range(n_layers)]
    if not isinstance(types, list) or len(types) != n_layers:
        raise SpecError(
            f"{path}: layer_types must list one entry per layer ({n_layers}, "
            "num_hidden_layers)"
        )
    bad = sorted({t for t in types if t not in LAYER_KINDS}, key=str)
    if bad:
        raise SpecError(
            f"{path}: layer_types entry {bad[0]!r} is not supported; use 'linear_attention' or "
            "'full_attention'"
        )
    size = {k: cfg.get(k) or v for k, v in LINEAR_DEFAULTS.items()}
    n_linear = types.count("linear_attention")
    if not n_linear:
        return {"attn_output_gate": True}
    return dict(
        attn_output_gate=True,
        linear_layers=n_linear,
        linear_key_heads=size["linear_num_key_heads"],
        linear_value_heads=size["linear_num_value_heads"],
        linear_key_head_dim=size["linear_key_head_dim"],
        linear_value_head_dim=size["linear_value_head_dim"],
        linear_conv_kernel=size["linear_conv_kernel_dim"],
    )
