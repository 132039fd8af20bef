"""rlmcost: analytical work / depth / memory cost model of RL post-training of LLMs.

Layers (data flows up): ``symbols`` -> ``arch`` -> ``blocks`` (Table III) -> ``algorithms``,
``parallel`` -> ``run`` (the query) -> ``placement`` -> ``evaluation`` -> ``reports`` ->
``cli``. ``specs`` holds models, hardware and workloads; ``calibrate`` the optional PyTorch
harness. Importing the package is cheap: heavy modules load on first use.

    >>> import rlmcost
    >>> run = rlmcost.Run.from_data({"models": {"actor": "70b"}, "cluster": {"gpus": 8}})
    >>> e = rlmcost.evaluate(run)
    >>> e.fits, e.to_json()["run"] == run.to_json()
    (False, True)
"""

__version__ = "0.1.0"

_LAZY = {
    "Run": "rlmcost.run.spec",
    "load_run": "rlmcost.run.spec",
    "SCHEMA_VERSION": "rlmcost.run.spec",
    "evaluate": "rlmcost.evaluation.query",
    "Evaluation": "rlmcost.evaluation.view",
    "estimate": "rlmcost.plan.sizing",
    "run_of": "rlmcost.reports.estimate",
    "compare": "rlmcost.reports.estimate",
    "run_from_command": "rlmcost.cli.from_command",
}
_LAZY_MODULES = {"plan": "rlmcost.plan"}  # a callable package: rlmcost.plan(...)


def __getattr__(name: str) -> object:
    """Load the API on first use: ``rlmcost.Run``, ``rlmcost.evaluate(run)``,
    ``rlmcost.estimate(...)`` (keywords -> Run -> evaluate), ``rlmcost.compare(...)``,
    ``rlmcost.plan(...)``, ``rlmcost.run_from_command("rlmcost ppo -m 70b --tp 8")`` (a
    command line or an importer's query -> Run)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(_LAZY_MODULES[name])
    raise AttributeError(f"module 'rlmcost' has no attribute {name!r}")


__all__ = [*_LAZY, *_LAZY_MODULES]


def __dir__() -> list[str]:
    """The lazy API with the module's own names, so ``dir(rlmcost)`` and a notebook's tab
    completion list ``Run``, ``evaluate``, ``estimate``, ``compare``, ``plan`` ..."""
    return sorted({*globals(), *__all__})
