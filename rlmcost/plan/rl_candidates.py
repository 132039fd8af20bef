"""The candidates of `rlmcost plan <algorithm>`: the query, the space, bounds and rows.

:class:`RLQuery` is what a plan holds fixed (the algorithm, models, workload and hardware),
:class:`RLSpace` what may vary, :func:`candidates` the deployments of one GPU count,
:func:`lower_bounds` the vectorized necessary condition of step 1 of
:mod:`rlmcost.plan.rl`, and :func:`evaluate_row` the exact evaluation of step 2 with the
command that reproduces it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, ZeroStage
from rlmcost.plan.search import gpu_hours
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
    from rlmcost.evaluation.deployment import spec_params
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


def algorithm_options(query: RLQuery) -> Any:
    from rlmcost.algorithms.options import Options

    return Options(rule_reward=(query.reward or "").strip().lower() == "rule")


def _roles(query: RLQuery) -> list[str]:
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.options import configure

    alg = configure(get_algorithm(query.algorithm), algorithm_options(query))
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
    """The :class:`~rlmcost.placement.estimate.PlacementEstimate` of one candidate: the call
    the reproducing command line makes."""
    from rlmcost.reports.placement import placement_estimate

    dep = deployment(c)
    rule = (query.reward or "").strip().lower() == "rule"
    return placement_estimate(
        query.algorithm, query.model, critic=query.critic, ref=query.ref,
        reward=None if rule else query.reward, batch=query.batch, group=query.group,
        prompt_len=query.prompt_len, response_len=query.response_len,
        layout=dep.train.layout(dp=1), hardware=query.hardware, gpus=c.gpus,
        options=algorithm_options(query), deployment=dep,
        placement=None if c.placement == SPLIT else c.placement,
        groups=groups_text(query, c),
    )  # fmt: skip


def command(query: RLQuery, c: RLCandidate) -> str:
    """The `rlmcost <algorithm>` command line that evaluates candidate ``c`` alone."""
    q = query
    parts = [f"rlmcost {q.algorithm}", f"--model {q.model}", f"--hardware {q.hardware}",
             f"--gpus {c.gpus}", "--framework none"]  # every field stated  # fmt: skip
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
