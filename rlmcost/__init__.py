"""rlmcost: analytical work / depth / memory cost model of RL post-training of LLMs.

Layers (data flows up): ``symbols`` -> ``arch`` -> ``blocks`` (Table III) -> ``algorithms``,
``parallel``, ``placement`` -> ``evaluate`` -> ``reports`` -> ``cli``. ``specs`` holds
models, hardware and workloads; ``calibrate`` the optional PyTorch harness.
Importing the package is cheap: heavy modules load on first use.
"""

__version__ = "0.1.0"

_LAZY = {
    "estimate": "rlmcost.reports.estimate",
    "compare": "rlmcost.reports.estimate",
}
_LAZY_MODULES = {"plan": "rlmcost.plan"}  # a callable package: rlmcost.plan(...)


def __getattr__(name: str) -> object:
    """Load the planner API on first use: ``rlmcost.estimate(...)``, ``rlmcost.compare(...)``,
    ``rlmcost.plan(...)``."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(_LAZY_MODULES[name])
    raise AttributeError(f"module 'rlmcost' has no attribute {name!r}")
