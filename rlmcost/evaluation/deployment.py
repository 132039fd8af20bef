"""The one evaluation: a deployment of an algorithm on models, a workload and hardware.

Every query goes through :func:`evaluate_deployment` of its :class:`~rlmcost.run.Run` —
`rlmcost ppo|grpo|...` (the co-located baseline: one device group, the user's layout),
`--placement`, `--groups`, `rlmcost placements` and every candidate of `rlmcost plan` — so two
commands never disagree about the same run (DESIGN.md §6b, "One Run"). It resolves the names
and defaults (:mod:`rlmcost.deployment.resolve`), builds the placement's device groups
(:mod:`rlmcost.placement.configs`; a deployment's own groups with their layouts), and evaluates
them with :mod:`rlmcost.placement` — one memory model (model states, activations, KV cache, the
deployment's terms of :mod:`rlmcost.deployment.memory`) and one time model (the roofline bound
of :mod:`rlmcost.timing`, the decode timeline, transfers, the schedule).

Layout (:func:`trainer_layout`): the deployment's trainer layout with ``cluster.dp`` replicas,
data parallelism filling ``cluster.gpus`` when that is larger; with ``run.tp_per_model`` each
model's TP is the smallest power of two that leaves half the HBM free of weights (stated in
the notes). Without a placement or groups the Run is the co-located baseline.
"""

from __future__ import annotations

import gc
from dataclasses import replace
from typing import TYPE_CHECKING

from rlmcost import memo
from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.deployment.given import given_fields
from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.megatron_engine import check_policy
from rlmcost.deployment.resolve import resolve_layout
from rlmcost.deployment.spec import Deployment, TrainLayout
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Layout
from rlmcost.placement.allocate import allocate
from rlmcost.placement.configs import build
from rlmcost.placement.frozen import built
from rlmcost.placement.group_train import group_worker_notes, idle_view, train_notes
from rlmcost.placement.inputs import Setup
from rlmcost.placement.iteration import PlacementEstimate
from rlmcost.placement.kv_subshard import check_kv_subshard
from rlmcost.placement.later_notes import notes_later, notes_of
from rlmcost.placement.query import _QUERIES as _QUERIES  # re-exported: defined here before
from rlmcost.placement.query import Query as Query
from rlmcost.placement.query import query_key as query_key
from rlmcost.placement.query import query_of
from rlmcost.placement.query import spec_params as spec_params
from rlmcost.placement.run_notes import deployment_notes
from rlmcost.placement.user_groups import canonical, device_groups_of, group_devices
from rlmcost.run.default_gpus import run_gpus
from rlmcost.timing import PEAK, Efficiency

if TYPE_CHECKING:
    from rlmcost.algorithms.model import Algorithm
    from rlmcost.placement.device_groups import Placement, Task
    from rlmcost.placement.groups import DeviceGroup
    from rlmcost.run.spec import Run

DEFAULT_GPUS = 8
"""GPUs of a placement whose Run gives neither ``cluster.gpus`` nor device groups."""


@dataclass(frozen=True)
class TrainerLayout:
    """The trainer's layout of a Run as the evaluation takes it (:func:`trainer_layout`).

    ``layout``: the trainer's layout as the per-stage view shows it; ``models``: the layout
    every model's jobs start from (its TP replaced per model when ``tp`` is None); ``gpus``:
    devices in all (None: the groups' sum, else :data:`DEFAULT_GPUS`); ``notes``: how dp was
    filled."""

    layout: Layout
    models: Layout
    tp: int | None
    gpus: int | None
    notes: tuple[str, ...]


def trainer_layout(run: Run) -> TrainerLayout:
    """The trainer's layout of ``run`` (module docstring): ``cluster.dp`` replicas of the
    deployment's trainer layout, data parallelism filling ``cluster.gpus``
    (:func:`~rlmcost.deployment.resolve.resolve_layout`); with ``tp_per_model`` the TP of
    each model is chosen by the evaluation and ``cluster.gpus`` is taken as given."""
    c = run.cluster
    gpus, note = run_gpus(run)  # given (checked against a size tier's layout) or filled
    train, args = run.deployment.train, (c.dp or 1, gpus, run.tp_per_model, run.grouped,
                                         bool(run.deployment.groups))  # fmt: skip
    out = memo.by_identities(_TRAINERS, (train,), lambda: _trainer_layout(train, *args),
                             also=args)  # by the layout's identity: no pydantic hash
    return out if note is None else replace(out, notes=(note, *out.notes))


_TRAINERS = memo.table()
""":func:`_trainer_layout` kept by the trainer layout's identity and the other arguments (the
planner's deployments share a few validated trainer layouts)."""


