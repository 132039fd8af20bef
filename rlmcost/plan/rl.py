"""`rlmcost plan grpo|ppo|...`: search RL deployments on a GPU budget for the best that fits.

The space (:class:`RLSpace`), for each GPU count: the families of device groups users run
(:mod:`rlmcost.plan.families`: co-located, engines apart, OpenRLHF's role groups, the same
overlapped under staleness, the Table IX configurations, ``--groups`` with free counts),
each group's GPU count, the trainer's layout (TP within a node dividing heads, KV heads and
FFN width; PP; CP and SP for long sequences; ZeRO stage; checkpointing; micro-batch;
optimizer offload); the engine's TP and memory reservation; under a large-MoE size tier, each
trainer the framework runs for the actor (:mod:`rlmcost.plan.trainers`).

Each candidate is checked in two steps:

1. a screen, vectorized over the candidates of every GPU count of the budget at once
   (:mod:`rlmcost.plan.screen`): a memory lower bound (the trainer's model states — weights,
   gradients, and the optimizer unless offloaded, sharded over the most data parallel
   replicas the group can have — plus the activations of one sequence per micro-batch, from
   :func:`rlmcost.compiled.sweep_train_steps`, and the engine's weights per device; every
   deployment evaluation holds at least these, ``tests/test_plan_rl.py`` and
   ``tests/test_plan_screen.py`` check it) prunes what cannot fit, the engine replica rule
   what the evaluation rejects, and a roofline time lower bound orders the rest;
2. the survivors are evaluated exactly by the one evaluation every query uses
   (:func:`~rlmcost.evaluation.deployment.evaluate_deployment` of the candidate's
   :class:`~rlmcost.run.Run`: the base Run with the candidate's deployment and GPUs),
   memoized, best bound first, in branch and bound (:mod:`rlmcost.plan.rl_search`: a
   candidate whose bound is worse than the k-th best exact row is skipped, so the top k are
   exact; with engines apart the bound grows, once one candidate with the same engines is
   evaluated, to their predicted units plus the refit: :mod:`rlmcost.plan.engine_floor`),
   and ranked by the objective on the predicted iteration. ``--min-gpus`` takes each
   GPU count in turn, the leanest candidates by the memory bound first, and stops at the
   first count where one fits; that count's candidates then go through branch and bound by
   the objective, so its rows are the best on the fewest GPUs (``--objective cost``: the
   cheapest deployment on the fewest GPUs; a larger count may be cheaper, search ``--gpus``
   without ``--min-gpus`` for the cheapest overall)

What the plan holds fixed is a base Run (the algorithm and its knobs, the models, the
workload, the hardware). Every row shown embeds its candidate's Run (``rlmcost run`` on it
reproduces the row) and the `rlmcost <algorithm> ...` command line that does the same
(written for the rows shown alone: :mod:`rlmcost.plan.rl_rows`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.plan.distributed import Compute, Progress, Runner
from rlmcost.plan.families import STALE_FAMILIES, family_base, stream_notes
from rlmcost.plan.kinds import Objective, parse_gpus, parse_objective, positive_int, require_space
from rlmcost.plan.pool import check_groups, hbm_limits, no_valid, pool_total, require_prices
from rlmcost.plan.rl_candidates import (
    RLSpace,
    actor_spec,
    bracket_notes,
    candidates,
    enumerated_size,
    evaluate_item,
    lower_bounds,
    space_families,
)
from rlmcost.plan.rl_rows import SourcedRow, with_runs
from rlmcost.plan.rl_screened import Screened, screen_later
from rlmcost.plan.rl_search import bounded_note, branch_and_bound, collapse
from rlmcost.plan.rl_space import check_degrees
from rlmcost.plan.search import Counts, PlanResult, pareto, rank
from rlmcost.plan.space import check_given_tp
from rlmcost.plan.subshard import check_given_subshard
from rlmcost.plan.trainers import trainer_parts, trainers_note
from rlmcost.plan.unread import unread_notes

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

__all__ = ["RLSpace", "plan_rl"]

# -- the search ------------------------------------------------------------------------------


@dataclass
class _Phase:
    counts: Counts
    rows: list[dict[str, Any]]
    failures: dict[str, dict[str, Any]]


def _search_count(base: Run, space: RLSpace, gpus: int, run: Runner,
                  progress: Progress | None, first_fit: bool = False) -> _Phase:  # fmt: skip
    """Enumerate, prune and evaluate one GPU count. ``first_fit``: evaluate the leanest
    survivors first and stop at the first that fits."""
    import numpy as np

    from rlmcost.specs import get_hardware

    hbm = get_hardware(base.cluster.hardware).hbm_bytes
    cands = candidates(base, space, gpus)
    counts = Counts(enumerated=enumerated_size(space, base, gpus), valid=len(cands))
    failures: dict[str, dict[str, Any]] = {}
    if not cands:
        return _Phase(counts, [], failures)
    bound, term, term_bytes = lower_bounds(base, cands)
    keep = bound <= hbm_limits(base, cands)  # a pool: the largest HBM of its accelerators
    counts.pruned = int((~keep).sum())
    for i in np.flatnonzero(~keep):
        c = cands[i]
        f = failures.setdefault(c.key, {"family": c.key, "least_bytes": np.inf})
        if bound[i] < f["least_bytes"]:
            f.update(least_bytes=float(bound[i]), binding_term=f"{term[i]} (lower bound)",
                     binding_term_bytes=float(term_bytes[i]), hbm_bytes=hbm)  # fmt: skip
    todo = np.flatnonzero(keep)
    if first_fit:
        todo = todo[np.argsort(bound[todo], kind="stable")]
    rows: list[dict[str, Any]] = []
    order: list[int] = []
    step = 16 if first_fit else len(todo)
    for start in range(0, len(todo), max(step, 1)):
        batch_idx = todo[start:start + step]
        rows += run.map(evaluate_item, [(base, cands[i]) for i in batch_idx], progress)
        order += [int(i) for i in batch_idx]
        if first_fit and any(r["fits"] for r in rows):
            break
    counts.evaluated = len(rows)
    fitting: list[dict[str, Any]] = [SourcedRow(r, base, cands[j])
                                     for j, r in zip(order, rows, strict=False) if r["fits"]]
    counts.fitting = len(fitting)
    for j, r in zip(order, rows, strict=False):
        if r["fits"]:
            failures.pop(cands[j].key, None)
            continue
        _failed(failures, cands[j].key, r, hbm)
    fit_families = {cands[i].key for i, r in zip(order, rows, strict=False) if r["fits"]}
    for fam in fit_families:
        failures.pop(fam, None)
    return _Phase(counts, fitting, failures)


def _failed(failures: dict[str, dict[str, Any]], key: str, r: dict[str, Any],
            hbm: int) -> None:  # fmt: skip
    """Record the evaluated row ``r`` that did not fit under ``key`` (its family), keeping
    the least short one; a member that runs out of memory before one that is invalid (a
    layout the evaluation rejects or an engine setting that leaves no room for one
    sequence: no memory term, ``invalid`` and the reason as the binding term)."""
    prev = failures.get(key)
    short = r.get("shortfall_bytes", 0)
    rank = (bool(r.get("invalid")), short)
    if prev is not None:
        if rank[0] and not prev.get("invalid"):  # a memory term (or its bound) says more
            return
        if prev.get("evaluated") and rank >= (prev["invalid"], prev["shortfall_bytes"]):
            return
    failures[key] = {"family": key, "evaluated": True, "binding_term": r["binding_term"],
                     "binding_term_bytes": r.get("binding_term_bytes", 0),
                     "shortfall_bytes": short, "hbm_bytes": hbm, "invalid": rank[0]}  # fmt: skip


def plan_rl(
    base: Run,
    gpus: str | int | list[int],
    *,
    objective: str | Objective = Objective.TIME,
    top: int = 10,
    space: RLSpace | None = None,
    min_gpus: bool = False,
    compute: Compute | None = None,
    bases: Mapping[str, Run] | None = None,
) -> PlanResult:
    """The best deployments of the base Run ``base`` on the budget ``gpus`` (module
    docstring): its algorithm, models, workload and hardware fixed; its deployment and GPUs
    searched over ``space``. ``min_gpus``: stop at the smallest GPU count with any fitting
    deployment (the rows are that count's best by ``objective``). ``compute``: where the
    evaluations run (:class:`~rlmcost.plan.distributed.Compute`; default this process).
    ``bases``: a
    family's name (or ``groups``) -> the base Run it is evaluated under (its framework's
    preset under the same query; :data:`~rlmcost.plan.families.LAUNCHED_BY`), the others
    under ``base``; each row's Run and command are then its family's; None: ``base``'s
    framework was asked for (``--framework``), advice names only what it launches. Ctrl-C (a
    KeyboardInterrupt) during the evaluations ends the search with the rows found so far, a
    note that says so and ``interrupted`` set on the result.

    >>> from rlmcost.run import Run
    >>> base = Run.from_data({"algorithm": {"name": "grpo", "rule_reward": True},
    ...                       "models": {"actor": "llama-3.2-1b"}})
    >>> r = plan_rl(base, 2, space=RLSpace(placements=("baseline",), tp=(1,), rollout_tp=(1,),
    ...             micro_batch=(1,), ckpt=("full",), offload=(False,), fractions=(0.5,)))
    >>> best = r.best
    >>> best["run"]["cluster"]["gpus"], best["command"].split()[:4]
    (2, ['rlmcost', 'grpo', '--model', 'llama-3.2-1b'])
    """
    start = time.perf_counter()
    obj = parse_objective(objective)
    counts_gpus = parse_gpus(gpus)
    space = space or RLSpace()
    require_space(space)
    if not isinstance(min_gpus, bool):
        raise SpecError(f"min_gpus={min_gpus!r:.20} must be True or False")
    compute = compute or Compute()
    top = positive_int(top, "top")
    check_base(base)  # names and workload: one-line errors up front
    space_families(base, space)  # unknown families, bad --groups: one line up front
    check_given_tp(base, space.tp, space.rollout_tp, space.groups)  # --tp 3 on 64 heads
    check_given_subshard(base, space.tp, space.zero)  # --tp 8 on 4 KV heads, FSDP
    if obj is Objective.COST:
        require_prices(base, space.pool, space.groups)
    notes: list[str] = []
    if space.pool:  # no candidate uses more GPUs than the pool has
        have, asked = pool_total(space.pool), counts_gpus
        counts_gpus = (*(g for g in asked if g < have), *((have,) if max(asked) >= have else ()))
        if counts_gpus != asked:
            notes.append(f"--gpus {', '.join(str(g) for g in asked if g > have)}: more than the "
                         f"pool's {have} GPUs; searched {', '.join(map(str, counts_gpus))}")
    check_groups(space.groups, space.pool, counts_gpus)  # kept counts and accelerators
    check_degrees(space, counts_gpus)  # --cp 3 on 8 GPUs: no whole replica on any count
    total = Counts()
    rows: list[dict[str, Any]] = []
    failures: dict[str, dict[str, Any]] = {}
    per_topology: list[dict[str, Any]] = []
    interrupted = False
    parts = [p for b, sp in _parts(base, bases, space)
             for p in trainer_parts(b, sp, counts_gpus[-1])]  # a large-MoE tier's trainers
    notes += trainers_note(parts)
    notes += stream_notes(base, (*space.placements, *(["groups"] if space.groups else [])))
    notes += bracket_notes(base, space)  # --rollout-tp beside a group's own tp=
    notes += unread_notes(parts)  # --micro-batch under a token budget: one value searched
    for b, _ in parts[1:]:
        check_base(b)
    with compute.runner() as run:
        name = run.name
        if min_gpus:
            rows, failures, per_topology, more, interrupted = _fewest(
                parts, counts_gpus, run, compute.progress, obj, top, total)  # fmt: skip
            notes += more
        else:
            tops: dict[str, dict[str, Any]] = {}
            ready: list[Screened] = []  # the next part's screen, made while workers finish
            for i, (b, sp) in enumerate(parts):  # the top k of the union: of each part's
                ahead = (ready.pop() if ready else None,
                         screen_later(parts[i + 1:i + 2], counts_gpus, obj, ready))
                found = branch_and_bound(b, sp, counts_gpus, run, obj, top, compute.progress,
                                         ahead)  # fmt: skip
                _add(total, found.counts)
                rows += found.rows
                failures.update(found.failures)
                notes += found.notes
                tops.update(found.per_topology)
                interrupted = found.interrupted
                if interrupted:  # Ctrl-C stops the whole search
                    if parts[i + 1:]:
                        notes.append("not searched after the interruption: " + ", ".join(
                            n for _, later in parts[i + 1:] for n in later.only))  # fmt: skip
                    break
            per_topology = rank(list(tops.values()), obj)
        notes += bounded_note(total, obj, top)
    if len({b.deployment.framework for b, _ in parts}) > 1:
        notes.append("each family evaluated under the framework that launches it: " + "; ".join(
            dict.fromkeys(f"{', '.join(sp.only)} under {b.deployment.framework or 'none'}"
                          for b, sp in parts)))  # fmt: skip
    if total.valid == 0:
        fw = base.deployment.framework if bases is None else None  # --framework
        raise SpecError(no_valid(actor_spec(base).name, counts_gpus, space.pool, fw))
    notes.insert(0,
        f"{total.enumerated} candidates enumerated, {total.valid} valid, {total.pruned} "
        f"pruned by the memory lower bound or the engine replica rule, {total.bounded} skipped "
        f"by the time lower bound, {total.evaluated} evaluated exactly, "
        f"{total.fitting} fit ({time.perf_counter() - start:.1f} s, {name})"
    )  # fmt: skip
    if min_gpus and not interrupted:
        notes.append(
            f"smallest GPU count with a fitting deployment: {rows[0]['gpus']}; its rows are "
            f"the best by {obj} of every deployment on that count (larger counts, which may "
            "do better, not searched)" if rows
            else f"nothing fits on up to {counts_gpus[-1]} GPUs; raise --gpus"
        )  # fmt: skip
    ranked, merged = collapse(rank(rows, obj))
    if merged:
        notes.append(f"{merged} fitting row(s) that differ from another only in the engine's "
                     "TP or KV pool, with the same predicted time, were merged into it (the "
                     "smaller engine TP, then pool, kept)")  # fmt: skip
    pool = {"hardware": ",".join(f"{h}:{n}" for h, n in space.pool)} if space.pool else {}
    shown, front, per_topology = with_runs(ranked[:top], pareto(ranked), per_topology)
    return PlanResult(
        query={**query_fields(base), "gpus": list(counts_gpus), "kind": "rl", **pool},
        objective=obj,
        rows=shown,
        front=front,
        counts=total,
        seconds=time.perf_counter() - start,
        failures=sorted(failures.values(), key=lambda f: f["family"]),
        notes=notes,
        runner=name,
        base=base,
        per_topology=per_topology,
        interrupted=interrupted,
    )


def _fewest(parts: list[tuple[Run, RLSpace]], counts_gpus: tuple[int, ...], run: Runner,
            progress: Progress | None, obj: Objective, top: int,
            total: Counts) -> tuple[list, dict, list, list[str], bool]:  # fmt: skip
    """``--min-gpus``: each GPU count in turn, its leanest candidates by the memory bound first
    until one fits (:func:`_search_count`); at the first count where one does, branch and bound
    over all of that count's candidates by ``obj`` (so ``--objective cost`` gives the cheapest
    deployment on the fewest GPUs, not the first that fit). Returns the rows, the failures,
    the best of each topology, notes and whether Ctrl-C ended it; adds to ``total``."""
    failures: dict[str, dict[str, Any]] = {}
    searched: list[int] = []  # the counts searched whole
    try:
        for g in counts_gpus:
            phases = [_search_count(b, sp, g, run, progress, first_fit=True) for b, sp in parts]
            if not any(ph.rows for ph in phases):
                for ph in phases:
                    _add(total, ph.counts)
                    failures.update(ph.failures)
                searched.append(g)
                continue
            rows: list[dict[str, Any]] = []
            tops: dict[str, dict[str, Any]] = {}
            notes: list[str] = []
            for b, sp in parts:  # the fewest GPUs: every candidate of the count by obj
                found = branch_and_bound(b, sp, (g,), run, obj, top, progress)
                _add(total, found.counts)
                rows += found.rows
                failures.update(found.failures)
                tops.update(found.per_topology)
                notes += found.notes
                if found.interrupted:
                    return rows, failures, [], notes, True
            return rows, failures, rank(list(tops.values()), obj), notes, False
    except KeyboardInterrupt:  # Ctrl-C: the counts searched whole stand
        at = counts_gpus[len(searched)]
        return [], failures, [], [
            f"the search was interrupted (Ctrl-C) at {at} GPUs: "
            + (f"nothing fits on up to {searched[-1]} GPUs, the larger counts not searched"
               if searched else "no GPU count searched whole")], True  # fmt: skip
    return [], failures, [], [], False


def _parts(base: Run, bases: Mapping[str, Run] | None,
           space: RLSpace) -> list[tuple[Run, RLSpace]]:  # fmt: skip
    """The searches of one plan: each distinct base Run with the space restricted to the
    families evaluated under it (``RLSpace.only``); one, ``(base, space)``, without
    ``bases``. Each part's screen and probe are its own base's, so its bounds stay lower
    bounds of its own evaluations."""
    names = [*space.placements, *(["groups"] if space.groups else [])]
    by: dict[int, tuple[Run, list[str]]] = {}
    streamed: dict[tuple[int, bool, bool], Run] = {}  # family_base's Run, once per base and kind
    for n in names:
        b = (bases or {}).get(n, base)
        b = streamed.setdefault((id(b), n == "async-stream", n in STALE_FAMILIES),
                                family_base(n, b))  # fmt: skip
        by.setdefault(id(b), (b, []))[1].append(n)
    if len(by) <= 1:
        return [(next(iter(by.values()))[0] if by else base, space)]
    return [(b, replace(space, only=tuple(ns))) for b, ns in by.values()]


def _add(total: Counts, c: Counts) -> None:
    for k in ("enumerated", "valid", "pruned", "bounded", "evaluated", "fitting"):
        setattr(total, k, getattr(total, k) + getattr(c, k))


def query_fields(base: Run) -> dict[str, Any]:
    """The plan's query as the JSON's ``query`` names it (the base Run's algorithm, actor,
    hardware, workload and models; the whole Run is the result's ``base``)."""
    m, w = base.models, base.workload

    def name(model: Any) -> Any:
        return model if model is None or isinstance(model, str) else model.name

    reward = "rule" if base.algorithm.rule_reward else name(m.reward)
    return {"algorithm": base.algorithm.name, "model": name(m.actor),
            "hardware": base.cluster.hardware, "batch": w.prompts,
            "group": w.samples_per_prompt, "prompt_len": w.prompt_len,
            "response_len": w.response_len, "reward": reward, "critic": name(m.critic),
            "ref": name(m.reference)}  # fmt: skip


def check_base(base: Run) -> None:
    """Resolve the query of ``base`` as the evaluation will (:func:`rlmcost.placement.query.
    resolve`: the algorithm, models, workload, image tokens, hardware, calibration profile;
    SpecError, one line, for an unknown name or a bad workload), so a query no candidate can
    run fails here, not as "nothing fits" (``--image-tokens`` on a text model had)."""
    from rlmcost.placement.query import resolve
    from rlmcost.run.spec import require_run

    require_run(base, "plan_rl's base")
    if base.cluster.rank_order != "topology":  # its NVLink reach needs a candidate's GPUs
        base = base.replace(cluster={"rank_order": "topology"})
    resolve(base, None)



def __getattr__(name: str) -> Any:
    """``max_response_len`` and ``response_limit`` live in :mod:`rlmcost.plan.longest` (kept
    importable from here, where they were)."""
    if name in ("max_response_len", "response_limit"):
        from rlmcost.plan import longest

        return getattr(longest, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
