"""Output models of `rlmcost validate` (training rows and RL rows), `rlmcost validate --rl`
(the published RL runs, each with its Run), `rlmcost validate --engine` (published inference
measurements) and `rlmcost validate --memory` (published GPU-memory measurements); conventions
as in :mod:`rlmcost.run.schema_tools`:
the top level is closed, nested objects list the keys every output has (and may carry more);
units in the key names, times and ratios floats, byte counts exact integers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlmcost.run.schema import Versioned
from rlmcost.run.spec import Run

_OPEN = ConfigDict(extra="allow")
_CLOSED = ConfigDict(extra="forbid")

# -- rlmcost validate ------------------------------------------------------------------------


class ValidationRowOut(BaseModel):
    """A published figure and its prediction; ``published`` and ``predicted`` are in the unit
    ``metric`` names (TFLOP/s per GPU, MFU, or seconds)."""

    model_config = _OPEN

    id: str
    source: str
    setup: str
    metric: str
    published: float
    predicted: float
    error: float = Field(description="predicted / published - 1")
    cite: str


class TrainValidationRowOut(ValidationRowOut):
    predicted_interval: list[float] = Field(
        description="(low, high) of the prediction in the row's metric: the predicted step's "
        "interval (rlmcost.perf.interval.TEACHER_FORCED, never below the roofline bound)"
    )
    inside_interval: bool = Field(description="published inside predicted_interval")
    predicted_step_time_s: float


class RlValidationRowOut(ValidationRowOut):
    metric: Literal["step_time_s"]
    time_lower_bound_s: float
    predicted_phases_s: dict[str, float]
    assumptions: list[str]


class ErrorSummaryOut(BaseModel):
    model_config = _CLOSED

    rows: int
    mean_abs_error: float
    max_abs_error: float
    coverage: float | None = Field(
        default=None, description="training rows: share of published figures inside the "
        "predicted interval (absent for RL rows)"
    )


class ValidateOut(Versioned):
    """`rlmcost validate`: predicted vs published training throughputs (``rows``) and RL step
    times (``rl_rows``), the error per source (and ``all``), and each source's conventions."""

    command: Literal["validate"]
    rows: list[TrainValidationRowOut]
    rl_rows: list[RlValidationRowOut]
    summary: dict[str, ErrorSummaryOut]
    rl_summary: dict[str, ErrorSummaryOut]
    sources: dict[str, dict[str, Any]]


class RlRunPhaseOut(BaseModel):
    model_config = _CLOSED

    published_key: str = Field(description="the source's phase (generation_s, training_s, ...)")
    phase: str | None = Field(description="rlmcost's phase of the same meaning (None: none)")
    published_s: float
    predicted_s: float | None


class RlRunOut(BaseModel):
    """One published RL run (rl_runs.json) as its framework's users would write it: the
    command, the choices beyond the source, the Run (``rlmcost run`` re-evaluates it) and the
    prediction; ``status`` is ``ok`` or why the run has no prediction."""

    model_config = _OPEN

    id: str
    framework: str
    source: str
    setup: str
    cite: str
    metric: Literal["step_time_s"]
    published_metric: str = Field(description="the source's own metric (step_time_s, e2e_hours)")
    published_figure: float = Field(description="the figure in the source's own metric")
    conversion: str | None
    published: float = Field(description="published seconds per step")
    predicted: float | None
    error: float | None = Field(description="predicted / published - 1")
    time_interval_s: list[float] | None = Field(description="(low, high) of the prediction")
    inside_interval: bool | None
    time_lower_bound_s: float | None
    fits: bool | None
    shortfall_bytes: int
    problems: list[str]
    status: str
    excluded: str | None = Field(
        description="why the run is left out of the summary's statistics (None: counted)")
    phases: list[RlRunPhaseOut]
    predicted_phases_s: dict[str, float]
    mapping: str
    command: str
    choices: list[str]
    notes: list[str]
    ignored_keys: list[str]
    assumptions: list[str]
    run: Run | None


class RlRunsSummaryOut(BaseModel):
    model_config = _CLOSED

    runs: int
    predicted: int
    median_abs_error: float | None
    max_abs_error: float | None
    coverage: float | None = Field(description="share of predicted runs inside the interval")
    not_fitting: int
    excluded: int = Field(description="runs printed but left out of these statistics")


