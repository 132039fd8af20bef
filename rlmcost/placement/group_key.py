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
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from rlmcost.algorithms.kinds import Kind
from rlmcost.deployment.spec import EngineSpec, TrainLayout
from rlmcost.deployment.trainer_only import TRAINER_ONLY
from rlmcost.errors import SpecError
from rlmcost.memo import Hashed, per_object
from rlmcost.placement.device_groups import DeviceGroup, Task
from rlmcost.placement.group_train import PASS_FIELDS, given_key
from rlmcost.placement.inputs import Setup, engine_for

_DEFAULT_ENGINE = EngineSpec()
_FORWARD_READS = tuple(k for k in TRAINER_ONLY if k in PASS_FIELDS)
_TRAIN = tuple(TrainLayout.model_fields)  # a group's trainer layout over the run's: every field
"""The merged trainer fields (``group_train``) a forward's passes read (its pass options)."""
_DEFAULT_TRAIN = TrainLayout()


def group_key(setup: Setup, group: DeviceGroup, gpus: int) -> tuple[Any, ...]:
    """What one group's estimate depends on beyond the query (module docstring)."""
    part = _reads(setup, group)
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


def _reads(setup: Setup, group: DeviceGroup) -> str:
    """Which part of the Setup ``group`` reads (module docstring): "no engine", "no trainer"
    or "all"; kept per Setup and group name."""
    kept = _parts_of(setup)
    if ("reads", group.name) not in kept:
        kept["reads", group.name] = _reads_of(setup, group)
    return kept["reads", group.name]


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


_Part = Hashed
"""A Setup's part of a group key, hashed once; equal parts are one object per query
(``recall`` interns them), so a kept estimate is found by identity."""


_LAST: list[Any] = [(None, {})]  # (the Setup last keyed, its parts): allocate asks many times


def _parts_of(setup: Setup) -> dict[Any, Any]:
    """The key parts kept for ``setup`` (one tuple read and written whole: threads that key
    different Setups never see each other's parts)."""
    last = _LAST[0]
    if last[0] is not setup:
        last = (setup, {})
        _LAST[0] = last
    return last[1]
_GROUPS: dict[int, tuple[Any, _Part]] = {}  # by id, the object kept beside its part
MAX_GROUP_PARTS = 4096
"""Device groups whose key part is kept by identity before the table starts over."""


def _by_identity(obj: Any, make: Callable[[Any], Any]) -> _Part:
    """``_Part((make(obj),))``, hashed once per object ``obj`` (the placements, their task
    tuples and groups are memoized objects that every deployment of a query shares)."""
    hit = _GROUPS.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    part = _Part((make(obj),))
    if len(_GROUPS) >= MAX_GROUP_PARTS:
        _GROUPS.clear()
    _GROUPS[id(obj)] = (obj, part)
    return part


def _group_part(group: DeviceGroup) -> _Part:
    return _by_identity(group, lambda g: g)


def _setup_part(setup: Setup, part: str) -> _Part:
    parts = _parts_of(setup)
    if ("part", part) not in parts:
        dep = setup.deployment
        base = None if part in ("forward", "no trainer") else setup.base
        placement = _by_identity(setup.placement, _unnamed)
        seen = setup.groups_seen
        if ("fields",) not in parts:  # the deployment's fields in order (extra="forbid")
            parts["fields",] = {k: _interned(seen, v) if isinstance(v, BaseModel) else v
                                for k, v in dep.__dict__.items()}  # fmt: skip
        values = dict(parts["fields",])
        # with the part's replaced ones (``model_copy(update=...)`` without the copy); those
        # that are the same for every deployment interned once per query
        if part == "forward":
            values.update({k: _interned(seen, v) for k, v in _replaced(part, dep).items()})
        else:
            values.update(_constants(seen, part))
        fields = tuple(values.items())
        made = _Part((placement, base, fields))
        parts["part", part] = made if seen is None else seen.setdefault(made, made)  # interned
    return parts["part", part]


def _replaced(part: str, dep: Any) -> dict[str, Any]:
    """The deployment's fields that Setup part ``part`` replaces (module docstring; ``dep``
    is read for "forward" only): the schedule's fields always, the engine where the group
    reads none, the trainer's layout where it reads none."""
    update: dict[str, Any] = {"placement": None, "staleness": None, "groups": None}
    if part == "no engine":
        update["engine"] = _DEFAULT_ENGINE
    elif part == "forward":  # a forward job's own numbers (forward_key)
        # the trainer's fields the forwards' passes read (deployment.trainer_only)
        trainer = tuple(getattr(dep.train, k) for k in TRAINER_ONLY)
        update.update(engine=_DEFAULT_ENGINE, train=trainer, forward=dep.forward_layout())
    elif part == "no trainer":
        update.update(train=_DEFAULT_TRAIN, forward=None)
    return update


def _constants(seen: dict[Any, Any] | None, part: str) -> dict[str, Any]:
    """:func:`_replaced` of a part other than "forward" (the same values for every
    deployment), interned (:func:`_interned`) once per query."""
    key = ("constant fields", part)
    kept = seen.get(key) if seen is not None else None
    if kept is None:
        kept = {k: _interned(seen, v) for k, v in _replaced(part, None).items()}
        if seen is not None:
            seen[key] = kept
    return kept


def _interned(seen: dict[Any, Any] | None, value: Any) -> Any:
    """``value`` as a key part: a field of the deployment that is a model (its layouts, engine,
    LoRA, overheads) as one :class:`_Part` per equal value in the query's ``seen``, hashed and
    compared once per object (the planner's candidates share their validated sections), so
    that the parts made of it compare by identity; other values (and everything inside
    :func:`rlmcost.memo.plain`) as they are."""
    if seen is None or not isinstance(value, BaseModel):
        return value
    hit = seen.get(("field id", id(value)))  # the same object (a Run's shared section)
    if hit is not None and hit[0] is value:
        return hit[1]
    made = _Part(("field", value))
    made = seen.setdefault(made, made)
    seen["field id", id(value)] = (value, made)  # the object kept beside: its id not reused
    return made


def _unnamed(placement: Any) -> Any:
    """The placement less its name, staleness and groups (module docstring)."""
    return replace(placement, name="", staleness=0, groups=())


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
    (``group_passes.reference_swap_s_of``: the actor trainer's weights per rank, its
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
    :func:`group_key`; a SpecError is kept and raised again (a fresh copy each time)."""
    seen = setup.groups_seen
    if seen is None:
        return compute()
    key = group_key(setup, group, gpus)
    try:
        out = seen[key]
    except KeyError:
        try:
            out = compute()
        except SpecError as exc:
            out = exc
        seen[_stored(seen, key)] = out
    if isinstance(out, SpecError):
        raise copy.copy(out).with_traceback(None)
    return out
