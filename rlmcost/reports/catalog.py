"""The built-in models and hardware as plain rows (for `rlmcost models` / `hardware`)."""

from __future__ import annotations

from typing import Any

from rlmcost import blocks as bl
from rlmcost.choices import Dtype
from rlmcost.evaluate import format_bandwidth, format_bytes, format_count, format_flops
from rlmcost.specs import hardware, models


def model_catalog() -> list[dict[str, Any]]:
    """One dict per built-in model: its spec fields plus exact parameter counts."""
    rows = []
    for spec in models():
        arch = spec.arch()
        total, active = int(bl.params(arch)), int(bl.params_active_per_token(arch))
        row = spec.model_dump(mode="json")
        row.update(
            params=total,
            params_active=active,
            params_h=format_count(total),
            params_active_h=format_count(active),
        )
        rows.append(row)
    return rows


def hardware_catalog() -> list[dict[str, Any]]:
    """One dict per built-in accelerator, raw numbers plus formatted ones."""
    rows = []
    for hw in hardware():
        row = hw.model_dump(mode="json")
        peak = hw.peak_flops_per_s
        row.update(
            bf16_h=format_flops(peak[Dtype.BF16], "FLOP/s"),
            fp8_h=format_flops(peak[Dtype.FP8], "FLOP/s") if Dtype.FP8 in peak else "-",
            hbm_h=f"{hw.hbm_bytes / 1e9:g} GB ({format_bytes(hw.hbm_bytes)})",
            hbm_bw_h=format_bandwidth(hw.hbm_bandwidth_bytes_per_s),
            intra_h=format_bandwidth(hw.intra_node_bandwidth_bytes_per_s),
            inter_h=format_bandwidth(hw.inter_node_bandwidth_bytes_per_s),
        )
        rows.append(row)
    return rows
