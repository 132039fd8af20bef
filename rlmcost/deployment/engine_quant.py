"""What an engine keeps quantized beside its weight dtype: its KV cache's dtype
(``EngineSpec.kv_cache_dtype``) and 4-bit weights (``EngineSpec.weight_format``,
:mod:`rlmcost.parallel.packed_weights`); the names they take and the engines that take them.
Split from :mod:`rlmcost.deployment.engine` by purpose."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import Dtype
from rlmcost.deployment.kinds import EngineKind

if TYPE_CHECKING:
    from rlmcost.deployment.engine import EngineSpec

KV_CACHE_FP8_NAMES = ("fp8", "fp8_e4m3", "fp8_e5m2")
"""The FP8 KV-cache dtypes the engines take, one byte an element each (vLLM
``CacheConfig.cache_dtype``: "fp8", "fp8_e4m3", "fp8_e5m2", vllm/config/cache.py; SGLang
``--kv-cache-dtype``: "fp8_e4m3", "fp8_e5m2", python/sglang/srt/server_args.py)."""

_OWN_CACHE = (EngineKind.VLLM, EngineKind.SGLANG)
"""The engines with a KV-cache dtype and 4-bit weight kernels of their own."""


def kv_cache_dtype_name(v: object) -> object:
    """``kv_cache_dtype`` as given: None or "auto" (the model's), bf16, fp16, or fp8 for any
    of :data:`KV_CACHE_FP8_NAMES`; ValueError for the rest."""
    if v is None:
        return v
    name = str(getattr(v, "value", v)).strip().lower()
    if name == "auto":
        return None
    if name in KV_CACHE_FP8_NAMES:
        return Dtype.FP8.value
    if name not in (Dtype.BF16.value, Dtype.FP16.value):
        raise ValueError(f"KV-cache dtype {name}: give auto, bf16, fp16 or fp8 (vLLM's "
                         "fp8, fp8_e4m3, fp8_e5m2; SGLang's fp8_e4m3, fp8_e5m2)")  # fmt: skip
    return name


def weight_format_name(v: object) -> object:
    """``weight_format`` as given, in lower case; ValueError unless a known 4-bit format."""
    from rlmcost.parallel.packed_weights import FORMATS

    if v is None:
        return v
    name = str(v).strip().lower()
    if name not in FORMATS:
        raise ValueError(f"4-bit weight format {name}: give one of {', '.join(FORMATS)}")
    return name


def check_quantized(e: EngineSpec) -> None:
    """ValueError where ``e`` sets a KV-cache dtype or 4-bit weights its engine does not take
    (HF generate, DeepSpeed's Hybrid Engine, Megatron-core keep the model's dtype), 4-bit
    weights beside FP8 ones, or weight parts without a format."""
    if e.kv_cache_dtype is not None and e.kind not in _OWN_CACHE:
        raise ValueError(f"KV-cache dtype {e.kv_cache_dtype} with engine {e.kind}: it keeps "
                         "its cache in the model's dtype; --kv-cache-dtype applies to vLLM and "
                         "SGLang engines")  # fmt: skip
    if e.weight_format is None:
        if e.weight_parts != "linear":
            raise ValueError(f"weight parts {e.weight_parts} without a 4-bit format: give "
                             f"--rollout-weights FORMAT:{e.weight_parts}")  # fmt: skip
        return
    if e.kind not in _OWN_CACHE:
        raise ValueError(f"4-bit weights {e.weight_format} with engine {e.kind}: "
                         "--rollout-weights applies to vLLM and SGLang engines")
    if e.dtype is Dtype.FP8:
        raise ValueError(f"4-bit weights {e.weight_format} with --rollout-dtype fp8: the "
                         "weights outside the 4-bit parts stay 16-bit; drop one")
