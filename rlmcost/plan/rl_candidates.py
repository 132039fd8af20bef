"""The candidates of `rlmcost plan <algorithm>`: the base Run, the space, bounds and rows.

A plan holds fixed a base :class:`~rlmcost.run.Run` (the algorithm and its knobs, the models,
the workload, the hardware, and whatever of the deployment the search does not vary);
:class:`RLSpace` says what may vary. :func:`candidates` gives the deployments of one GPU
count, :func:`candidate_run` the Run of each (``base.replace(deployment=..., cluster=...)``),
:func:`lower_bounds` the vectorized necessary condition of step 1 of :mod:`rlmcost.plan.rl`,
fed from the base Run's fields, and :func:`evaluate_row` the exact evaluation of step 2
(:func:`~rlmcost.evaluation.deployment.evaluate_deployment` of the candidate's Run, the one
evaluation every query uses) as a row that embeds its Run and the command line that
reproduces it (``run.to_command()``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, ZeroStage, dp_unit
from rlmcost.plan.search import gpu_hours
from rlmcost.plan.space import engine_tp_degrees, powers_of_two, tp_degrees

if TYPE_CHECKING:
    from rlmcost.run.spec import Run
    from rlmcost.specs import ModelSpec

SPLIT = "split"
"""The placement name of a partial colocation (``--groups rollout=R,...``)."""

STALE = ("async", "combined")
"""Placements that take the base Run's staleness k (Table IX)."""


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


def actor_spec(base: Run) -> ModelSpec:
    """The actor's :class:`~rlmcost.specs.ModelSpec` of ``base`` (SpecError for an unknown
    name)."""
    from rlmcost.specs import get_model

    return get_model(base.models.actor)


# -- enumeration -----------------------------------------------------------------------------


def candidates(base: Run, space: RLSpace, gpus: int) -> list[RLCandidate]:
    """Every valid candidate of ``space`` on ``gpus`` devices: degrees dividing the heads, KV
    heads, FFN widths and layers (:mod:`rlmcost.plan.space`), TP within a node, groups
    holding whole trainer replicas (tp*pp times the base Run's cp*ep) and whole engine
    replicas."""
    from rlmcost.compiled import arch_numbers
    from rlmcost.placement.kinds import Config
    from rlmcost.specs import get_hardware

    a = arch_numbers(actor_spec(base))
    node = get_hardware(base.cluster.hardware).gpus_per_node
    train = base.deployment.train
    fixed = train.cp
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
                    if tp > node or tp * pp * fixed > train_gpus or pp > a.n_layers:
                        continue
                    unit = tp * pp * fixed * dp_unit(tp, train.cp, train.ep, train.etp)
                    if tp not in tp_degrees(a, tp) or train_gpus % unit:
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


def enumerated_size(space: RLSpace, base: Run) -> int:
    """The product of the value lists (before the validity rules), per GPU count."""
    from rlmcost.specs import get_hardware

    node = get_hardware(base.cluster.hardware).gpus_per_node
    n_tp = len(space.tp or powers_of_two(node))
    n_etp = len(space.rollout_tp or powers_of_two(node))
    per = n_tp * len(space.pp) * len(space.zero) * len(space.ckpt) * len(space.micro_batch)
    per *= len(space.offload) * n_etp
    total = 0
    for p in space.placements:
        total += per * (len(space.fractions) if p == "baseline" else 1) * (
            len(space.rollout_shares) if p == SPLIT else 1)  # fmt: skip
    return total


# -- the necessary condition -----------------------------------------------------------------


def lower_bounds(base: Run, cands: list[RLCandidate]) -> tuple[Any, Any, Any]:
    """Per candidate: (bytes per device every evaluation holds at least, the largest term's
    name, its bytes) — :mod:`rlmcost.plan.rl` step 1. Vectorized over the candidates, fed
    from the base Run: the actor, the hardware, S + T, the weight dtype and the trainer's
    cp/ep/sp. The activations are those of one sequence per replica (``sequences=dp``: what
    any micro-batch or token budget holds at least). What the bound cannot see stays below
    what the evaluation holds: with LoRA the gradients and optimizer count zero, and under a
    length distribution the longest response is at least the median (the evaluation pads to
    the longest of its quantiles, :mod:`rlmcost.placement.lengths`)."""
    import numpy as np

    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.compiled import arch_numbers, sweep_train_steps
    from rlmcost.deployment.resolve import resolve_workload
    from rlmcost.evaluation.deployment import spec_params
    from rlmcost.placement.lengths import parse_length_dist
    from rlmcost.specs import get_hardware

    spec = actor_spec(base)
    hw = get_hardware(base.cluster.hardware)
    a = arch_numbers(spec)
    w, t = base.workload, base.deployment.train
    wl = resolve_workload(get_algorithm(base.algorithm.name), None, w.prompts,
                          w.samples_per_prompt, w.prompt_len, w.response_len)  # fmt: skip
    dtypes = wl.model_copy(update=w.dtypes())
    f = {k.name: np.array([getattr(c, k.name) for c in cands]) for k in fields(RLCandidate)
         if k.name not in ("zero", "ckpt", "placement", "fraction")}  # fmt: skip
    zero = np.array([list(ZeroStage).index(c.zero) for c in cands], dtype=np.int64)
    ckpt = np.array([list(Checkpointing).index(c.ckpt) for c in cands], dtype=np.int64)
    train_gpus = f["gpus"] - f["rollout_gpus"]
    dp = train_gpus / (f["tp"] * f["pp"] * t.cp)  # the most replicas (EP folded inside)
    # the longest of n >= 1 responses is at least the distribution's median (n = 1)
    seq_len = wl.prompt_len + parse_length_dist(w.length_dist).lengths(1, wl.response_len)[0]
    s = sweep_train_steps(a, hw, sequences=dp, seq_len=seq_len, dp=dp, tp=f["tp"], pp=f["pp"],
                          cp=t.cp, ep=t.ep, etp=t.etp, sp=t.sp, zero=zero, ckpt=ckpt,
                          micro_batch=f["micro_batch"], workload=dtypes)  # fmt: skip
    lora = base.deployment.lora is not None
    optimizer = np.where(f["offload"] | lora, 0.0, s.optimizer)
    terms = {"weights": s.weights, "gradients": s.gradients * (not lora),
             "optimizer": optimizer, "activations": s.activations}  # fmt: skip
    trainer = sum(terms.values())
    # one engine shard's weights
    engine = float(spec_params(spec) * dtypes.weight_dtype.bytes) / f["rollout_tp"]
    names = np.array(list(terms) + ["engine weights"])
    stack = np.stack([*terms.values(), engine])
    which = np.argmax(stack, axis=0)
    bound = np.maximum(trainer, engine)
    return bound, names[which], stack[which, np.arange(len(cands))]


