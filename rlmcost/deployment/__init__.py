"""Deployments: what a user launches (the spec below placement/; its evaluation is
:mod:`rlmcost.evaluation`, above it).

* ``spec``      the typed :class:`~rlmcost.deployment.spec.Deployment` (YAML/JSON in and out)
* ``terms``     deployment memory terms: logits peak, LoRA, overhead, engine KV pool
* ``memory``    a model invocation's bytes per device under a deployment
* ``resolve``   names and defaults of a query (workload, models per role, layout)

Light to import: the spec's classes load on first use (pydantic); ``kinds`` holds the enums.
"""

from typing import Any

_SPEC = (
    "Deployment",
    "EngineSpec",
    "GroupLayouts",
    "LoraSpec",
    "Overhead",
    "TrainLayout",
    "load_deployment",
)
__all__ = [*_SPEC, "LogitsMode", "Offload"]


def __getattr__(name: str) -> Any:
    """The spec's classes, imported on first use (pydantic costs start-up time)."""
    if name in ("LogitsMode", "Offload"):
        from rlmcost.deployment import kinds

        return getattr(kinds, name)
    if name in _SPEC:
        from rlmcost.deployment import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'rlmcost.deployment' has no attribute {name!r}")
