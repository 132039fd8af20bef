"""An architecture as the integers and 0/1 flags the generated functions read.

:func:`arch_numbers` accepts a numeric :class:`rlmcost.arch.Arch`, a
:class:`rlmcost.specs.ModelSpec` (same field names) or a mapping such as an entry of
``rlmcost/specs/data/models.json``; it imports neither sympy nor pydantic.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from rlmcost.compiled.blocks_gen import (
    BOOL_FIELDS,
    ENUM_FLAGS,
    INT_FIELDS,
    STRUCTURAL,
    ArchNumbers,
)
from rlmcost.errors import SpecError

REQUIRED = ("n_layers", "d_model", "d_ff", "n_heads", "n_kv_heads", "head_dim", "vocab")
"""Fields without a default in ``Arch``; the others default to 0, False or the enum's
default member."""


def _read(arch: Any, name: str) -> Any:
    if isinstance(arch, Mapping):
        return arch.get(name)
    return getattr(arch, name, None)


@lru_cache(maxsize=1)
def _defaults() -> dict[str, Any]:
    """``Arch``'s integer defaults (e.g. ``norms_per_layer`` = 2): what a models.json entry
    that leaves a field out means (rlmcost.arch loads no sympy)."""
    import dataclasses

    from rlmcost.arch import Arch

    return {
        f.name: f.default
        for f in dataclasses.fields(Arch)
        if isinstance(f.default, int) and not isinstance(f.default, bool)
    }


def _int(arch: Any, name: str) -> int:
    value = _read(arch, name)
    if value is None:
        if name in REQUIRED:
            raise SpecError(f"model {_read(arch, 'name')}: field '{name}' is missing")
        return _defaults().get(name, 0)
    try:
        return operator.index(value)
    except TypeError:
        try:
            return int(value)  # a sympy Integer
        except TypeError:
            raise SpecError(
                f"model {_read(arch, 'name')}: field {name}={value} is not a number; the "
                "compiled engine needs a numeric architecture (a ModelSpec's arch())"
            ) from None


def _convert(arch: Any) -> ArchNumbers:
    values: dict[str, Any] = {"name": str(_read(arch, "name") or "custom")}
    values.update({n: _int(arch, n) for n in INT_FIELDS})
    values.update({b: int(bool(_read(arch, b))) for b in BOOL_FIELDS})
    for flag, field, member in ENUM_FLAGS:
        value = _read(arch, field)
        values[flag] = int(value is not None and str(getattr(value, "value", value)) == member)
    moe = int(values["n_experts"] != 0)
    values["moe"] = moe
    values["shared"] = int(moe and values["n_shared_experts"] != 0)
    values["latent"] = int(moe and values["moe_latent"] != 0)
    mla = int(_read(arch, "kv_lora_rank") is not None)
    values["mla"] = mla
    values["qlora"] = int(mla and _read(arch, "q_lora_rank") is not None)
    values["swa"] = int(_read(arch, "sliding_window") is not None)
    values["dsa"] = int(mla and _read(arch, "index_topk") is not None)
    values["fullshape"] = int(values["full_head_dim"] != 0)
    missing = set(ArchNumbers._fields) - set(values)
    if missing or set(values) - set(ArchNumbers._fields) - set(STRUCTURAL):
        raise RuntimeError(f"ArchNumbers fields out of step with Arch: {sorted(missing)}")
    return ArchNumbers(**values)


@lru_cache(maxsize=256)
def _cached(arch: Any) -> ArchNumbers:
    return _convert(arch)


def arch_numbers(arch: Any) -> ArchNumbers:
    """``arch`` (an ``Arch``, a ``ModelSpec`` or a mapping of its fields) as ``ArchNumbers``.

    Flags: ``moe`` = (n_experts > 0), ``shared`` = (a MoE with n_shared_experts > 0),
    ``latent`` = (a MoE with moe_latent > 0), ``mla``
    = (kv_lora_rank given), ``qlora`` = (an MLA model with q_lora_rank given), ``swa`` =
    (sliding_window given), ``dsa`` = (an MLA model with index_topk given), ``fullshape`` =
    (full_head_dim > 0: Gemma 4's full-attention layers shaped their own way), one flag per bool
    field, and ``<field>_<member>`` for each non-default member of an enum field
    (``ffn_kind_plain``, ``norm_layernorm``).
    """
    if isinstance(arch, ArchNumbers):
        return arch
    try:
        return _cached(arch)
    except TypeError:  # unhashable (a dict)
        return _convert(arch)


def recurrent_state(a: Any, tp: int) -> int:
    """H_v d_k d_v / P_t: the recurrent part of :func:`linear_state`."""
    return int(a.linear_value_heads // tp * a.linear_key_head_dim * a.linear_value_head_dim)


def linear_state(a: Any, tp: int) -> int:
    """Elements one linear-attention layer keeps per sequence on a TP rank: the recurrent
    state H_v / P_t x d_k x d_v and the conv state (K - 1) x (2 H_k d_k + H_v d_v) / P_t
    (``Arch.linear_state_width`` of ``parallel.shard.tp_shard``)."""
    if not a.linear_layers:
        return 0
    hv, hk = a.linear_value_heads // tp, a.linear_key_heads // tp
    dk, dv = a.linear_key_head_dim, a.linear_value_head_dim
    return int(hv * dk * dv + (a.linear_conv_kernel - 1) * (2 * hk * dk + hv * dv))


def full_layer(a: Any, tp: int) -> Any:
    """Gemma 4's full-attention layer as its own shape on a TP rank (``Arch.full_view``: its
    head width and KV heads, one replicated KV head per rank past them, as ``shard.tp_shard``
    holds them); ``a`` itself when the full layers are shaped as the others."""
    if not a.fullshape:
        return a
    full = a._replace(head_dim=a.full_head_dim, n_kv_heads=a.full_kv_heads, full_head_dim=0,
                      full_kv_heads=0, fullshape=0)  # fmt: skip
    return full._replace(n_kv_heads=tp) if replicates_kv(full, tp) else full


def replicates_kv(a: Any, tp: int) -> bool:
    """An inference engine with more TP ranks than KV heads (a multiple of them) holds one
    replicated KV head per rank (vLLM; ``parallel.shard.tp_shard``)."""
    return bool(tp > a.n_kv_heads and tp % a.n_kv_heads == 0)


def full_layers_of(a: Any, layers: int) -> int:
    """Full-attention layers among ``layers`` consecutive ones (a pipeline stage), in the
    model's proportion: ``Arch.full_layers_of`` numerically."""
    return int(a.full_attention_layers * layers // a.n_layers)
