"""Plain rows for the listings: `rlmcost models`, `rlmcost hardware`, `rlmcost algorithms`."""

from __future__ import annotations

from typing import Any

from rlmcost.algorithms.catalog import algorithms, builder
from rlmcost.algorithms.options import KNOBS
from rlmcost.choices import Dtype
from rlmcost.errors import SpecError
from rlmcost.specs import hardware, models
from rlmcost.units import format_bandwidth, format_bytes, format_count, format_flops


def model_listing(family: str | None = None) -> list[dict[str, Any]]:
    """One dict per built-in model: its spec fields plus exact parameter counts.

    ``family`` keeps the models whose family or transformers model_type it names ('qwen3',
    'llama', 'glm4_moe'); an unknown one is a SpecError listing the families.
    """
    specs = models()
    if family is not None:
        want = family.strip().lower()
        specs = tuple(s for s in specs if want in (s.family, s.model_type))
        if not specs:
            known = sorted({s.family for s in models()} | {s.model_type for s in models()})
            raise SpecError(
                f"no built-in model of family '{family}'; use one of: {', '.join(known)}"
            )
    rows = []
    from rlmcost.compiled import blocks_gen as g  # the compiled blocks: no sympy
    from rlmcost.compiled.arch import arch_numbers

    for spec in specs:
        a = arch_numbers(spec.arch())
        total, active = int(g.params_lm(a)), int(g.params_active_per_token(a))
        row = spec.model_dump(mode="json")
        row.update(
            params=total,
            params_active=active,
            params_h=format_count(total),
            params_active_h=format_count(active),
        )
        rows.append(row)
    return rows


def hardware_listing() -> list[dict[str, Any]]:
    """One dict per built-in accelerator, raw numbers plus formatted ones."""
    rows = []
    for hw in hardware():
        row = hw.model_dump(mode="json")
        peak = hw.peak_flops_per_s
        row.update(
            bf16_h=format_flops(peak[Dtype.BF16], "FLOP/s"),
            fp8_h=format_flops(peak[Dtype.FP8], "FLOP/s") if Dtype.FP8 in peak else "-",
            hbm_h=f"{hw.hbm_bytes / 1e9:g} GB ({format_bytes(hw.hbm_bytes)})",
            hbm_capacity_bytes=hw.hbm_capacity_bytes,
            hbm_usable_h=format_bytes(hw.hbm_usable_bytes),
            host_link_h=format_bandwidth(hw.host_link_bandwidth_bytes_per_s),
            host_memory_h="-" if hw.host_memory_bytes is None else _decimal(
                hw.host_memory_bytes) + f" / {hw.host_gpus}",  # fmt: skip
            hbm_bw_h=format_bandwidth(hw.hbm_bandwidth_bytes_per_s),
            intra_h=format_bandwidth(hw.intra_node_bandwidth_bytes_per_s),
            inter_h=format_bandwidth(hw.inter_node_bandwidth_bytes_per_s),
        )
        rows.append(row)
    return rows


def _decimal(n: int) -> str:
    """Bytes in decimal units as datasheets print them: ``2 TB``, ``960 GB``."""
    return f"{n / 1e12:g} TB" if n >= 10**12 else f"{n / 1e9:g} GB"


def algorithm_listing() -> list[dict[str, Any]]:
    """One row per algorithm: name, base, summary, citation, default K, knobs, invocations."""
    rows = []
    for alg in algorithms().values():
        knobs = {k.flag: k.default for k in KNOBS if k.name in alg.names}
        rows.append(
            {
                "name": alg.name,
                "base": alg.base,
                "summary": alg.summary,
                "citation": alg.citation,
                "offline": alg.offline,
                "default_group": alg.default_group if "K" in alg.names else None,
                "knobs": {k: int(v) for k, v in knobs.items()},
                "models": [str(r) for r in alg.model_roles],
                "invocations": [
                    {"stage": str(i.stage), "what": i.describe()} for i in alg.invocations
                ],
                "added": [i.describe() for i in alg.added],
                "removed": [i.describe() for i in alg.removed],
                "doc": " ".join((builder(alg.name).__doc__ or "").split()),
            }
        )
    return rows
