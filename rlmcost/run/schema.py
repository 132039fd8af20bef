"""The JSON Schema of each query command's ``--json`` output, generated from pydantic models
of the output (``rlmcost schema COMMAND``).

Every output carries ``schema_version`` (:data:`~rlmcost.run.spec.SCHEMA_VERSION`), the
``command`` that printed it and its ``run`` (a :class:`~rlmcost.run.Run`, so `rlmcost run`
re-evaluates it). The top level of each output is closed (``additionalProperties: false``):
a key added to an output must be added here, and a test validates every command's output
against its schema. Units are in the key names (``_bytes``, ``_flops``, ``_s``); bytes and
FLOPs are exact integers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from rlmcost.errors import SpecError
from rlmcost.run.spec import SCHEMA_VERSION, Run

_CLOSED = ConfigDict(extra="forbid")
_OPEN = ConfigDict(extra="allow")


class Envelope(BaseModel):
    """What every query output starts with."""

    model_config = _CLOSED

    schema_version: Literal["2.0"]
    command: str
    run: Run


class TimeOut(BaseModel):
    model_config = _OPEN

    time_lower_bound_s: float
    compute_time_s: float
    memory_time_s: float
    bound: str
    time_s: float


class InvocationOut(TimeOut):
    role: str
    kind: str
    model: str
    what: str
    phase: str
    sequences: int
    work_flops: int
    depth: int
    memory_bytes_per_device: int
    host_memory_bytes_per_device: int


class StageOut(TimeOut):
    work_flops: int
    depth: int
    depth_disaggregated: int
    memory_bytes_per_device: int
    device_memory_bytes: int
    allocated_bytes_per_device: int
    host_memory_bytes_per_device: int
    memory_breakdown_bytes: dict[str, int]
    binding_term: str
    peak_invocation: str
    fits: bool
    shortfall_bytes: int
    headroom_bytes: int
    transfer_time_s: float
    transfer_predicted_s: float
    share: float
    invocations: list[InvocationOut]


class IterationOut(BaseModel):
    model_config = _CLOSED

    work_flops: int
    time_lower_bound_s: float
    time_s: float
    time_interval_s: tuple[float, float]
    tokens_per_s_per_gpu: float
    mfu: float
    mfu_convention: str
    depth: int
    dominant_stage: str


class EvaluationOut(Envelope):
    """An algorithm command (`rlmcost ppo|grpo|...`): one iteration per stage."""

    algorithm: str
    model: str
    hardware: str
    gpus: int
    stages: dict[str, StageOut]
    iteration: IterationOut
    phases: list[dict[str, Any]]
    fits: bool
    shortfall_bytes: int
    problems: list[str]
    hbm_bytes_per_device: int
    capacity_bytes_per_device: int
    device_memory_bytes: dict[str, int]
    host_memory_bytes_per_node: int
    recommended_gpu_memory_utilization: float | None
    summary: str
    citation: str
    offline: bool
    models: dict[str, str]
    reward: str
    inputs: dict[str, Any]
    options: dict[str, Any]
    layout: dict[str, Any]
    deployment: dict[str, Any]
    placement: str
    placement_detail: dict[str, Any] | None = None
    calibration: str
    attention_counting: Literal["full", "causal"]
    convention: str
    notes: list[str]


class ComparisonOut(Envelope):
    """`rlmcost compare`: the Run under each algorithm in ``compared``."""

    compared: list[str]
    algorithms: list[EvaluationOut]
    notes: list[str]


class PlacementOut(BaseModel):
    """One placement's report (the deployment's evaluation over device groups)."""

    model_config = _OPEN

    placement: str
    algorithm: str
    hardware: str
    gpus: int
    groups: list[dict[str, Any]]
    stages: dict[str, Any]
    iteration_time_lower_bound_s: float
    iteration_time_s: float
    iteration_time_interval_s: tuple[float, float]
    work_flops: int
    weight_sync_bytes: int
    peak_memory_bytes_per_device: int
    capacity_bytes_per_device: int
    host_memory_bytes_per_node: int
    fits: bool
    shortfall_bytes: int
    notes: list[str]


class PlacementsOut(Envelope):
    """`rlmcost placements` without --placement/--groups: every configuration."""

    placements: list[PlacementOut]
    not_applicable: dict[str, str]
    fastest_that_fits: str | None


class PlacementDetailOut(Envelope, PlacementOut):
    """`rlmcost placements --placement/--groups`: one placement's report."""

    model_config = _OPEN


def output_model(command: str, detail: bool = False) -> type[BaseModel]:
    """The model of ``command``'s ``--json`` output (``detail``: placements with
    --placement/--groups)."""
    from rlmcost.algorithms.catalog import algorithms

    if command == "compare":
        return ComparisonOut
    if command == "placements":
        return PlacementDetailOut if detail else PlacementsOut
    if command in algorithms():
        return EvaluationOut
    raise SpecError(
        f"no schema for '{command}': `rlmcost schema` knows the algorithm commands (ppo, grpo, "
        "...), compare and placements"
    )


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``command``'s ``--json`` output."""
    from pydantic import TypeAdapter

    if command == "placements":
        schema = TypeAdapter(PlacementsOut | PlacementDetailOut).json_schema()
    else:
        schema = output_model(command).model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema,
            "title": f"rlmcost {command} --json (schema {SCHEMA_VERSION})"}  # fmt: skip
