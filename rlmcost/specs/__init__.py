"""Specs: validated, frozen descriptions of models, hardware, clusters and workloads."""

from rlmcost.specs.hardware import ClusterSpec, HardwareSpec
from rlmcost.specs.model import ModelSpec
from rlmcost.specs.registry import get_hardware, get_model, hardware, models
from rlmcost.specs.workload import Workload

__all__ = [
    "ClusterSpec",
    "HardwareSpec",
    "ModelSpec",
    "Workload",
    "get_hardware",
    "get_model",
    "hardware",
    "models",
]
