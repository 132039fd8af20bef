"""The inputs one placement evaluation shares and each invocation's layout.

* ``Setup``: the algorithm, placement and tasks, the model of every role, hardware, workload
  (dtypes), the values of B, K, S, T and the knobs, the user's layout, TP per model, the
  response-length distribution and the host-link bandwidth.
* Layouts (``layouts_for``): the user's layout with the model's TP degree and data parallelism
  filling the group; under hybrid execution TP for generate, TP/PP for forward and ZeRO-3 over
  the whole group for train (§IV-D); a group that trains nothing holds no ZeRO shards.

A task's work over the response lengths: :mod:`rlmcost.placement.task_work`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from functools import cache
from typing import Any

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.algorithms.model import Algorithm
from rlmcost.arch import Arch
from rlmcost.choices import AttnCounting
from rlmcost.deployment.group_engine import group_engine
from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.megatron_engine import megatron_degrees
from rlmcost.deployment.spec import Deployment, EngineSpec
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.memo import memoized, per_object
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.validate import check_layout
from rlmcost.placement.device_groups import DeviceGroup, Placement, Task
from rlmcost.placement.lengths import LengthDist
from rlmcost.specs import HardwareSpec, ModelSpec, Workload
from rlmcost.timing import PEAK, Efficiency

IDEAL = Deployment(ideal=True)


@dataclass(frozen=True)
class GroupDevice:
    """The accelerator of a group that names its own (``@h20``): its spec, the efficiencies
    that time it (its calibration profile, else datasheet peaks) and its host link."""

    hardware: HardwareSpec
    efficiency: Efficiency
    host_bytes_per_s: float


@dataclass(frozen=True)
class Setup:
    """Everything the groups of one evaluation share (resolved inputs)."""

    alg: Algorithm
    placement: Placement
    tasks: tuple[Task, ...]
    specs: Mapping[Role, ModelSpec]
    hardware: HardwareSpec
    workload: Workload
    values: Mapping[str, Any]  # B, K, S, T and the knobs
    base: Layout  # the user's layout; dp is filled per group
    tp: Mapping[Role, int]  # tensor-parallel degree per model
    lengths: LengthDist
    host_bytes_per_s: float
    efficiency: Efficiency = PEAK  # measured efficiencies (a calibration profile) or peaks
    deployment: Deployment = IDEAL  # engine, offload, LoRA, overheads (ideal: the paper's)
    counting: AttnCounting = AttnCounting.FULL  # teacher-forced attention FLOPs
    devices: Mapping[str, GroupDevice] = field(default_factory=dict)  # groups' own hardware
    host_memory_gib: float | None = None  # host memory per host (None: each spec's reference)

    def on(self, group: DeviceGroup) -> Setup:
        """The inputs as ``group`` sees them: its own accelerator (``@h20``: memory capacity,
        roofline, links, efficiencies, host link), else the run's."""
        name = group.hardware
        if name is None or name == self.hardware.name:
            return self
        d = self.devices[name]
        return replace(self, hardware=d.hardware, efficiency=d.efficiency,
                       host_bytes_per_s=d.host_bytes_per_s)  # fmt: skip

    def hardware_of(self, group: str) -> HardwareSpec:
        """The accelerator group ``group`` runs on."""
        return self.on(self.placement.group(group)).hardware
    # the group estimates of this query's deployments (``group_key``); None: none kept
    groups_seen: dict[Any, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def capacity_bytes(self) -> int:
        """Device memory a fit is checked against: what the device gives programs
        (``device_capacity_bytes``), or the datasheet capacity for the paper's iteration."""
        return device_capacity_bytes(self.hardware, self.deployment.ideal)

    def arch(self, role: Role) -> Arch:
        spec = self.specs[role]
        hit = _ARCHS.get(id(spec))  # by identity: a pydantic spec hashes all its fields
        if hit is not None and hit[0] is spec:
            return hit[1]
        out = _arch(spec)
        if len(_ARCHS) >= 256:
            _ARCHS.clear()
        _ARCHS[id(spec)] = (spec, out)
        return out

    @property
    def trained_roles(self) -> frozenset[Role]:
        """The models some task trains."""
        return frozenset(t.role for t in self.tasks if t.kind is Kind.TRAIN)

    def with_counts(self, counts: tuple[int, ...]) -> Setup:
        """The same inputs with the groups' GPU counts set."""
        return replace(self, placement=self.placement.with_gpus(counts))

    @property
    def prompt(self) -> int:
        return int(self.values["S"])

    @property
    def response(self) -> int:
        return int(self.values["T"])


def device_capacity_bytes(hardware: HardwareSpec, ideal: bool = False) -> int:
    """Bytes of device memory programs can allocate: what the device reports
    (``HardwareSpec.hbm_capacity_bytes``: torch.cuda's total_memory, with its source), or the
    datasheet capacity for the paper's idealized iteration."""
    return hardware.hbm_bytes if ideal else hardware.hbm_capacity_bytes


_ARCHS: dict[int, tuple[ModelSpec, Arch]] = {}  # Setup.arch: the spec kept beside its Arch


@cache
def _arch(spec: ModelSpec) -> Arch:
    return spec.arch()


def auto_tp(arch: Arch, hardware: HardwareSpec, weight_bytes: int) -> int:
    """The smallest power-of-two TP degree (up to a node) that divides the heads and widths and
    puts at most half the HBM of weights on a device: room for KV cache and activations. TP
    divides the KV heads too (no QKV sub-sharding, ``validate.KV_SUBSHARD_COMMIT``: a trainer
    of any framework can run the degree it picks)."""
    tp = 1
    while tp < hardware.gpus_per_node:
        ok = True
        try:
            check_layout(arch, Layout(tp=tp), subshard_kv=False)
        except SpecError:
            ok = False
        if ok and weight_bytes / tp <= hardware.hbm_bytes / 2:
            return tp
        tp *= 2
    return tp


def engine_for(setup: Setup, group: str) -> EngineSpec:
    """The generation engine's settings on ``group``: the deployment's with the group's own
    fields over it (``deployment.group_engine``; the deployment's where it gives none)."""
    dep = setup.deployment
    own = dep.group(group)
    return dep.engine if own is None or own.engine is None else group_engine(dep, group)


def layouts_for(setup: Setup, group: str, tasks: Sequence[Task], gpus: int) -> dict[int, Layout]:
    """The layout of each task's invocation (its model's, of its kind) on ``gpus`` devices of
    ``group``, by task index (the group, its engine and whether it trains looked up once).

    The group's own layout for the kind when given; else under hybrid execution TP for
    generate, TP/PP for forward and ZeRO-3 over the whole group (no TP, PP) for train; else the
    user's layout with the model's TP degree. A group that trains nothing runs its models
    without ZeRO sharding (inference engines such as vLLM hold whole TP shards). Data
    parallelism fills the group.

    Kept per query (``setup.groups_seen``; none inside :func:`rlmcost.memo.plain`) in two
    levels: the group's shape (what :func:`_layout` reads of the group and the Setup, hashed
    once per group) and, inside it, the task and its model's TP degree (the task's role and
    kind, its model's Arch: the query's). The deployments of a query that give a group the
    same shape (424 shapes for the 928 group estimates of the planner's PPO 70B sweep on 32
    A100, ``benchmarks/bench_rl_eval.py``) share its layouts.
    """
    if not tasks:
        return {}
    grp = setup.placement.group(group)
    trains = group in _training_groups(setup.tasks)
    eng = engine_for(setup, group)
    dep, placement = setup.deployment, setup.placement
    args = (grp, setup.base, trains, eng.kind, eng.tp, (eng.pp, eng.ep, eng.dp_attention),
            dep.ideal, placement.hybrid, gpus)  # fmt: skip
    seen = setup.groups_seen
    if seen is None:
        return {t.index: _layout(*args, setup.tp[t.role], setup.arch(t.role), t.role, t.kind)
                for t in tasks}  # fmt: skip
    key = ("layouts", args)
    kept = seen.get(key)
    if kept is None:
        kept = seen[key] = {}
    out = {}
    for t in tasks:
        tp = setup.tp[t.role]
        layout = kept.get((t, tp))
        if layout is None:
            layout = kept[t, tp] = _layout(*args, tp, setup.arch(t.role), t.role, t.kind)
        out[t.index] = layout
    return out


@per_object()
def _training_groups(tasks: tuple[Task, ...]) -> frozenset[str]:
    """The groups some of ``tasks`` trains on (kept per task tuple)."""
    return frozenset(t.group for t in tasks if t.kind is Kind.TRAIN)


def replica_layout(setup: Setup, task: Task) -> Layout:
    """The layout of one replica of ``task`` on its group (:func:`_replica` of the Setup's
    group, user layout, engine, ``ideal``, ``hybrid`` and the task's model TP and kind)."""
    grp = setup.placement.group(task.group)
    eng = engine_for(setup, task.group)
    trains = task.group in _training_groups(setup.tasks)
    return _replica(grp, setup.base, trains, eng.kind, eng.tp,
                    (eng.pp, eng.ep, eng.dp_attention), setup.deployment.ideal,
                    setup.placement.hybrid, setup.tp[task.role], task.kind)  # fmt: skip


def _replica(grp: DeviceGroup, user: Layout, trains: bool, engine: EngineKind,
             engine_tp: int | None, engine_degrees: tuple[int, int, int], ideal: bool,
             hybrid: bool, tp: int, kind: Kind) -> Layout:  # fmt: skip
    """The layout of one replica of a task of ``kind`` on group ``grp`` (:func:`_layout`
    before data parallelism fills the group): the group's own layout for the kind when given;
    an engine's own TP, PP and EP for generation (the trainer's layout for HF generate, an
    unpinned Hybrid Engine or a Megatron engine given no degrees or the trainer's); under
    hybrid execution TP for generate, TP/PP for forward, ZeRO-3 over the group for train; else
    the user's layout at the model's TP ``tp``. ``engine_degrees``: the engine's PP, EP and
    data-parallel attention (``EngineSpec.dp_attention``, SGLang's). What a group's GPU count
    must be a multiple of (:func:`rlmcost.placement.allocate.group_unit`) is this layout's
    tp * pp * cp * dp_unit."""
    given = grp.layout(kind)
    settings = {k: v for k, v in grp.settings if k != "offload"}  # offload: group_own
    base = given or user.with_(**settings)
    t = settings.get("tp", tp)
    if not trains and given is None:  # an inference-only group: engines replicate per TP group
        base = base.with_(zero=ZeroStage.NONE)
    engine_pp, engine_ep, attention_dp = engine_degrees
    mega = engine is EngineKind.MEGATRON
    trainer = (int(t), base.pp, base.ep)  # type: ignore[call-overload]
    if mega:  # a degree not given is the policy's (NeMo RL merged_inference_megatron_cfg)
        engine_pp, engine_ep = megatron_degrees(engine_pp, engine_ep, base.pp, base.ep)
    own = (int(settings.get("tp", engine_tp or t)), int(settings.get("pp", engine_pp)),  # type: ignore[call-overload]
           int(settings.get("ep", engine_ep)))  # type: ignore[call-overload]
    # Megatron-core on the policy's own model unless the degrees differ or the policy runs CP
    # (NeMo RL dedicated_inference_megatron_cfg: inference pins CP to 1)
    shared = mega and own == trainer and base.cp == 1
    if kind is Kind.GENERATE and given is None and (engine.in_trainer_layout or shared):
        # HF generate / an unpinned Hybrid Engine / a Megatron engine on the policy's weights
        # (deployment.megatron_engine): the trainer's layout
        base = base.with_(tp=t)
    elif kind is Kind.GENERATE and given is None and not ideal:
        # the inference engine's own layout per replica (ds-hybrid: its inference TP); a
        # Megatron engine's keeps the policy's expert TP (NeMo RL merged_inference_megatron_cfg)
        base = Layout(tp=own[0], pp=own[1], ep=own[2],
                      etp=user.etp if engine is EngineKind.MEGATRON else None,
                      attention_dp=attention_dp)  # fmt: skip
    elif hybrid and given is None:
        base = {
            Kind.GENERATE: base.with_(tp=t, pp=1, zero=ZeroStage.NONE),
            Kind.FORWARD: base.with_(tp=t, zero=ZeroStage.NONE),
            Kind.TRAIN: base.with_(tp=1, pp=1, cp=1, zero=ZeroStage.OS_G_P),
        }[kind]
    elif given is None:
        base = base.with_(tp=t)
    return base


def _layout(grp: DeviceGroup, user: Layout, trains: bool, engine: EngineKind,
            engine_tp: int | None, engine_degrees: tuple[int, int, int], ideal: bool,
            hybrid: bool, gpus: int, tp: int, arch: Arch, role: Role,
            kind: Kind) -> Layout:  # fmt: skip
    """:func:`layouts_for` of what it reads of the Setup: the group, the user's layout,
    whether the group trains, the group's engine (kind, TP, PP, EP), the deployment's
    ``ideal``, the placement's ``hybrid``, the GPU count, and per task its model's TP and
    Arch, role and kind."""
    group = grp.name
    base = _replica(grp, user, trains, engine, engine_tp, engine_degrees, ideal, hybrid,
                    tp, kind)  # fmt: skip
    split = base.tp * base.pp * base.cp  # EP is folded inside dp*tp*cp (Megatron-core)
    unit = split * base.dp_unit  # ... when etp*ep divides tp*cp*dp
    if gpus % unit:
        why = f"tp*pp*cp = {split}" if unit == split else (
            f"tp*pp*cp*{base.dp_unit} = {unit} (etp*ep = {base.expert_tp}*{base.ep} must "
            "divide tp*cp*dp)"
        )  # fmt: skip
        knobs = "--rollout-tp/--rollout-pp" if kind is Kind.GENERATE and not ideal \
            and engine_tp is not None else "--tp/--pp/--ep"  # fmt: skip
        raise SpecError(
            f"group {group} has {gpus} GPUs, not a multiple of {why} for {role} {kind}; "
            f"give it a multiple of {unit} GPUs (--gpus) or a smaller {knobs}"
        )
    layout = base.with_(dp=gpus // split)
    _checked(arch, layout, gpus, kind is Kind.GENERATE)
    return layout


@memoized()
def _checked(arch: Arch, layout: Layout, gpus: int, replicate_kv: bool) -> bool:
    """``check_layout`` (a SpecError for a layout the model cannot take), kept for the
    layouts that pass: the deployments of a query run the same few."""
    check_layout(arch, layout, gpus, replicate_kv=replicate_kv)
    return True