# -- the candidate's Run and its exact evaluation --------------------------------------------


def groups_text(base: Run, c: RLCandidate) -> str | None:
    """``--groups`` of a split candidate: the engines on their GPUs, every model on the rest."""
    if c.placement != SPLIT:
        return None
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.options import configure

    alg = configure(get_algorithm(base.algorithm.name), base.algorithm.options())
    roles = "+".join(str(r) for r in alg.model_roles)
    return f"rollout={c.rollout_gpus},{roles}={c.gpus - c.rollout_gpus}"


def candidate_run(base: Run, c: RLCandidate) -> Run:
    """The :class:`~rlmcost.run.Run` of candidate ``c``: ``base`` with the candidate's
    trainer layout (TP, PP, ZeRO, checkpointing, micro-batch, optimizer offload), engine TP
    and reservation, placement or groups, and GPUs (dp fills them; the trainer's TP holds
    for every model)."""
    from rlmcost.evaluation.query import groups_from_text

    text = groups_text(base, c)
    groups = [g.model_dump(mode="json") for g in groups_from_text(text)] if text else []
    train = {"tp": c.tp, "pp": c.pp, "zero": str(c.zero), "ckpt": str(c.ckpt),
             "micro_batch": c.micro_batch, "offload": ["optimizer"] if c.offload else []}
    deployment = {
        "train": train,
        "engine": {"tp": c.rollout_tp, **({} if c.fraction is None else
                                          {"gpu_memory_utilization": c.fraction})},
        "placement": None if c.placement == SPLIT else c.placement,
        "groups": groups,
        "staleness": base.deployment.staleness if c.placement in STALE else None,
    }  # fmt: skip
    return base.replace(deployment=deployment, cluster={"gpus": c.gpus, "dp": None},
                        tp_per_model=False)  # fmt: skip


def command(run: Run) -> str | None:
    """The `rlmcost <algorithm>` line that evaluates ``run`` alone (None when no command line
    can say it, e.g. a full model spec: ``rlmcost run`` on the row's Run reproduces it)."""
    try:
        return run.to_command()
    except SpecError:
        return None


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


def evaluate_row(base: Run, c: RLCandidate) -> dict[str, Any]:
    """One candidate evaluated exactly, as a plan row with its Run (memoized on the base
    Run's JSON and the candidate)."""
    return _row(base.to_json_text(), c)


@lru_cache(maxsize=65536)
def _row(base_text: str, c: RLCandidate) -> dict[str, Any]:
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.run.spec import Run

    base = Run.from_json(base_text)
    run = candidate_run(base, c)
    e = evaluate_deployment(run)
    t = e.iteration_time_s
    row = {
        "gpus": c.gpus, "placement": c.placement, "groups": groups_text(base, c) or "",
        "tp": c.tp, "pp": c.pp, "zero": str(c.zero), "ckpt": str(c.ckpt),
        "micro_batch": c.micro_batch, "offload": "optimizer" if c.offload else "",
        "rollout_tp": c.rollout_tp, "gpu_memory_utilization": c.fraction,
        "fits": e.fits, "memory_bytes_per_device": e.peak_memory_bytes_per_device,
        "time_s": t, "time_lower_bound_s": e.iteration_time_lower_bound_s,
        "tokens_per_s_per_gpu": e.tokens_per_s_per_gpu, "mfu": e.mfu,
        "gpu_hours": gpu_hours(t, c.gpus), "command": command(run), "run": run.to_json(),
    }  # fmt: skip
    if not e.fits:
        row["binding_term"], row["binding_term_bytes"] = binding_term(e)
        row["shortfall_bytes"] = e.shortfall_bytes
    return row


def evaluate_item(item: tuple[Run, RLCandidate]) -> dict[str, Any]:
    """:func:`evaluate_row` of a (base Run, candidate) pair (a module-level function for
    Dask)."""
    base, c = item
    try:
        return evaluate_row(base, c)
    except SpecError as exc:  # a combination the evaluation rejects: never fits, say why
        run = candidate_run(base, c)
        return {"fits": False, "binding_term": f"rejected: {exc}", "gpus": c.gpus,
                "command": command(run), "run": run.to_json()}  # fmt: skip
