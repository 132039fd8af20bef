"""How many GPUs each device group gets, when the configuration does not say.

A configuration with several groups (disaggregated, async, combined) splits the ``gpus``
among them. Each group needs a multiple of its layouts' model-parallel size (tp pp cp ep; 1
for the ZeRO-3 training layout); the search considers every split in steps of a common grain
(the smallest power of two, at least that size, that keeps the splits to at most
``MAX_SPLITS``) and keeps the one with the shortest iteration (predicted; the bound for the
paper's idealized iteration, :func:`ranking_time_s`) among those that fit (every group in
HBM, every node in its host's memory: :mod:`rlmcost.placement.host_memory`), else the one
short of the fewest bytes. A group's estimate depends only on its own GPU count, so each
(group, count) is evaluated once (``group_jobs.estimate_group``) and the splits only
recombine them; whether its groups fit, and by how much they fall short, are their own, and
a split fits only if its groups do, so a split that cannot beat the best so far on them is
not recombined. User groups (``--groups``) are taken as given.

What is pruned, from 1,024 GPUs or 4 groups on: a lattice of more than ``COARSE_SPLITS``
splits is searched coarse to fine (:func:`_coarse_to_fine`, said in the estimate's notes):
every split of a coarser power-of-two lattice, then the splits of the full lattice within one
coarse step of the best. When none of those fits, every split is checked, so a fitting split
is found whenever the lattice has one; the time is the best near the coarse optimum (on the
cases of tests/test_placement_split_search.py, the exhaustive search's choice).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache
from math import gcd, lcm

from rlmcost.errors import SpecError
from rlmcost.placement.assign import check_gpus
from rlmcost.placement.estimate import PlacementEstimate
from rlmcost.placement.group_jobs import estimate_group
from rlmcost.placement.inputs import Setup, replica_layout
from rlmcost.placement.iteration import combine
from rlmcost.placement.jobs import GroupEstimate

MAX_SPLITS = 500
"""The most splits the search enumerates: the grain doubles until the lattice has no more."""

COARSE_SPLITS = 64
"""Above this many splits, the search goes coarse to fine (:func:`_coarse_to_fine`): a
search budget, not a model constant (64 splits evaluate in ~0.1 s per configuration here;
every split of 2 groups up to 64 GPUs, of 3 up to 12, is still tried)."""


def ranking_time_s(est: PlacementEstimate) -> float:
    """The time splits and placements are ranked by: the predicted iteration for a deployment,
    the roofline bound for the paper's idealized iteration."""
    if est.deployment.ideal or not est.iteration_time_s:
        return est.iteration_time_lower_bound_s
    return est.iteration_time_s


def group_unit(setup: Setup, name: str) -> int:
    """The model-parallel size every GPU count of group ``name`` must be a multiple of: over
    its tasks, the least common multiple of each one's replica (``tp * pp * cp * dp_unit`` of
    :func:`rlmcost.placement.inputs.replica_layout`, the layout the group's estimate checks
    its count against), so an engine's own TP sizes its group, not the trainer's."""
    unit = 1
    for t in setup.tasks:
        if t.group == name:
            r = replica_layout(setup, t)
            unit = lcm(unit, r.tp * r.pp * r.cp * r.dp_unit)
    return unit


