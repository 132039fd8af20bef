"""One RL iteration of an algorithm, per stage, as the co-located baseline deployment runs it
(`rlmcost ppo|grpo|dpo|...`): work, depth, memory per device (does it fit?), host memory,
and time.

A view: :func:`estimate` evaluates the deployment with
:func:`~rlmcost.deployment.evaluate.evaluate_deployment` (placement ``baseline``: every model
resident on the same ``gpus`` devices, invocations one after another) and groups the jobs by
stage. So `rlmcost ppo` and `rlmcost ppo --placement baseline` are one computation:

* memory per device of an invocation: its own bytes in its layout plus every other model's
  resident states (:mod:`rlmcost.placement.group_cost`), with the deployment's terms (engine
  reservation, logits peak, LoRA, offload, overhead; :mod:`rlmcost.deployment.memory`) unless
  the deployment is ideal. A stage needs its largest invocation; it fits when that is at most
  the device's capacity (what it gives programs; the datasheet's for the ideal iteration);
* depth of a stage: the sum of its invocations' depths (Table IV ‡, co-located); the
  disaggregated max beside it;
* time of a stage: the sum of its invocations' roofline bounds (:mod:`rlmcost.timing`: the
  decode timeline for generation, pipeline bubbles, ZeRO-3 gathers for forward passes, offload
  transfers) and of the transfers in front of them (resharding to the engine's layout, model
  switches).

Work and depth are exact ints from :mod:`rlmcost.algorithms.cost`; teacher-forced attention is
counted full unless ``counting="causal"``. Bytes use the workload's dtypes (default bf16
weights, gradients, activations and KV cache; fp32 Adam states and logits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.counts import count
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation
from rlmcost.algorithms.options import DEFAULT_HARDWARE, KNOBS, Options
from rlmcost.choices import AttnCounting
from rlmcost.deployment.evaluate import evaluate_deployment
from rlmcost.deployment.resolve import (  # noqa: F401 - re-exported for callers
    models_given,
    resolve_layout,
    resolve_models,
    resolve_workload,
    uses_model,
)
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.parallel.layout import Layout
from rlmcost.placement.groups import DeviceGroup
from rlmcost.placement.inputs import IDEAL
from rlmcost.placement.iteration import MFU_CONVENTION, PlacementEstimate
from rlmcost.placement.lengths import LengthDist
from rlmcost.specs import HardwareSpec, ModelSpec, Workload
from rlmcost.timing import Efficiency, PhaseTime

PLACEMENT = (
    "co-located: every model resident on the same GPUs with the same layout for the whole "
    "iteration; invocations run one after another"
)
CONVENTION = (
    "FLOP = one add or one multiply (matrix products only); depth = GEMM reduction levels; "
    "time_lower_bound_s = roofline lower bound (datasheet dense peak, HBM bandwidth; transfers "
    "at link bandwidth; no intra-model communication); time_s = prediction (kernel efficiency "
    "by shape, exposed communication, pipeline bubbles, the engine's decode steps and prefill "
    "chunks; rlmcost.perf)"
)
EMPTY = MemoryBreakdown(0, 0, 0, 0, 0, 0, 0)


@dataclass(frozen=True)
class InvocationEstimate:
    """One invocation: exact work and depth, memory per device (co-residents included), time,
    and the host bytes per device its group holds meanwhile."""

    invocation: Invocation
    model: str
    sequences: int
    work_flops: int
    depth: int
    memory: MemoryBreakdown
    time: PhaseTime
    host_bytes: int = 0
    predicted_s: float = 0.0  # predicted seconds (>= the bound)
    phase: str = ""  # the phase name frameworks print (generation, update actor, ...)

    def to_json(self) -> dict[str, Any]:
        inv = self.invocation
        return {
            "role": str(inv.role),
            "kind": str(inv.kind),
            "model": self.model,
            "what": inv.describe(),
            "phase": self.phase,
            "sequences": self.sequences,
            "work_flops": self.work_flops,
            "depth": self.depth,
            "memory_bytes_per_device": self.memory.total,
            "host_memory_bytes_per_device": self.host_bytes,
            **self.time.to_json(),
            "time_s": self.predicted_s,
        }


@dataclass(frozen=True)
class StageEstimate:
    """One stage: sums of work and time, co-located depth, the peak invocation's memory."""

    stage: Stage
    invocations: tuple[InvocationEstimate, ...]
    hbm_bytes: int  # the device capacity the fit is checked against
    share: float = 0.0
    transfer_s: float = 0.0  # resharding and model switches in front of its invocations
    transfer_predicted_s: float = 0.0  # the same, predicted
    # with several device groups the stage's invocations overlap: its span on the critical
    # path (bound, predicted) and depth come from the schedule instead of the sums
    span: tuple[float, float, int] | None = None

    @property
    def work_flops(self) -> int:
        return sum(i.work_flops for i in self.invocations)

    @property
    def depth(self) -> int:
        """Co-located: the invocations run one after another (Table IV ‡); on several groups,
        the schedule's critical path."""
        if self.span is not None:
            return self.span[2]
        return sum(i.depth for i in self.invocations)

    @property
    def depth_disaggregated(self) -> int:
        """Each invocation on its own devices at the same time: the longest chain."""
        return max(i.depth for i in self.invocations)

    @property
    def peak(self) -> InvocationEstimate:
        """The invocation that needs the most memory per device."""
        return max(self.invocations, key=lambda i: i.memory.total)

    @property
    def memory_bytes_per_device(self) -> int:
        """What the device shows at the stage's peak (nvidia-smi's view: engine reservation
        and per-process overhead included)."""
        return self.peak.memory.total

    @property
    def allocated_bytes_per_device(self) -> int:
        """The tensors alone at the peak (torch.cuda.max_memory_allocated's view)."""
        return self.peak.memory.total - self.peak.memory.overhead

    @property
    def host_bytes_per_device(self) -> int:
        return max(i.host_bytes for i in self.invocations)

    @property
    def fits(self) -> bool:
        return self.memory_bytes_per_device <= self.hbm_bytes

    @property
    def shortfall_bytes(self) -> int:
        """Bytes per device beyond the capacity (0 when it fits)."""
        return max(0, self.memory_bytes_per_device - self.hbm_bytes)

    @property
    def binding_term(self) -> str:
        """The largest component of the peak invocation's memory."""
        parts = self.peak.memory.to_json()
        parts.pop("total")
        return max(parts, key=lambda k: parts[k])

    @property
    def time(self) -> PhaseTime:
        total = PhaseTime(0.0, 0.0, self.transfer_s, 0.0)
        for inv in self.invocations:
            total = total + inv.time
        if self.span is not None:  # concurrent groups: the span on the critical path
            bound = self.span[0]
            return PhaseTime(total.compute_s, total.memory_s, bound,
                             min(bound, total.compute_bound_s))  # fmt: skip
        return total

    @property
    def time_s(self) -> float:
        """Predicted seconds: the invocations one after another, with the transfers (on
        several groups, the schedule's span)."""
        if self.span is not None:
            return self.span[1]
        return self.transfer_predicted_s + sum(i.predicted_s for i in self.invocations)

    def to_json(self) -> dict[str, Any]:
        breakdown = self.peak.memory.to_json()
        breakdown.pop("total")
        return {
            "work_flops": self.work_flops,
            "depth": self.depth,
            "depth_disaggregated": self.depth_disaggregated,
            "memory_bytes_per_device": self.memory_bytes_per_device,
            "device_memory_bytes": self.memory_bytes_per_device,
            "allocated_bytes_per_device": self.allocated_bytes_per_device,
            "host_memory_bytes_per_device": self.host_bytes_per_device,
            "memory_breakdown_bytes": breakdown,
            "binding_term": self.binding_term,
            "peak_invocation": self.peak.invocation.describe(),
            "fits": self.fits,
            "shortfall_bytes": self.shortfall_bytes,
            "headroom_bytes": max(0, self.hbm_bytes - self.memory_bytes_per_device),
            **self.time.to_json(),
            "time_s": self.time_s,
            "transfer_time_s": self.transfer_s,
            "transfer_predicted_s": self.transfer_predicted_s,
            "share": self.share,
            "invocations": [i.to_json() for i in self.invocations],
        }


