"""One group's estimate, kept for every deployment of the same query that gives it the same
inputs.

The deployments of one query (the planner's candidates, ``evaluation.batch``) share many of
their groups: candidates that differ only in the trainer's ZeRO stage, checkpointing,
micro-batch or optimizer offload run the same engines on their rollout group, ones that differ only
in the engine's TP or memory reservation train the same way on a trainer group that generates
nothing, and a synchronous and an overlapped loop run the same groups. A group's estimate
(``group_jobs.estimate``) is a function of the query (the algorithm, models, workload,
hardware, lengths, host link, efficiency and attention counting: the same for every Setup that
shares one ``Setup.groups_seen``), the placement and its tasks, the models' TP degrees, the
group and its GPU count, the user's layout and the deployment.
:func:`group_key` is all of these, with what the group cannot read left out:

* the placement's name and staleness (``Placement.name``, ``staleness``; the deployment's
  ``placement`` and ``staleness``): they shape the schedule of the iteration
  (``iteration.combine``), not a group's jobs, so a synchronous and an overlapped deployment
  of the same groups share their estimates;
* the placement's other groups and the deployment's settings of other groups
  (``Placement.groups``, ``Deployment.groups``): a group reads only its own, by its name
  (``Placement.group``, ``Deployment.group``: its layouts, settings, accelerator and engine),
  so a trainer group is shared by deployments whose rollout groups differ, and a group by
  the GPU splits of one placement that give it the same count; the key holds the group and
  its own settings instead;
* the tasks of other groups, but for what a group reads of them (``Setup.tasks``: the roles
  trained anywhere, for its shadow copies and LoRA; whether anything generates and the
  roles present, for the rollout buffers), and the TP degrees of models it does not run
  (``Setup.tp``: read by ``inputs.layouts_for`` for the group's own tasks);
* the run-wide engine settings (``Deployment.engine``) on a group with no generation task:
  only a group's generation reads its engine (``inputs.engine_for``: the layout of generate,
  the engine's reservation, slots, sleep and refit, all behind the group's generation task),
  but for whether it is DeepSpeed-Chat's Hybrid Engine, under which a LoRA reference loads
  weights of its own (``GroupTasks.shares_base``): such a group's key holds the engine;
* the trainer's layout (``Deployment.train``, ``forward`` and the Setup's ``base``) on a group
  that only generates, through an inference engine in its own layout (deployed, not a static
  batcher on the training weights such as HF ``generate``, no layout given for the group):
  ``inputs.layouts_for`` builds that layout from the engine's TP/PP/EP alone, and the
  trainer's offload, token budget and forward ZeRO apply to train and forward tasks only.

Everything else of the deployment is in the key as it is (a field added later is kept apart
by default). A group's own trainer settings that its passes and micro-batching read
(:mod:`rlmcost.placement.group_train`) are in its own settings, which every key holds, with
which fields it gives where that changes what they merge to (``_own``: pydantic's equality
leaves out which fields a model was given).
``tests/test_fast_equal.py`` checks random deployments against the evaluation without any
kept estimate.

Finer than a group: :func:`forward_key` keys a forward job's own numbers (its own bytes, time
and prediction; not the memory beside it) on the task in its final layout and the deployment
seen through the forwards' layout, so groups that differ only in how they train share their
forwards; :func:`per_query` keeps values of the query alone (response lengths, packings).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from rlmcost.algorithms.kinds import Kind
from rlmcost.deployment.spec import TrainLayout
from rlmcost.deployment.trainer_only import TRAINER_ONLY
from rlmcost.errors import SpecError
from rlmcost.memo import by_identities, per_object
from rlmcost.placement.device_groups import DeviceGroup, Task
from rlmcost.placement.group_train import PASS_FIELDS, given_key
from rlmcost.placement.inputs import Setup, engine_for
from rlmcost.placement.setup_part import Part as _Part
from rlmcost.placement.setup_part import group_part as _group_part
from rlmcost.placement.setup_part import setup_part as _setup_part
from rlmcost.placement.setup_part import table as _table

_FORWARD_READS = tuple(k for k in TRAINER_ONLY if k in PASS_FIELDS)
_TRAIN = tuple(TrainLayout.model_fields)  # a group's trainer layout over the run's: every field
"""The merged trainer fields (``group_train``) a forward's passes read (its pass options)."""


def group_key(setup: Setup, group: DeviceGroup, gpus: int) -> tuple[Any, ...]:
    """What one group's estimate depends on beyond the query (module docstring)."""
    part = _reads(setup, group, setup.deployment.group(group.name))
    own = _own(setup, group.name, part)
    tasks = _tasks_part(setup.tasks, group.name)
    tps = tuple((r, setup.tp.get(r)) for r in tasks.value[1])
    return (_setup_part(setup, part), tasks, tps, _group_part(group), own, gpus)


