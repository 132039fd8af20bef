"""A pool of accelerators for the RL planner: ``--hardware h20:32,h100:16``.

The search assigns each candidate's device groups to the pool's accelerators within what is
available: a co-located family (one group, or a Table IX configuration whose groups the
evaluation sizes) runs on one accelerator; a family of groups apart (engines apart, role
groups, ``--groups``) may put each group on a different one, so long as no accelerator gives
more GPUs than the pool has of it. Each group then runs on its own accelerator
(``--groups rollout=16@h20,...``: its memory, roofline, links and calibration), and the
weights cross between accelerators at the slower side's link
(:mod:`rlmcost.placement.transfer`). ``--objective cost`` ranks by USD per iteration at the
accelerators' prices (:mod:`rlmcost.specs.prices`).

Light to import (no numpy at module level).
"""

from __future__ import annotations

from itertools import product
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

Pool = tuple[tuple[str, int], ...]
"""(canonical accelerator name, GPUs available) per type (:func:`~rlmcost.plan.kinds.
parse_pool`)."""


def assignments(n_groups: int, counts: tuple[int, ...], gpus: int, pool: Pool,
                kept: tuple[str | None, ...] = ()) -> list[tuple[str, ...]]:  # fmt: skip
    """The accelerators of a candidate's groups (module docstring): ``()`` without a pool;
    one name for a co-located family (``n_groups`` 0: the whole ``gpus`` on it); else one
    name per group, every accelerator's GPUs within the pool, and a group whose accelerator
    the family keeps (``kept``: ``--groups rollout=?@h20``) on that one.

    >>> assignments(2, (16, 8), 24, (("h20", 16), ("h100-sxm", 8)))
    [('h20', 'h100-sxm')]
    >>> assignments(0, (), 16, (("h20", 16), ("h100-sxm", 8)))
    [('h20',)]
    """
    if not pool:
        return [()]
    have = dict(pool)
    if n_groups == 0:
        return [(hw,) for hw, n in pool if gpus <= n]
    out = []
    for combo in product(have, repeat=n_groups):
        used: dict[str, int] = {}
        for hw, n in zip(combo, counts, strict=True):
            used[hw] = used.get(hw, 0) + n
        if all(used[hw] <= have[hw] for hw in used) and all(
                k in (None, hw) for k, hw in zip(kept or (None,) * n_groups, combo,
                                                 strict=True)):  # fmt: skip
            out.append(combo)
    return out


def check_groups(groups: str | None, pool: Pool, counts: tuple[int, ...]) -> None:
    """SpecError up front when ``--groups`` keeps more GPUs (each ``?`` group at least one)
    than the largest count searched, keeps every count and the GPU counts searched leave out
    their sum (``rollout=16@h20,actor+reference=8@h100`` runs on 24 GPUs alone: the CLI's
    default budget is that sum, :func:`rlmcost.cli.plan_query.gpu_budget`, the library's
    ``gpus`` is checked here), puts a group on an accelerator the pool lacks, or keeps more of
    one accelerator than the pool has: the search would find nothing valid and say only that
    (with advice about the families that does not apply)."""
    if not groups:
        return
    from rlmcost.plan.families import free_groups

    fam = free_groups(groups)
    least = sum(n or 1 for n in fam.fixed)
    if least > max(counts):
        raise SpecError(f"--groups {groups!r} needs at least {least} GPUs (the counts it "
                        f"keeps, 1 per '?' group) but --gpus searches at most {max(counts)}; "
                        "raise --gpus or lower the kept counts")  # fmt: skip
    if None not in fam.fixed and least not in counts:
        searched = ", ".join(map(str, counts))
        raise SpecError(f"--groups {groups!r} keeps every count, {least} GPUs in all, which "
                        f"the GPU counts searched ({searched}) leave out; search {least} "
                        "GPUs (--gpus, the plan's gpus), or write '?' for the counts to "
                        "search")  # fmt: skip
    if not pool:
        return
    have, text = dict(pool), ",".join(f"{h}:{n}" for h, n in pool)
    kept = fam.hardware or (None,) * len(fam.fixed)
    for name in dict.fromkeys(h for h in kept if h is not None):
        if name not in have:
            raise SpecError(f"--groups {groups!r} puts a group on {name}, which the pool "
                            f"--hardware {text} does not have; add {name}:GPUS to --hardware "
                            f"or drop @{name}")  # fmt: skip
        on = sum(n or 1 for n, h in zip(fam.fixed, kept, strict=True) if h == name)
        if on > have[name]:
            raise SpecError(f"--groups {groups!r} keeps at least {on} GPUs on {name} (1 per "
                            f"'?' group) but the pool --hardware {text} has {have[name]} of "
                            "it")  # fmt: skip