@dataclass(frozen=True)
class Estimate:
    """One iteration of ``algorithm``: per-stage estimates and the totals (``to_json``)."""

    algorithm: Algorithm
    models: dict[Role, str]
    hardware: HardwareSpec
    layout: Layout
    workload: Workload
    knobs: dict[str, int | Fraction]
    options: Options
    stages: dict[Stage, StageEstimate]
    calibration: str
    counting: AttnCounting = AttnCounting.FULL
    notes: tuple[str, ...] = field(default=())
    evaluation: PlacementEstimate | None = None  # the deployment's evaluation behind the view

    @property
    def gpus(self) -> int:
        if self.evaluation is not None:
            return self.evaluation.gpus
        return self.layout.n_gpus

    @property
    def model(self) -> str:
        return self.models[Role.ACTOR]

    @property
    def deployment(self) -> Deployment:
        return self.evaluation.deployment if self.evaluation is not None else IDEAL

    @property
    def capacity_bytes(self) -> int:
        return next(iter(self.stages.values())).hbm_bytes

    @property
    def work_flops(self) -> int:
        return sum(s.work_flops for s in self.stages.values())

    @property
    def grouped(self) -> bool:
        """Evaluated on several device groups (a placement or --groups), not co-located."""
        return self.evaluation is not None and len(self.evaluation.groups) > 1

    @property
    def time_lower_bound_s(self) -> float:
        """The iteration's bound: the stages one after another, or on several groups the
        schedule's steady-state period (overlap, staleness)."""
        if self.evaluation is not None:  # the schedule's period (one group: the sum)
            return self.evaluation.iteration_time_lower_bound_s
        return sum(s.time.bound_s for s in self.stages.values())

    @property
    def time_s(self) -> float:
        """Predicted seconds of the iteration: the stages one after another (on several
        groups, the schedule's period)."""
        if self.evaluation is not None:  # the schedule's period (one group: the sum)
            return self.evaluation.iteration_time_s
        return sum(s.time_s for s in self.stages.values())

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """Prompt + response tokens the actor trains on / (predicted seconds x GPUs)."""
        ev = self.evaluation
        if ev is None or not self.time_s:
            return 0.0
        return ev.tokens_per_iteration / (self.time_s * self.gpus)

    @property
    def mfu(self) -> float:
        """Iteration work / (predicted seconds x GPUs x dense peak of the compute dtype)."""
        if not self.time_s:
            return 0.0
        peak = self.hardware.peak(self.workload.compute_dtype)
        return self.work_flops / (self.time_s * self.gpus * peak)

    @property
    def depth(self) -> int:
        if self.grouped:
            return self.evaluation.iteration_depth  # type: ignore[union-attr]
        return sum(s.depth for s in self.stages.values())

    @property
    def fits(self) -> bool:
        problems = self.evaluation.problems if self.evaluation is not None else ()
        return all(s.fits for s in self.stages.values()) and not problems

    @property
    def shortfall_bytes(self) -> int:
        return max(s.shortfall_bytes for s in self.stages.values())

    @property
    def host_memory_bytes_per_node(self) -> int:
        """Host memory one node holds for offloaded states (the evaluation's figure: its
        groups' devices node by node); without one, the busiest stage's bytes per device
        times the devices of a node."""
        if self.evaluation is not None:
            return self.evaluation.host_memory_bytes_per_node
        per_node = min(self.gpus, self.hardware.gpus_per_node)
        return max(s.host_bytes_per_device for s in self.stages.values()) * per_node

    @property
    def reward(self) -> str:
        """The reward this estimate assumed, in words."""
        return reward_source(self.algorithm, self.models)

    @property
    def dominant_stage(self) -> Stage:
        """The stage with the largest share of the iteration's time bound."""
        return max(self.stages.values(), key=lambda s: s.time.bound_s).stage

    def inputs(self) -> dict[str, Any]:
        """The resolved inputs, defaults included, as plain values."""
        w = self.workload
        knobs = {k: _plain(v) for k, v in self.knobs.items()}
        return {
            "B": w.prompts,
            "K": w.samples_per_prompt if "K" in self.algorithm.names else None,
            "S": w.prompt_len,
            "T": w.response_len,
            **knobs,
            "dtypes": {
                "weights": str(w.weight_dtype),
                "activations": str(w.activation_dtype),
                "kv_cache": str(w.kv_dtype),
                "logits": str(w.logits_dtype),
                "optimizer": "fp32 (mixed-precision Adam: master weights, m, v)",
                "compute": str(w.compute_dtype),
            },
        }

    def to_json(self) -> dict[str, Any]:
        """The stable schema of ``--json`` (keys may be added, never renamed)."""
        lay = self.layout
        ev = self.evaluation
        return {
            "algorithm": self.algorithm.name,
            "model": self.model,
            "hardware": self.hardware.name,
            "gpus": self.gpus,
            "stages": {str(s): e.to_json() for s, e in self.stages.items()},
            "iteration": {
                "work_flops": self.work_flops,
                "time_lower_bound_s": self.time_lower_bound_s,
                "time_s": self.time_s,
                "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
                "mfu": self.mfu,
                "mfu_convention": MFU_CONVENTION,
                "depth": self.depth,
                "dominant_stage": str(self.dominant_stage),
            },
            "phases": [p.to_json() for p in ev.phases] if ev is not None else [],
            "fits": self.fits,
            "shortfall_bytes": self.shortfall_bytes,
            "problems": list(ev.problems) if ev is not None else [],
            "hbm_bytes_per_device": self.hardware.hbm_bytes,
            "capacity_bytes_per_device": self.capacity_bytes,
            "device_memory_bytes": {str(s): e.memory_bytes_per_device
                                    for s, e in self.stages.items()},  # fmt: skip
            "host_memory_bytes_per_node": self.host_memory_bytes_per_node,
            "recommended_gpu_memory_utilization": (
                ev.recommended_gpu_memory_utilization if ev is not None else None
            ),
            "summary": self.algorithm.summary,
            "citation": self.algorithm.citation,
            "offline": self.algorithm.offline,
            "models": {str(r): m for r, m in self.models.items()},
            "reward": self.reward,
            "inputs": self.inputs(),
            "options": {k: _plain(v) for k, v in self.options.given().items()},
            "layout": {
                "dp": lay.dp,
                "tp": lay.tp,
                "pp": lay.pp,
                "cp": lay.cp,
                "ep": lay.ep,
                "zero": str(lay.zero),
                "ckpt": str(lay.ckpt),
                "micro_batch": lay.micro_batch,
            },
            "deployment": self.deployment.to_json(),
            "placement": (
                self.evaluation.placement.name
                if self.grouped and self.evaluation is not None
                else PLACEMENT
            ),
            # several device groups: the groups, transfers and schedule (optional section)
            **(
                {"placement_detail": self.evaluation.to_json()}
                if self.grouped and self.evaluation is not None
                else {}
            ),
            "calibration": self.calibration,
            "attention_counting": str(self.counting),
            "convention": CONVENTION,
            "notes": list(self.notes),
        }


