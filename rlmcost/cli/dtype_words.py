"""The dtypes of an estimate in words, where an engine keeps its own (the estimate captions of
:mod:`rlmcost.cli.algorithms_render` and :mod:`rlmcost.cli.placement_render`)."""

from __future__ import annotations

from typing import Any


def kv_words(e: Any) -> str:
    """The KV cache's dtype in words: the workload's, and the engines' own where a deployed
    engine keeps its cache in another (``EngineSpec.kv_cache_dtype``)."""
    w, d = e.workload, e.deployment
    own = set()
    if d is not None and not d.ideal:
        engines = [d.engine, *(g.engine for g in d.groups or () if g.engine is not None)]
        own = {str(x.kv_cache_dtype) for x in engines if x.kv_cache_dtype not in (None, w.kv_dtype)}
    return f"{w.kv_dtype}" + (f" ({'/'.join(sorted(own))} in the engines)" if own else "")
