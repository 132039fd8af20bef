"""The candidates of `rlmcost plan <algorithm>`: the base Run, the space, bounds and rows.

A plan holds fixed a base :class:`~rlmcost.run.Run` (the algorithm and its knobs, the models,
the workload, the hardware, and whatever of the deployment the search does not vary);
:class:`RLSpace` says what may vary. :func:`candidates` gives the deployments of one GPU
count, :func:`candidate_run` the Run of each (``base.replace(deployment=..., cluster=...)``),
:func:`lower_bounds` the vectorized necessary condition of step 1 of :mod:`rlmcost.plan.rl`,
fed from the base Run's fields, and :func:`evaluate_row` the exact evaluation of step 2
(:func:`~rlmcost.evaluation.deployment.evaluate_deployment` of the candidate's Run, the one
evaluation every query uses) as a row of its numbers; the rows a plan shows add the Run and
the command line that reproduces it (:func:`rlmcost.plan.rl_rows.with_run`).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Checkpointing, ZeroStage, dp_unit
from rlmcost.plan.engine_floor import ExactRow, engines_busy_s
from rlmcost.plan.families import (
    DEFAULT_FAMILIES,
    ROLLOUT,
    Family,
    families,
    free_groups,
    group_counts,
)
from rlmcost.plan.pool import cost_fields
from rlmcost.plan.rl_base import run_of_text, text_of
from rlmcost.plan.rl_rows import binding_term, groups_of
from rlmcost.plan.rl_runs import candidate_run
from rlmcost.plan.rl_space import (
    context_degrees,
    engine_tp_note,
    family_lists,
    family_offloads,
    groups_engine_tp,
    node_gpus,
)
from rlmcost.plan.search import gpu_hours
from rlmcost.plan.space import engine_tp_degrees, powers_of_two, tp_degrees
from rlmcost.plan.subshard import trains_at

if TYPE_CHECKING:
    from rlmcost.run.spec import Run
    from rlmcost.specs import ModelSpec

SPLIT = "split"
"""The family of engines apart from the trainers (``--groups rollout=R,<the models>=N-R``)."""

@dataclass(frozen=True)
class RLSpace:
    """The value lists of the RL search (module docstring). None: every valid value (CP and
    SP: searched from :data:`~rlmcost.plan.rl_space.LONG_SEQUENCE_TOKENS` on, else off)."""

    placements: tuple[str, ...] = DEFAULT_FAMILIES  # families (rlmcost.plan.families)
    rollout_shares: tuple[float, ...] = (0.25, 0.5, 0.75)  # engines' share of the GPUs
    actor_shares: tuple[float, ...] = (0.5,)  # the actor's group's share of the rest
    groups: str | None = None  # --groups with counts to search ("rollout=?,actor=?")
    tp: tuple[int, ...] | None = None  # trainer TP: powers of two within a node, valid
    pp: tuple[int, ...] | None = None  # None: 1 (under a large-MoE tier, plan.trainers)
    cp: tuple[int, ...] | None = None  # context parallelism (ring attention)
    sp: tuple[bool, ...] | None = None  # sequence parallelism (with TP > 1)
    zero: tuple[ZeroStage, ...] | None = None  # None: ZeRO-3 (FSDP, as verl and OpenRLHF);
    # for a Megatron engine ZeRO-1, its policy's distributed optimizer (plan.mcore)
    ckpt: tuple[Checkpointing, ...] = (Checkpointing.NONE, Checkpointing.FULL)
    micro_batch: tuple[int, ...] = (1, 2)
    offload: tuple[bool, ...] = (False, True)  # optimizer in host memory (plan.offloads)
    ep: tuple[int, ...] | None = None  # trainer EP (MoE): the base's, or searched (plan.mcore)
    rollout_tp: tuple[int, ...] | None = None  # engine TP: powers of two dividing the heads
    fractions: tuple[float, ...] = (0.5, 0.9)  # engine reservation beside a trainer
    exhaustive: bool = False  # every split of the GPUs among the groups, not the shares
    split_limit: int | None = None  # exhaustive: at most this many splits (None: allocate's)
    pool: tuple[tuple[str, int], ...] = ()  # accelerators and GPUs available (plan.pool)
    only: tuple[str, ...] = ()  # of placements (and "groups"), those searched (empty: all)
    trainer: str = ""  # the trainer searched under a large-MoE tier (plan.trainers; "": one)


@dataclass(frozen=True)
class RLCandidate:
    """One deployment of the search: a family's groups with their counts, and the layout."""

    gpus: int
    family: str  # rlmcost.plan.families
    placement: str | None  # the Run's Table IX configuration (None: user groups)
    groups: str  # --groups text with counts ("": the placement's own groups)
    stale: bool  # rollout overlaps training (the base Run's staleness, default 1)
    train_gpus: int  # the most GPUs the actor's training group can have
    tp: int
    pp: int
    cp: int
    sp: bool
    zero: ZeroStage
    ckpt: Checkpointing
    micro_batch: int
    offload: tuple[str, ...]  # the trainer's offload list (rlmcost.plan.offloads)
    rollout_tp: int
    fraction: float | None  # None: the engine's default for where it runs
    hardware: tuple[str, ...] = ()  # a pool's accelerator(s): one, or one per group
    kv_gib: float | None = None  # a Megatron engine's KV pool per GPU (plan.mcore); else None
    ep: int | None = None  # the trainer's EP where searched (None: the base Run's)
    trainer: str = ""  # under a large-MoE tier, which of its trainers (plan.trainers)

    @property
    def topology(self) -> str:
        """GPUs, family and groups: what a row of the best per topology stands for."""
        where = self.groups or self.placement or self.family
        return f"gpus={self.gpus} {self.family} {where}" + (f" {self.trainer}" if self.trainer
                                                             else "")  # fmt: skip

    @property
    def key(self) -> str:
        """The candidate's topology and degrees (what a never-fit family is reported by)."""
        where = self.groups or self.placement or self.family
        if self.hardware and not self.groups:
            where += f"@{self.hardware[0]}"
        cp = f" cp={self.cp}" if self.cp > 1 else ""
        cp += f" ep={self.ep}" if self.ep is not None else ""
        cp += f" {self.trainer}" if self.trainer else ""
        return f"gpus={self.gpus} {self.family} {where} tp={self.tp} pp={self.pp}{cp}"


