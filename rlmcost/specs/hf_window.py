"""Sliding-window attention in a transformers ``config.json``: the window and which layers slide.

Read as the transformers config and model classes read it (sources in :func:`window_fields`);
the cost convention is :mod:`rlmcost.blocks.window`'s.
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

#: model types with sliding-window attention, and the window their config class gives when
#: config.json has no ``sliding_window`` key (transformers' MistralConfig, Gemma2Config,
#: Qwen2Config, Qwen3Config, Qwen2MoeConfig, Qwen3MoeConfig: 4096; MixtralConfig, Phi3Config:
#: None; GptOssConfig: 128; Olmo3Config: 4096; Ministral3Config: None; Gemma 3 through
#: ``hf_config.GEMMA3_TEXT_DEFAULTS``).
WINDOW_DEFAULT: dict[str, int | None] = {
    "mistral": 4096, "mixtral": None, "phi3": None, "gemma2": 4096, "gemma3_text": 4096,
    "qwen2": 4096, "qwen3": 4096, "qwen2_moe": 4096, "qwen3_moe": 4096, "gpt_oss": 128,
    "olmo3": 4096, "ministral3": None,
}  # fmt: skip
#: model types whose window applies only with ``use_sliding_window: true`` (default false).
WINDOW_SWITCHED = ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe")
#: model types whose attention layers follow ``layer_types``; the others slide in every layer.
LAYER_TYPED = ("gemma2", "gemma3_text", "qwen2", "qwen3", "qwen2_moe", "gpt_oss", "olmo3")


def window_fields(cfg: dict[str, Any], mt: str, n_layers: int, path: str) -> dict[str, Any]:
    """``sliding_window`` and ``full_attention_layers`` as transformers builds the model.

    The window: config.json's ``sliding_window`` (the config class's default when the key is
    absent, :data:`WINDOW_DEFAULT`), none when it is null or 0, and for Qwen2/Qwen3(-MoE) only
    with ``use_sliding_window`` (their configs set it to None, or 0, otherwise). Which layers
    slide: ``layer_types`` when the config lists it and the model class reads it
    (:data:`LAYER_TYPED`), else the config class's default pattern: Gemma 2 slides in layer i
    when (i + 1) % 2 (``Gemma2Config``; GPT-OSS too, ``GptOssConfig``), Gemma 3 when
    (i + 1) % sliding_window_pattern (6, ``Gemma3TextConfig``), OLMo 3 when (i + 1) % 4
    (``Olmo3Config``), Qwen2/Qwen3 from layer
    max_window_layers on (28, ``Qwen2Config``), Qwen2-MoE in the even layers below max_window_layers
    (``Qwen2MoeConfig``); Mistral, Mixtral, Phi-3 and Qwen3-MoE pass the one window to every
    layer (``MistralAttention`` and the others).
    """
    window = cfg["sliding_window"] if "sliding_window" in cfg else WINDOW_DEFAULT.get(mt)
    if mt in WINDOW_SWITCHED and not cfg.get("use_sliding_window"):
        window = None
    if mt not in WINDOW_DEFAULT or not window:
        return {}
    if cfg.get("use_bidirectional_attention"):
        raise SpecError(
            f"{path}: use_bidirectional_attention=true is an encoder (embedding) model; rlmcost "
            "costs causal decoders only"
        )
    full = _full_attention_layers(cfg, mt, n_layers, path)
    return {} if full >= n_layers else {"sliding_window": window, "full_attention_layers": full}


def _full_attention_layers(cfg: dict[str, Any], mt: str, n_layers: int, path: str) -> int:
    """Layers that attend to every position (see :func:`window_fields`)."""
    types = cfg.get("layer_types") if mt in LAYER_TYPED else None
    if types is not None:
        kinds = ("sliding_attention", "full_attention")
        if not isinstance(types, list) or len(types) != n_layers or set(types) - set(kinds):
            raise SpecError(
                f"{path}: layer_types must list 'sliding_attention' or 'full_attention' for "
                f"each of the {n_layers} layers"
            )
        return types.count("full_attention")
    below = cfg.get("max_window_layers")
    below = min(28 if below is None else int(below), n_layers)
    if mt in ("gemma2", "gpt_oss"):
        return n_layers // 2
    if mt == "gemma3_text":
        return n_layers // int(cfg.get("sliding_window_pattern") or 6)
    if mt == "olmo3":
        return n_layers // 4
    if mt in ("qwen2", "qwen3"):
        return below
    if mt == "qwen2_moe":
        return n_layers - (below + 1) // 2
    return 0


def window_note(fields: dict[str, Any], n_layers: int) -> list[str]:
    """What the costs do with a sliding window, for the spec's notes."""
    window = fields.get("sliding_window")
    if window is None:
        return []
    full = fields["full_attention_layers"]
    layers = "every layer" if not full else f"{n_layers - full} of {n_layers} layers"
    return [
        f"sliding-window attention ({window} tokens, {layers}): attention FLOPs, depth and the "
        f"KV cache of the building blocks follow the window as transformers keeps it (a decode "
        f"step attends min(c, {window}) keys, the cache holds the last {window - 1} positions); "
        "generation holds it as the engine allocates it (vLLM frees the blocks outside the "
        "window, SGLang and Hugging Face hold the whole context) and vLLM's decode (SGLang's "
        "for Gemma) reads the window only (rlmcost.deployment.engine_kv); a training step's "
        "attention follows the window: rlmcost.perf.attention_shapes.causal_pairs"
    ]
