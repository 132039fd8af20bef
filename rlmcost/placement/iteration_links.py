"""The weight syncs of a loop without stage fusion as schedule units, kept beside the groups'
part of the iteration.

Without fusion :func:`rlmcost.placement.iteration.combine` schedules the groups' units as
built once per tuple of estimates (:mod:`rlmcost.placement.iteration_groups`) and one unit per
weight sync after them (its link). The syncs (:func:`rlmcost.placement.weight_syncs.
weight_syncs`) read the groups, their units' keys and, of the deployment, whether it is the
paper's ideal, its framework, whether generation streams (``partial_rollout``) and the
engine refit setting of each group a sync reaches (``_refit_kind``; a group with shadow copies
of a trained model): the same values for the deployments of a query
that share their groups and those settings (a synchronous and an overlapped loop on the same
groups). :func:`link_part` keeps per such key, on the groups' part (``IterationGroups.labels``),
the syncs, their links as ``schedule`` takes them, the whole units' shape and weights (the
groups' units, then the links', computed as ``combine`` computed them) and the iteration's
phases (``iteration._phases``), so that a deployment reads them instead of building them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rlmcost.algorithms.kinds import Kind, Stage
from rlmcost.perf.interval import Spread, job_spread, transfer_spread
from rlmcost.placement.estimate import Phase
from rlmcost.placement.inputs import Setup, engine_for
from rlmcost.placement.iteration_groups import IterationGroups
from rlmcost.placement.jobs import GroupEstimate, Transfer
from rlmcost.placement.weight_syncs import weight_syncs
from rlmcost.specs import HardwareSpec

Link = tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""A link as ``schedule`` takes it: (unit, after, readers, stalled first units, the trainer's
first and last units)."""


@dataclass(frozen=True, slots=True)  # no __dict__: one object fewer each for the collector
class LinkPart:
    """The weight syncs of a loop without fusion on one groups' part (module docstring):
    ``syncs`` and ``links`` as :func:`weight_syncs` returns them (each link's readers a
    tuple); ``frozen``: the links as ``schedule`` takes them; ``link_shape``: the links'
    units' shapes (the whole shape is the groups' units', ``IterationGroups.shape``, then
    these); ``w_t`` ... ``high``: every unit's weights; ``phases``: the iteration's phases.
    Of plain values but the syncs and phases, so that the collector lets go of the rest."""

    syncs: tuple[Transfer, ...]
    links: tuple[tuple[str, str, tuple[str, ...], tuple[str, str] | None], ...]
    frozen: tuple[Link, ...]
    link_shape: tuple[tuple[str, str, Stage | None, bool], ...]
    w_t: tuple[Any, ...]
    w_p: tuple[Any, ...]
    w_d: tuple[Any, ...]
    low: tuple[Any, ...]
    high: tuple[Any, ...]
    phases: tuple[Phase, ...]


def link_part(setup: Setup, static: IterationGroups, groups: Sequence[GroupEstimate],
              phases: Callable[[IterationGroups, Sequence[Transfer]], tuple[Phase, ...]]
              ) -> LinkPart:  # fmt: skip
    """The :class:`LinkPart` of ``groups`` (their part ``static``) under ``setup``'s
    deployment, kept on ``static`` by what the syncs read of the deployment (module
    docstring; nothing kept where the query keeps nothing, ``Setup.groups_seen`` None).
    ``phases``: ``iteration._phases``."""
    if setup.groups_seen is None:
        return _build(setup, static, groups, phases)
    dep = setup.deployment
    refits = None if dep.ideal else tuple(engine_for(setup, g.name).refit for g in groups
                                          if g.shadows)  # the groups a sync reaches
    # led by None: no label's key (a tuple of unit keys, strings); of plain values, which the
    # collector does not track
    key = (None, dep.ideal, dep.framework, dep.partial_rollout, refits)
    hit = static.labels.get(key)
    if hit is None:
        hit = static.labels[key] = _build(setup, static, groups, phases)
    return hit


def _build(setup: Setup, static: IterationGroups, groups: Sequence[GroupEstimate],
           phases: Callable[[IterationGroups, Sequence[Transfer]], tuple[Phase, ...]]
           ) -> LinkPart:  # fmt: skip
    """``combine``'s link units as it built them (the same values in the same order)."""
    syncs, links = weight_syncs(setup, groups, static.key_of)
    shape, w_t, w_p = list(static.shape), list(static.w_t), list(static.w_p)
    w_d, low, high = list(static.w_d), list(static.low), list(static.high)
    frozen = append_links(syncs, links, (static.first_of, static.last_of), shape,
                          (w_t, w_p, w_d, low, high), [])  # fmt: skip
    return LinkPart(tuple(syncs), tuple((w, a, tuple(r), s) for w, a, r, s in links), frozen,
                    tuple(shape[len(static.shape):]), tuple(w_t), tuple(w_p), tuple(w_d),
                    tuple(low), tuple(high), phases(static, syncs))  # fmt: skip