def reward_source(alg: Algorithm, models: Mapping[Role, str]) -> str:
    """What scores the responses: a reward model, a rule-based verifier, or nothing (offline
    preference data)."""
    if Role.REWARD in models:
        return f"reward model {models[Role.REWARD]} (a forward over every response)"
    if any(i.kind is Kind.VERIFY for i in alg.invocations):
        return "rule-based verifier (no model; a CPU check of negligible GPU cost, not costed)"
    return "none in the loop (preference data)"


def _plain(v: object) -> object:
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else float(v)
    return v


# --------------------------------------------------------------------------------------------
# The estimate
# --------------------------------------------------------------------------------------------


def estimate(
    algorithm: str | Algorithm = "ppo",
    model: str | ModelSpec = "llama-3.1-8b",
    *,
    critic: str | ModelSpec | None = None,
    reward: str | ModelSpec | None = None,
    ref: str | ModelSpec | None = None,
    judge: str | ModelSpec | None = None,
    models: Mapping[Role | str, str | ModelSpec] | None = None,
    workload: Workload | None = None,
    batch: int | None = None,
    group: int | None = None,
    prompt_len: int | None = None,
    response_len: int | None = None,
    layout: Layout | None = None,
    hardware: str | HardwareSpec = DEFAULT_HARDWARE,
    gpus: int | None = None,
    options: Options | None = None,
    efficiency: Efficiency | None = None,
    calibration: str | Path | None = None,
    counting: AttnCounting = AttnCounting.FULL,
    deployment: Deployment | None = None,
    placement: str | None = None,
    groups: str | Sequence[DeviceGroup] | None = None,
    staleness: int | None = None,
    length_dist: str | LengthDist | None = None,
) -> Estimate:
    """Work, depth, memory per device, fit and time lower bound of one iteration, per stage.

    ``algorithm``: a name from `rlmcost algorithms` (ppo, grpo, dpo, variants).
    ``model``: the actor (built-in name, alias or config.json path); ``critic``, ``reward``,
    ``ref``, ``judge`` (and ``models`` for any role, e.g. ``{"cost": ...}``) default to the
    actor's model. ``workload`` defaults to B = 64 prompts, K = the algorithm's default group
    (1 for PPO, 8 for GRPO), S = T = 1024 tokens, bf16 / fp32 dtypes; ``batch``, ``group``,
    ``prompt_len``, ``response_len`` override its fields. ``layout`` defaults to one GPU;
    ``gpus`` fills data parallelism when larger than the layout. ``hardware`` defaults to
    h100-sxm. ``options``: epochs, mini-batches, recomputed log-probs, ... (see
    :class:`~rlmcost.algorithms.options.Options`). ``efficiency``: measured efficiencies (an
    :class:`~rlmcost.timing.Efficiency`), or ``calibration``: the path of a profile written
    by `rlmcost calibrate`, checked against ``hardware``; default: the profile shipped for
    ``hardware`` in rlmcost/calibrate/profiles/ if there is one, else the datasheet peaks.
    ``counting``: teacher-forced attention FLOPs ``full`` (every query-key pair, as PyTorch
    counts: the project's convention, the default) or ``causal`` (the unmasked half, what
    causal FlashAttention kernels compute). Full counting includes the masked half that
    causal kernels skip, so at long contexts only ``causal`` makes the time a strict lower
    bound.

    ``placement``, ``groups``, ``staleness``, ``length_dist``: a Table IX configuration or
    device groups (:func:`~rlmcost.deployment.evaluate.evaluate_deployment`); the view is the
    same, with stage times and depths from the schedule and a ``placement_detail`` section.
    ``deployment``: how the run is launched (:class:`~rlmcost.deployment.spec.Deployment`:
    engine, offload, LoRA, overheads); default ``Deployment()`` (an engine beside the trainer
    at verl's defaults, the per-process overhead, the logits peak); ``Deployment(ideal=True)``
    is the paper's idealized iteration. Evaluated by
    :func:`~rlmcost.deployment.evaluate.evaluate_deployment` as the co-located baseline: one
    device group, the same numbers as ``--placement baseline`` on the same layout.

    >>> from rlmcost.parallel.layout import Layout
    >>> e = estimate("ppo", "70b", layout=Layout(tp=8))
    >>> e.gpus, e.fits, e.dominant_stage
    (8, False, <Stage.TRAINING: 'training'>)
    """
    if layout is None and deployment is not None:
        layout = deployment.train.layout()  # the deployment's trainer layout
    lay, notes = resolve_layout(layout, gpus)
    dep = deployment if deployment is not None else Deployment()
    grouped = placement is not None or groups is not None or dep.placement or dep.groups
    result = evaluate_deployment(
        algorithm,  # configured there with ``options``, once
        model,
        deployment=dep,
        placement=placement if grouped else "baseline",
        groups=groups,
        staleness=staleness,
        length_dist=length_dist,
        critic=critic,
        reward=reward,
        ref=ref,
        judge=judge,
        models=models,
        workload=workload,
        batch=batch,
        group=group,
        prompt_len=prompt_len,
        response_len=response_len,
        layout=lay,
        hardware=hardware,
        gpus=(lay.n_gpus if not grouped or (gpus is None and groups is None) else gpus),
        options=options,
        calibration=calibration,
        efficiency=efficiency,
        counting=counting,
    )
    return from_placement(
        result, result.algorithm, lay, options or Options(), counting, tuple(notes)
    )