def _trainer_layout(train: TrainLayout, dp: int, gpus: int | None, tp_per_model: bool,
                    grouped: bool, has_groups: bool) -> TrainerLayout:  # fmt: skip
    """:func:`trainer_layout` of what it reads of the Run (kept by :data:`_TRAINERS`)."""
    if tp_per_model:
        models = Layout(pp=train.pp, zero=train.zero, micro_batch=train.micro_batch,
                        ckpt=train.ckpt, sp=train.sp, cp=train.cp, ep=train.ep,
                        etp=train.etp, moe_capacity_factor=train.moe_capacity_factor,
                        moe_pad_to_capacity=train.moe_pad_to_capacity)  # fmt: skip
        return TrainerLayout(train.layout(dp=dp), models, None, gpus, ())
    try:
        lay, notes = resolve_layout(train.layout(dp=dp), gpus)
    except SpecError:
        if not has_groups:
            raise
        # the user's groups size each trainer by its own GPUs (their sum is checked against
        # the cluster's): the run-wide layout need not divide the whole cluster
        lay, notes = train.layout(dp=dp), []
    total = lay.n_gpus if not grouped or (gpus is None and not has_groups) else gpus
    return TrainerLayout(lay, lay, lay.tp, total, tuple(notes))


def evaluate_deployment(run: Run, *, efficiency: Efficiency | None = None) -> PlacementEstimate:
    """Work, depth, memory per device (and host), fit and time of one iteration of ``run``
    as its deployment runs it (``Deployment(ideal=True)``: the paper's idealized iteration).

    The placement is ``run.deployment.placement`` (a Table IX configuration; with groups
    alone the user's groups run synchronously; neither: the co-located baseline), with
    ``staleness`` k for async/combined and the response lengths of ``workload.length_dist``
    (default fixed T). ``efficiency``: measured efficiencies to use instead of the Run's
    calibration profile (default: the profile shipped for the hardware, else datasheet
    peaks). Models and workload as :mod:`rlmcost.deployment.resolve` resolves them.

    >>> from rlmcost.run import Run
    >>> run = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "8b"},
    ...                      "deployment": {"placement": "async"}, "cluster": {"gpus": 16}})
    >>> e = evaluate_deployment(run)
    >>> [g.name for g in e.groups], e.placement.staleness, e.weight_sync_bytes > 0
    (['rollout', 'trainer'], 1, True)

    The cyclic garbage collector is paused inside (resumed after when it was on), as
    :func:`~rlmcost.evaluation.batch.evaluate_many` pauses it: an evaluation frees its
    temporaries by reference counting (it leaves no cyclic garbage), while a collection inside
    it had promoted the ones alive then, and the older generations' growth sets when the
    collector walks the whole process (the planner's 3,264 PPO Llama-3.1-70B deployments on 32
    A100 one call each: 3 full, 36 middle, ~400 young collections -> the one young collection
    the kept objects wait for, ``benchmarks/bench_rl_eval.py --collector``).
    """
    if not gc.isenabled():
        return evaluate_in(query_of(run, efficiency), run)
    gc.disable()
    try:
        return evaluate_in(query_of(run, efficiency), run)
    finally:
        gc.enable()