def _count(total: int, steps: list[int]) -> int:
    """How many ways to write ``total`` as a sum of positive multiples of ``steps`` (in order),
    counted up to ``MAX_SPLITS + 1`` (all :func:`splits` asks: more than its limit, at most
    ``MAX_SPLITS``, or none).

    ``ways[t]``: the groups so far use ``t`` GPUs. The next group adds ``k * step`` for
    ``k >= 1``, so ``nxt[n] = ways[n - step] + nxt[n - step]`` (the sum over ``k`` by its
    running total): O(total) per group, where summing each ``k`` was O(total^2 / step); on
    ``total / g`` for ``g`` the steps' common divisor (a coarse grain counts few cells), and
    saturated at the cap (the counts of 7 groups over 4,096 GPUs are 20-digit integers)."""
    g = gcd(*steps)
    if total % g:
        return 0
    total, cap = total // g, MAX_SPLITS + 1
    ways = [1] + [0] * total
    for step in (s // g for s in steps):
        nxt = [0] * (total + 1)
        for n in range(step, total + 1):
            nxt[n] = min(cap, ways[n - step] + nxt[n - step])
        ways = nxt
    return ways[total]


def splits(total: int, units: list[int], limit: int = MAX_SPLITS) -> list[tuple[int, ...]]:
    """Every way to give each group a positive multiple of its unit, in steps of a power-of-two
    grain: the smallest that keeps at most ``limit`` ways (or the largest that still leaves
    any); ascending lexicographic order. Each (total, units, limit) is enumerated once per
    process (a planner asks for the same split of every candidate).

    >>> splits(8, [1, 1])
    [(1, 7), (2, 6), (3, 5), (4, 4), (5, 3), (6, 2), (7, 1)]
    """
    return list(_splits(total, tuple(units), min(limit, MAX_SPLITS)))


@lru_cache(maxsize=256)
def _splits(total: int, units: tuple[int, ...], limit: int) -> tuple[tuple[int, ...], ...]:
    grain = 1
    steps = list(units)
    while _count(total, steps) > limit:
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
    return tuple(out)


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

    fine = splits(gpus, units)
    if len(fine) <= COARSE_SPLITS:
        best, first_error = _best(setup, fine, group)
    else:
        best, first_error, note = _coarse_to_fine(setup, fine, units, gpus, group)
        if best is not None:
            best = (best[0], replace(best[1], notes=(*best[1].notes, note)))
    if (best is None or best[0][0]) and _count(gpus, units) > MAX_SPLITS:  # a coarser lattice
        best = _off_lattice(setup, gpus, units, group, best, _grain(fine))
    if best is None:
        need = ", ".join(f"{g.name} x{u}" for g, u in zip(groups, units, strict=True))
        raise first_error or SpecError(
            f"no split of {gpus} GPUs gives every group of {placement.name} a multiple of its "
            f"model-parallel size ({need}); change --gpus, --tp or --pp, or give --groups"
        )
    return best[1]


Group = Callable[[int, int], "GroupEstimate | SpecError"]
Best = tuple[tuple[bool, int, float], PlacementEstimate]


def _best(setup: Setup, counts_list: Iterable[tuple[int, ...]], group: Group,
          best: Best | None = None) -> tuple[Best | None, SpecError | None]:  # fmt: skip
    """The best of ``counts_list`` (and ``best``): fits first, then the fewest bytes short,
    then the shortest iteration; the first in order on a tie. By how much a split falls short
    is its groups' own (``PlacementEstimate.shortfall_bytes``) and it fits only where they
    do (``PlacementEstimate.fits`` adds its nodes' host memory), so a split that cannot beat
    the incumbent on its groups is not combined (the same choice as combining every split)."""
    first_error: SpecError | None = None
    for counts in counts_list:
        parts = [group(i, n) for i, n in enumerate(counts)]
        bad = next((p for p in parts if isinstance(p, SpecError)), None)
        if bad is not None:
            first_error = first_error or bad
            continue
        ok = [p for p in parts if isinstance(p, GroupEstimate)]
        fits = all(p.fits for p in ok)
        short = 0 if fits else max(p.shortfall_bytes for p in ok)
        if best is not None and (not fits, short) > best[0][:2]:
            continue
        est = combine(setup.with_counts(counts), ok)
        score = (not est.fits, est.shortfall_bytes if not est.fits else 0, ranking_time_s(est))
        if best is None or score < best[0]:
            best = (score, est)
    return best, first_error


def _coarse_to_fine(setup: Setup, fine: list[tuple[int, ...]], units: list[int], gpus: int,
                    group: Group) -> tuple[Best | None, SpecError | None, str]:  # fmt: skip
    """The best split of ``fine`` (more than ``COARSE_SPLITS``) searched coarse to fine: every
    split of a coarser lattice (at most ``COARSE_SPLITS``), then every split of ``fine``
    within one coarse step of the best in each group. When none of those fits, every split
    of ``fine`` is checked: a fitting split is found whenever one exists. The time is the
    best near the coarse optimum, not proven the best of ``fine``. Returns the note that
    says so."""
    coarse = splits(gpus, units, COARSE_SPLITS)
    best, first_error = _best(setup, coarse, group)
    step = _grain(coarse)
    tried = set(coarse)
    if best is not None:
        at = best[1].groups
        near = [c for c in fine if c not in tried
                and all(abs(n - g.gpus) < step for n, g in zip(c, at, strict=True))]
        best, _ = _best(setup, near, group, best)
        tried.update(near)
    first = len(tried)
    if best is None or best[0][0]:  # nothing fits yet: every split, for the fit
        rest = [c for c in fine if c not in tried]
        best, error = _best(setup, rest, group, best)
        first_error = first_error or error
        note = (f"group sizes: none of {first} splits of {gpus} GPUs in steps of {step} (and of "
                f"{_grain(fine)} near the best) fits, so all {len(fine)} in steps of "
                f"{_grain(fine)} were checked")  # fmt: skip
    else:
        note = (f"group sizes searched coarse to fine: {first} of {len(fine)} splits of {gpus} "
                f"GPUs, every split in steps of {step}, then in steps of {_grain(fine)} within "
                f"{step} of the best")  # fmt: skip
    return best, first_error, note


def _off_lattice(setup: Setup, gpus: int, units: list[int], group: Group, best: Best | None,
                 grain: int) -> Best | None:  # fmt: skip
    """``best``, or a fitting split off the lattice of steps of ``grain`` when it has none
    (:mod:`rlmcost.placement.fit_split`: each group's least fitting count), with a note."""
    from rlmcost.placement.fit_split import fitting_splits

    found, _ = _best(setup, fitting_splits(gpus, units, group, COARSE_SPLITS), group, best)
    if found is None or found is best or found[0][0]:
        return best
    note = (f"group sizes: no split of {gpus} GPUs in steps of {grain} fits; a fitting one "
            "was found from each group's least fitting count on its own model-parallel size")
    return found[0], replace(found[1], notes=(*found[1].notes, note))


def _grain(lattice: list[tuple[int, ...]]) -> int:
    """The step between the splits of a lattice (the gcd of its counts)."""
    return gcd(*(n for c in lattice for n in c))