def actor_spec(base: Run) -> ModelSpec:
    """The actor's :class:`~rlmcost.specs.ModelSpec` of ``base`` (SpecError for an unknown
    name)."""
    from rlmcost.specs import get_model

    return get_model(base.models.actor)


def _algorithm(base: Run) -> Any:
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.options import configure

    return configure(get_algorithm(base.algorithm.name), base.options())


def space_families(base: Run, space: RLSpace) -> list[Family]:
    """The families of ``space`` for ``base``'s algorithm (its ``groups`` family last)."""
    from rlmcost.plan.mcore import check_families

    check_families(base, (*space.placements, *space.only))  # what the base's engine can run
    fams = families(_algorithm(base), space.placements)  # ``only`` keeps the variants
    if space.groups:  # of the whole set
        fams.append(free_groups(space.groups))
        _check_covered(_algorithm(base), fams[-1])
    return [f for f in fams if not space.only or f.name in space.only]


def _check_covered(alg: Any, fam: Family) -> None:
    """SpecError up front when ``--groups`` leaves an invocation of ``alg`` in no group or in
    two (:func:`rlmcost.placement.assign.assign`, as the evaluation of each candidate would
    find; the search would otherwise report only that nothing fits)."""
    from rlmcost.placement.configs import build
    from rlmcost.placement.groups import parse_groups

    text = ",".join(f"{m}=1" + (f"[{s}]" if s else "")
                    for m, s in zip(fam.members, fam.settings, strict=True))  # fmt: skip
    build(None, alg, groups=parse_groups(text)).tasks(alg)


# -- enumeration -----------------------------------------------------------------------------


