"""Output models of the listings (`rlmcost models`, `hardware`, `algorithms`, `frameworks`),
of an algorithm command's ``--symbolic`` rows, and of `rlmcost import FRAMEWORK`.

A listing's rows sit under a key named after the command (``models``, ``hardware``,
``algorithms``, ``frameworks``) after ``schema_version`` and ``command``. Top levels are
closed; rows list the keys every row has. Units are in the key names; bytes, FLOP/s and
parameter counts are exact integers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from rlmcost.run.schema import EvaluationOut, Versioned
from rlmcost.run.spec import Run
from rlmcost.specs import HardwareSpec, ModelSpec

_OPEN = ConfigDict(extra="allow")
_CLOSED = ConfigDict(extra="forbid")

# -- rlmcost models, rlmcost hardware --------------------------------------------------------


def _spec_row(spec: type[BaseModel], doc: str, **extra: Any) -> type[BaseModel]:
    """A closed row model: every field of ``spec`` (as ``model_dump(mode="json")`` writes
    them) and the ``extra`` fields (name -> (type, Field))."""
    fields: dict[str, Any] = {n: (f.annotation, f) for n, f in spec.model_fields.items()}
    return create_model(f"{spec.__name__}Row", __config__=_CLOSED, __doc__=doc, **fields, **extra)


ModelRowOut = _spec_row(
    ModelSpec,
    "A built-in model: its spec (``rlmcost.specs.ModelSpec``, sizes in elements) and its "
    "parameter counts (sum of ``p.numel()``, tied weights once), exact and formatted.",
    params=(int, ...),
    params_active=(int, Field(description="parameters one token multiplies (MoE: top-k)")),
    params_h=(str, ...),
    params_active_h=(str, ...),
)


class ModelsOut(Versioned):
    """`rlmcost models [--family F]`."""

    command: Literal["models"]
    models: list[ModelRowOut]  # type: ignore[valid-type]  # a model built by create_model


HardwareRowOut = _spec_row(
    HardwareSpec,
    "A built-in accelerator: its spec (``rlmcost.specs.HardwareSpec``: dense peaks, decimal "
    "capacities, links per direction, each with its source) and formatted figures (``*_h``).",
    hbm_capacity_bytes=(int, Field(description="what fit checks fill: the usable bytes")),
    **dict.fromkeys(("bf16_h", "fp8_h", "hbm_h", "hbm_usable_h", "host_link_h", "hbm_bw_h",
                     "intra_h", "inter_h", "host_memory_h"), (str, ...)),  # fmt: skip
)


class HardwareOut(Versioned):
    """`rlmcost hardware`."""

    command: Literal["hardware"]
    hardware: list[HardwareRowOut]  # type: ignore[valid-type]  # a model built by create_model


# -- rlmcost algorithms, rlmcost ALGORITHM --symbolic ----------------------------------------


class InvocationRowOut(BaseModel):
    model_config = _CLOSED

    stage: Literal["generation", "assessment", "training"]
    what: str


class AlgorithmRowOut(BaseModel):
    """An algorithm of the catalog: base, what it changes, paper, knobs and invocations."""

    model_config = _OPEN

    name: str
    base: str | None
    summary: str
    citation: str
    offline: bool
    default_group: int | None = Field(description="default K, where the algorithm samples K")
    knobs: dict[str, int] = Field(description="flag -> default")
    models: list[str] = Field(description="the roles it runs")
    invocations: list[InvocationRowOut]
    added: list[str]
    removed: list[str]
    doc: str


class AlgorithmsOut(Versioned):
    """`rlmcost algorithms`."""

    command: Literal["algorithms"]
    algorithms: list[AlgorithmRowOut]


class SymbolicStageOut(BaseModel):
    """A Table IV row: one stage's work, depth and memory (in elements) on the canonical
    model; ``explicit`` and ``big_o`` when the stage is in the loop."""

    model_config = _OPEN

    algorithm: str
    stage: Literal["generation", "assessment", "training"]
    work: str
    depth: str
    depth_colocated: str
    memory: str
    explicit: dict[str, str] | None = None
    big_o: dict[str, str] | None = None


class SymbolicStagesOut(Versioned):
    """`rlmcost ALGORITHM --symbolic`: the algorithm's three Table IV rows."""

    symbolic: Literal[True]
    stages: list[SymbolicStageOut]


