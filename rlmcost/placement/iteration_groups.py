"""What an iteration reads of its group estimates alone, built once per tuple of estimates.

:func:`rlmcost.placement.iteration.combine` schedules the units of its groups (each group's
:func:`~rlmcost.placement.iteration_units.group_units`, in the groups' order) and reports per
stage the work, the peak memory per device and the groups active, the notes on generation in
waves, the named phases and the tokens trained on. These depend on the group estimates alone,
not on the placement's staleness or the deployment's other settings, so the deployments of a
query that share all their groups (a synchronous and an overlapped loop on the same groups)
share them: :func:`iteration_groups` builds them once per tuple of estimates (the same values,
computed the same way, as ``combine`` computed them) and keeps them in the query's
``groups_seen`` by the estimates' identities (None: nothing kept, :func:`rlmcost.memo.plain`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.memo import per_instance
from rlmcost.placement.estimate import Phase
from rlmcost.placement.frozen import built
from rlmcost.placement.iteration_units import UnitShape, group_units
from rlmcost.placement.jobs import GroupEstimate, Job
from rlmcost.placement.prefix_share import PREFIX_NOTE

CAPPED = {
    "running": "the engine's cap on running requests (--max-num-seqs: vLLM max_num_seqs, "
    "SGLang max_running_requests), not its KV cache, holds",
    "call": "its calls, one after another (--sequences-per-call), not the KV cache, hold",
    # SGLang's max_running_requests where not given: min(pool tokens / 2, the request rows of
    # the context length) (deployment.sglang_limits); its pool is what mem_fraction_static
    # leaves of the device after the weights and workspace (placement.engine_budget)
    "sglang-pool": "the KV pool (what --gpu-memory-utilization: SGLang's --mem-fraction-static, "
    "slime's --sglang-mem-fraction-static, leaves after the weights and workspace) and "
    "SGLang's max_running_requests that follows from it (no --max-num-seqs given) hold",
    # Megatron-core's max_requests from the pool's blocks (deployment.megatron_engine)
    "megatron-pool": "the KV pool (--kv-buffer-gib) and Megatron-core's max_requests that "
    "follows from its blocks (no --max-num-seqs given) hold",
}
"""The rollout note's limit on the sequences in flight per replica, by ``Timeline.capped``
(:func:`rlmcost.placement.engine_budget.cap_source`; otherwise the paged KV cache's blocks or
token slots admit them)."""


@dataclass(frozen=True)
class IterationGroups:
    """The groups' part of an iteration (module docstring). ``groups``: the estimates it is
    built of (the kept part is found by their identities); ``shape`` ... ``high``: the
    units without stage fusion, in order; ``first_of``/``last_of``: each resource's first and
    last of them; ``stages``: per stage (work, peak memory per device, groups); ``phases``:
    (name, verl key, predicted, bound) summed over the groups' jobs and transfers of that
    name, in the order the groups run them; ``phase_list``: those with any time, as
    :class:`~rlmcost.placement.estimate.Phase`; ``names``: the phases' names; ``labels``: the
    critical cycles' labels, by their unit keys (tuples of strings), and the weight syncs'
    units of a loop without fusion by what they read of a deployment (keys led by None,
    :func:`~rlmcost.placement.iteration_links.link_part`: one dict per part for both); and
    ``plans``: the schedule templates
    without fusion, by staleness and links (both filled by ``combine``; ``plans`` and
    ``shape`` shared by the parts of one shape, :data:`_SHAPES`). Each trained
    model's group and job and the jobs by task index are not kept (:func:`jobs_of`): fewer
    objects for the collector to walk."""

    groups: tuple[GroupEstimate, ...]
    shape: tuple[UnitShape, ...]
    w_t: tuple[Any, ...]
    w_p: tuple[Any, ...]
    w_d: tuple[Any, ...]
    low: tuple[Any, ...]
    high: tuple[Any, ...]
    key_of: dict[int, str]
    first_of: dict[str, str]
    last_of: dict[str, str]
    stages: dict[Stage, tuple[int, int, tuple[str, ...]]]
    wave_notes: tuple[str, ...]
    phases: tuple[tuple[str, Any, float, float], ...]
    phase_list: tuple[Phase, ...]
    trained_tokens: int
    names: tuple[str, ...]
    labels: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    plans: dict[tuple[Any, ...], Any] = field(default_factory=dict)  # combine's templates


_SHAPES: dict[tuple[UnitShape, ...], tuple[tuple[UnitShape, ...], dict[Any, Any]]] = {}
"""Per shape of units (the groups' units in order), the first equal shape and the schedule
templates of that shape by staleness and links (``IterationGroups.plans``; a template is a
function of the shape, the staleness and the links alone, ``iteration._template``): the
groups' parts of one shape share both instead of a tuple and a dict each."""
MAX_SHAPES = 4096
"""Shapes kept in :data:`_SHAPES` before the table starts over."""


def iteration_groups(seen: dict[Any, Any] | None,
                     groups: Sequence[GroupEstimate]) -> IterationGroups:  # fmt: skip
    """:class:`IterationGroups` of ``groups``, kept in ``seen`` (module docstring)."""
    if seen is None:
        return _build(groups)
    key = ("iteration", tuple(map(id, groups)))
    hit = seen.get(key)
    if hit is not None and all(a is b for a, b in zip(hit.groups, groups, strict=True)):
        return hit
    out = seen[key] = _build(groups)
    return out


def _build(groups: Sequence[GroupEstimate]) -> IterationGroups:
    jobs = jobs_of(groups)
    shape: list[UnitShape] = []
    w_t: list[Any] = []
    w_p: list[Any] = []
    w_d: list[Any] = []
    low: list[Any] = []
    high: list[Any] = []
    key_of: dict[int, str] = {}
    first_of: dict[str, str] = {}
    last_of: dict[str, str] = {}
    sums = []
    for g in groups:
        u = group_units(g)
        shape += u.shape
        w_t += u.w_t
        w_p += u.w_p
        w_d += u.w_d
        low += u.low
        high += u.high
        key_of.update(u.key_of)
        own = _sums(g)
        for resource, key in own[0].items():  # each resource's first and last unit
            first_of.setdefault(resource, key)
        last_of.update(own[1])
        sums.append(own)
    if len(_SHAPES) >= MAX_SHAPES:
        _SHAPES.clear()
    units = tuple(shape)
    per_shape = _SHAPES.setdefault(units, (units, {}))  # the shape and its templates, one each
    if all(s[5] for s in sums) and sum(len(g.jobs) for g in groups) == len(jobs):
        # every job once, its numbers ints: the groups' sums are the jobs' sums, exactly
        stages, waves, tokens = _merged(sums)
    else:
        stages, waves, tokens = _stages(jobs), list(_waves(groups)), trained_tokens(jobs.values())
    phases, phase_list, names = _phases(groups)
    return built(
        IterationGroups, tuple(groups), per_shape[0], tuple(w_t), tuple(w_p), tuple(w_d),
        tuple(low), tuple(high), key_of, first_of, last_of, stages, tuple(waves), phases,
        phase_list, tokens, names, {}, per_shape[1],
    )  # fmt: skip


Phases = tuple[tuple[tuple[str, Any, float, float], ...], tuple[Phase, ...], tuple[str, ...]]


def _phases(groups: Sequence[GroupEstimate]) -> Phases:
    """The ``phases``, ``phase_list`` and ``names`` of :class:`IterationGroups`: where no
    phase name is in two groups, each phase is its group's own (:func:`_own_phases`: the same
    additions from 0.0 in the same order), joined in the groups' order; else
    :func:`_phases_summed`."""
    owns = [_own_phases(g) for g in groups]
    if sum(map(len, owns)) != len({n for own in owns for n in own}):
        return _phases_summed(groups)
    return (tuple((p.name, p.key, p.time_s, p.time_lower_bound_s)
                  for own in owns for p in own.values()),
            tuple(p for own in owns for p in own.values() if p.time_s or p.time_lower_bound_s),
            tuple(n for own in owns for n in own))  # fmt: skip


def _phases_summed(groups: Sequence[GroupEstimate]) -> Phases:
    """:func:`_phases` summed over the groups' jobs and transfers in their order."""
    order: dict[str, list[Any]] = {}
    source: dict[str, GroupEstimate | None] = {}  # the one group a phase comes from, if one
    for g in groups:
        for name, k, predicted, bound in phase_items(g):
            entry = order.setdefault(name, [k, 0.0, 0.0])
            entry[0] = entry[0] or k  # a transfer timed in a job's phase comes before it
            entry[1] += predicted
            entry[2] += bound
            source[name] = g if source.get(name, g) is g else None
    # a phase that one group alone has: that group's own (the same additions from 0.0 in the
    # same order), one object per estimate that the iterations it takes part in share
    shared = {n: p for g in groups for n, p in _own_phases(g).items() if source[n] is g}
    return (tuple((n, k, p, b) for n, (k, p, b) in order.items()),
            tuple(shared.get(n) or Phase(n, k, p, b) for n, (k, p, b) in order.items()
                  if p or b),
            tuple(order))  # fmt: skip


def _stages(jobs: dict[int, Job]) -> dict[Stage, tuple[int, int, tuple[str, ...]]]:
    """Per stage of ``jobs`` (in :class:`Stage` order): the work, the peak memory per device
    and the groups, in the jobs' order."""
    by_stage: dict[Any, list[Job]] = {}  # the jobs of each stage, in the jobs' order
    for j in jobs.values():
        by_stage.setdefault(j.task.stage, []).append(j)
    stages: dict[Stage, tuple[int, int, tuple[str, ...]]] = {}
    for stage in Stage:
        mine = by_stage.get(stage)
        if mine:
            stages[stage] = (sum(j.work_flops for j in mine), max(j.memory.total for j in mine),
                             tuple(dict.fromkeys(j.task.group for j in mine)))  # fmt: skip
    return stages


@per_instance
def _sums(g: GroupEstimate) -> tuple[Any, ...]:
    """What :func:`_build` reads of one estimate, kept on it: its units' first and last key
    per resource, :func:`_stages` of its jobs, its wave notes, the most tokens of its actor's
    training jobs, its generation jobs and any job (None: no such job), and whether its jobs'
    work, memory and tokens are all ints (their sums then regroup exactly)."""
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    for key, resource, _, _ in group_units(g).shape:
        first.setdefault(resource, key)
        last[resource] = key
    jobs = jobs_of((g,))
    exact = len(jobs) == len(g.jobs) and all(
        type(j.work_flops) is int and type(j.memory.total) is int and type(j.tokens) is int
        for j in g.jobs)  # fmt: skip
    picks = ([j.tokens for j in g.jobs if j.task.kind is Kind.TRAIN and j.task.role is Role.ACTOR],
             [j.tokens for j in g.jobs if j.task.kind is Kind.GENERATE], [j.tokens for j in g.jobs])
    return (first, last, _stages(jobs), tuple(_waves((g,))),
            tuple(max(p) if p else None for p in picks), exact)


def _merged(sums: list[tuple[Any, ...]]) -> tuple[dict[Stage, Any], list[str], int]:
    """:func:`_stages`, the wave notes and :func:`trained_tokens` of the groups whose
    :func:`_sums` these are (their jobs once each, ints: sums and maxima regroup exactly)."""
    stages: dict[Stage, tuple[int, int, tuple[str, ...]]] = {}
    for stage in Stage:
        mine = [s[2][stage] for s in sums if stage in s[2]]
        if mine:
            stages[stage] = (sum(w for w, _, _ in mine), max(m for _, m, _ in mine),
                             tuple(dict.fromkeys(n for _, _, names in mine for n in names)))
    waves = [w for s in sums for w in s[3]]
    for pick in range(3):  # the actor's training, else generation, else any job
        found = [s[4][pick] for s in sums if s[4][pick] is not None]
        if found:
            return stages, waves, max(found)
    return stages, waves, 0


def _waves(groups: Sequence[GroupEstimate]) -> Iterator[str]:
    """The notes on generation in waves, preemptions and prefix sharing of ``groups``' jobs."""
    for g in groups:
        for j in g.jobs:
            tl = j.timeline
            if tl is not None and tl.shared_tokens:
                yield (f"{j.task.label()} on {g.name}: {PREFIX_NOTE} ({tl.shared_tokens} "
                       "prompt tokens per group)")  # fmt: skip
            if tl is not None and tl.paged and tl.slots >= tl.sequences and tl.preemptions:
                yield (  # all admitted, then the pool runs out as they grow
                    f"{j.task.label()} on {g.name}: the paged KV cache admits all of each "
                    f"replica's {tl.sequences} sequences in flight but cannot keep them all as "
                    f"they grow: {tl.preemptions} preemptions (recomputed)")  # fmt: skip
            elif tl is not None and tl.paged and tl.slots < tl.sequences:
                what = f"{CAPPED.get(tl.capped, 'the paged KV cache holds')} at most {tl.slots}"
                yield (
                    f"{j.task.label()} on {g.name}: {what} "
                    f"of each replica's {tl.sequences} sequences in flight"
                    + (f", {tl.preemptions} preemptions (recomputed)" if tl.preemptions else "")
                )
            elif tl is not None and tl.waves > 1:
                yield (
                    f"{j.task.label()} on {g.name}: the KV cache holds {tl.slots} of each "
                    f"replica's {tl.sequences} sequences at once, each at its full length (no "
                    f"paged admission modelled), so they run in {tl.waves} waves"
                )


@per_instance
def _own_phases(g: GroupEstimate) -> dict[str, Phase]:
    """The phases of group estimate ``g`` alone, by name (the sums of :func:`_build` over
    this group only; kept per estimate)."""
    order: dict[str, list[Any]] = {}
    for name, k, predicted, bound in phase_items(g):
        entry = order.setdefault(name, [k, 0.0, 0.0])
        entry[0] = entry[0] or k
        entry[1] += predicted
        entry[2] += bound
    return {n: Phase(n, k, p, b) for n, (k, p, b) in order.items()}


def jobs_of(groups: Sequence[GroupEstimate]) -> dict[int, Job]:
    """The jobs of ``groups`` by task index."""
    return {j.task.index: j for g in groups for j in g.jobs}


@per_instance
def phase_items(g: GroupEstimate) -> tuple[tuple[str, Any, float, float], ...]:
    """One group's jobs and transfers in the order it runs them: (phase, its key, predicted
    and bound seconds) each (kept per group estimate)."""
    from rlmcost.placement.jobs import phase_of

    out: list[tuple[str, Any, float, float]] = []
    for j in g.jobs:
        for tr in g.transfers:
            if tr.before == j.task.index:
                out.append((tr.phase, None, tr.predicted, tr.time_s))
        name, key = phase_of(j.task)
        out.append((name, key, j.predicted_s, j.time_s))
    return tuple(out)


def trained_tokens(jobs: Any) -> int:
    """Prompt + response tokens of the actor's training sequences (one pass), else of the
    generation, else of any job."""
    jobs = list(jobs)
    for pick in (
        lambda j: j.task.kind is Kind.TRAIN and j.task.role is Role.ACTOR,
        lambda j: j.task.kind is Kind.GENERATE,
        lambda j: True,
    ):
        found = [j for j in jobs if pick(j)]
        if found:
            return max(j.tokens for j in found)
    return 0
