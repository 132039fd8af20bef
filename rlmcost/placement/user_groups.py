"""A deployment's own device groups as the evaluation places them (``--groups`` and a Run's
``deployment.groups``): each group parsed (:func:`~rlmcost.placement.groups.parse_groups`)
with its layouts per kind of task, its members spelled as parsed, its accelerator's calibration
and host link (:func:`rlmcost.evaluation.deployment.evaluate_in` reads them)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rlmcost import memo
from rlmcost.algorithms.kinds import Kind
from rlmcost.deployment.given import forwards_given, given_fields, layered
from rlmcost.deployment.group_engine import merged_engine
from rlmcost.deployment.megatron_engine import megatron_degrees
from rlmcost.deployment.spec import Deployment
from rlmcost.parallel.layout import Layout
from rlmcost.placement.inputs import GroupDevice
from rlmcost.placement.query import _host_bandwidth
from rlmcost.specs import HardwareSpec, get_hardware
from rlmcost.timing import PEAK

if TYPE_CHECKING:
    from rlmcost.placement.groups import DeviceGroup


def device_groups_of(dep: Deployment) -> tuple[DeviceGroup, ...] | None:
    """The deployment's device groups, with their per-kind layouts (None: no groups), kept by
    the identities of what they read (the planner's candidates share a Run's sections)."""
    if not dep.groups:
        return None
    return memo.by_identities(_GROUPS, (dep.engine, dep.train, dep.forward, *dep.groups),
                              lambda: _groups_of(dep))  # fmt: skip


_GROUPS = memo.table()


def _groups_of(dep: Deployment) -> tuple[DeviceGroup, ...]:
    """:func:`device_groups_of`, computed."""
    own = [g.engine and g.engine.tp and merged_engine(dep.engine, g.engine) for g in dep.groups]
    t = dep.train
    generate = tuple((e.tp, *megatron_degrees(e.pp, e.ep, t.pp, t.ep), t.etp)
                     if e and e.kind == "megatron" else (e.tp, e.pp, e.ep, None) if e else None
                     for e in own)  # Megatron: the policy's PP, EP, expert TP unless given
    run = (dep.train, dep.forward_layout(), given_fields(dep.groups))  # layered reads them
    return _parsed_groups(tuple(dep.groups), generate, run)


@memo.memoized()
def _parsed_groups(groups: tuple[Any, ...], generate: tuple[Any, ...],
                   run: tuple[Any, Any, Any]) -> tuple[DeviceGroup, ...]:  # fmt: skip
    """:func:`device_groups_of` of the deployment's groups, each with the TP, PP, EP of its
    engine merged over the run's (``generate``; None: none of its own) laying out its
    generation, its own layouts over the run's trainer and forward layouts (``run``, with
    the fields each gives; ``deployment.given.layered``), its forwards by its trainer layout
    where it gives no forward layout (kept on these: the planner repeats them)."""
    from rlmcost.placement.groups import parse_groups

    out = []
    for g, gen in zip(groups, generate, strict=True):
        at, brackets = f"@{g.hardware}" * bool(g.hardware), f"[{g.settings}]" * bool(g.settings)
        (parsed,) = parse_groups(f"{g.members}={g.gpus}{at}{brackets}")
        forward = g.forward or (g.train and forwards_given(g.train))
        layouts = [(kind, layered(own, base).layout()) for kind, own, base in
                   ((Kind.TRAIN, g.train, run[0]), (Kind.FORWARD, forward, run[1])) if own]
        if gen is not None:
            layouts.append((Kind.GENERATE, Layout(tp=gen[0], pp=gen[1], ep=gen[2], etp=gen[3])))
        out.append(replace(parsed, layouts=tuple(layouts)))
    return tuple(out)


def canonical(dep: Deployment, groups: tuple[DeviceGroup, ...] | None) -> Deployment:
    """``dep`` with its groups' members spelled as the parsed groups name them."""
    if not dep.groups or groups is None:
        return dep
    if all(g.members == p.name and g.hardware == p.hardware
           for g, p in zip(dep.groups, groups, strict=False)):  # fmt: skip
        return dep  # spelled so already (the planner's candidates)
    renamed = tuple(g.model_copy(update={"members": parsed.name, "hardware": parsed.hardware})
                    for g, parsed in zip(dep.groups, groups, strict=False))  # fmt: skip
    return dep.model_copy(update={"groups": renamed})


def group_devices(groups: tuple[DeviceGroup, ...] | None, hw: HardwareSpec,
             given_host: float | None) -> dict[str, GroupDevice]:  # fmt: skip
    """The accelerators groups name other than the run's (``@h20``), each with the calibration
    profile shipped for it (else datasheet peaks; the Run's ``calibration`` file is the run
    hardware's) and its host link (the Run's ``host_bandwidth_gb_per_s`` when given)."""
    out: dict[str, GroupDevice] = {}
    for g in groups or ():
        if g.hardware is None or g.hardware == hw.name or g.hardware in out:
            continue
        from rlmcost.calibrate import resolve_profile  # only for a group's own accelerator

        own = get_hardware(g.hardware)
        host = _host_bandwidth(own, given_host * 1e9 if given_host is not None else None)
        out[own.name] = GroupDevice(own, resolve_profile(None, own) or PEAK, host)
    return out