def _own(setup: Setup, name: str, part: str) -> Any:
    """Group ``name``'s own settings (``Deployment.group``) as a key part: with, where it
    changes what the group's merges give, which of its given fields go over the run's
    (``group_train.given_key``; pydantic's model equality leaves out which fields were given):
    of its engine where the part reads the engine, of its trainer and forward layouts where
    it reads the trainer's (a forward: the trainer's fields it reads, TRAINER_ONLY)."""
    dep = setup.deployment
    own = dep.group(name)
    if own is None or (own.engine is None and own.train is None and own.forward is None):
        return own
    trainer = _FORWARD_READS if part == "forward" else () if part == "no trainer" else _TRAIN
    given = given_key(dep, name, engine=part in ("all", "no trainer"), trainer=trainer,
                      forward=part != "no trainer")  # fmt: skip
    return own if given is None else (own, given)


@per_object()
def _tasks_part(tasks: tuple[Task, ...], name: str) -> _Part:
    """What group ``name`` reads of the placement's tasks (module docstring): its own tasks
    and roles, the roles trained anywhere, whether any task generates, the roles present."""
    mine = tuple(t for t in tasks if t.group == name)
    return _Part((mine, tuple(dict.fromkeys(t.role for t in mine)),
                  frozenset(t.role for t in tasks if t.kind is Kind.TRAIN),
                  any(t.kind is Kind.GENERATE for t in tasks),
                  frozenset(t.role for t in tasks)))  # fmt: skip


def _reads(setup: Setup, group: DeviceGroup, own: Any) -> str:
    """Which part of the Setup ``group`` reads (module docstring): "no engine", "no trainer"
    or "all"; kept per query by the identities of what it reads (the placement's tasks, the
    group, the run's engine and the group's own settings ``own``, ``dep.group(group.name)``;
    whether the run is ideal)."""
    seen, dep = setup.groups_seen, setup.deployment
    if seen is None:
        return _reads_of(setup, group)
    return by_identities(_table(seen, "reads"), (setup.tasks, group, dep.engine, own),
                         lambda: _reads_of(setup, group), also=(dep.ideal,))  # fmt: skip


def _reads_of(setup: Setup, group: DeviceGroup) -> str:
    kinds = _kinds_of(setup.tasks, group.name)
    if Kind.GENERATE not in kinds:
        # but whether the engine is DeepSpeed-Chat's Hybrid Engine (a LoRA reference's own
        # weights, ``GroupTasks.shares_base``): then the group reads the engine
        part = "all" if engine_for(setup, group.name).kind.hybrid_engine else "no engine"
    elif (
        kinds == {Kind.GENERATE}
        and not setup.deployment.ideal
        and group.layout(Kind.GENERATE) is None
        and not engine_for(setup, group.name).kind.static
    ):
        part = "no trainer"
    else:
        part = "all"
    return part


@per_object()
def _kinds_of(tasks: tuple[Task, ...], name: str) -> frozenset[Kind]:
    """The kinds of group ``name``'s tasks (kept per task tuple: a placement's)."""
    return frozenset(t.kind for t in _tasks_part(tasks, name).value[0])


def forward_key(g: Any, task: Task, layout: Any) -> tuple[Any, ...]:
    """What a forward job's own numbers (its own bytes, roofline time, prediction; not the
    memory beside it, which the whole group sets) depend on beyond the query, on the group of
    model ``g`` (a ``GroupModel``): the task in its final layout on its group, and the
    deployment with the forwards' layout
    (``Deployment.forward_layout``) in place of the trainer's and the forward's and without
    the engine: a forward reads the trainer's layout only through the forwards' (the token
    budget of its packed micro-batches; its layout, ZeRO stage and budget are in ``layout``),
    no engine setting but whether it is DeepSpeed-Chat's Hybrid Engine (``inputs.layouts_for``
    reads the engine for generation only), and the
    trainer's offload only for training (``GroupTasks._deployed``). ``group_jobs`` keeps a
    forward under this key with NeMo RL's reference swap seconds beside it
    (``group_passes.reference_swap_s_of``: the actor trainer's weights per rank as its worker
    holds them, ``reference_swap.reference_swap_bytes``; its
    ``param_dtype`` and shard, which this key does not hold)."""
    return ("forward", task, layout, _kept_part(g, "forward"))


def task_key(g: Any, task: Task, layout: Any) -> tuple[Any, ...] | None:
    """What a training or forward task's own numbers on the group of model ``g`` (its own
    bytes and host bytes, ``GroupTasks.own``; what the other models add beside it,
    ``GroupMemory._beside``; a training job's time and prediction, ``group_jobs``; not the
    rest of the memory beside it) depend on beyond the query: :func:`group_key` without the
    run-wide engine settings, which only the group's generation reads (module docstring), and
    with the task in its final layout. So a colocated group's forwards and updates are shared
    by the deployments that differ only in how the group generates. None where no other
    group estimate can share them: a group that generates nothing (its :func:`group_key`
    holds no engine either) or one on DeepSpeed-Chat's Hybrid Engine (whose engine a
    trainer reads, ``GroupTasks.shares_base``)."""
    part = _kept_part(g, "task")
    return None if part is None else (task, layout, part)


