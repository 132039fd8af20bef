"""What evaluating one device group yields: its jobs (one per task), the transfers it runs,
and the group's totals; and the phase names RL frameworks print for them.

Plain records (no evaluation here): :mod:`rlmcost.placement.group_jobs` fills them,
:mod:`rlmcost.placement.iteration` schedules them, reports render them.
"""

from __future__ import annotations

from dataclasses import field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.options import KV_SCALES_NOTE
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.parallel.layout import Layout
from rlmcost.perf.interval import Spread
from rlmcost.placement.device_groups import Task
from rlmcost.placement.rollout import Timeline
from rlmcost.timing import PhaseTime

if TYPE_CHECKING:
    from rlmcost.placement.init_peak import InitPeak
    from rlmcost.placement.version_gate import GateStream

PHASES: dict[tuple[Kind, Role | None], tuple[str, str | None]] = {
    (Kind.GENERATE, None): ("generation", "timing_s/gen"),
    (Kind.FORWARD, Role.ACTOR): ("old log-prob", "timing_s/old_log_prob"),
    (Kind.FORWARD, Role.REFERENCE): ("reference", "timing_s/ref"),
    (Kind.FORWARD, Role.CRITIC): ("values", "timing_s/values"),
    (Kind.FORWARD, Role.REWARD): ("reward", "timing_s/reward"),
    (Kind.FORWARD, Role.TEACHER): ("teacher log-prob", None),  # NeMo RL teacher_logprob_inference
    (Kind.TRAIN, Role.ACTOR): ("update actor", "timing_s/update_actor"),
    (Kind.TRAIN, Role.CRITIC): ("update critic", "timing_s/update_critic"),
}
"""Phase names as RL frameworks print them (verl's ``timing_s/*`` metric keys beside;
OpenRLHF and NeMo RL time the same phases under similar names)."""


def phase_of(task: Task) -> tuple[str, str | None]:
    """(phase name, verl metric key or None) of a task."""
    if task.invocation.note == KV_SCALES_NOTE:  # NeMo RL's timer recompute_kv_scales; verl
        return ("kv scales", None)  # has none
    if task.role is Role.JUDGE:  # it scores: verl's reward loop times its GenRM under "reward"
        return PHASES[(Kind.FORWARD, Role.REWARD)]  # (ray_trainer.py compute_rm_score)
    key = (task.kind, None if task.kind is Kind.GENERATE else task.role)
    if key in PHASES:
        return PHASES[key]
    if task.kind is Kind.GENERATE:
        return PHASES[(Kind.GENERATE, None)]
    return (f"{task.role} {'update' if task.kind is Kind.TRAIN else task.kind}", None)


@dataclass(frozen=True)
class Job:
    """One task evaluated on its group: exact work and depth, bytes per device, time (the
    bound ``time`` and the prediction ``predicted_s``)."""

    task: Task
    model: str
    layout: Layout
    sequences: int
    work_flops: int
    depth: int
    own: MemoryBreakdown  # the invocation in its layout
    memory: MemoryBreakdown  # plus everything else resident on the group
    time: PhaseTime
    ideal_s: float  # time without the pipeline bubble (training) or gathers
    bubble: Fraction = Fraction(0)
    micro_batches: int = 1
    timeline: Timeline | None = None
    predicted_s: float = 0.0  # predicted seconds (>= the bound)
    predicted_ideal_s: float = 0.0  # predicted, without the pipeline bubble
    predicted_parts_s: dict[str, float] = field(default_factory=dict)  # its breakdown
    tokens: int = 0  # prompt + response tokens of its sequences (one pass)
    version_gate: GateStream | None = None  # its stream behind a version gate (version_gate)

    @property
    def time_s(self) -> float:
        return self.time.bound_s

    @property
    def phase(self) -> str:
        return phase_of(self.task)[0]

    def to_json(self) -> dict[str, Any]:
        lay = self.layout
        out: dict[str, Any] = {
            "role": str(self.task.role),
            "kind": str(self.task.kind),
            "stage": str(self.task.stage),
            "what": self.task.label(),
            "model": self.model,
            "layout": {"dp": lay.dp, "tp": lay.tp, "pp": lay.pp, "zero": str(lay.zero)},
            "sequences": self.sequences,
            "work_flops": self.work_flops,
            "depth": self.depth,
            "memory_bytes_per_device": self.memory.total,
            "memory_breakdown_bytes": self.memory.to_json(),
            "time_lower_bound_s": self.time_s,
            "time_s": self.predicted_s,
            "phase": self.phase,
            "predicted_breakdown_s": dict(self.predicted_parts_s),
        }
        if self.timeline is not None:
            out["rollout"] = {
                "slots_per_replica": self.timeline.slots,
                "sequences_per_replica": self.timeline.sequences,
                "waves": self.timeline.waves,
                "preemptions": self.timeline.preemptions,
                "decode_steps": self.timeline.steps,
            }
        if self.bubble:
            out["pipeline_bubble"] = float(self.bubble)
        return out