def from_placement(
    result: PlacementEstimate,
    alg: Algorithm,
    layout: Layout,
    options: Options,
    counting: AttnCounting,
    notes: tuple[str, ...] = (),
) -> Estimate:
    """The per-stage view of an evaluation: the invocations of each stage with their
    group's memory; on one group (the co-located baseline) stage times and depths are sums, on
    several they are the schedule's spans (``StageEstimate.span``)."""
    jobs = {j.task.index: j for g in result.groups for j in g.jobs}
    host = {i: b for g in result.groups for i, b in g.host_bytes_per_device.items()}
    hbm = result.groups[0].hbm_bytes
    before: dict[int, float] = {}
    before_pred: dict[int, float] = {}
    for tr in (t for g in result.groups for t in g.transfers):
        if tr.before is not None:
            before[tr.before] = before.get(tr.before, 0.0) + tr.time_s
            before_pred[tr.before] = before_pred.get(tr.before, 0.0) + tr.predicted
    stages: dict[Stage, StageEstimate] = {}
    for stage in alg.stages:
        invs = []
        transfer_s = transfer_pred = 0.0
        for index, inv in enumerate(alg.invocations):
            if inv.stage is not stage:
                continue
            job = jobs.get(index)
            if job is None:  # a CPU verifier: no FLOPs; the devices hold the resident states
                n = int(count(inv.sequences, result_values(result)))
                held = _resident_states(result)
                invs.append(InvocationEstimate(inv, "-", n, 0, 0, held, PhaseTime(), 0))
                continue
            transfer_s += before.get(index, 0.0)
            transfer_pred += before_pred.get(index, 0.0)
            invs.append(
                InvocationEstimate(
                    inv, job.model, job.sequences, job.work_flops, job.depth, job.memory,
                    job.time, host.get(index, 0), job.predicted_s,
                    job.phase,
                )
            )  # fmt: skip
        span = None
        if len(result.groups) > 1 and stage in result.stages:
            r = result.stages[stage]
            span = (r.time_lower_bound_s, r.time_s, r.depth)
        stages[stage] = StageEstimate(
            stage, tuple(invs), hbm, transfer_s=transfer_s,
            transfer_predicted_s=transfer_pred, span=span,
        )  # fmt: skip
    total_s = sum(s.time.bound_s for s in stages.values()) or 1.0
    stages = {k: replace(s, share=s.time.bound_s / total_s) for k, s in stages.items()}
    knobs = {k: v for k, v in result_values(result).items() if k not in ("B", "K", "S", "T")}
    return Estimate(
        algorithm=alg,
        models={r: s.name for r, s in result.specs.items()},
        hardware=result.hardware,
        layout=layout,
        workload=result.workload,
        knobs=knobs,
        options=options,
        stages=stages,
        calibration=result.calibration,
        counting=counting,
        notes=tuple(notes) + result.notes,
        evaluation=result,
    )


