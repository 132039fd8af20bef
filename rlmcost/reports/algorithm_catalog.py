"""Every algorithm and variant as plain rows (`rlmcost algorithms`); no sympy, so it is fast."""

from __future__ import annotations

from typing import Any

from rlmcost.algorithms.catalog import algorithms, builder
from rlmcost.algorithms.options import KNOBS


def algorithm_catalog() -> list[dict[str, Any]]:
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
