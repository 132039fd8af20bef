"""A Run with fields changed (:meth:`Run.replace <rlmcost.run.spec.Run.replace>`), and the
same Run built from validated parts where most of it is a Run already validated.

:func:`replaced_data` is the data a changed Run is validated from (the Run's JSON with the
sections merged over it, a kept forward layout following a new trainer layout).
:func:`replaced` gives ``Run.from_data`` of that data, equal to it (``==`` and ``to_json``),
for a fraction of the cost where many Runs differ from one base in a few fields (the
candidates of ``rlmcost plan``): the data is the same (the same functions write it, the
framework defaults included, :mod:`rlmcost.run.defaults`), but each section and each nested
layout is validated once per distinct value (:func:`part`, keyed on the value and its types)
and handed to pydantic as a model instance, which it takes as it is (``revalidate_instances``
is ``never``); the model validators of the Run and of its Deployment still run on each new
Run. Anything the parts reject goes the whole way (``Run.from_data``), so a rejection says
what it says on that path, word for word.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from rlmcost.run.spec import Run


def replaced_data(data: dict[str, Any], sections: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a Run's JSON, owned by the caller: changed in place) with ``sections``
    merged over it, nested by section: a forward layout that ran on the trainer's layout
    with its own batching follows a new trainer layout (keeps only its batching), and a
    kept forward layout takes the trainer-only fields the new trainer layout sets
    (``defaults.forward_follows``)."""
    from rlmcost.deployment.batching import following_batching
    from rlmcost.run.defaults import forward_follows  # a kept forward's trainer-only fields
    from rlmcost.run.spec import merge

    dep = sections.get("deployment")
    if isinstance(dep, dict) and "train" in dep and "forward" not in dep:
        d = data["deployment"]
        batching = following_batching(d["forward"], d["train"])
        if batching is not None:  # the forwards ran on the trainer's layout: they follow it
            d["forward"] = None
            sections = {**sections, "deployment": {**dep, "forward": batching}}
    if isinstance(dep, dict):
        forward_follows(data["deployment"].get("forward"), dep.get("train"), dep.get("forward"))
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = merge(data[key], value)
        elif isinstance(value, BaseModel):
            data[key] = value.model_dump(mode="json")
        else:
            data[key] = value
    return data


_LAST: list[Any] = [(None, None, None)]  # (the base Run last replaced, its JSON, its parts)


def replaced(base: Run, **sections: Any) -> Run:
    """``base.replace(**sections)``, equal to it, from validated parts (module docstring);
    whatever a part rejects goes the whole way (``base.replace``), so a rejection is its
    error, word for word."""
    from rlmcost.run.defaults import with_framework_defaults

    last = _LAST[0]
    if last[0] is not base:  # the triple is read and written whole (threads never mix them)
        data = base.to_json()
        last = (base, data, _known(data))
        _LAST[0] = last
    try:
        data = with_framework_defaults(replaced_data(_copied(last[1]), sections))
        return _run(data, last[2])
    except Exception:  # noqa: BLE001 - whatever a part rejects, the whole way says
        return base.replace(**sections)


Known = dict[int, tuple[Any, BaseModel]]
"""The parts of a base Run's JSON by the id of their data (kept alive beside them)."""


def _known(data: dict[str, Any]) -> Known:
    """The parts of a Run's JSON (its sections, its deployment's layouts and engine): a
    changed Run's data keeps the ones a change leaves (the same objects: :func:`_copied`)."""
    out: Known = {}
    dep = data.get("deployment") or {}
    for where, parts in ((data, _RUN_PARTS), (dep, _DEPLOYMENT_PARTS)):
        for key, cls in parts.items():
            value = where.get(key)
            if isinstance(value, dict):
                try:
                    out[id(value)] = (value, part(cls(), value))
                except Exception:  # noqa: BLE001 - not a part here: validated with its Run
                    pass
    return out