def _resident_states(result: PlacementEstimate) -> MemoryBreakdown:
    """What the busiest group's devices hold between invocations: every model resident there
    (weights; gradients and Adam states of the ones it trains)."""
    from dataclasses import fields

    best = EMPTY
    for g in result.groups:
        parts = list(g.resident.values())
        held = MemoryBreakdown(
            **{f.name: sum(getattr(p, f.name) for p in parts) for f in fields(MemoryBreakdown)}
        )
        best = max(best, held, key=lambda m: m.total)
    return best


def result_values(result: PlacementEstimate) -> dict[str, Any]:
    return dict(result.values)


# --------------------------------------------------------------------------------------------
# Side by side
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Several algorithms on the same models, workload, layout and hardware."""

    estimates: tuple[Estimate, ...]
    dropped: dict[str, tuple[str, ...]]  # algorithm -> inputs that do not apply to it

    def notes(self) -> list[str]:
        return [
            f"{name}: ignored {', '.join(what)} (does not apply)"
            for name, what in self.dropped.items()
            if what
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "algorithms": [e.to_json() for e in self.estimates],
            "notes": self.notes(),
        }


def applicable(alg: Algorithm, kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``kwargs`` of :func:`estimate` without the inputs that do not apply to ``alg`` (a group
    for the offline family, a critic for a critic-free method, a knob it does not use, ...),
    and the names of those dropped."""
    out, dropped = dict(kwargs), []
    if out.get("group") is not None and "K" not in alg.names:
        dropped.append("group")
        out["group"] = None
    for key, role in (
        ("critic", Role.CRITIC),
        ("reward", Role.REWARD),
        ("ref", Role.REFERENCE),
        ("judge", Role.JUDGE),
    ):
        if out.get(key) is not None and not uses_model(alg, role):
            dropped.append(key)
            out[key] = None
    opts: Options | None = out.get("options")
    if opts is not None:
        changes: dict[str, Any] = {}
        for knob in KNOBS:
            if getattr(opts, knob.field) is not None and knob.name not in alg.names:
                changes[knob.field] = None
        has_ref = Role.REFERENCE in alg.roles
        online = not alg.offline
        if opts.recompute_logprobs and not online:
            changes["recompute_logprobs"] = False
        if not opts.kl and not has_ref:
            changes["kl"] = True
        if opts.ref_precomputed and (online or not has_ref):
            changes["ref_precomputed"] = False
        if opts.rule_reward and not any(
            i.role is Role.REWARD and i.kind is Kind.FORWARD for i in alg.invocations
        ):
            changes["rule_reward"] = False
        dropped += list(changes)
        out["options"] = replace(opts, **changes)
    return out, dropped


def compare(algorithms: list[str], **kwargs: Any) -> Comparison:
    """:func:`estimate` for each of ``algorithms`` with the same inputs; inputs that do not
    apply to one of them are left out for it and listed in the notes."""
    if not algorithms:
        raise SpecError("give at least one algorithm, e.g. `rlmcost compare ppo grpo dpo`")
    estimates, dropped = [], {}
    for name in dict.fromkeys(algorithms):
        alg = get_algorithm(name)
        kw, gone = applicable(alg, kwargs)
        estimates.append(estimate(alg, **kw))
        dropped[alg.name] = tuple(gone)
    return Comparison(tuple(estimates), dropped)
