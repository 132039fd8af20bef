"""A fitting split when the split lattice has none: each group's least fitting GPU count.

:mod:`rlmcost.placement.allocate` searches splits in steps of a common power-of-two grain, the
smallest that keeps the lattice to ``MAX_SPLITS`` splits. With many groups that grain can be
coarser than the groups' own units, and a split that fits only off the coarse lattice is
missed: PPO Llama-3.1-70B ``--placement combined`` on 32 H100s at TP 2 (units 4, 2, 2, 2, 2,
2, 2; 4,095 splits, so steps of 4) has no fitting split in steps of 4 (the trainers' 8 GPUs
hold 81.5 GiB), while rollout 4, the four forward groups 2 each, actor-train 10 and
critic-train 10 fit (72.9 GiB peak; evaluated with ``--groups``).

A group's estimate depends only on its own GPU count (``group_jobs.estimate_group``), so
whether a split fits is decided group by group. :func:`fitting_splits` finds each group's
least fitting count on its own unit, by doubling and then bisecting (``2 log2(gpus / unit)``
estimates at most; assumes memory per device does not grow with a group's GPUs up to its least
fitting count, true of ZeRO-sharded and replicated states alike; a count above the least
fitting one that fails, e.g. a forward group with more ranks than sequences, is still checked
by the caller), and returns the splits that give every group at least that count: the spare
GPUs to each group in turn, and spread over the groups (at most ``COARSE_SPLITS`` ways). The
caller ranks them as it ranks the lattice's: fits first, then the shortest iteration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.placement.jobs import GroupEstimate

Group = Callable[[int, int], "GroupEstimate | SpecError"]


def _fits(group: Group, i: int, n: int) -> bool:
    est = group(i, n)
    return not isinstance(est, SpecError) and est.fits


def least_fitting(group: Group, i: int, unit: int, cap: int) -> int | None:
    """The fewest GPUs, a multiple of ``unit`` and at most ``cap``, on which group ``i``
    fits (module docstring: doubling, then bisection), or None when it fits on none of the
    counts tried."""
    top = cap // unit * unit
    if top < unit:
        return None
    lo, hi = 0, unit  # lo: a failing count (0: none yet); hi: the count tried
    while not _fits(group, i, hi):
        if hi >= top:
            return None
        lo, hi = hi, min(2 * hi, top)
    while hi - lo > unit:  # the least fitting count lies in (lo, hi]
        mid = (lo + hi) // 2 // unit * unit
        mid = mid if mid > lo else lo + unit
        if _fits(group, i, mid):
            hi = mid
        else:
            lo = mid
    return hi


def fitting_splits(gpus: int, units: list[int], group: Group, limit: int
                   ) -> list[tuple[int, ...]]:  # fmt: skip
    """Splits of ``gpus`` that give every group at least its least fitting count (module
    docstring); empty when some group fits on no count it can take or their sum exceeds
    ``gpus``."""
    from rlmcost.placement.allocate import splits

    least: list[int] = []
    for i, u in enumerate(units):
        n = least_fitting(group, i, u, gpus - (sum(units) - u))
        if n is None:
            return []
        least.append(n)
    spare = gpus - sum(least)
    if spare < 0:
        return []
    out: dict[tuple[int, ...], None] = {}
    for i, u in enumerate(units):  # the spare GPUs to one group
        if spare % u == 0:
            out[tuple(n + (spare if j == i else 0) for j, n in enumerate(least))] = None
    if spare:  # spread: least - unit + a split of spare + sum(units) in positive multiples
        for d in splits(spare + sum(units), units, limit):
            out[tuple(n - u + k for n, u, k in zip(least, units, d, strict=True))] = None
    return list(out)
