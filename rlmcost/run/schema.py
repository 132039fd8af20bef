"""The JSON Schema of every command's ``--json`` output, generated from pydantic models of the
output (``rlmcost schema COMMAND``).

Every output carries ``schema_version`` (:data:`~rlmcost.run.schema_envelope.SCHEMA_VERSION`)
and the ``command`` that printed it (:class:`Versioned`); a query's output (the algorithm
commands, ``compare``, ``placements``, ``import FRAMEWORK``) also its ``run`` (a
:class:`~rlmcost.run.Run`, so `rlmcost run` re-evaluates it; :class:`Envelope`). The query
outputs are modelled here, the other commands' in :mod:`rlmcost.run.schema_tools` and
:mod:`rlmcost.run.schema_listings`; :func:`output_models` finds a command's models. The top
level of each output is closed (``additionalProperties: false``): a key added to an output must
be added to its model, and a test validates every command's output against its schema. Units are
in the key names (``_bytes``, ``_flops``, ``_s``); bytes and FLOPs are exact integers.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from rlmcost.errors import SpecError
from rlmcost.run.schema_envelope import SCHEMA_VERSION
from rlmcost.run.spec import Run

_CLOSED = ConfigDict(extra="forbid")
_OPEN = ConfigDict(extra="allow")


class Versioned(BaseModel):
    """What every output starts with: its schema version and the command that printed it."""

    model_config = _CLOSED

    schema_version: Literal["2.25"]
    command: str


class Envelope(Versioned):
    """What every query output starts with: also the Run it evaluated."""

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
    hardware: str  # the accelerator of the stage's peak (its group's own on a mixed pool)
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
    hardware: str  # the binding stage's accelerator (as hbm_ and capacity_bytes_per_device)
    gpus: int
    stages: dict[str, StageOut]
    iteration: IterationOut
    phases: list[dict[str, Any]]
    cost: dict[str, Any] | None = None  # USD per iteration and per 1M trained tokens
    fits: bool
    shortfall_bytes: int
    problems: list[str]
    hbm_bytes_per_device: int
    capacity_bytes_per_device: int
    device_memory_bytes: dict[str, int]
    host_memory_bytes_per_node: int
    host_memory_capacity_bytes_per_node: int | None = None  # its host's; None: unknown
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
    memory_timeline: list[dict[str, Any]] | None = None  # --timeline: rlmcost.reports.timeline
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
    gpus_per_hardware: dict[str, int] | None = None  # groups on their own accelerators
    cost: dict[str, Any] | None = None  # USD per iteration and per 1M trained tokens
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
    host_memory_capacity_bytes_per_node: int | None = None  # its host's; None: unknown
    fits: bool
    shortfall_bytes: int
    notes: list[str]


class PlacementsOut(Envelope):
    """`rlmcost placements` without --placement/--groups: every configuration."""

    placements: list[PlacementOut]
    not_applicable: dict[str, str]
    fastest_that_fits: str | None = Field(description="the fastest configuration that fits")
    faster_outside: list[dict[str, Any]] = Field(
        default_factory=list, description="deployments beyond the configurations that their "
        "notes found faster than fastest_that_fits (deployment, time_s, flags), fastest "
        "first; schema 2.14")


class SymbolicPlacementRowOut(BaseModel):
    """One Table IX row (a configuration's stage) in symbols."""

    model_config = _OPEN

    configuration: str
    stage: str
    work: str
    depth: str
    peak_memory_per_device_group: str


class SymbolicPlacementsOut(BaseModel):
    """`rlmcost placements --symbolic`: Table IX's rows in symbols (no Run: no model)."""

    model_config = _CLOSED

    schema_version: Literal["2.25"]
    command: Literal["placements"]
    symbolic: Literal[True]
    rows: list[SymbolicPlacementRowOut]


class PlacementDetailOut(Envelope, PlacementOut):
    """`rlmcost placements --placement/--groups`: one placement's report."""

    model_config = _OPEN


def output_models(command: str) -> tuple[type[BaseModel], ...]:
    """The models of ``command``'s ``--json`` output, one per shape it prints (``placements``:
    every placement, or one with --placement/--groups; an algorithm command: the evaluation,
    or its Table IV rows with --symbolic). ``command`` as the output's ``command`` says it
    (``import verl``), or ``import``. SpecError naming the commands for any other."""
    from rlmcost.algorithms.catalog import algorithms
    from rlmcost.run import schema_listings, schema_tools
    from rlmcost.run.schema_envelope import IMPORT_COMMANDS, schema_commands

    name = " ".join(command.split())
    if name in algorithms():
        return EvaluationOut, schema_listings.SymbolicStagesOut
    if name in IMPORT_COMMANDS:
        name = "import"
    outputs = {"compare": (ComparisonOut,),
               "placements": (PlacementsOut, PlacementDetailOut, SymbolicPlacementsOut),
               **schema_tools.OUTPUTS, **schema_listings.OUTPUTS}  # fmt: skip
    if name == "run":  # tests/test_schema_all.py REPRINTS
        raise SpecError(
            "`rlmcost run FILE --json` prints the output of the command that FILE's Run came "
            "from, under that command's schema: `rlmcost schema ALGORITHM` (e.g. `rlmcost "
            "schema ppo`; the output's `command` key names it)"
        )
    if name not in outputs:
        words = [c for c in schema_commands() if c not in algorithms() and c not in IMPORT_COMMANDS]
        frameworks = ", ".join(c.split()[1] for c in IMPORT_COMMANDS)
        raise SpecError(
            f"no schema for '{command}': `rlmcost schema` takes a command with --json output: "
            f"an algorithm (ppo, grpo, ...; see `rlmcost algorithms`), {', '.join(words)} or "
            f"import [FRAMEWORK] ({frameworks})"
        )
    return outputs[name]


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``command``'s ``--json`` output (``anyOf`` its
    shapes where it prints several)."""
    from pydantic import TypeAdapter

    models = output_models(command)
    if len(models) == 1:
        schema = models[0].model_json_schema()
    else:
        schema = TypeAdapter(Union[models]).json_schema()  # noqa: UP007 - a runtime tuple
    name = " ".join(command.split())
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema,
            "title": f"rlmcost {name} --json (schema {SCHEMA_VERSION})"}  # fmt: skip
