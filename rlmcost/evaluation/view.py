"""The per-stage view of one iteration: :class:`Evaluation`, what :func:`rlmcost.evaluate`
returns and every algorithm command prints.

:func:`from_placement` groups the jobs of a deployment's evaluation
(:func:`~rlmcost.evaluation.deployment.evaluate_deployment`: groups x jobs x phases) by stage.
On one device group (the co-located baseline) stage times and depths are sums; on several they
are the schedule's spans. Work and depth are exact ints; teacher-forced attention is counted
full unless the Run says ``attention: causal``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.counts import count
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import Options
from rlmcost.choices import AttnCounting
from rlmcost.deployment.spec import Deployment
from rlmcost.evaluation.stages import InvocationEstimate, StageEstimate, binding, resident_states
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Layout
from rlmcost.placement.inputs import IDEAL
from rlmcost.placement.iteration import MFU_CONVENTION, PlacementEstimate
from rlmcost.run.spec import SCHEMA_VERSION
from rlmcost.specs import HardwareSpec, Workload
from rlmcost.timing import PhaseTime

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

PLACEMENT = (
    "co-located: every model resident on the same GPUs with the same layout for the whole "
    "iteration; invocations run one after another"
)
CONVENTION = (
    "FLOP = one add or one multiply (matrix products only); depth = GEMM reduction levels; "
    "time_lower_bound_s = roofline lower bound (datasheet dense peak, HBM bandwidth; transfers "
    "and the forwards' ZeRO-3 parameter gathers at link bandwidth; no other communication); "
    "bound = compute, memory or link (transfers and gathers), whichever is most of it, none "
    "where nothing runs; time_s = prediction (kernel efficiency "
    "by shape, exposed communication, pipeline bubbles, the engine's decode steps and prefill "
    "chunks; rlmcost.perf)"
)

@dataclass(frozen=True)
class Evaluation:
    """One iteration of a :class:`~rlmcost.run.Run`: per-stage estimates, the totals, the
    deployment's evaluation behind them (groups x jobs x phases) and the Run (``to_json``)."""

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
    run: Run | None = None  # the query evaluated

    @property
    def gpus(self) -> int:
        """GPUs of the deployment, every device group's together (a count)."""
        return self.evaluation.gpus if self.evaluation is not None else self.layout.n_gpus

    @property
    def model(self) -> str:
        """The actor's model name (or config.json path) as the Run gives it."""
        return self.models[Role.ACTOR]

    @property
    def deployment(self) -> Deployment:
        """The resolved :class:`~rlmcost.deployment.Deployment` (framework defaults filled)."""
        return self.evaluation.deployment if self.evaluation is not None else IDEAL

    @property
    def capacity_bytes(self) -> int:
        """What one device of the binding stage gives programs: the stage nearest its device's
        capacity (or furthest past it), so on a mixed pool (``--groups ...@h20,...@h100``) the
        capacity beside the peak and the shortfall is the device that peak is on."""
        return binding(self.stages).hbm_bytes

    @property
    def device(self) -> HardwareSpec:
        """The binding stage's accelerator (:attr:`capacity_bytes`'s): on a mixed pool the
        one its peak is on, not the run's ``--hardware``; else the run's."""
        from rlmcost.specs import get_hardware

        name = binding(self.stages).hardware
        return self.hardware if name in ("", self.hardware.name) else get_hardware(name)

    @property
    def work_flops(self) -> int:
        """FLOPs of one iteration, every stage's (exact int; FLOP = one add or one multiply)."""
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
        """Predicted seconds of the iteration: the stages in turn (several groups: the period)."""
        if self.evaluation is not None:  # the schedule's period (one group: the sum)
            return self.evaluation.iteration_time_s
        return sum(s.time_s for s in self.stages.values())

    @property
    def time_interval_s(self) -> tuple[float, float]:
        """(low, high) of the predicted iteration (:mod:`rlmcost.perf.interval`)."""
        if self.evaluation is not None:
            return self.evaluation.iteration_interval_s
        return (self.time_s, self.time_s)

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
        if self.evaluation is not None:  # each group at its own accelerator's peak
            return self.evaluation.mfu
        if not self.time_s:
            return 0.0
        peak = self.hardware.peak(self.workload.compute_dtype)
        return self.work_flops / (self.time_s * self.gpus * peak)

    @property
    def depth(self) -> int:
        """Critical-path depth of one iteration in GEMM reduction levels (exact int)."""
        if self.grouped:
            return self.evaluation.iteration_depth  # type: ignore[union-attr]
        return sum(s.depth for s in self.stages.values())

    @property
    def fits(self) -> bool:
        """Every device's peak within its usable HBM and each node's offload within its host
        memory (``problems`` and the notes say what does not)."""
        ev = self.evaluation  # every group against its own device's capacity
        problems = ev.problems if ev is not None else ()
        return all(s.fits for s in self.stages.values()) and not problems and \
            (ev is None or ev.fits)  # fmt: skip

    @property
    def shortfall_bytes(self) -> int:
        """Bytes per device the most-over stage needs beyond its device's usable HBM (0: the
        devices fit; a host short of memory is in ``to_json()["problems"]``, not here)."""
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

    def _stored_dtype(self) -> Any:
        """The trainers' stored parameter dtype (``train.param_dtype``; None: the weights')."""
        d = self.deployment
        return None if d.ideal else d.train.param_dtype

    def _grad_dtype(self) -> Any:
        """The trainer's gradient buffer where wider than its parameters (Megatron-core's
        fp32 buffer: :func:`~rlmcost.placement.grad_buffer.grad_dtype`; None: theirs)."""
        from rlmcost.placement.grad_buffer import grad_dtype

        return grad_dtype(self.deployment)

    def _optimizer_words(self) -> str:
        from rlmcost.parallel.zero import optimizer_bytes_per_param

        stored = self._stored_dtype() or self.workload.weight_dtype
        if optimizer_bytes_per_param(stored) == 8:
            return "fp32 (Adam m, v beside fp32 parameters)"
        return "fp32 (mixed-precision Adam: master weights, m, v)"

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
                "optimizer": self._optimizer_words(),
                "trained_parameters": str(self._stored_dtype() or w.weight_dtype),
                "trained_gradients": str(self._grad_dtype() or self._stored_dtype()
                                         or w.weight_dtype),  # fmt: skip
                "compute": str(w.compute_dtype),
            },
        }

    def to_json(self) -> dict[str, Any]:
        """``--json`` in schema :data:`~rlmcost.run.spec.SCHEMA_VERSION` (keys are added in a
        minor version; a renamed key keeps its old name as an alias for one major version,
        CHANGELOG.md). Embeds the Run: ``rlmcost run`` on this output reproduces it."""
        lay = self.layout
        ev = self.evaluation
        return {
            "schema_version": SCHEMA_VERSION,
            "command": self.algorithm.name,
            "run": self.run.to_json() if self.run is not None else None,
            "algorithm": self.algorithm.name,
            "model": self.model,
            "hardware": self.device.name,
            "gpus": self.gpus,
            "stages": {str(s): e.to_json() for s, e in self.stages.items()},
            "iteration": {
                "work_flops": self.work_flops,
                "time_lower_bound_s": self.time_lower_bound_s,
                "time_s": self.time_s,
                "time_interval_s": list(self.time_interval_s),
                "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
                "mfu": self.mfu,
                "mfu_convention": MFU_CONVENTION,
                "depth": self.depth,
                "dominant_stage": str(self.dominant_stage),
            },
            "phases": [p.to_json() for p in ev.phases] if ev is not None else [],
            "cost": ev.cost_json() if ev is not None else None,
            "fits": self.fits,
            "shortfall_bytes": self.shortfall_bytes,
            "problems": list(ev.problems) if ev is not None else [],
            "hbm_bytes_per_device": self.device.hbm_bytes,
            "capacity_bytes_per_device": self.capacity_bytes,
            "device_memory_bytes": {str(s): e.memory_bytes_per_device
                                    for s, e in self.stages.items()},  # fmt: skip
            "host_memory_bytes_per_node": self.host_memory_bytes_per_node,
            "host_memory_capacity_bytes_per_node": ev.host_memory_capacity_bytes_per_node
            if ev is not None else None,  # fmt: skip
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
            "layout": {"dp": lay.dp, "tp": lay.tp, "pp": lay.pp, "cp": lay.cp, "ep": lay.ep,
                       "zero": str(lay.zero), "ckpt": str(lay.ckpt),
                       "micro_batch": lay.micro_batch},  # fmt: skip
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
    """What scores the responses: a reward model, a judge, a verifier, a teacher or none."""
    if Role.REWARD in models:
        return f"reward model {models[Role.REWARD]} (a forward over every response)"
    if Role.JUDGE in models:  # d-rlaif: a generating judge
        return f"judge {models[Role.JUDGE]} (T_j verdict tokens generated per response)"
    if any(i.kind is Kind.VERIFY for i in alg.invocations):
        return "rule-based verifier (no model; a CPU check of negligible GPU cost, not costed)"
    if Role.TEACHER in models:  # opd
        return f"none: teacher {models[Role.TEACHER]} scores every token (a forward per response)"
    return "none in the loop (preference data)"


def _plain(v: object) -> object:
    return (int(v) if v.denominator == 1 else float(v)) if isinstance(v, Fraction) else v


def from_placement(
    result: PlacementEstimate,
    alg: Algorithm,
    layout: Layout,
    options: Options,
    counting: AttnCounting,
    notes: tuple[str, ...] = (),
    run: Run | None = None,
) -> Evaluation:
    """The per-stage view of an evaluation: the invocations of each stage with their
    group's memory; on one group (the co-located baseline) stage times and depths are sums, on
    several they are the schedule's spans (``StageEstimate.span``)."""
    jobs = {j.task.index: j for g in result.groups for j in g.jobs}
    host = {i: b for g in result.groups for i, b in g.host_bytes_per_device.items()}
    cap = {j.task.index: g.hbm_bytes for g in result.groups for j in g.jobs}  # its own device
    device = {j.task.index: g.hardware for g in result.groups for j in g.jobs}
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
                held = resident_states(result)
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
        mine = [i for i, inv in enumerate(alg.invocations) if inv.stage is stage and i in cap]
        peak = max(mine, key=lambda i: jobs[i].memory.total, default=None)
        hbm = cap[peak] if peak is not None else result.groups[0].hbm_bytes
        span = None
        if len(result.groups) > 1 and stage in result.stages:
            r = result.stages[stage]
            span = (r.time_lower_bound_s, r.time_s, r.depth)
        stages[stage] = StageEstimate(
            stage, tuple(invs), hbm, transfer_s=transfer_s,
            transfer_predicted_s=transfer_pred, span=span,
            hardware=device[peak] if peak is not None else result.groups[0].hardware,
        )  # fmt: skip
    total_s = sum(s.time.bound_s for s in stages.values()) or 1.0
    stages = {k: replace(s, share=s.time.bound_s / total_s) for k, s in stages.items()}
    knobs = {k: v for k, v in result_values(result).items() if k not in ("B", "K", "S", "T")}
    return Evaluation(
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
        run=run,
    )


def result_values(result: PlacementEstimate) -> dict[str, Any]:
    return dict(result.values)