def _part(cls: Any, value: dict[str, Any], known: Known) -> BaseModel:
    hit = known.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    return part(cls(), value)


def _run(data: dict[str, Any], known: Known) -> Run:
    """``Run(**data)`` with each section a validated part (:func:`part`)."""
    from rlmcost.run.spec import Run

    fields = dict(data)
    for key, value in data.items():
        if key == "deployment" and isinstance(value, dict):
            fields[key] = _deployment(value, known)
        elif isinstance(value, dict) and key in _RUN_PARTS:
            fields[key] = _part(_RUN_PARTS[key], value, known)
    return Run(**fields)


def _deployment(data: dict[str, Any], known: Known) -> Any:
    """``Deployment(**data)`` with its layouts, engine, groups and overheads validated parts;
    its own validator (the forward layout over the trainer's) runs as pydantic builds it."""
    from rlmcost.deployment.spec import Deployment, GroupLayouts

    fields = dict(data)
    for key, value in data.items():
        if isinstance(value, dict) and key in _DEPLOYMENT_PARTS:
            fields[key] = _part(_DEPLOYMENT_PARTS[key], value, known)
        elif key == "groups" and isinstance(value, list | tuple) and \
                all(isinstance(g, dict) for g in value):  # fmt: skip
            fields[key] = tuple(part(GroupLayouts, g) for g in value)
    return Deployment(**fields)


def _lazy(path: str) -> Callable[[], type[BaseModel]]:
    """The class at ``module.Name``, imported when first called and kept
    (:mod:`rlmcost.run.spec` imports this module)."""
    module, _, name = path.rpartition(".")
    kept: list[type[BaseModel]] = []

    def load() -> type[BaseModel]:
        if not kept:
            from importlib import import_module

            kept.append(getattr(import_module(module), name))
        return kept[0]

    return load


_RUN_PARTS = {key: _lazy(f"rlmcost.run.spec.{name}") for key, name in (
    ("algorithm", "AlgorithmSpec"), ("models", "ModelsSpec"), ("workload", "WorkloadSpec"),
    ("cluster", "ClusterSpec"))}  # fmt: skip
_DEPLOYMENT_PARTS = {key: _lazy(path) for key, path in (
    ("train", "rlmcost.deployment.spec.TrainLayout"),
    ("forward", "rlmcost.deployment.spec.TrainLayout"),
    ("engine", "rlmcost.deployment.engine.EngineSpec"),
    ("lora", "rlmcost.deployment.spec.LoraSpec"),
    ("overhead", "rlmcost.deployment.overhead.Overhead"))}  # fmt: skip

_PARTS: dict[tuple[type[BaseModel], bytes], BaseModel] = {}
_MAX_PARTS = 4096


def part(cls: type[BaseModel], value: dict[str, Any]) -> BaseModel:
    """``cls(**value)``, once per distinct ``value``: keyed on its ``marshal`` bytes, which
    say each value with its exact type (1, 1.0 and True apart; a subclass, an enum member or
    anything not plain data is refused with a ValueError, so it goes the whole way) and
    read back to the same value. A rejection raises as pydantic raises it."""
    key = (cls, marshal.dumps(value))
    found = _PARTS.get(key)
    if found is None:
        if len(_PARTS) >= _MAX_PARTS:
            _PARTS.clear()
        found = _PARTS[key] = cls(**value)
    return found


def _copied(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a Run's JSON that merging into it (:func:`replaced_data`) and the framework
    defaults leave the original of: they change the top mapping, the deployment's, its
    trainer layout (a token budget dropped) and its forward layout (the trainer-only fields
    it takes), nothing else in place; the other sections stay the same objects (their parts
    known, :func:`_known`)."""
    dep = dict(data["deployment"])
    for key in ("train", "forward"):
        if isinstance(dep.get(key), dict):
            dep[key] = dict(dep[key])
    return {**data, "deployment": dep}