def pool_total(pool: Pool) -> int:
    """GPUs in the pool."""
    return sum(n for _, n in pool)


def no_valid(actor: str, counts: tuple[int, ...], pool: Pool,
             framework: str | None = None) -> str:  # fmt: skip
    """The plan's error when no candidate is valid on ``counts`` GPUs: too few GPUs for one
    trainer and one engine replica; on a ``pool`` whose largest type has fewer GPUs than the
    budget, that the one-accelerator families cannot span it, and the families of groups
    apart that ``framework`` launches (:data:`~rlmcost.plan.families.FRAMEWORK_FAMILIES`;
    None: the default ones) as the way to span it, or, where it launches none, the
    frameworks that do."""
    from rlmcost.plan.families import APART, DEFAULT_FAMILIES, FRAMEWORK_FAMILIES

    what = f"no valid deployment of {actor} on {counts[0]}..{counts[-1]} GPU(s)"
    most = max((n for _, n in pool), default=0)
    if pool and counts[-1] > most:
        have = ",".join(f"{h}:{n}" for h, n in pool)
        head = (f"{what} of the pool {have}: the co-located family and the Table IX "
                f"configurations run on one accelerator type (at most {most} GPUs here)")
        fw = None if framework in (None, "none") else str(framework)
        launched = FRAMEWORK_FAMILIES.get(fw or "", DEFAULT_FAMILIES)
        apart = [f for f in launched if f in APART]
        if apart:
            return (f"{head}, and no family of groups apart was valid either; give --gpus "
                    f"up to {most}, or --placements {','.join(apart)} (each group on its "
                    "own type" + (f"; what --framework {fw} launches)" if fw else ")"))
        others = "; ".join(f"{name}: {', '.join(f for f in fams if f in APART)}"
                           for name, fams in FRAMEWORK_FAMILIES.items() if name != fw)
        return (f"{head}, and --framework {fw} launches only {', '.join(launched)}, none "
                f"with groups apart; give --gpus up to {most}, or a framework whose groups "
                f"apart can each take a type ({others})")  # fmt: skip
    return (f"{what}: every count is below one trainer replica (tp*pp) plus one engine "
            "replica; raise --gpus")  # fmt: skip


def hbm_limits(base: Run, cands: list[Any]) -> Any:
    """Per candidate, the largest datasheet HBM among its accelerators and the base Run's
    (looser is safe): the memory lower bound of :func:`~rlmcost.plan.rl_candidates.
    lower_bounds` (the trainer's states and one engine shard, hardware-independent bytes)
    must fit on at least that, else no group of the candidate can hold it."""
    import re

    import numpy as np

    from rlmcost.specs import get_hardware

    own = get_hardware(base.cluster.hardware).hbm_bytes

    def largest(c: Any) -> int:  # its pool's accelerators and those its groups keep (@h20)
        names = (*c.hardware, *re.findall(r"@([^,\[]+)", c.groups))
        return max([own, *(get_hardware(h).hbm_bytes for h in names)]) if names else own

    return np.array([largest(c) for c in cands], dtype=float)


def require_prices(base: Run, pool: Pool, groups: str | None = None) -> None:
    """SpecError when an accelerator the plan may use has no price (``--objective cost``):
    the pool's, else the base Run's, and those ``--groups`` names (``rollout=?@h20``)."""
    from rlmcost.specs import get_hardware
    from rlmcost.specs.prices import prices_for

    names = [hw for hw, _ in pool] or [get_hardware(base.cluster.hardware).name]
    if groups:
        from rlmcost.plan.families import free_groups

        names += [h for h in free_groups(groups).hardware if h is not None and h not in names]
    have = prices_for(names, base.cluster.prices)
    missing = [n for n in names if n not in have]
    if missing:
        give = ",".join(f"{n}=USD" for n in missing)
        raise SpecError(f"--objective cost needs a price per GPU-hour for {', '.join(missing)}"
                        f" (none in rlmcost.specs.prices); give --price {give}")  # fmt: skip


def cost_fields(e: Any) -> dict[str, Any]:
    """A plan row's accelerators and cost: ``hardware`` (``8 x h20 + 8 x h100-sxm``),
    ``cost_per_iteration_usd`` and ``cost_per_million_tokens_usd`` (None without a price)."""
    return {"hardware": e.fleet_text, "cost_per_iteration_usd": e.cost_per_iteration_usd,
            "cost_per_million_tokens_usd": e.cost_per_million_tokens_usd}  # fmt: skip