@dataclass(frozen=True)
class Transfer:
    """Bytes moved for a placement: weight sync between groups, resharding or an offload switch
    on a group. ``before``: the task it precedes (its group's order)."""

    kind: str  # weight-sync, reshard, offload
    what: str
    group: str  # where it runs: the receiving group, or the link
    bytes: int  # total over the devices
    bytes_per_device: int
    time_s: float
    stage: Stage | None = None
    before: int | None = None
    predicted_s: float | None = None  # predicted seconds (None: the same as time_s)
    spread: Spread | None = None  # its own interval (None: the overhead category's)
    phase_name: str | None = None  # the phase whose timer holds it (None: by its kind)
    host_bound: bool = False  # host work on a fixed number of actors: grows with the batch
    unit: str | None = None  # its schedule unit's name, without the numbers ``what`` states

    @property
    def unit_name(self) -> str:
        """The name of its unit in the iteration's schedule (the critical cycle's label):
        ``unit`` where set, else ``what``. A ``what`` stating the transfer's numbers (a call's
        bytes, a layout's sizes) names its unit without them, so that deployments of one shape
        share one schedule template (:mod:`rlmcost.placement.schedule_template`)."""
        return self.what if self.unit is None else self.unit

    @property
    def predicted(self) -> float:
        return self.time_s if self.predicted_s is None else max(self.predicted_s, self.time_s)

    @property
    def phase(self) -> str:
        """``phase_name`` where set (a call's driver data, timed with the call), else ``weight
        sync`` for a weight update (to another group, or the engine's own layout before
        generation), ``engine sleep/wake``, else ``reshard`` / ``offload``."""
        if self.phase_name is not None:
            return self.phase_name
        engine_update = self.kind == "reshard" and self.stage is Stage.GENERATION
        if self.kind == "weight-sync" or engine_update:
            return "weight sync"
        if self.what.startswith("engine sleep/wake"):
            return "engine sleep/wake"
        return self.kind

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "what": self.what,
            "group": self.group,
            "bytes": self.bytes,
            "bytes_per_device": self.bytes_per_device,
            "time_s": self.time_s,
            "predicted_s": self.predicted,
            "phase": self.phase,
        }


@dataclass(frozen=True)
class GroupEstimate:
    """One device group: its jobs, resident models, transfers, peak memory per device."""

    name: str
    gpus: int
    jobs: tuple[Job, ...]
    resident: dict[Role, MemoryBreakdown]
    shadows: tuple[Role, ...]
    transfers: tuple[Transfer, ...]
    hbm_bytes: int  # what a device gives programs (the datasheet's for the paper's iteration)
    problems: tuple[str, ...] = ()  # what keeps it from running beside the memory peak
    host_bytes_per_device: dict[int, int] = field(default_factory=dict)  # per task index
    hardware: str = ""  # the accelerator's canonical name (the group's own or the run's)
    init: InitPeak | None = None  # start-up memory per device (placement.init_peak)
    verifier: MemoryBreakdown | None = None  # states held while a CPU verifier runs (group_idle)
    over_budget: tuple[tuple[str, int, int, int], ...] = ()  # phase, budget, per GPU, tokens
    sglang_gpus: int = 0  # one SGLang replica's GPUs (GroupEngine.sglang_gpus): communicators

    @cached_property
    def host_peak_bytes_per_device(self) -> int:
        return max(self.host_bytes_per_device.values(), default=0)

    @property
    def roles(self) -> tuple[Role, ...]:
        return tuple(dict.fromkeys(j.task.role for j in self.jobs))

    @cached_property
    def peak_memory_bytes_per_device(self) -> int:
        """The largest job memory per device (kept: an estimate is never changed and is
        shared by the deployments of a query, whose rows ask for it many times)."""
        return max(j.memory.total for j in self.jobs)

    @property
    def fits(self) -> bool:
        return self.peak_memory_bytes_per_device <= self.hbm_bytes and not self.problems

    @property
    def shortfall_bytes(self) -> int:
        return max(0, self.peak_memory_bytes_per_device - self.hbm_bytes)

    @property
    def busy_s(self) -> float:
        return sum(j.time_s for j in self.jobs) + sum(t.time_s for t in self.transfers)

    @property
    def busy_predicted_s(self) -> float:
        return sum(j.predicted_s for j in self.jobs) + sum(t.predicted for t in self.transfers)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "gpus": self.gpus,
            "hardware": self.hardware,
            "roles": [str(r) for r in self.roles],
            "invocations": [j.task.label() for j in self.jobs],
            "shadow_copies": [str(r) for r in self.shadows],
            "peak_memory_bytes_per_device": self.peak_memory_bytes_per_device,
            "fits": self.fits,
            "busy_s": self.busy_s,
            "busy_predicted_s": self.busy_predicted_s,
            "host_memory_bytes_per_device": self.host_peak_bytes_per_device,
            "problems": list(self.problems),
            "jobs": [j.to_json() for j in self.jobs],
            "transfers": [t.to_json() for t in self.transfers],
        }
