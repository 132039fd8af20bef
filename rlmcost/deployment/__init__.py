"""Deployments: what a user launches, and the one evaluation every query goes through.

* ``spec``      the typed :class:`~rlmcost.deployment.spec.Deployment` (YAML/JSON in and out)
* ``terms``     deployment memory terms: logits peak, LoRA, overhead, engine KV pool
* ``memory``    a model invocation's bytes per device under a deployment
* ``resolve``   names and defaults of a query (workload, models per role, layout)
* ``evaluate``  :func:`~rlmcost.deployment.evaluate.evaluate_deployment`, behind estimate,
                placements and every algorithm command

Light to import: only ``spec`` loads here (pydantic); import ``evaluate`` explicitly.
"""

from rlmcost.deployment.spec import (
    Deployment,
    EngineSpec,
    GroupLayouts,
    LogitsMode,
    LoraSpec,
    Offload,
    Overhead,
    TrainLayout,
    load_deployment,
)

__all__ = [
    "Deployment",
    "EngineSpec",
    "GroupLayouts",
    "LogitsMode",
    "LoraSpec",
    "Offload",
    "Overhead",
    "TrainLayout",
    "load_deployment",
]
