"""Output models of the commands that are not queries of a Run: `rlmcost train`, `plan`,
`blocks`, `calibrate` and `validate` (their JSON Schemas: `rlmcost schema COMMAND`; the
models of `validate` are in :mod:`rlmcost.run.schema_validate`).

Each output starts with ``schema_version`` and ``command`` (:class:`~rlmcost.run.schema.
Versioned`); the top level is closed, nested objects list the keys every output has (and may
carry more). Units are in the key names (``_bytes``, ``_flops``, ``_s``, ``_per_s``); bytes,
FLOPs, parameter and element counts and depths are exact integers, times and ratios floats.
Byte counts assume the dtypes each output states (``dtypes``, ``inputs.dtype``, ``units``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from rlmcost.run.schema import Versioned
from rlmcost.run.schema_validate import VALIDATE_OUTPUTS
from rlmcost.run.spec import Run

_OPEN = ConfigDict(extra="allow")
_CLOSED = ConfigDict(extra="forbid")

# -- rlmcost train ---------------------------------------------------------------------------


class TrainLayoutOut(BaseModel):
    """The parallel layout (``rlmcost.parallel.layout.Layout``); 1 = no parallelism."""

    model_config = _CLOSED

    dp: int
    tp: int
    pp: int
    cp: int
    ep: int
    sp: bool
    zero: str = Field(description="ZeRO stage: 0, 1, 2 or 3 (3 = FSDP)")
    zero_shard: int = Field(description="ranks the ZeRO states are sharded over (P_z; dp*cp "
                            "unless hybrid sharding, then replicated dp*cp / P_z times)")
    ckpt: str = Field(description="activation checkpointing: none, selective or full")
    micro_batch: int = Field(description="sequences per micro-batch")
    schedule: str = Field(description="pipeline schedule")
    virtual_stages: int = Field(description="model chunks per rank (interleaved schedule)")


class TrafficOut(BaseModel):
    """One collective of one parallel strategy, per rank per iteration (ring algorithms)."""

    model_config = _OPEN

    strategy: str
    collective: str
    ranks: int
    calls: int
    payload_bytes: int
    bytes_per_rank: int = Field(description="bytes each rank sends over the iteration")
    link: Literal["intra-node", "inter-node"]
    bandwidth_bytes_per_s: float | None = Field(description="per direction; None: untimed")
    time_s: float | None = Field(description="a lower bound: bytes / bandwidth_bytes_per_s, no "
                                 "latency or bus efficiency (step_time's exposed_communication_s "
                                 "times collectives as NCCL runs them)")  # fmt: skip


class StepTimeOut(BaseModel):
    """The predicted step time and its breakdown (``rlmcost.perf.train_step.StepTime``)."""

    model_config = _OPEN

    step_time_s: float
    step_time_interval_s: list[float] = Field(
        description="(low, high) seconds: the teacher-forced spread of kernel efficiency "
        "(rlmcost.perf.interval.TEACHER_FORCED), low never below the roofline bound"
    )
    tflops_per_gpu: float = Field(description="model FLOP/s per GPU / 1e12")
    mfu: float = Field(description="model FLOPs / (step x GPUs x dense peak)")
    compute_s: dict[str, float]
    exposed_communication_s: dict[str, float]
    bubble_s: float
    optimizer_s: float
    offload_s: float
    model_flops: int = Field(description="global, forward + backward, no recomputation")
    hardware_flops: int = Field(description="global, with recomputation")
    roofline_bound_s: float
    slowest_stage: int
    efficiency_source: str


class TrainFitOut(BaseModel):
    """A layout change that makes the training fit (``rlmcost.reports.train_advice``), checked
    by rebuilding the report; schema 2.12."""

    model_config = _OPEN
    flags: str = Field(description="the `rlmcost train` flags to add or change")
    peak_bytes_per_device: int = Field(description="the most loaded rank's memory with them")


class TrainOut(Versioned):
    """`rlmcost train`: one training iteration of a model under a parallel layout. A training
    layout is not an RL query, so the output holds no Run; its inputs are ``model``,
    ``hardware``, ``gpus``, ``layout``, ``batch_sequences`` and ``seq_tokens``."""

    command: Literal["train"]
    model: str
    hardware: str
    gpus: int
    nodes: int
    layout: TrainLayoutOut
    batch_sequences: int
    seq_tokens: int
    micro_batches: int = Field(description="micro-batches per data shard per iteration")
    memory_per_rank_bytes: dict[str, int] = Field(
        description="the most loaded rank's memory by component, and 'total'"
    )
    memory_peak_stage: int = Field(description="the pipeline stage of that rank")
    hbm_bytes: int
    fits: bool
    work_per_rank_flops: int
    work_global_flops: int
    compute_time_at_peak_s: float
    bubble_fraction: float
    communication: list[TrafficOut]
    communication_bytes_per_rank: int
    communication_time_s: float = Field(description="the communication rows' time_s summed: "
                                        "a link-bandwidth lower bound")  # fmt: skip
    dtypes: dict[str, str] = Field(description="the dtype each byte count assumes")
    step_time_s: float
    tflops_per_gpu: float
    mfu: float
    step_time: StepTimeOut
    notes: list[str]
    fit_advice: list[TrainFitOut] = Field(
        description="where it does not fit: up to 4 changes that make it fit, as the text's "
        "'fits with' lines (empty where it fits or nothing tried does)"
    )


# -- rlmcost plan ----------------------------------------------------------------------------


class PlanGroupOut(BaseModel):
    """What one device group of an RL plan row runs (``plan.rl_groups.group_layouts``): the
    layouts its evaluation priced its jobs with, where a group's ``--groups`` brackets (or a
    hybrid placement's rule) replace the row's run-wide values on it; schema 2.11."""

    model_config = _OPEN

    name: str = Field(description="the group's members, 'actor+reference' ('all': co-located)")
    gpus: int
    hardware: str = Field(description="the group's accelerator")
    train: dict[str, Any] | None = Field(
        description="its train jobs' layout: dp, tp, pp, cp, ep, sp, zero, ckpt, micro_batch "
        "and offload (what its trainer keeps in host memory, comma-separated, '' none); None "
        "where it trains nothing")
    forward: dict[str, Any] | None = Field(
        description="its forward jobs' layout (log-probs, values, rewards): dp, tp, pp, cp, "
        "ep, sp, zero, micro_batch; None where it runs none")
    engine: dict[str, Any] | None = Field(
        description="its generation: the engine kind and its dp (replicas), tp, pp, ep, and "
        "gpu_memory_utilization and kv_buffer_gib as the evaluation sized it (where unset, the "
        "default for where it runs: 0.5 beside a trainer, 0.9 alone (SGLang's own rule alone), "
        "a Megatron pool 10 GiB; "
        "None where the engine reserves none; schema 2.14); None where it generates nothing")


class PlanRowOut(BaseModel):
    """One evaluated deployment (RL: placement, groups, trainer and engine layout; train: the
    parallel layout) with its figures and the command that evaluates it alone."""

    model_config = _OPEN

    gpus: int
    fits: bool
    memory_bytes_per_device: int
    time_s: float = Field(description="predicted iteration (train: step) time")
    time_lower_bound_s: float
    tokens_per_s_per_gpu: float
    mfu: float
    gpu_hours: float = Field(description="time x GPUs / 3600, per iteration")
    hardware: str | None = Field(default=None, description="RL: GPUs per accelerator, "
                                 "'16 x h20 + 8 x h100-sxm'")
    cost_per_iteration_usd: float | None = Field(
        default=None, description="RL: USD per iteration (time x GPUs x USD per GPU-hour / "
        "3600, summed over the accelerators); None without a price")
    cost_per_million_tokens_usd: float | None = Field(
        default=None, description="RL: USD per 10^6 trained prompt + response tokens")
    micro_batch: int | None = Field(
        default=None, description="RL: None where a per-GPU token budget forms every "
        "micro-batch (rlmcost.plan.unread; schema 2.14)")
    gpu_memory_utilization: float | None = Field(
        default=None, description="RL: the Run's, else the default its engines ran with (0.5 "
        "beside a trainer, 0.9 alone, SGLang's own rule alone; schema 2.14); kv_buffer_gib "
        "likewise (10 GiB)")
    group_layouts: list[PlanGroupOut] | None = Field(
        default=None, description="RL: what each device group runs, its own bracket values "
        "included (the row's tp ... offload and rollout_tp are the run-wide ones); schema 2.11")
    command: str = Field(description="the rlmcost command line that reproduces the row")
    run: Run | None = Field(default=None, description="the row's Run, where it has one")


class NeverFitOut(BaseModel):
    """A family of candidates none of which fits, and what binds its leanest member."""

    model_config = _OPEN

    family: str
    binding_term: str
    binding_term_bytes: float = Field(
        description="the binding term's bytes (a lower bound for pruned families); 0 where "
        "invalid"
    )
    hbm_bytes: int
    invalid: bool = Field(default=False, description="every member is invalid (a layout the "
                          "framework or the evaluation rejects, an engine setting that leaves "
                          "no room for one sequence): binding_term says why; no memory term")


class PlanCountsOut(BaseModel):
    model_config = _CLOSED

    enumerated: int
    valid: int
    pruned: int
    bounded: int = Field(default=0, description="skipped by branch and bound (RL plans)")
    evaluated: int
    fitting: int


class PlanOut(Versioned):
    """`rlmcost plan TARGET`: the top rows by the objective, the Pareto front (GPUs vs
    predicted time), the candidate counts and the families that never fit."""

    command: Literal["plan"]
    run: Run | None = Field(default=None, description="the plan's fixed part, where it has one")
    query: dict[str, Any] = Field(description="the search's inputs (kind: rl or train)")
    objective: str
    rows: list[PlanRowOut]
    pareto: list[PlanRowOut]
    counts: PlanCountsOut
    seconds: float = Field(description="wall time of the search")
    candidates_per_s: float
    never_fit: list[NeverFitOut]
    best_per_topology: list[PlanRowOut] = Field(
        default_factory=list,
        description="RL plans: the best fitting row of each topology (GPUs, family, groups) the "
        "search evaluated, best first; train plans: empty")
    runner: str
    interrupted: bool = Field(
        description="a Ctrl-C ended the search early: the rows are the best found so far (the "
        "command exits with 130 after printing them); schema 2.2")
    notes: list[str]


class PlanLongestOut(Versioned):
    """`rlmcost plan ALGORITHM --max-response-len`: the longest response that fits on the
    largest GPU count of the budget, and the deployment that fits it."""

    command: Literal["plan"]
    gpus: int
    max_response_len: int = Field(description="tokens; 0 when not even the first step fits")
    deployment: PlanRowOut | None
    not_fitting: int | None = Field(
        description="tokens: the shortest response length tried that no deployment fits "
        "(the answer lies below it); null when every length tried fits; schema 2.3")
    interrupted: bool = Field(
        description="a Ctrl-C ended the search early: max_response_len fits, not_fitting "
        "does not, the lengths between were not settled (the command exits with 130); "
        "schema 2.3")


# -- rlmcost blocks --------------------------------------------------------------------------


class BlocksInputsOut(BaseModel):
    model_config = _CLOSED

    batch: int = Field(description="B, sequences")
    seq: int = Field(description="m, tokens per sequence")
    context: int = Field(description="c, KV-cache context of the decode step")
    prompt_len: int = Field(description="S, tokens")
    response_len: int = Field(description="T, tokens")
    dtype: str = Field(description="weights, activations and KV cache (logits fp32)")
    attention_counting: Literal["full", "causal"]


class BlocksOut(Versioned):
    """`rlmcost blocks --model M`: every Table III quantity, exact. Counts of parameters
    (``params*``) and tensor entries (``*_elements``), FLOPs (``*_flops``), bytes in the
    dtypes of ``units`` (``*_bytes``) and depths in reduction levels (``depth_*``)."""

    command: Literal["blocks"]
    model: str
    inputs: BlocksInputsOut
    params: int
    params_active: int
    weight_bytes: int
    forward_flops: int
    backward_flops: int
    train_flops: int
    prefill_flops: int
    decode_step_flops: int
    rollout_flops: int
    kv_cache_elements: int
    kv_cache_bytes: int
    activation_elements_paper: int
    activation_bytes: int
    inference_buffer_elements: int
    inference_buffer_bytes: int
    logits_elements: int
    logits_bytes: int
    adam_state_elements: int
    adam_state_bytes: int
    depth_forward: int
    depth_backward: int
    depth_generation: int
    units: dict[str, str] = Field(description="each quantity's unit, bytes with their dtypes")
    convention: str
    notes: list[str]


class ExpressionOut(BaseModel):
    model_config = _CLOSED

    label: str
    unit: str
    explicit: str = Field(description="sympy text, or LaTeX with --latex")
    big_o: str


_BLOCKS_META = ("schema_version", "command", "model", "inputs", "units", "convention", "notes")
_EXPRESSIONS: dict[str, Any] = {
    k: (ExpressionOut, ...) for k in BlocksOut.model_fields if k not in _BLOCKS_META
}
BlocksSymbolicOut = create_model(
    "BlocksSymbolicOut",
    __base__=Versioned,
    __doc__="`rlmcost blocks --symbolic`: each quantity of :class:`BlocksOut` on the paper's "
    "canonical model, explicit and Big-O.",
    command=(Literal["blocks"], ...),
    symbolic=(Literal[True], ...),
    **_EXPRESSIONS,
)


# -- rlmcost calibrate -----------------------------------------------------------------------


class KernelOut(BaseModel):
    """One measured kernel: analytic FLOPs (rlmcost.blocks) against FlopCounterMode's."""

    model_config = _OPEN

    name: str
    kernel_class: str
    shape: dict[str, int]
    analytic_flops: int
    counted_flops: int
    counted_on: str
    analytic_bytes: int
    seconds: float = Field(description="median of the timed calls")
    min_seconds: float
    reps: int
    achieved_flops_per_s: float
    achieved_bytes_per_s: float
    compute_efficiency: float | None
    bandwidth_efficiency: float | None
    efficiency: float | None
    bound: str
    note: str
    flops_match: bool


class CalibrateOut(Versioned):
    """`rlmcost calibrate`: the micro-kernels run on this device (``dtype``), their FLOPs
    checked, their FLOP/s and bytes/s measured."""

    command: Literal["calibrate"]
    device: str
    device_name: str
    torch: str = Field(description="torch version")
    dtype: str
    threads: int
    quick: bool
    peak_flops_per_s: float
    peak_bytes_per_s: float
    peak_source: str
    link_bytes_per_s: float | None
    notes: list[str]
    kernels: list[KernelOut]


OUTPUTS: dict[str, tuple[type[BaseModel], ...]] = {
    "train": (TrainOut,),
    "plan": (PlanOut, PlanLongestOut),
    "blocks": (BlocksOut, BlocksSymbolicOut),
    "calibrate": (CalibrateOut,),
    "validate": VALIDATE_OUTPUTS,
}
"""Each command's output models (one per shape of its ``--json``)."""