# -- rlmcost frameworks, rlmcost import ------------------------------------------------------


class PresetDefaultOut(BaseModel):
    model_config = _CLOSED

    field: str = Field(description="the Deployment or option field it sets")
    value: Any
    flag: str = Field(description="the flag that sets the same by hand")
    source: str = Field(description="where the framework sets it")
    layers: int | None = Field(default=None, description="the decoder layers of the only "
        "actors it applies to (a pipeline split for the example's model; None: any; "
        "schema 2.9)")  # fmt: skip


class PresetPlacementOut(BaseModel):
    model_config = _CLOSED

    groups: str = Field(description="the example's device groups, in --groups syntax")
    gpus: int = Field(description="the example's GPUs in all")
    rule: str = Field(description="how the groups scale to a query's --gpus")
    source: str = Field(description="the example that runs them")


class PresetTierOut(BaseModel):
    model_config = _CLOSED

    min_params: int = Field(description="the actor's parameters from which the tier applies")
    max_params: int | None = Field(default=None, description="the actor's parameters below "
                                   "which it applies (None: no upper end; schema 2.20)")
    models: list[str] = Field(default_factory=list, description="the model_types an example "
        "for the actor's own model matches, taken before the size tiers ([]: a size tier; "
        "schema 2.20)")  # fmt: skip
    example: str = Field(description="the framework's example for larger models it follows")
    actors: Literal["any", "dense", "moe"] = Field(default="any", description="the actors "
        "it takes: any, dense ones alone or mixtures of experts alone (schema 2.9)")
    defaults: list[PresetDefaultOut] = Field(description="what it changes or adds (schema 2.7)")
    placement: PresetPlacementOut | None = Field(description="the example's device groups, "
        "which a query naming no --groups nor --placement takes (None: co-located; schema "
        "2.8)")  # fmt: skip


class FrameworkOut(BaseModel):
    model_config = _CLOSED

    framework: str
    summary: str
    defaults: list[PresetDefaultOut]
    conventions: list[str]
    sized: list[PresetTierOut] = Field(description="the defaults of its examples for larger "
                                       "actors, by ascending min_params (schema 2.7)")


class FrameworksOut(Versioned):
    """`rlmcost frameworks`: each preset of ``--framework``."""

    command: Literal["frameworks"]
    frameworks: list[FrameworkOut]


class ConversionOut(BaseModel):
    model_config = _CLOSED

    given: str = Field(description="the framework's keys and values")
    flag: str
    value: Any
    how: str = Field(description="units and the conversion in words")


class ImportedQueryOut(BaseModel):
    """The equivalent algorithm command of a framework's config."""

    model_config = _CLOSED

    framework: str
    source: str
    algorithm: str
    command: str = Field(description="the rlmcost command line")
    argv: list[str]
    conversions: list[ConversionOut]
    notes: list[str]
    ignored_keys: list[str]


class ImportOut(Versioned):
    """`rlmcost import FRAMEWORK`: the equivalent query, the deployment it resolves to and
    its estimate (the algorithm command's output); ``run`` is the estimate's Run."""

    command: str = Field(pattern=r"^import [a-z0-9-]+$")
    run: Run
    query: ImportedQueryOut
    deployment: dict[str, Any]
    estimate: EvaluationOut


OUTPUTS: dict[str, tuple[type[BaseModel], ...]] = {
    "models": (ModelsOut,),
    "hardware": (HardwareOut,),
    "algorithms": (AlgorithmsOut,),
    "frameworks": (FrameworksOut,),
    "import": (ImportOut,),
}
"""Each command's output models (one per shape of its ``--json``)."""
