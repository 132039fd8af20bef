"""How many GPUs each device group gets, when the configuration does not say.

A configuration with several groups (disaggregated, async, combined) splits the ``gpus``
among them. Each group needs a multiple of its layouts' model-parallel size (tp pp cp ep; 1
for the ZeRO-3 training layout); the search tries every split in steps of a common grain (the
smallest power of two, at least that size, that keeps the splits to at most ``MAX_SPLITS``)
and keeps the one with the shortest iteration (predicted; the bound for the paper's idealized
iteration, :func:`ranking_time_s`) among those whose groups all fit in HBM, else
the one short of the fewest bytes. A group's estimate depends only on its own GPU count, so
each (group, count) is evaluated once (``group_jobs.estimate_group``) and the splits only
recombine them. User groups (``--groups``) are taken as given.
"""

from __future__ import annotations

from math import lcm

from rlmcost.algorithms.kinds import Kind
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import dp_unit
from rlmcost.placement.assign import check_gpus
from rlmcost.placement.estimate import PlacementEstimate
from rlmcost.placement.group_jobs import estimate_group
from rlmcost.placement.inputs import Setup
from rlmcost.placement.iteration import combine
from rlmcost.placement.jobs import GroupEstimate

MAX_SPLITS = 500


def ranking_time_s(est: PlacementEstimate) -> float:
    """The time splits and placements are ranked by: the predicted iteration for a deployment,
    the roofline bound for the paper's idealized iteration."""
    if est.deployment.ideal or not est.iteration_time_s:
        return est.iteration_time_lower_bound_s
    return est.iteration_time_s


def group_unit(setup: Setup, name: str) -> int:
    """The model-parallel size every GPU count of group ``name`` must be a multiple of."""
    unit = 1
    for t in setup.tasks:
        if t.group != name:
            continue
        base = setup.placement.group(name).layout(t.kind) or setup.base
        tp = setup.tp[t.role]
        if setup.placement.hybrid:
            split = {Kind.GENERATE: tp, Kind.FORWARD: tp * base.pp, Kind.TRAIN: 1}[t.kind]
        else:
            split = tp * base.pp * base.cp * dp_unit(tp, base.cp, base.ep, base.etp)
        unit = lcm(unit, split)
    return unit


def _count(total: int, steps: list[int]) -> int:
    """How many ways to write ``total`` as a sum of positive multiples of ``steps`` (in order)."""
    ways = [1] + [0] * total  # ways[t]: the groups so far use t GPUs
    for step in steps:
        nxt = [0] * (total + 1)
        for t, w in enumerate(ways):
            if w:
                for n in range(t + step, total + 1, step):
                    nxt[n] += w
        ways = nxt
    return ways[total]


def splits(total: int, units: list[int]) -> list[tuple[int, ...]]:
    """Every way to give each group a positive multiple of its unit, in steps of a power-of-two
    grain: the smallest that keeps at most ``MAX_SPLITS`` ways (or the largest that still
    leaves any); ascending lexicographic order.

    >>> splits(8, [1, 1])
    [(1, 7), (2, 6), (3, 5), (4, 4), (5, 3), (6, 2), (7, 1)]
    """
    grain = 1
    steps = list(units)
    while _count(total, steps) > MAX_SPLITS:
        coarser = [lcm(u, grain * 2) for u in units]
        if _count(total, coarser) == 0:
            break
        grain *= 2
        steps = coarser
    out: list[tuple[int, ...]] = []

    def rec(i: int, left: int, acc: tuple[int, ...]) -> None:
        if i == len(steps) - 1:
            if left >= steps[i] and left % steps[i] == 0:
                out.append((*acc, left))
            return
        for n in range(steps[i], left - sum(steps[i + 1 :]) + 1, steps[i]):
            rec(i + 1, left - n, (*acc, n))

    rec(0, total, ())
    return out


def allocate(setup: Setup, gpus: int | None) -> PlacementEstimate:
    """The placement on ``gpus`` devices: as given, or the best split (module docstring)."""
    placement = setup.placement
    if all(g.gpus is not None for g in placement.groups):
        check_gpus(placement, gpus)
        jobs = [estimate_group(setup, g, g.gpus) for g in placement.groups if g.gpus is not None]
        return combine(setup, jobs)
    if gpus is None:
        raise SpecError("give --gpus: how many GPUs the placement splits among its groups")
    groups = placement.groups
    if len(groups) == 1:
        return combine(setup, [estimate_group(setup, groups[0], gpus)])
    units = [group_unit(setup, g.name) for g in groups]
    if sum(units) > gpus:
        need = " + ".join(f"{g.name} {u}" for g, u in zip(groups, units, strict=True))
        raise SpecError(
            f"{placement.name} needs at least {need} = {sum(units)} GPUs, got {gpus}; give more "
            "GPUs, a smaller --tp, or another placement"
        )
    cache: dict[tuple[str, int], GroupEstimate | SpecError] = {}

    def group(i: int, n: int) -> GroupEstimate | SpecError:
        key = (groups[i].name, n)
        if key not in cache:
            try:
                cache[key] = estimate_group(setup, groups[i], n)
            except SpecError as exc:
                cache[key] = exc
        return cache[key]

    best = None
    first_error: SpecError | None = None
    for counts in splits(gpus, units):
        parts = [group(i, n) for i, n in enumerate(counts)]
        bad = next((p for p in parts if isinstance(p, SpecError)), None)
        if bad is not None:
            first_error = first_error or bad
            continue
        est = combine(setup.with_counts(counts), parts)  # type: ignore[arg-type]
        score = (not est.fits, est.shortfall_bytes if not est.fits else 0, ranking_time_s(est))
        if best is None or score < best[0]:
            best = (score, est)
    if best is None:
        need = ", ".join(f"{g.name} x{u}" for g, u in zip(groups, units, strict=True))
        raise first_error or SpecError(
            f"no split of {gpus} GPUs gives every group of {placement.name} a multiple of its "
            f"model-parallel size ({need}); change --gpus, --tp or --pp, or give --groups"
        )
    return best[1]
