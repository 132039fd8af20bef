"""Hybrid Mamba-2 models of NVIDIA (``nemotron_h``: Nemotron-H, Nemotron Nano 2, Nemotron 3
Nano), from their config.json.

transformers ``NemotronHConfig`` / ``NemotronHBlock`` (models/nemotron_h/{configuration,
modeling}_nemotron_h.py, 5.24): ``hybrid_override_pattern`` (or the list
``layers_block_type``, which transformers 5 writes) names each block, and each block is ONE
mixer or FFN behind its own RMSNorm: 'M' a Mamba-2 mixer (``NemotronHMamba2Mixer``), '*'
attention without biases (``NemotronHAttention``), '-' a non-gated relu^2 MLP
(``NemotronHMLP``: up_proj, down_proj), 'E' a MoE (``NemotronHMoE``: a d x E router, routed
relu^2 experts of ``moe_intermediate_size``, one shared relu^2 MLP of
``moe_shared_expert_intermediate_size``). Megatron-Core reads the same letters
(megatron/core/models/hybrid/hybrid_model.py).

rlmcost's layer is a token mixer plus an FFN, each with its norm; a Nemotron-H model reads as
one such layer per mixer block ('M' or '*'), the FFN blocks ('-' or 'E') paired with mixers and
the mixers left over counted in ``ffn_free_layers`` (mixer and norm alone). The parameters and
FLOPs are the blocks' own (tests/test_nemotron_h.py builds ``NemotronHForCausalLM`` on the
meta device); what pairing changes is where pipeline stages cut (over mixers, not the
pattern's blocks). The Mamba-2 sizes map onto the ``linear_*`` fields with ``linear_mamba``
(:class:`rlmcost.arch.Arch`).
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

#: ``transformers.NemotronHConfig()`` defaults of the keys read here (5.24), with the legacy
#: spellings ``NemotronHConfig.__post_init__`` accepts for them.
MAMBA_DEFAULTS = dict(ssm_state_size=128, mamba_num_heads=128, mamba_head_dim=64, n_groups=8,
                      conv_kernel=4, chunk_size=128, head_dim=128, use_conv_bias=True)  # fmt: skip
LEGACY = {"n_groups": "mamba_n_groups", "conv_kernel": "mamba_d_conv",
          "chunk_size": "mamba_chunk_size", "use_conv_bias": "mamba_conv_bias"}  # fmt: skip
BLOCKS = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}
LEGACY_BLOCKS = {"mamba": "linear_attention", "attention": "full_attention"}
"""The older block names a config.json may list (nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B's
``layers_block_type``), as transformers 5.24 renames them (configuration_utils.py
``_LEGACY_LAYER_TYPE_REMAP``, applied to every config's ``layer_types``)."""

UNMODELLED_IDS: dict[str, str] = {}
"""Hugging Face ids of nemotron_h checkpoints rlmcost cannot price, lower-case, with why."""

MAMBA_NOTE = (
    "Mamba-2 layers (Nemotron-H): FLOPs of the SSD's chunked form in training and prefill and "
    "of its recurrent form in decode (arXiv:2405.21060), the state as a fixed per-sequence "
    "cache; their saved activations as Megatron-Core's MambaMixer keeps them (fused "
    "mamba_split_conv1d_scan_combined); the time model's kernels and GEMM widths as for Gated "
    "DeltaNet layers; pipeline stages split over mixer layers, each with the FFN block that "
    "follows it (Megatron-Core splits the pattern's blocks evenly: the same proportions, "
    "other divisors); a mixer-only layer has no FFN, EP dispatch or FFN TP collectives"
)


def _get(cfg: dict[str, Any], key: str) -> Any:
    legacy = LEGACY.get(key)
    if cfg.get(key) is None and legacy and cfg.get(legacy) is not None:
        return cfg[legacy]
    return MAMBA_DEFAULTS[key] if cfg.get(key) is None else cfg[key]


def block_types(cfg: dict[str, Any], path: str) -> list[str]:
    """Each block's type as transformers names it, from ``layers_block_type`` (``layer_types``)
    or ``hybrid_override_pattern``; one-line SpecError for an unknown one."""
    types = cfg.get("layers_block_type") or cfg.get("layer_types")
    if types is None:
        pattern = cfg.get("hybrid_override_pattern")
        if not isinstance(pattern, str) or not pattern:
            raise SpecError(f"{path}: a nemotron_h config needs hybrid_override_pattern or "
                            "layers_block_type (one entry per block)")  # fmt: skip
        bad = sorted(set(pattern) - set(BLOCKS))
        if bad:
            raise SpecError(f"{path}: hybrid_override_pattern letter {bad[0]!r} is not one of "
                            "'M' (Mamba-2), '*' (attention), '-' (MLP), 'E' (MoE)")  # fmt: skip
        return [BLOCKS[c] for c in pattern]
    known = set(BLOCKS.values())
    if isinstance(types, list):
        types = [LEGACY_BLOCKS.get(t, t) if isinstance(t, str) else t for t in types]
    if not isinstance(types, list) or any(t not in known for t in types):
        raise SpecError(f"{path}: layers_block_type must list blocks of {sorted(known)}")
    return list(types)


def nemotron_h_fields(cfg: dict[str, Any], path: str) -> dict[str, Any]:
    """ModelSpec fields of a ``nemotron_h`` config (module docstring); one-line SpecError for
    what rlmcost does not model (MLP and MoE blocks in one model, more FFN
    blocks than mixers, biases on the Mamba projections, a conv without bias)."""
    types = block_types(cfg, path)
    mamba, attn = types.count("linear_attention"), types.count("full_attention")
    mlp, moe = types.count("mlp"), types.count("moe")
    if mlp and moe:
        raise SpecError(f"{path}: MLP ('-') and MoE ('E') blocks in one nemotron_h model are "
                        "not supported")  # fmt: skip
    if mlp + moe > mamba + attn or not mamba + attn or not mlp + moe:
        raise SpecError(
            f"{path}: {mlp + moe} FFN blocks and {mamba + attn} mixer blocks: rlmcost pairs "
            "each FFN block with a mixer and needs 1..mixers FFN blocks"
        )
    if cfg.get("use_bias") or cfg.get("mlp_bias") or not _get(cfg, "use_conv_bias"):
        raise SpecError(f"{path}: nemotron_h with use_bias or mlp_bias true, or "
                        "use_conv_bias false, is not supported")  # fmt: skip
    if cfg.get("sliding_window"):
        raise SpecError(f"{path}: nemotron_h with a sliding_window is not supported")
    d = cfg.get("hidden_size")
    h = cfg.get("num_attention_heads")
    if d is None or h is None or cfg.get("vocab_size") is None:
        raise SpecError(f"{path}: config has no hidden_size, num_attention_heads or vocab_size")
    fields: dict[str, Any] = dict(
        n_layers=mamba + attn,
        d_model=d,
        d_ff=cfg.get("intermediate_size") or cfg.get("moe_intermediate_size") or 4 * d,
        n_heads=h,
        n_kv_heads=cfg.get("num_key_value_heads") or h,
        head_dim=_get(cfg, "head_dim"),
        vocab=cfg["vocab_size"],
        max_context=cfg.get("max_position_embeddings") or 0,
        ffn_kind="plain",
        norm="rmsnorm",
        tie_embeddings=bool(cfg.get("tie_word_embeddings") or False),
        ffn_free_layers=mamba + attn - mlp - moe,
    )
    if mamba:
        fields.update(
            linear_layers=mamba,
            linear_key_heads=_get(cfg, "n_groups"),
            linear_value_heads=_get(cfg, "mamba_num_heads"),
            linear_key_head_dim=_get(cfg, "ssm_state_size"),
            linear_value_head_dim=_get(cfg, "mamba_head_dim"),
            linear_conv_kernel=_get(cfg, "conv_kernel"),
            linear_mamba=True,
            linear_chunk=_get(cfg, "chunk_size"),
        )
    if moe:
        shared = cfg.get("moe_shared_expert_intermediate_size", 7688)
        fields.update(
            n_experts=cfg.get("n_routed_experts") or cfg.get("num_local_experts") or 8,
            top_k=cfg.get("num_experts_per_tok") or 2,
            d_expert=cfg.get("moe_intermediate_size") or 7688,
            n_shared_experts=1 if shared else 0,  # one NemotronHMLP, whatever n_shared_experts
            d_shared_expert=shared or 0,
            moe_latent=cfg.get("moe_latent_size") or 0,  # NemotronHMoE's latent, when set
        )
    return fields
