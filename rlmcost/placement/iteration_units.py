"""The schedule units one group estimate contributes to an iteration, built once per estimate.

:func:`rlmcost.placement.iteration.combine` turns each group's jobs and transfers into schedule
units (a transfer in front of the task it serves, then the task): each unit's shape (key,
resource, stage, barrier) and weights (bound, prediction, depth, and the prediction at the low
and high ends of its spread, :mod:`rlmcost.perf.interval`). Without stage fusion a unit's
weights are its job's or transfer's own numbers, so a group estimate, shared by the
deployments of a query (:mod:`rlmcost.placement.group_key`), gives the same units in every
iteration it takes part in: :func:`group_units` builds them once per estimate (the same
values, computed the same way, as ``combine`` builds them). A weight synchronization between
two group estimates is kept by what it reads (``weight_syncs.sync_reads``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlmcost.algorithms.kinds import Stage
from rlmcost.memo import per_instance
from rlmcost.perf.interval import job_spread, transfer_spread
from rlmcost.placement.jobs import GroupEstimate

UnitShape = tuple[str, str, Stage | None, bool]

_SHAPES: dict[UnitShape, UnitShape] = {}
"""Unit shapes, each the first equal one built (two strings, a Stage and a bool: equal ones
are interchangeable): a query's estimates repeat a few dozen (task indices and transfers on
the same groups), so one tuple each is kept for the collector to walk, not one per estimate."""
MAX_SHAPES = 4096
"""Unit shapes kept in :data:`_SHAPES` before the table starts over."""


@dataclass(frozen=True)
class GroupUnits:
    """One group's units in its order: shapes and weights (module docstring); ``key_of``:
    each task index's unit key."""

    shape: tuple[UnitShape, ...]
    w_t: tuple[Any, ...]
    w_p: tuple[Any, ...]
    w_d: tuple[Any, ...]
    low: tuple[Any, ...]
    high: tuple[Any, ...]
    key_of: tuple[tuple[int, str], ...]


@per_instance
def group_units(g: GroupEstimate) -> GroupUnits:
    """The units of ``g`` without stage fusion (module docstring): per job, its transfers
    (``tr.before`` the job's task) as units of no barrier, then the job itself. Each unit's
    shape is the first equal one kept (:data:`_SHAPES`)."""
    if len(_SHAPES) >= MAX_SHAPES:
        _SHAPES.clear()
    kept = _SHAPES
    shape: list[UnitShape] = []
    w_t: list[Any] = []
    w_p: list[Any] = []
    w_d: list[Any] = []
    low: list[Any] = []
    high: list[Any] = []
    key_of: list[tuple[int, str]] = []
    for j in g.jobs:
        index = j.task.index
        for tr in g.transfers:
            if tr.before == index:
                unit = (f"{tr.kind}:{tr.unit_name}@{g.name}#{tr.before}", g.name, tr.stage, False)
                shape.append(kept.setdefault(unit, unit))
                spread = tr.spread or transfer_spread()
                w_t.append(tr.time_s)
                w_p.append(tr.predicted)
                w_d.append(0)
                low.append(tr.predicted * spread.low)
                high.append(tr.predicted * spread.high)
        key = str(index)
        key_of.append((index, key))
        unit = (key, g.name, j.task.stage, True)
        shape.append(kept.setdefault(unit, unit))
        spread = job_spread(j.task.kind)
        w_t.append(j.time_s)
        w_p.append(j.predicted_s)
        w_d.append(j.depth)
        low.append(j.predicted_s * spread.low)
        high.append(j.predicted_s * spread.high)
    return GroupUnits(tuple(shape), tuple(w_t), tuple(w_p), tuple(w_d), tuple(low), tuple(high),
                      tuple(key_of))  # fmt: skip