def candidates(base: Run, space: RLSpace, gpus: int) -> list[RLCandidate]:
    """Every valid candidate of ``space`` on ``gpus`` devices: degrees dividing the heads, KV
    heads, FFN widths and layers (:mod:`rlmcost.plan.space`), TP within a node, every group
    holding whole replicas (the engines' TP; tp*pp*cp times ``parallel.layout.dp_unit`` of
    the base Run's ep and etp for the trainers, EP being folded inside dp*tp*cp), its
    families' group counts (:func:`~rlmcost.plan.families.group_counts`); a Megatron engine's
    layouts and KV pools (:mod:`rlmcost.plan.mcore`) in place of a vLLM reservation."""
    from rlmcost.compiled import arch_numbers
    from rlmcost.plan.mcore import (
        SHARED_LAYOUT,
        engine_tps,
        expert_degrees,
        pools,
        trainer_zeros,
    )
    from rlmcost.plan.pool import assignments

    a = arch_numbers(actor_spec(base))
    node = node_gpus(base, space)
    train = base.deployment.train  # EP folded inside dp*tp*cp: a multiple of the grid unit
    tps = space.tp or tuple(t for t in powers_of_two(node) if t in tp_degrees(a, node, True))
    subshard = trains_at(base, a.n_kv_heads)
    etps = space.rollout_tp or tuple(engine_tp_degrees(a, node))
    cps, sps = context_degrees(base, space, node)
    kv, zeros = pools(base), trainer_zeros(base, space.zero)
    eps = expert_degrees(base, space.ep, a.n_experts, node)
    alg = _algorithm(base)
    out: list[RLCandidate] = []
    for fam in space_families(base, space):
        fractions = space.fractions if fam.placement == "baseline" and kv == (None,) else (None,)
        lists = family_lists(alg, fam, base, space, (tps, cps, zeros, eps))
        offs, searched_ep = family_offloads(base, fam, lists), lists["ep"] != (train.ep,)
        own = groups_engine_tp(alg, fam)  # rollout=?[tp=4]: the TP that runs, alone
        fam_etps = engine_tps(base, fam, etps, space.rollout_tp is not None) if own is None \
            else (own,)  # fmt: skip
        if alg.offline:  # no engine runs (DPO ...): one engine TP and reservation, unread
            fractions, fam_etps = (None,), fam_etps[:1]
        for tp, pp, cp, sp, etp, ep in product(lists["tp"], lists["pp"], lists["cp"], sps,
                                               fam_etps, lists["ep"]):  # fmt: skip
            unit = tp * pp * cp * dp_unit(tp, cp, ep, train.etp)
            if etp > node and etp not in (*(space.rollout_tp or ()), own):  # across: given only
                continue
            if tp > node or unit > gpus or pp > a.n_layers or (sp and tp == 1):
                continue
            if tp not in tp_degrees(a, tp, True) or etp > gpus:
                continue
            if etp == tp and pp == 1 and SHARED_LAYOUT in fam_etps:
                continue  # Megatron's inference layout at the trainer's sizes: the shared one
            units = tuple(max(etp, 1) if m == ROLLOUT else unit for m in fam.members)
            for counts in group_counts(fam, gpus, units, space.rollout_shares,
                                       space.actor_shares, space.exhaustive,
                                       space.split_limit):  # fmt: skip
                if fam.members:
                    train_gpus = counts[fam.trainer_index()]
                else:  # one group, or the evaluation's split: at most all but one per group
                    if gpus % unit or (fam.placement == "baseline" and etp and gpus % etp):
                        continue
                    train_gpus = gpus
                for hw in assignments(len(fam.members), counts, gpus, space.pool,
                                      fam.hardware):  # fmt: skip
                    groups = fam.text(counts, hw) if fam.members else ""
                    for zero, ckpt, mb, off, f, pool in ((z, k, m, o, f, p) for z, k, m in
                            product(lists["zero"], lists["ckpt"], lists["micro_batch"])
                            if subshard(tp, z) for o, f, p in
                            product(offs[z], fractions, kv)):  # fmt: skip
                        out.append(RLCandidate(
                            gpus, fam.name, fam.placement, groups, fam.stale, train_gpus, tp,
                            pp, cp, sp, ZeroStage(zero), Checkpointing(ckpt), mb, off, etp, f,
                            hw, pool, ep if searched_ep else None, space.trainer,
                        ))  # fmt: skip
    return out


def bracket_notes(base: Run, space: RLSpace) -> list[str]:
    """The ``--groups`` family's note where ``--rollout-tp`` meets a generating group's own
    ``tp=`` (:func:`~rlmcost.plan.rl_space.engine_tp_note`: the bracket wins)."""
    if not space.groups:
        return []
    return engine_tp_note(_algorithm(base), free_groups(space.groups), space.rollout_tp)


def enumerated_size(space: RLSpace, base: Run, gpus: int) -> int:
    """The product of the value lists and families (before the validity rules) on ``gpus``
    devices (a family with groups counted once per share, or per split of the GPUs in
    steps of one when every split is searched; with a pool, once per accelerator of each
    group; a Megatron engine once per KV pool and per engine layout, its trainer's among
    them)."""
    from rlmcost.compiled import arch_numbers
    from rlmcost.plan.mcore import engine_tps, expert_degrees, pools, trainer_zeros

    node = node_gpus(base, space)
    cps, sps = context_degrees(base, space, node)
    tps = tuple(space.tp or powers_of_two(node))
    etps = tuple(space.rollout_tp or powers_of_two(node))
    kv = pools(base)
    zeros = trainer_zeros(base, space.zero)
    eps = expert_degrees(base, space.ep, arch_numbers(actor_spec(base)).n_experts, node)
    per = len(sps) * len(kv)
    total, alg = 0, _algorithm(base)
    for fam in space_families(base, space):
        lists = family_lists(alg, fam, base, space, (tps, cps, zeros, eps))  # a bracket's: one
        n_layout = 1
        for values in lists.values():
            n_layout *= len(values)
        own = groups_engine_tp(alg, fam)  # one engine TP where the brackets fix it
        n_etp = 1 if own is not None or alg.offline else len(engine_tps(
            base, fam, etps, space.rollout_tp is not None))
        if len(fam.members) < 2:  # one group: all the GPUs
            shares = len(space.fractions) if fam.placement == "baseline" and kv == (None,) \
                and not alg.offline else 1  # fmt: skip
        elif space.exhaustive or fam.name == "groups":
            ones = (1,) * len(fam.members)
            shares = max(1, len(group_counts(fam, gpus, ones, (), (), True,
                                             space.split_limit)))
        else:
            shares = len(space.rollout_shares) * len(space.actor_shares)
        kinds = max(1, len(space.pool)) ** max(1, len(fam.members))  # a pool's assignments
        total += per * n_layout * n_etp * kinds * shares
    return total


