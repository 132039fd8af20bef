"""How a checkpoint's ``config.json`` says its weights are stored: ``quantization_config``.

transformers writes a quantized checkpoint's format into ``config.json`` as
``quantization_config`` with a ``quant_method``: ``"fp8"`` with ``weight_block_size``
[128, 128] for DeepSeek-V3's block-wise FP8 (deepseek-ai/DeepSeek-V3 README_WEIGHTS.md,
"FP8 Weight Documentation"), ``"mxfp4"`` for gpt-oss's experts (Megatron-Bridge
src/megatron/bridge/models/gpt_oss/gpt_oss_bridge.py @067f987d dequantizes its ``_blocks`` /
``_scales``), ``"compressed-tensors"`` for llm-compressor's formats, whose ``config_groups``
give each group's ``weights`` ``num_bits`` and ``type`` (``int`` 4: Kimi-K2-Thinking's and
Kimi K2.5's INT4 routed experts, Megatron-Bridge docs/models/kimi/kimi-k25-vl.md @067f987d).
:func:`quant_of` reduces that to one lower-case word, the ``checkpoint_quant`` of
:class:`~rlmcost.specs.model.ModelSpec`; a multimodal config may hold it in ``text_config``.
"""

from __future__ import annotations

import re
from typing import Any


def _word(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _compressed(qc: dict[str, Any]) -> str:
    """A compressed-tensors config's one weight format (``int4``, ``fp8``), else its method."""
    groups = qc.get("config_groups")
    kinds = set()
    for group in groups.values() if isinstance(groups, dict) else ():
        weights = group.get("weights") if isinstance(group, dict) else None
        if not isinstance(weights, dict) or not isinstance(weights.get("num_bits"), int):
            return "compressedtensors"
        kinds.add(("int" if weights.get("type") == "int" else "fp") + str(weights["num_bits"]))
    return kinds.pop() if len(kinds) == 1 else "compressedtensors"


def quant_of(cfg: dict[str, Any]) -> str | None:
    """The storage format ``cfg`` (a config.json's object) declares, None when unquantized.

    >>> quant_of({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}})
    'fp8'
    >>> quant_of({"quantization_config": {"quant_method": "compressed-tensors", "config_groups":
    ...     {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 32}}}}})
    'int4'
    >>> quant_of({"model_type": "qwen3"}) is None
    True
    """
    text = cfg.get("text_config")
    for where in (cfg, text if isinstance(text, dict) else {}):
        qc = where.get("quantization_config")
        if not isinstance(qc, dict) or not qc.get("quant_method"):
            continue
        method = _word(str(qc["quant_method"]))
        return _compressed(qc) if method == "compressedtensors" else method or None
    return None