def _kept_part(g: Any, which: str) -> Any:
    """The group's part of :func:`forward_key` or :func:`task_key` (``which``; None: a
    task key shares nothing), made once per group model (``g.kept``) and interned per query,
    so keys holding it hash it once and compare it by identity."""
    name = ("key part", which)
    if name in g.kept:
        return g.kept[name]
    setup, group = g.s, g.group
    # DeepSpeed-Chat's Hybrid Engine: the one engine setting a forward reads (its forwards
    # wait for their ZeRO-3 gathers in line, group_dschat.dschat_group)
    hybrid = engine_for(setup, group.name).kind.hybrid_engine
    kept = None
    tasks = _tasks_part(setup.tasks, group.name)
    # kept in the part: one per equal value (_stored)
    own = _shared(setup.groups_seen, _own(setup, group.name,
                                          "forward" if which == "forward" else "no engine"))
    if which == "forward":
        kept = _Part((_setup_part(setup, "forward"), tasks, _group_part(group), own, g.gpus,
                      hybrid))  # fmt: skip
    elif not hybrid and any(t.kind is Kind.GENERATE for t in g.tasks):
        # the TP degrees of the group's models, as group_key: the other models' layouts
        # beside a task (GroupMemory._beside) read them
        tps = _shared(setup.groups_seen, tuple((r, setup.tp.get(r)) for r in tasks.value[1]))
        kept = _Part((_setup_part(setup, "no engine"), tasks, tps, _group_part(group), own,
                      g.gpus))  # fmt: skip
    if kept is not None:
        seen = setup.groups_seen
        kept = kept if seen is None else seen.setdefault(kept, kept)
    g.kept[name] = kept
    return kept


def per_query(setup: Setup, key: Any, compute: Callable[[], Any]) -> Any:
    """``compute()``, a value that depends on the query alone (and ``key``, hashable), kept in
    ``setup.groups_seen`` for every deployment of the query (None: computed afresh); an
    exception is not kept."""
    seen = setup.groups_seen
    if seen is None:
        return compute()
    full = ("query", key)
    try:
        return seen[full]
    except KeyError:
        out = seen[full] = compute()
        return out


def _stored(seen: dict[Any, Any], key: tuple[Any, ...]) -> tuple[Any, ...]:
    """``key`` as kept: its TP degrees and the group's own settings (a pydantic model of the
    deployment) replaced by the first equal ones of the query (:func:`_shared`), so that the
    kept keys hold one of each instead of one per deployment that made a key (fewer objects
    for the collector to walk); equal to ``key``."""
    setup_part, tasks, tps, group, own, gpus = key
    return (setup_part, tasks, _shared(seen, tps), group, _shared(seen, own), gpus)


def _shared(seen: dict[Any, Any] | None, value: Any) -> Any:
    """The first value equal to ``value`` kept in the query's ``seen`` (``value`` itself when
    nothing is kept or it is None)."""
    if seen is None or value is None:
        return value
    return seen.setdefault(("shared", value), value)


def recall(setup: Setup, group: DeviceGroup, gpus: int,
           compute: Callable[[], Any]) -> Any:  # fmt: skip
    """``compute()`` (the group's estimate), or the one kept in ``setup.groups_seen`` under
    :func:`group_key`; a SpecError is kept and raised again (a fresh copy each time). Found
    first by the identities of what the key is made of (its Setup part, kept per query; the
    placement's tasks, the group, its own settings, the models' TP degrees; the GPUs and the
    part as values), which the deployments of a query share more often than not: no key
    built, hashed and compared then."""
    seen = setup.groups_seen
    if seen is None:
        return compute()
    own = setup.deployment.group(group.name)
    part = _reads(setup, group, own)
    objs = (_setup_part(setup, part), setup.tasks, group, own, *setup.tp)
    out = by_identities(_table(seen, "estimates"), objs,
                        lambda: _found(seen, setup, group, gpus, compute),
                        most=16384, also=(gpus, part, *setup.tp.values()))  # fmt: skip
    if isinstance(out, SpecError):
        raise copy.copy(out).with_traceback(None)
    return out


def _found(seen: dict[Any, Any], setup: Setup, group: DeviceGroup, gpus: int,
           compute: Callable[[], Any]) -> Any:  # fmt: skip
    """The estimate kept under :func:`group_key`, else ``compute()`` kept (or its SpecError)."""
    key = group_key(setup, group, gpus)
    try:
        return seen[key]
    except KeyError:
        try:
            out = compute()
        except SpecError as exc:
            out = exc
        seen[_stored(seen, key)] = out
        return out