def append_links(syncs: Sequence[Transfer],
                 links: Sequence[tuple[str, str, Sequence[str], tuple[str, str] | None]],
                 ends: tuple[dict[str, str], dict[str, str]], shape: list[Any],
                 weights: Sequence[list[Any]], spreads: list[Any]) -> tuple[Link, ...]:
    """One unit per link appended to ``shape``, ``weights`` (bound, prediction, depth, and
    where given the prediction's low and high ends) and ``spreads`` (each sync's spread),
    and the links as ``schedule`` takes them (``ends``: each resource's first and last
    unit)."""
    first_of, last_of = ends
    frozen: list[Link] = []
    for what, after, readers, stall in links:
        sync = next(s for s in syncs if s.what == what)
        # a refit into engines stalls both sides (iteration's docstring; schedule.Link): the
        # trainer's next iteration waits for it, the engines' group pauses for it
        shape.append((what, f"link:{what}", None, False))
        weights[0].append(sync.time_s)
        weights[1].append(sync.predicted)
        weights[2].append(0)
        spreads.append(sync.spread or transfer_spread())
        if len(weights) > 3:
            weights[3].append(sync.predicted * spreads[-1].low)
            weights[4].append(sync.predicted * spreads[-1].high)
        frozen.append((what, after, tuple(readers), (first_of[stall[1]],) if stall else (),
                       (first_of[stall[0]], last_of[stall[0]]) if stall else ()))
    return tuple(frozen)


def fused_units(groups: Sequence[GroupEstimate], time_of: dict[int, Any], pred_of: dict[int, Any]
                ) -> tuple[list[Any], list[Any], list[Any], list[Any], list[Spread],
                           dict[int, str]]:  # fmt: skip
    """The units of a loop with stage fusion: per group, its transfers in front of their
    tasks, its training tasks merged into one unit (interleaved pipelines), each job weighing
    its fused seconds ``time_of`` and ``pred_of`` by task index. Returns the lists shape,
    bound, prediction, depth and spreads, and each task index's unit key."""
    shape: list[tuple[str, str, Stage | None, bool]] = []
    w_t: list[Any] = []
    w_p: list[Any] = []
    w_d: list[Any] = []
    spreads: list[Spread] = []
    key_of: dict[int, str] = {}
    for g in groups:
        fused_jobs = [j for j in g.jobs if j.task.kind is Kind.TRAIN]
        fused_key = (
            "+".join(str(j.task.index) for j in fused_jobs) if len(fused_jobs) > 1 else None
        )
        for j in g.jobs:
            index = j.task.index
            for tr in g.transfers:
                if tr.before == index:
                    k = f"{tr.kind}:{tr.unit_name}@{g.name}#{tr.before}"  # one unit per use
                    shape.append((k, g.name, tr.stage, False))
                    w_t.append(tr.time_s)
                    w_p.append(tr.predicted)
                    w_d.append(0)
                    spreads.append(tr.spread or transfer_spread())
            if fused_key and j in fused_jobs:
                key_of[index] = fused_key
                if j is not fused_jobs[0]:
                    continue
                shape.append((fused_key, g.name, j.task.stage, True))
                w_t.append(sum(time_of[f.task.index] for f in fused_jobs))
                w_p.append(sum(pred_of[f.task.index] for f in fused_jobs))
                w_d.append(max(f.depth for f in fused_jobs))
                spreads.append(job_spread(j.task.kind))
                continue
            key = str(index)
            key_of[index] = key
            shape.append((key, g.name, j.task.stage, True))
            w_t.append(time_of[index])
            w_p.append(pred_of[index])
            w_d.append(j.depth)
            spreads.append(job_spread(j.task.kind))
    return shape, w_t, w_p, w_d, spreads, key_of


def group_hardware(setup: Setup, groups: Sequence[GroupEstimate]) -> dict[str, HardwareSpec]:
    """Each group's accelerator, ``{g.name: setup.hardware_of(g.name)}`` (``Setup.on``: the
    group's own, else the run's) with the placement's groups looked up once."""
    run = setup.hardware
    own = {d.name: d.hardware for d in setup.placement.groups}
    return {g.name: run if (name := own[g.name]) is None or name == run.name
            else setup.devices[name].hardware for g in groups}  # fmt: skip
