"""A cluster's host amounts (``host_bandwidth_gb_per_s``, ``host_memory_gib``) checked for what
is wrong with them before pydantic's range check: NaN (no amount at all), infinity and a value
<= 0 each say so, with an example of a real amount."""

from __future__ import annotations

import math
from typing import Any

EXAMPLES = {
    "host_bandwidth_gb_per_s": ("host bandwidth {} GB/s per direction", "e.g. 64 (PCIe 5.0 x16)"),
    "host_memory_gib": ("host memory {} GiB per host", "e.g. 1862 (a 2 TB DGX H100)"),
}
"""Each field's wording and a real amount (PCIe 5.0 x16; the 2 TB of a DGX H100 in GiB)."""


def positive_amount(v: Any, field: str) -> Any:
    """``v`` as given where it is None, not a number (the float field's own error follows) or a
    positive finite amount; else ValueError saying what is wrong with it."""
    try:
        x = float(v) if v is not None and not isinstance(v, bool) else None
    except (TypeError, ValueError):
        return v
    if x is None or (math.isfinite(x) and x > 0):
        return v
    what, example = EXAMPLES[field]
    why = "is not a number (NaN: no amount; comparisons with it are all false)" \
        if math.isnan(x) else "must be a finite number" if math.isinf(x) else \
        "must be positive"  # fmt: skip
    raise ValueError(f"{what.format(v)} {why}; give an amount above 0, {example}")