# -- the necessary condition -----------------------------------------------------------------


def lower_bounds(base: Run, cands: list[RLCandidate]) -> tuple[Any, Any, Any]:
    """Per candidate: (bytes per device every evaluation holds at least, the largest term's
    name, its bytes) — :mod:`rlmcost.plan.rl` step 1, the memory side of
    :func:`rlmcost.plan.screen.screen`, fed from the base Run: the actor, the hardware,
    S + T, the weight dtype and the trainer's ep; the candidate's tp/pp/cp/sp on the actor's
    training group (``train_gpus``: at most that many GPUs). The activations are those of one
    sequence per replica (``sequences=dp``: what any micro-batch or token budget holds at
    least). What the bound cannot see stays below what the evaluation holds: with LoRA the
    gradients and optimizer count zero, under a length distribution the longest response is
    at least the median (the evaluation pads to the longest of its quantiles,
    :mod:`rlmcost.placement.lengths`), and groups with layouts of their own
    (``--groups actor=?[tp=2]``) are not bounded."""
    import numpy as np

    from rlmcost.plan.screen import MEMORY_TERMS, candidate_arrays, query, screen

    s = screen(query(base), candidate_arrays(cands))
    term, term_bytes = s.binding(slice(None))
    return s.memory, np.array(MEMORY_TERMS)[term], term_bytes


# -- the candidate's Run and its exact evaluation --------------------------------------------
def evaluate_row(base: Run, c: RLCandidate) -> dict[str, Any]:
    """One candidate evaluated exactly, as a plan row of its numbers (memoized on the base
    Run's JSON, written once per base, and the candidate); the rows shown add the Run and
    the command that reproduce it (:func:`rlmcost.plan.rl_rows.with_run`)."""
    return _row(text_of(base), c)


@lru_cache(maxsize=65536)
def _row(base_text: str, c: RLCandidate) -> dict[str, Any]:
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.plan.rl_groups import group_layouts, row_engine_memory
    from rlmcost.plan.unread import unread_fields

    base = run_of_text(base_text)
    run = candidate_run(base, c)
    e = evaluate_deployment(run)
    t = e.iteration_time_s
    row = {
        "gpus": c.gpus, "family": c.family, "placement": c.placement or "groups",
        "groups": c.groups or groups_of(e), "staleness": run.deployment.staleness or 0,
        "tp": c.tp, "pp": c.pp, "cp": c.cp, "ep": run.deployment.train.ep, "sp": c.sp,
        "zero": str(c.zero), "ckpt": str(c.ckpt),
        "micro_batch": None if "micro_batch" in unread_fields(base) else c.micro_batch,
        "offload": ",".join(c.offload), **row_engine_memory(e, c.rollout_tp),
        "fits": e.fits, "memory_bytes_per_device": e.peak_memory_bytes_per_device,
        "time_s": t, "time_lower_bound_s": e.iteration_time_lower_bound_s,
        "tokens_per_s_per_gpu": e.tokens_per_s_per_gpu, "mfu": e.mfu,
        "gpu_hours": gpu_hours(t, c.gpus), **cost_fields(e),
    }  # fmt: skip
    if not e.fits:
        row["binding_term"], row["binding_term_bytes"] = binding_term(e)
        row["shortfall_bytes"] = e.shortfall_bytes
        row["invalid"] = not row["binding_term_bytes"]  # a problem, no memory term
    # its engines' units (branch and bound's floor) and, where it fits, its groups' layouts
    return ExactRow(row, engines_busy_s(e), group_layouts(e) if e.fits else None)


def evaluate_item(item: tuple[Run, RLCandidate]) -> dict[str, Any]:
    """:func:`evaluate_row` of a (base Run, candidate) pair (a module-level function for
    Dask)."""
    base, c = item
    try:
        return evaluate_row(base, c)
    except SpecError as exc:  # a combination the evaluation rejects: never fits, say why
        return {"fits": False, "binding_term": f"rejected: {exc}", "invalid": True,
                "gpus": c.gpus}


def evaluate_chunk(item: tuple[Run, list[RLCandidate]]) -> list[dict[str, Any]]:
    """:func:`evaluate_item` of each candidate of a (base Run, candidates) pair: one task of
    a distributed search (the base Run travels once per chunk)."""
    base, cands = item
    return [evaluate_item((base, c)) for c in cands]
