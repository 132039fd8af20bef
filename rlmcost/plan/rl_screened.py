"""The first step of a branch and bound (:func:`rlmcost.plan.rl_search.branch_and_bound`):
every candidate of a GPU budget enumerated and screened, the survivors ordered by their
objective's bound, with their engines' floors (the search's module docstring).

Apart from the search that follows it so that, on Dask, the client screens the next search of
a plan (a plan runs one per launcher's base Run, ``plan_rl``'s parts) while the workers
finish the last tasks of this one (``Runner.stream``'s ``meanwhile``), not after them, when
they have nothing to do: the screen reads nothing a search finds, so the rows are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.plan.kinds import Objective
from rlmcost.plan.search import Counts

if TYPE_CHECKING:
    from rlmcost.plan.rl_candidates import RLCandidate, RLSpace
    from rlmcost.plan.rl_search import Found
    from rlmcost.run.spec import Run


@dataclass
class Screened:
    """A search's screen: its ``found`` so far (counts, failures of the pruned), and for the
    search its candidates, the survivors (``todo``, None when none is left: ``found`` is the
    search's result), their order, bounds (time bounds, objective bound keys, memory bounds,
    engines' floors) and the device's HBM bytes."""

    found: Found
    cands: list[RLCandidate] = field(default_factory=list)
    todo: Any = None
    order: Any = None
    bounds: Any = None
    hbm: int = 0


def screen_later(later: list[tuple[Run, RLSpace]], budget: Sequence[int], obj: Objective,
                 into: list[Screened]) -> Callable[[], None] | None:  # fmt: skip
    """What screens the next search of a plan, ``later`` (its base Run and space; none when
    empty), into ``into``: a search's ``meanwhile``."""
    if not later:
        return None
    (base, space), = later

    def screen_next() -> None:
        into.append(screened(base, space, budget, obj))

    return screen_next


def screened(base: Run, space: RLSpace, budget: Sequence[int], obj: Objective) -> Screened:
    """The screen of branch and bound over ``budget`` (module docstring)."""
    import numpy as np

    from rlmcost.plan.engine_floor import EngineFloors
    from rlmcost.plan.pool import hbm_limits
    from rlmcost.plan.rl_candidates import candidates, enumerated_size
    from rlmcost.plan.rl_search import Found, bound_keys
    from rlmcost.plan.screen import (
        APART,
        APART_STALE,
        MEMORY_TERMS,
        candidate_arrays,
        engine_tp,
        query,
        rejected,
        screen,
        time_bound,
    )
    from rlmcost.plan.screen_refit import refit_apart_s
    from rlmcost.specs import get_hardware

    found = Found(Counts())
    counts = found.counts
    cands: list[RLCandidate] = []
    for g in budget:
        counts.enumerated += enumerated_size(space, base, g)
        cands += candidates(base, space, g)
    counts.valid = len(cands)
    if not cands:
        return Screened(found)
    hbm = get_hardware(base.cluster.hardware).hbm_bytes
    arrays = candidate_arrays(cands)
    pool = bound_pool(space)  # the accelerators any candidate's group may run on
    s = screen(query(base, pool=pool), arrays)
    keep = s.memory <= hbm_limits(base, cands)  # a pool: the largest HBM of its accelerators
    counts.pruned = int((~keep).sum())
    out = np.flatnonzero(~keep)
    term, term_bytes = s.binding(out)
    for i, t, tb in zip(out, term, term_bytes, strict=True):
        f = found.failures.setdefault(cands[i].key, {"family": cands[i].key,
                                                     "least_bytes": np.inf})  # fmt: skip
        if s.memory[i] < f["least_bytes"]:
            f.update(least_bytes=float(s.memory[i]),
                     binding_term=f"{MEMORY_TERMS[t]} (lower bound)",
                     binding_term_bytes=float(tb), hbm_bytes=hbm)  # fmt: skip
    todo = np.flatnonzero(keep)
    if not len(todo):
        return Screened(found)
    sub = {k: v[todo] for k, v in arrays.items()}
    tlb = np.zeros(len(todo))
    tokens = np.zeros(len(todo))
    refit = np.zeros(len(todo))  # the refit into engines apart (the engines' floor)
    out = np.zeros(len(todo), dtype=bool)
    names = np.array([cands[i].family for i in todo])
    for name in dict.fromkeys(names.tolist()):  # the work differs by family (ac-shared)
        at = np.flatnonzero(names == name)
        q = query(base, _probe(base, [cands[todo[i]] for i in at[:8]]), pool)
        part = {k: v[at] for k, v in sub.items()}
        tlb[at] = time_bound(q, part["kind"], part["gpus"].astype(np.float64),
                             part["rollout_gpus"].astype(np.float64), engine_tp(part),
                             part["train_gpus"].astype(np.float64))  # fmt: skip
        tokens[at] = q.tokens
        refit[at] = refit_apart_s(q, part["gpus"], part["train_gpus"], part["rollout_gpus"],
                                  engine_tp(part))  # fmt: skip
        out[at] = rejected(q, part)
        for i in at[out[at]]:
            c = cands[todo[i]]
            found.failures.setdefault(c.key, {
                "family": c.key, "binding_term": f"rejected: {q.sequences} sequences cannot "
                f"feed {c.gpus if c.family == 'baseline' else sub['rollout_gpus'][i]} GPUs of "
                f"engines at TP {c.rollout_tp} (screen)", "binding_term_bytes": 0,
                "hbm_bytes": hbm, "invalid": True})  # fmt: skip
    counts.pruned += int(out.sum())
    todo, tlb, tokens, refit = todo[~out], tlb[~out], tokens[~out], refit[~out]
    sub = {k: v[~out] for k, v in sub.items()}
    prim, sec = bound_keys(obj, sub["gpus"], tlb, tokens)
    order = np.lexsort((sec, prim))

    def keys_at(j: int, t: float) -> tuple[float, float]:  # survivor j's keys at bound t
        p, q = bound_keys(obj, sub["gpus"][j:j + 1], np.array([t]), tokens[j:j + 1])
        return float(p[0]), float(q[0])

    apart = (sub["kind"] == APART) | (sub["kind"] == APART_STALE)
    floors = EngineFloors(base, [cands[i] for i in todo], apart, refit, keys_at, tokens)
    return Screened(found, cands, todo, order, (tlb, prim, sec, s.memory[todo], floors), hbm)


def bound_pool(space: RLSpace) -> tuple[tuple[str, int], ...]:
    """The screen's pool: ``--hardware``'s and the accelerators ``--groups`` names
    (``rollout=?@h200``), so that the time bound takes the fastest a group may run on, not
    the base Run's hardware (a bound above the exact time would skip a top row)."""
    if not space.groups:
        return space.pool
    from rlmcost.plan.families import free_groups

    named = [h for h in free_groups(space.groups).hardware if h is not None]
    have = {h for h, _ in space.pool}
    return (*space.pool, *((h, 0) for h in dict.fromkeys(named) if h not in have))


def _probe(base: Run, some: list[RLCandidate]) -> Any:
    """One exact evaluation of a deployment of ``base`` (the iteration's work, which no
    layout of one family changes; a Table IX configuration may share work, ``ac-shared``),
    or None when none of ``some`` evaluates."""
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.plan.rl_candidates import candidate_run

    for c in some:
        try:
            return evaluate_deployment(candidate_run(base, c))
        except SpecError:
            continue
    return None


