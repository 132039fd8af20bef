"""`rlmcost plan grpo|ppo|...`: search RL deployments on a GPU budget for the best that fits.

The space (:class:`RLSpace`), for each GPU count: placements — the co-located baseline, any
Table IX configuration (async, disaggregated, hybrid, ...) and partial colocations ``split``
(``--groups rollout=R,<the models>=N-R``: the inference engines on R GPUs of their own, the
trained and scoring models on the rest) for each rollout share; the trainer's layout (TP
within a node dividing heads, KV heads and FFN width; PP; ZeRO stage; checkpointing;
micro-batch; optimizer offload); the engine's TP and memory reservation.

Each candidate is checked in two steps:

1. a cheap necessary condition, vectorized over all candidates at once: the trainer's model
   states (weights, gradients, and the optimizer unless offloaded, sharded over the most data
   parallel replicas the group can have) plus the activations of one sequence per
   micro-batch (:func:`rlmcost.compiled.sweep_train_steps`), and the engine's weights per
   device, must each fit the device's HBM — every deployment evaluation holds at least these
   (``tests/test_plan_rl.py`` checks that no pruned candidate fits);
2. the survivors are evaluated exactly by the one evaluation every query uses
   (:func:`rlmcost.reports.placement.placement_estimate`, i.e. ``evaluate_deployment`` with
   the placement defaults), memoized, and ranked by the objective on the predicted iteration.

Every row carries the `rlmcost <algorithm> ... --json` command that reproduces it exactly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, ZeroStage
from rlmcost.plan.distributed import Progress, runner
from rlmcost.plan.kinds import Objective, parse_gpus, parse_objective
from rlmcost.plan.search import Counts, PlanResult, gpu_hours, pareto, rank
from rlmcost.plan.space import engine_tp_degrees, powers_of_two, tp_degrees

SPLIT = "split"
"""The placement name of a partial colocation (``--groups rollout=R,...``)."""


@dataclass(frozen=True)
class RLQuery:
    """What a plan holds fixed: the algorithm, models, workload and hardware."""

    algorithm: str
    model: str
    hardware: str = "h100-sxm"
    batch: int | None = None
    group: int | None = None
    prompt_len: int | None = None
    response_len: int | None = None
    reward: str | None = None  # a model name, or "rule" (a rule-based verifier)
    critic: str | None = None
    ref: str | None = None


@dataclass(frozen=True)
class RLSpace:
    """The value lists of the RL search (module docstring). None: every valid value."""

    placements: tuple[str, ...] = ("baseline", SPLIT)
    rollout_shares: tuple[float, ...] = (0.5,)  # split: the engines' share of the GPUs
    tp: tuple[int, ...] | None = None  # trainer TP: powers of two within a node, valid
    pp: tuple[int, ...] = (1,)
    zero: tuple[ZeroStage, ...] = (ZeroStage.OS_G_P,)  # FSDP, as verl and OpenRLHF
    ckpt: tuple[Checkpointing, ...] = (Checkpointing.NONE, Checkpointing.FULL)
    micro_batch: tuple[int, ...] = (1, 2)
    offload: tuple[bool, ...] = (False, True)  # optimizer states in host memory
    rollout_tp: tuple[int, ...] | None = None  # engine TP: powers of two dividing the heads
    fractions: tuple[float, ...] = (0.5, 0.9)  # engine reservation beside a trainer


@dataclass(frozen=True)
class RLCandidate:
    """One deployment of the search."""

    gpus: int
    placement: str
    rollout_gpus: int  # split: the engines' GPUs; else 0
    tp: int
    pp: int
    zero: ZeroStage
    ckpt: Checkpointing
    micro_batch: int
    offload: bool
    rollout_tp: int
    fraction: float | None  # None: the engine's default for where it runs

    @property
    def family(self) -> str:
        where = f"{self.placement}" + (f" rollout={self.rollout_gpus}" if self.rollout_gpus
                                       else "")  # fmt: skip
        return f"gpus={self.gpus} {where} tp={self.tp} pp={self.pp}"


# -- enumeration -----------------------------------------------------------------------------


def candidates(query: RLQuery, space: RLSpace, gpus: int) -> list[RLCandidate]:
    """Every valid candidate of ``space`` on ``gpus`` devices: degrees dividing the heads, KV
    heads, FFN widths and layers (:mod:`rlmcost.plan.space`), TP within a node, groups
    holding whole trainer replicas and whole engine replicas."""
    from rlmcost.compiled import arch_numbers
    from rlmcost.placement.kinds import Config
    from rlmcost.specs import get_hardware, get_model

    a = arch_numbers(get_model(query.model))
    node = get_hardware(query.hardware).gpus_per_node
    tps = space.tp or tuple(t for t in powers_of_two(node) if t in tp_degrees(a, node))
    etps = space.rollout_tp or tuple(engine_tp_degrees(a, node))
    out: list[RLCandidate] = []
    for placement in space.placements:
        if placement != SPLIT:
            Config(placement)  # a known configuration (checked by plan_rl)
        shares = sorted({max(1, round(gpus * s)) for s in space.rollout_shares}) \
            if placement == SPLIT else [0]  # fmt: skip
        for r in shares:
            train_gpus = gpus - r
            if placement == SPLIT and not (0 < r < gpus):
                continue
            fractions = space.fractions if placement == "baseline" else (None,)
            for tp in tps:
                for pp in space.pp:
                    if tp > node or tp * pp > train_gpus or pp > a.n_layers:
                        continue
                    if tp not in tp_degrees(a, tp) or train_gpus % (tp * pp):
                        continue
                    for etp in etps:
                        eg = r if placement == SPLIT else gpus
                        if etp > node or eg % etp:
                            continue
                        for zero in space.zero:
                            for ckpt in space.ckpt:
                                for mb in space.micro_batch:
                                    for off in space.offload:
                                        for f in fractions:
                                            out.append(RLCandidate(
                                                gpus, placement, r, tp, pp, ZeroStage(zero),
                                                Checkpointing(ckpt), mb, off, etp, f,
                                            ))  # fmt: skip
    return out


def enumerated_size(space: RLSpace, query: RLQuery) -> int:
    """The product of the value lists (before the validity rules), per GPU count."""
    from rlmcost.compiled import arch_numbers
    from rlmcost.specs import get_hardware, get_model

    a = arch_numbers(get_model(query.model))
    node = get_hardware(query.hardware).gpus_per_node
    n_tp = len(space.tp or powers_of_two(node))
    n_etp = len(space.rollout_tp or powers_of_two(node))
    per = n_tp * len(space.pp) * len(space.zero) * len(space.ckpt) * len(space.micro_batch)
    per *= len(space.offload) * n_etp
    total = 0
    for p in space.placements:
        total += per * (len(space.fractions) if p == "baseline" else 1) * (
            len(space.rollout_shares) if p == SPLIT else 1)  # fmt: skip
    del a
    return total


# -- the necessary condition -----------------------------------------------------------------


def lower_bounds(query: RLQuery, cands: list[RLCandidate]) -> tuple[Any, Any, Any]:
    """Per candidate: (bytes per device every evaluation holds at least, the largest term's
    name, its bytes) — module docstring, step 1. Vectorized over the candidates."""
    import numpy as np

    from rlmcost.compiled import arch_numbers, sweep_train_steps
    from rlmcost.deployment.evaluate import spec_params
    from rlmcost.specs import get_hardware, get_model

    spec = get_model(query.model)
    hw = get_hardware(query.hardware)
    a = arch_numbers(spec)
    f = {k.name: np.array([getattr(c, k.name) for c in cands]) for k in fields(RLCandidate)
         if k.name not in ("zero", "ckpt", "placement", "fraction")}  # fmt: skip
    zero = np.array([list(ZeroStage).index(c.zero) for c in cands], dtype=np.int64)
    ckpt = np.array([list(Checkpointing).index(c.ckpt) for c in cands], dtype=np.int64)
    train_gpus = f["gpus"] - f["rollout_gpus"]
    dp = train_gpus / (f["tp"] * f["pp"])  # the most replicas the trainer's group can hold
    seq_len = (query.prompt_len or 1024) + (query.response_len or 1024)
    s = sweep_train_steps(a, hw, sequences=dp, seq_len=seq_len, dp=dp, tp=f["tp"], pp=f["pp"],
                          zero=zero, ckpt=ckpt, micro_batch=f["micro_batch"])  # fmt: skip
    optimizer = np.where(f["offload"], 0.0, s.optimizer)
    terms = {"weights": s.weights, "gradients": s.gradients, "optimizer": optimizer,
             "activations": s.activations}  # fmt: skip
    trainer = sum(terms.values())
    engine = 2.0 * spec_params(spec) / f["rollout_tp"]  # bf16 weights of one engine shard
    names = np.array(list(terms) + ["engine weights"])
    stack = np.stack([*terms.values(), engine])
    which = np.argmax(stack, axis=0)
    bound = np.maximum(trainer, engine)
    return bound, names[which], stack[which, np.arange(len(cands))]


# -- exact evaluation ------------------------------------------------------------------------


def _options(query: RLQuery) -> Any:
    from rlmcost.algorithms.options import Options

    return Options(rule_reward=(query.reward or "").strip().lower() == "rule")


def _roles(query: RLQuery) -> list[str]:
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.options import configure

    alg = configure(get_algorithm(query.algorithm), _options(query))
    return [str(r) for r in alg.model_roles]


def groups_text(query: RLQuery, c: RLCandidate) -> str | None:
    """``--groups`` of a split candidate: the engines on their GPUs, every model on the rest."""
    if c.placement != SPLIT:
        return None
    return f"rollout={c.rollout_gpus},{'+'.join(_roles(query))}={c.gpus - c.rollout_gpus}"


def deployment(c: RLCandidate) -> Any:
    """The :class:`~rlmcost.deployment.spec.Deployment` of a candidate, as the CLI's flags
    build it (``cli._deploy.build_deployment``)."""
    from rlmcost.deployment.spec import Deployment, EngineSpec, Offload, TrainLayout

    return Deployment(
        train=TrainLayout(tp=c.tp, pp=c.pp, zero=c.zero, ckpt=c.ckpt, micro_batch=c.micro_batch,
                          offload=(Offload.OPTIMIZER,) if c.offload else ()),
        engine=EngineSpec(tp=c.rollout_tp, gpu_memory_utilization=c.fraction),
    )  # fmt: skip


def estimate(query: RLQuery, c: RLCandidate) -> Any:
    """The :class:`~rlmcost.placement.iteration.PlacementEstimate` of one candidate: the call
    the reproducing command line makes."""
    from rlmcost.reports.placement import placement_estimate

    dep = deployment(c)
    rule = (query.reward or "").strip().lower() == "rule"
    return placement_estimate(
        query.algorithm, query.model, critic=query.critic, ref=query.ref,
        reward=None if rule else query.reward, batch=query.batch, group=query.group,
        prompt_len=query.prompt_len, response_len=query.response_len,
        layout=dep.train.layout(dp=1), hardware=query.hardware, gpus=c.gpus,
        options=_options(query), deployment=dep,
        placement=None if c.placement == SPLIT else c.placement,
        groups=groups_text(query, c),
    )  # fmt: skip


def command(query: RLQuery, c: RLCandidate) -> str:
    """The `rlmcost <algorithm>` command line that evaluates candidate ``c`` alone."""
    q = query
    parts = [f"rlmcost {q.algorithm}", f"--model {q.model}", f"--hardware {q.hardware}",
             f"--gpus {c.gpus}"]  # fmt: skip
    for flag, v in (("--batch", q.batch), ("--group", q.group), ("--prompt-len", q.prompt_len),
                    ("--response-len", q.response_len), ("--reward", q.reward),
                    ("--critic", q.critic), ("--ref", q.ref)):  # fmt: skip
        if v is not None:
            parts.append(f"{flag} {v}")
    parts += [f"--tp {c.tp}", f"--pp {c.pp}", f"--zero {c.zero}", f"--ckpt {c.ckpt}",
              f"--micro-batch {c.micro_batch}", f"--rollout-tp {c.rollout_tp}"]  # fmt: skip
    if c.offload:
        parts.append("--offload optimizer")
    if c.fraction is not None:
        parts.append(f"--gpu-memory-utilization {c.fraction:g}")
    if c.placement == SPLIT:
        parts.append(f"--groups {groups_text(query, c)}")
    else:
        parts.append(f"--placement {c.placement}")
    return " ".join(parts)


def binding_term(e: Any) -> tuple[str, int]:
    """What keeps an estimate from fitting: the group's problem, else the largest memory term
    of the peak job of the group with the largest shortfall."""
    g = max(e.groups, key=lambda g: (g.shortfall_bytes, bool(g.problems)))
    if g.problems and not g.shortfall_bytes:
        return g.problems[0], 0
    job = max(g.jobs, key=lambda j: j.memory.total)
    m = job.memory
    names = [f.name for f in fields(m) if isinstance(getattr(m, f.name), int)]
    name = max(names, key=lambda n: getattr(m, n))
    return f"{name} ({job.task.label()} on {g.name})", int(getattr(m, name))


@lru_cache(maxsize=65536)
def evaluate_row(query: RLQuery, c: RLCandidate) -> dict[str, Any]:
    """One candidate evaluated exactly, as a plan row (memoized)."""
    e = estimate(query, c)
    t = e.iteration_time_s
    row = {
        "gpus": c.gpus, "placement": c.placement, "groups": groups_text(query, c) or "",
        "tp": c.tp, "pp": c.pp, "zero": str(c.zero), "ckpt": str(c.ckpt),
        "micro_batch": c.micro_batch, "offload": "optimizer" if c.offload else "",
        "rollout_tp": c.rollout_tp, "gpu_memory_utilization": c.fraction,
        "fits": e.fits, "memory_bytes_per_device": e.peak_memory_bytes_per_device,
        "time_s": t, "time_lower_bound_s": e.iteration_time_lower_bound_s,
        "tokens_per_s_per_gpu": e.tokens_per_s_per_gpu, "mfu": e.mfu,
        "gpu_hours": gpu_hours(t, c.gpus), "command": command(query, c),
    }  # fmt: skip
    if not e.fits:
        row["binding_term"], row["binding_term_bytes"] = binding_term(e)
        row["shortfall_bytes"] = e.shortfall_bytes
    return row


def evaluate_item(item: tuple[RLQuery, RLCandidate]) -> dict[str, Any]:
    """:func:`evaluate_row` of a (query, candidate) pair (a module-level function for Dask)."""
    try:
        return evaluate_row(*item)
    except SpecError as exc:  # a combination the evaluation rejects: never fits, say why
        return {"fits": False, "binding_term": f"rejected: {exc}", "gpus": item[1].gpus,
                "command": command(*item)}  # fmt: skip


# -- the search ------------------------------------------------------------------------------


@dataclass
class _Phase:
    counts: Counts
    rows: list[dict[str, Any]]
    failures: dict[str, dict[str, Any]]


def _search_count(query: RLQuery, space: RLSpace, gpus: int, run: Any,
                  progress: Progress | None, first_fit: bool = False) -> _Phase:  # fmt: skip
    """Enumerate, prune and evaluate one GPU count. ``first_fit``: evaluate the leanest
    survivors first and stop at the first that fits."""
    import numpy as np

    from rlmcost.specs import get_hardware

    hbm = get_hardware(query.hardware).hbm_bytes
    cands = candidates(query, space, gpus)
    counts = Counts(enumerated=enumerated_size(space, query), valid=len(cands))
    failures: dict[str, dict[str, Any]] = {}
    if not cands:
        return _Phase(counts, [], failures)
    bound, term, term_bytes = lower_bounds(query, cands)
    keep = bound <= hbm
    counts.pruned = int((~keep).sum())
    for i in np.flatnonzero(~keep):
        c = cands[i]
        f = failures.setdefault(c.family, {"family": c.family, "least_bytes": np.inf})
        if bound[i] < f["least_bytes"]:
            f.update(least_bytes=float(bound[i]), binding_term=f"{term[i]} (lower bound)",
                     binding_term_bytes=float(term_bytes[i]), hbm_bytes=hbm)  # fmt: skip
    order = np.flatnonzero(keep)
    if first_fit:
        order = order[np.argsort(bound[order], kind="stable")]
    rows: list[dict[str, Any]] = []
    step = 16 if first_fit else len(order)
    for start in range(0, len(order), max(step, 1)):
        batch = [(query, cands[i]) for i in order[start:start + step]]
        rows += run.map(evaluate_item, batch, progress)
        if first_fit and any(r["fits"] for r in rows):
            break
    counts.evaluated = len(rows)
    fitting = [r for r in rows if r["fits"]]
    counts.fitting = len(fitting)
    for i, r in zip(order, rows, strict=False):
        c = cands[i]
        if r["fits"]:
            failures.pop(c.family, None)
            continue
        prev = failures.get(c.family)
        short = r.get("shortfall_bytes", 0)
        if prev is None or prev.get("evaluated") is None or short < prev["shortfall_bytes"]:
            if prev is not None and prev.get("fits"):
                continue
            failures[c.family] = {"family": c.family, "evaluated": True,
                                  "binding_term": r["binding_term"],
                                  "binding_term_bytes": r.get("binding_term_bytes", 0),
                                  "shortfall_bytes": short, "hbm_bytes": hbm}  # fmt: skip
    fit_families = {cands[i].family for i, r in zip(order, rows, strict=False) if r["fits"]}
    for fam in fit_families:
        failures.pop(fam, None)
    return _Phase(counts, fitting, failures)


def plan_rl(
    query: RLQuery,
    gpus: str | int | list[int],
    *,
    objective: str | Objective = Objective.TIME,
    top: int = 10,
    space: RLSpace | None = None,
    min_gpus: bool = False,
    workers: int | None = None,
    cluster: str | None = None,
    progress: Progress | None = None,
) -> PlanResult:
    """The best deployments of ``query`` on the budget ``gpus`` (module docstring).
    ``min_gpus``: stop at the smallest GPU count with any fitting deployment (the rows are
    that count's)."""
    from rlmcost.placement.kinds import Config

    start = time.perf_counter()
    obj = parse_objective(objective)
    counts_gpus = parse_gpus(gpus)
    space = space or RLSpace()
    if top < 1:
        raise SpecError(f"--top {top} must be a positive integer")
    for p in space.placements:
        if p != SPLIT and p not in {c.value for c in Config}:
            have = ", ".join([*(c.value for c in Config), SPLIT])
            raise SpecError(f"unknown placement {p!r}; use any of: {have}")
    _check_query(query)  # names and workload: one-line errors up front
    total = Counts()
    rows: list[dict[str, Any]] = []
    failures: dict[str, dict[str, Any]] = {}
    with runner(workers, cluster) as run:
        name = run.name
        for g in counts_gpus:
            ph = _search_count(query, space, g, run, progress, first_fit=min_gpus)
            for k in ("enumerated", "valid", "pruned", "evaluated", "fitting"):
                setattr(total, k, getattr(total, k) + getattr(ph.counts, k))
            rows += ph.rows
            failures.update(ph.failures)
            if min_gpus and ph.rows:
                break
    if total.valid == 0:
        raise SpecError(
            f"no valid deployment of {query.model} on {counts_gpus[0]}..{counts_gpus[-1]} "
            "GPU(s): every count is below one trainer replica (tp*pp) plus one engine replica; "
            "raise --gpus"
        )
    notes = [
        f"{total.enumerated} candidates enumerated, {total.valid} valid, {total.pruned} "
        f"pruned by the memory lower bound, {total.evaluated} evaluated exactly, "
        f"{total.fitting} fit ({time.perf_counter() - start:.1f} s, {name})"
    ]
    if min_gpus:
        notes.append(
            f"smallest GPU count with a fitting deployment: {rows[0]['gpus']}" if rows
            else f"nothing fits on up to {counts_gpus[-1]} GPUs; raise --gpus"
        )  # fmt: skip
    ranked = rank(rows, obj)
    return PlanResult(
        query={**{f.name: getattr(query, f.name) for f in fields(query)},
               "gpus": list(counts_gpus), "kind": "rl"},  # fmt: skip
        objective=obj,
        rows=ranked[:top],
        front=pareto(ranked),
        counts=total,
        seconds=time.perf_counter() - start,
        failures=sorted(failures.values(), key=lambda f: f["family"]),
        notes=notes,
        runner=name,
    )


def _check_query(query: RLQuery) -> None:
    """Resolve the algorithm, models, workload and hardware as the evaluation will
    (SpecError, one line, for an unknown name or a bad workload)."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.options import configure
    from rlmcost.deployment.resolve import models_given, resolve_models, resolve_workload
    from rlmcost.specs import get_hardware

    rule = (query.reward or "").strip().lower() == "rule"
    alg = configure(get_algorithm(query.algorithm), _options(query))
    resolve_workload(alg, None, query.batch, query.group, query.prompt_len, query.response_len)
    given = models_given(None, query.critic, None if rule else query.reward, query.ref)
    resolve_models(alg, query.model, given)
    get_hardware(query.hardware)


def response_limit(query: RLQuery) -> int:
    """The longest response the actor's trained context leaves after the prompt (the
    :data:`~rlmcost.deployment.advice.DEFAULT_CONTEXT_CAP` when the model states none)."""
    from rlmcost.algorithms.options import DEFAULT_PROMPT_LEN
    from rlmcost.deployment.advice import DEFAULT_CONTEXT_CAP
    from rlmcost.specs import get_model

    context = get_model(query.model).max_context or DEFAULT_CONTEXT_CAP
    return max(1, context - (query.prompt_len or DEFAULT_PROMPT_LEN))


def max_response_len(
    query: RLQuery,
    gpus: int,
    *,
    space: RLSpace | None = None,
    step: int = 1024,
    limit: int | None = None,
    progress: Progress | None = None,
) -> tuple[int, dict[str, Any] | None]:
    """The longest response (a multiple of ``step`` tokens, or ``limit`` itself; ``limit``
    defaults to :func:`response_limit`, the model's context less the prompt) for which some
    deployment of ``space`` fits on ``gpus`` devices, and that deployment's row; (0, None)
    when not even min(step, limit) tokens fit. Doubling, then bisection."""
    space = space or RLSpace()
    limit = response_limit(query) if limit is None else limit

    def fitting(t: int) -> dict[str, Any] | None:
        q = replace(query, response_len=t)
        ph = _search_count(q, space, gpus, _LOCAL, progress, first_fit=True)
        return ph.rows[0] if ph.rows else None

    lo = min(step, limit)
    best = fitting(lo)
    if best is None:
        return 0, None
    hi = None
    while hi is None and lo < limit:
        t = min(2 * lo, limit)  # the limit itself is tried before stopping there
        row = fitting(t)
        if row is None:
            hi = t
        else:
            lo, best = t, row
    while hi is not None and hi - lo > step:
        mid = (lo + hi) // 2 // step * step
        if mid <= lo:
            break
        row = fitting(mid)
        if row is None:
            hi = mid
        else:
            lo, best = mid, row
    return lo, best


_LOCAL = runner()
