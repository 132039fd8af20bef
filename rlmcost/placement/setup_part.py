"""A Setup's part of a group key (:mod:`rlmcost.placement.group_key`): the deployment's
fields and the user's layout as a group's estimate reads them, the placement less its name,
staleness and groups, each model field one interned part per equal value in the query, the
whole one :class:`Part` per equal value (so that the keys holding it hash it once and compare
it by identity). Kept per query by the identities of what each part reads (the planner's
candidates share their validated sections, ``run.replacing``) and per Setup; the parts a
group reads are named in ``group_key``'s docstring ("all", "no engine", "no trainer",
"forward")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from operator import itemgetter
from typing import Any

from pydantic import BaseModel

from rlmcost.deployment.spec import Deployment, EngineSpec, TrainLayout
from rlmcost.deployment.trainer_only import TRAINER_ONLY
from rlmcost.memo import Hashed, by_identities
from rlmcost.placement.device_groups import DeviceGroup
from rlmcost.placement.inputs import Setup

_DEFAULT_ENGINE = EngineSpec()
_DEFAULT_TRAIN = TrainLayout()

Part = Hashed
"""A Setup's part of a group key, hashed once; equal parts are one object per query
(interned), so a kept estimate is found by identity."""


_LAST: list[Any] = [(None, {})]  # (the Setup last keyed, its parts): allocate asks many times


def _parts_of(setup: Setup) -> dict[Any, Any]:
    """The key parts kept for ``setup`` (one tuple read and written whole: threads that key
    different Setups never see each other's parts)."""
    last = _LAST[0]
    if last[0] is not setup:
        last = (setup, {})
        _LAST[0] = last
    return last[1]


_GROUPS: dict[int, tuple[Any, Part]] = {}  # by id, the object kept beside its part
_INTERNED: dict[Part, Part] = {}  # one part per equal value (placements of one shape)
MAX_GROUP_PARTS = 4096
"""Device groups whose key part is kept by identity before the table starts over."""


def _by_identity(obj: Any, make: Callable[[Any], Any]) -> Part:
    """``Part((make(obj),))``, hashed once per object ``obj`` (the placements, their task
    tuples and groups are memoized objects that every deployment of a query shares), one per
    equal value (a synchronous and an overlapped placement share their unnamed part)."""
    hit = _GROUPS.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    part = Part((make(obj),))
    if len(_GROUPS) >= MAX_GROUP_PARTS:
        _GROUPS.clear()
        _INTERNED.clear()
    part = _INTERNED.setdefault(part, part)
    _GROUPS[id(obj)] = (obj, part)
    return part


def group_part(group: DeviceGroup) -> Part:
    """The group as a key part (one per equal group)."""
    return _by_identity(group, lambda g: g)


def table(seen: dict[Any, Any], name: str) -> dict[Any, Any]:
    """The query's table ``name`` of values kept by identities (``memo.by_identities``)."""
    key = ("kept by identities", name)
    kept = seen.get(key)
    if kept is None:
        kept = seen[key] = {}
    return kept


def _fields(*left: str) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """The Deployment's fields a Setup part holds as they are (all but ``left`` and the ones
    every part replaces; the framework's name, a new string per Run, is keyed by value)."""
    return itemgetter(*(k for k in Deployment.model_fields
                        if k not in ("placement", "staleness", "groups", "framework", *left)))


_READ = {"all": _fields(), "no engine": _fields("engine"), "forward": _fields("engine"),
         "no trainer": _fields("train", "forward")}  # fmt: skip
"""What each Setup part reads of the deployment's fields (:func:`_replaced`; "forward"
reads the trainer's and forwards' layouts through what it makes of them)."""


def setup_part(setup: Setup, part: str) -> Part:
    """The Setup's part ``part`` of a group key, kept per query by the identities of what it
    reads (the unnamed placement, the user's layout where the part reads it, the deployment's
    fields but the ones the part replaces, which the planner's candidates share) and per
    Setup."""
    parts = _parts_of(setup)
    made = parts.get(("part", part))
    if made is None:
        seen, dep = setup.groups_seen, setup.deployment
        if seen is None:
            made = _setup_part_of(setup, part)
        else:
            base = None if part in ("forward", "no trainer") else setup.base
            objs = (_by_identity(setup.placement, _unnamed), base, *_READ[part](dep.__dict__))
            made = by_identities(table(seen, "setup parts"), objs,
                                 lambda: _setup_part_of(setup, part),
                                 also=(part, dep.framework))  # fmt: skip
        parts["part", part] = made
    return made


def _setup_part_of(setup: Setup, part: str) -> Part:
    dep = setup.deployment
    base = None if part in ("forward", "no trainer") else setup.base
    placement = _by_identity(setup.placement, _unnamed)
    seen = setup.groups_seen
    # the deployment's fields in order (extra="forbid"), with the part's replaced ones
    # (``model_copy(update=...)`` without the copy); those that are the same for every
    # deployment interned once per query
    values = {k: _interned(seen, v) if isinstance(v, BaseModel) else v
              for k, v in dep.__dict__.items()}  # fmt: skip
    if part == "forward":
        values.update({k: _interned(seen, v) for k, v in _replaced(part, dep).items()})
    else:
        values.update(_constants(seen, part))
    made = Part((placement, base, tuple(values.items())))
    return made if seen is None else seen.setdefault(made, made)  # interned


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
    LoRA, overheads) as one :class:`Part` per equal value in the query's ``seen``, hashed and
    compared once per object (the planner's candidates share their validated sections), so
    that the parts made of it compare by identity; other values (and everything inside
    :func:`rlmcost.memo.plain`) as they are."""
    if seen is None or not isinstance(value, BaseModel):
        return value
    hit = seen.get(("field id", id(value)))  # the same object (a Run's shared section)
    if hit is not None and hit[0] is value:
        return hit[1]
    made = Part(("field", value))
    made = seen.setdefault(made, made)
    seen["field id", id(value)] = (value, made)  # the object kept beside: its id not reused
    return made


def _unnamed(placement: Any) -> Any:
    """The placement less its name, staleness and groups (module docstring)."""
    return replace(placement, name="", staleness=0, groups=())