class ValidateRlOut(Versioned):
    """`rlmcost validate --rl`: the published RL runs, each predicted (``rl_runs``), and the
    error, coverage and fit per framework (and ``all``)."""

    command: Literal["validate"]
    rl_runs: list[RlRunOut]
    rl_runs_summary: dict[str, RlRunsSummaryOut]
    sources: dict[str, dict[str, Any]]


# -- rlmcost validate --engine ------------------------------------------------------------------


class EngineValidationRowOut(ValidationRowOut):
    """One published inference figure (engine_runs.json) and the engine model's prediction,
    in the row's ``unit``: tokens/s (``throughput``) or milliseconds (``itl``, ``latency``)."""

    metric: Literal["throughput", "itl", "latency"]
    unit: Literal["tokens/s", "tokens/s/GPU", "ms"]
    speed_error: float = Field(description="predicted speed / published speed - 1")
    predicted_decode_step_s: float = Field(description="mean decode step at the row's batch")
    predicted_prefill_s: float = Field(description="prefill of the whole batch's prompts")
    predicted_step_parts_s: dict[str, float]
    model: str
    hardware: str
    tp: int
    dtype: str
    kv_dtype: str
    batch: int
    input_tokens: int
    output_tokens: int
    assumptions: list[str]
    excluded: str | None = Field(description="why the row is left out of the summary, if it is")


class EngineSummaryOut(BaseModel):
    model_config = _CLOSED

    rows: int
    median_abs_error: float
    max_abs_error: float
    median_speed_error: float = Field(description="negative: the model is slower than published")


class ValidateEngineOut(Versioned):
    """`rlmcost validate --engine`: published inference measurements (vLLM, TensorRT-LLM, NIM)
    each predicted by the engine model (``engine_rows``), the error per source (and ``all``)."""

    command: Literal["validate"]
    engine_rows: list[EngineValidationRowOut]
    engine_summary: dict[str, EngineSummaryOut]
    sources: dict[str, dict[str, Any]]


class MemoryValidationRowOut(BaseModel):
    """One published GPU-memory figure (memory_runs.json) and rlmcost's prediction in the
    quantity measured: ``allocated`` (torch.cuda.max_memory_allocated), ``reserved`` (the caching
    allocator's reserved peak: allocated + ``allocator_slack``) or ``device`` (nvidia-smi)."""

    model_config = _OPEN

    id: str
    source: str
    kind: Literal["train", "rl", "engine"]
    measured: Literal["allocated", "reserved", "allocated_or_reserved", "device", "kv_gib",
                      "kv_tokens"]
    published_gib: float | None = Field(description="null for a kv_tokens row")
    published_bytes: int | None
    predicted_bytes: int | None
    published_tokens: int | None = Field(description="an engine's logged KV pool in tokens")
    predicted_tokens: int | None
    interval_tokens: list[int] | None
    engine_profile: str | None = Field(description="how the engine version sizes its pool")
    allocated_bytes: int | None
    allocator_slack: float | None
    error: float | None = Field(description="predicted / published - 1")
    interval_bytes: list[int] | None
    inside_interval: bool | None
    status: str = Field(description="ok, or 'not predicted: <why>'")
    command: str | None
    rl_run: str | None
    cite: str
    assumptions: list[str]


class MemorySummaryOut(BaseModel):
    model_config = _CLOSED

    rows: int
    predicted: int
    mean_abs_error: float | None
    max_abs_error: float | None
    mean_error: float | None
    coverage: float | None = Field(description="share of predicted rows inside the interval")


class ValidateMemoryOut(Versioned):
    """`rlmcost validate --memory`: published GPU-memory measurements (torchtitan, verl) each
    predicted by its query (``memory_rows``), the error per source (and ``all``)."""

    command: Literal["validate"]
    memory_rows: list[MemoryValidationRowOut]
    memory_summary: dict[str, MemorySummaryOut]
    sources: dict[str, dict[str, Any]]


VALIDATE_OUTPUTS = (ValidateOut, ValidateRlOut, ValidateEngineOut, ValidateMemoryOut)
"""The output models of `rlmcost validate`, one per mode (:data:`rlmcost.run.schema_tools.
OUTPUTS`)."""