def evaluate_in(q: Query, run: Run) -> PlacementEstimate:
    """:func:`evaluate_deployment` of ``run``, whose query ``q`` resolves (:func:`query_of`;
    the caller vouches that ``run`` is a deployment of it)."""
    dep = run.deployment
    alg, wl, specs, hw, efficiency = q.alg, q.workload, q.specs, q.hardware, q.efficiency
    where = dep.placement if run.grouped else "baseline"
    user_groups = device_groups_of(dep)  # with their engines' layouts, merged over the run's engine
    mcore = dep.engine.kind is EngineKind.MEGATRON  # (its async placement: one group)
    key = ("plan", where, dep.staleness, user_groups, dep.offload_idle, mcore)  # the query's
    plan, tasks = memo.by_identities(  # few placements, by the groups' identity first (no
        q.kept("plans by identities", dict), (user_groups,),  # DeviceGroup __eq__), then value
        lambda: q.kept(key, lambda: _plan(user_groups, dep, where, alg)),
        also=(where, dep.staleness, dep.offload_idle, mcore))  # fmt: skip
    # not kept with the plan: its trainer, and its engine where one generates (by the sections
    generates = any(t.kind is Kind.GENERATE for t in tasks)  # it reads, their identities)
    memo.by_identities(_POLICY, (dep.engine, dep.train, dep.forward, *dep.groups),
                       lambda: check_policy(dep, generates),  # deployment.megatron_engine
                       also=(dep.ideal, dep.framework, generates))  # fmt: skip
    trained = {t.role for t in tasks if t.kind is Kind.TRAIN}  # a Hugging Face trainer's TP
    check_kv_subshard(dep, [specs[r] for r in specs if r in trained])  # <= its KV heads
    dep = canonical(dep, user_groups)
    trainer = trainer_layout(run)
    if plan.shared_backbone and specs[Role.CRITIC].name != specs[Role.ACTOR].name:
        raise SpecError(
            f"--placement ac-shared shares one backbone, but the critic ({specs[Role.CRITIC].name})"
            f" is not the actor's model ({specs[Role.ACTOR].name}); drop --critic"
        )
    given_tp = trainer.tp
    tps: dict[Role, int] = {}
    for role in specs:
        if given_tp is not None:
            tps[role] = given_tp
            continue
        tps[role] = q.auto_tp(role)
    host = q.host_bytes_per_s
    setup = built(  # Setup(...) with every field given, in order
        Setup, alg, plan, tasks, specs, hw, wl, q.values, trainer.models, tps, q.lengths, host,
        efficiency or PEAK, dep, run.attention,
        group_devices(user_groups, hw, run.cluster.host_bandwidth_gb_per_s),
        run.cluster.host_memory_gib, q.groups_seen,
    )  # fmt: skip
    gpus = trainer.gpus
    total = gpus if gpus is not None or user_groups is not None else DEFAULT_GPUS
    result = allocate(setup, total)
    # what can still refuse the run, and the notes' parts that can (worker and train notes)
    view = idle_view(dep, result.groups, plan)  # no offload its groups leave out (group_train)
    kl = any(t.role is Role.REFERENCE for t in tasks)  # worker notes: kept by all they read
    moe = q.kept("moe", lambda: any(spec.arch().is_moe for spec in q.specs.values()))
    stops, drops = memo.by_identities(  # the trained models' rerun, dropout (per query)
        q.kept("train notes", dict), (dep.train,), lambda: train_notes(q.specs, dep),
        also=(dep.ideal, dep.framework))  # fmt: skip
    parts = (view.train, dep.forward, dep.logits, dep.lora, *dep.groups)  # by their identities
    read = memo.by_identities(_READ, parts, lambda: memo.Hashed(
        (*parts, given_fields(dep.groups))))  # with the fields each group's layouts give
    worker = q.kept(("worker notes", dep.ideal, dep.framework, kl, read, moe, stops),
                    lambda: group_worker_notes(view, kl, moe, stops))  # fmt: skip
    missing, prices = _prices(tuple(result.fleet), run.cluster.prices)
    # ``replace(result, prices=...)`` without its walk and the frozen ``__init__`` (a
    # dataclass with no ``__post_init__``: the same fields, set as ``__init__`` sets them);
    # its notes written when read (placement.later_notes), then the iteration's
    out = object.__new__(PlacementEstimate)
    out.__dict__.update(result.__dict__, prices=prices)
    notes_later(out, deployment_notes, q, run, setup,
                (given_tp is None, view, moe, drops, worker, missing), notes_of(result))
    return out


_READ = memo.table()  # the worker notes' sections of a deployment, hashed once
_POLICY = memo.table()  # the sections of the deployments whose trainer and engine passed


def _prices(fleet: tuple[str, ...], given: dict[str, float] | None
            ) -> tuple[str | None, dict[str, float]]:  # fmt: skip
    """The missing-price note and the prices of the accelerators of ``fleet``
    (:mod:`rlmcost.specs.prices`), kept per fleet and given prices; a fresh dict each time."""
    missing, prices = _kept_prices(fleet, None if given is None else tuple(given.items()))
    return missing, dict(prices)


@memo.memoized()
def _kept_prices(fleet: tuple[str, ...], given: tuple[tuple[str, float], ...] | None
                 ) -> tuple[str | None, dict[str, float]]:  # fmt: skip
    from rlmcost.specs.prices import missing_price, prices_for

    table = None if given is None else dict(given)
    return missing_price(list(fleet), table), prices_for(list(fleet), table)


def _plan(groups: tuple[DeviceGroup, ...] | None, dep: Deployment, where: str | None,
          alg: Algorithm) -> tuple[Placement, tuple[Task, ...]]:  # fmt: skip
    """The placement of the deployment's ``groups`` (``configs.build``) and its tasks."""
    plan = build(where, alg, staleness=dep.staleness, groups=groups, offload=dep.offload_idle,
                 colocated=dep.engine.kind is EngineKind.MEGATRON)  # fmt: skip
    return plan, plan.tasks(alg)
