"""One RL iteration under a placement: its groups composed into stages and a steady state.

``combine`` schedules the groups' invocations with ``schedule`` (inside a group one after
another, across groups concurrently, stage barriers, staleness) together with the transfers
of ``transfer`` (weight synchronization on the links after training, resharding and offload
switches on the groups). Stage fusion (§IV-C, RLHFuse) removes from the critical path the
assessment time that fits in the idle compute of the decode steps after each sample finishes
(same group) or in the decode time itself (another group), and runs the training pipelines of
one group as one schedule, with one bubble. The result reports per stage the work, depth, peak
memory per device over the groups active in it and time on the critical path, and for the
iteration its steady-state time and depth, the critical cycle and the bytes moved.

Every time is given twice through the same schedule: the roofline bound (``*_lower_bound_s``)
and the prediction (``time_s``, ``iteration_time_s``: the jobs' and transfers' predicted
seconds, :mod:`rlmcost.placement.group_jobs`). Since each unit's prediction is at least its
bound and the period and the spans are monotone in the units' weights, so are the stage and
iteration predictions; a larger staleness only removes constraints, so an asynchronous
iteration is never longer than the synchronous one on the same groups. Throughput:
``tokens_per_s_per_gpu`` = prompt + response tokens the actor trains on per iteration /
(predicted iteration time x GPUs) (NeMo RL's "Tokens/sec/GPU", verl's ``perf/throughput``);
``mfu`` = the iteration's work (the project's exact FLOP count, FLOP = one add or one
multiply, generation + assessment + training) / (predicted iteration time x GPUs x dense peak
of the compute dtype).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import partial
from math import ceil
from typing import Any

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.compiled.blocks import params
from rlmcost.frameworks.presets import behaviour
from rlmcost.memo import per_object
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.perf.interval import Spread, job_spread, transfer_spread
from rlmcost.perf.refit import Refit, refit_s, spread_of
from rlmcost.perf.rl_step import link_transfer_s
from rlmcost.placement.estimate import (
    MFU_CONVENTION as MFU_CONVENTION,  # the estimate report's import
)
from rlmcost.placement.estimate import FusionGain, Phase, PlacementEstimate, StageResult
from rlmcost.placement.inputs import Setup, sequence_work
from rlmcost.placement.iteration_advice import exposed_notes, recommended_fraction
from rlmcost.placement.iteration_units import group_units, kept_sync
from rlmcost.placement.jobs import GroupEstimate, Job, Transfer
from rlmcost.placement.schedule import template
from rlmcost.placement.transfer import sync_span_gpus, weight_sync_time_s


def _assessment_overlap(gen: Job, assess: Sequence[Job], setup: Setup, same_group: bool) -> float:
    """Seconds of ``assess`` (one group's assessment jobs) that run while ``gen`` still
    decodes: each sample's share becomes ready when it finishes and fills the idle compute of
    later decode steps (same group) or their whole duration (another group)."""
    tl = gen.timeline
    if tl is None or not assess:
        return 0.0
    total_s = sum(j.time_s for j in assess)
    weights = [
        float(
            sum(
                (sequence_work(j.task.invocation, setup.arch(j.task.role), setup.values, t,
                               setup.counting)
                 for j in assess),
                Fraction(0),
            )
        )
        for t in tl.lengths
    ]  # fmt: skip
    total_w = sum(weights)
    # sample i is ready after the decode step in which it finishes: the last of a run
    released = [0.0] * len(tl.runs)
    for w, index in zip(weights, tl.finish_run, strict=True):
        released[index] += total_s * w / total_w
    # within a run nothing is released, so what waits is taken step by step until the run's
    # capacity or the waiting work runs out: min(ready, the run's capacity)
    ready = absorbed = 0.0
    for run, release in zip(tl.runs, released, strict=True):
        take = min(ready, run.idle_s if same_group else run.bound_s)
        absorbed += take
        ready += release - take
    return min(absorbed, total_s)


def combine(setup: Setup, groups: Sequence[GroupEstimate]) -> PlacementEstimate:
    """The iteration from its groups: schedule, stages, transfers, fusion, fit."""
    placement = setup.placement
    jobs = {j.task.index: j for g in groups for j in g.jobs}
    time_of = {i: j.time_s for i, j in jobs.items()}
    pred_of = {i: j.predicted_s for i, j in jobs.items()}
    notes: list[str] = []
    fusion = None
    if placement.fusion:
        inter = 0.0
        gens = [j for j in jobs.values() if j.task.kind is Kind.GENERATE and j.timeline]
        if gens:
            gen = max(gens, key=lambda j: j.time_s)
            for g in groups:
                assess = [j for j in g.jobs if j.task.stage is Stage.ASSESSMENT]
                hidden = _assessment_overlap(gen, assess, setup, g.name == gen.task.group)
                total = sum(j.time_s for j in assess)
                for j in assess:
                    kept = (1 - hidden / total) if total else 0.0
                    time_of[j.task.index] = j.time_s * kept
                    pred_of[j.task.index] = j.predicted_s * kept
                inter += hidden
        intra = 0.0
        for g in groups:
            trains = [j for j in g.jobs if j.task.kind is Kind.TRAIN]
            if len(trains) < 2:
                continue
            lay = max((j.layout for j in trains), key=lambda x: x.pp)
            mb = sum(j.micro_batches for j in trains)
            fused = sum(j.ideal_s for j in trains) * float(
                1 + bubble_fraction(lay.schedule, lay.pp, mb, lay.virtual_stages)
            )
            intra += sum(j.time_s for j in trains) - fused
            fused_pred = sum(j.predicted_ideal_s for j in trains) * float(
                1 + bubble_fraction(lay.schedule, lay.pp, mb, lay.virtual_stages)
            )
            for j in trains:
                share = j.ideal_s / sum(t.ideal_s for t in trains)
                time_of[j.task.index] = fused * share
                pred_of[j.task.index] = max(fused_pred, fused) * share
        fusion = FusionGain(inter, intra)
    # schedule units: per group, its transfers in front of their tasks; training tasks of a
    # group merge under fusion (interleaved pipelines). Each unit: its shape (key, resource,
    # stage, barrier) and its weights (bound, prediction, depth) and spread, in order.
    shape: list[tuple[str, str, Stage | None, bool]] = []
    w_t: list[Any] = []
    w_p: list[Any] = []
    w_d: list[Any] = []
    spreads: list[Spread] = []
    key_of: dict[int, str] = {}
    w_low: list[Any] | None = None
    w_high: list[Any] | None = None
    if not placement.fusion:  # each group's units as built once per estimate
        w_low, w_high = [], []
        for g in groups:
            u = group_units(g)
            shape += u.shape
            w_t += u.w_t
            w_p += u.w_p
            w_d += u.w_d
            w_low += u.low
            w_high += u.high
            key_of.update(u.key_of)
    for g in groups if placement.fusion else ():
        fused_jobs = [j for j in g.jobs if placement.fusion and j.task.kind is Kind.TRAIN]
        fused_key = (
            "+".join(str(j.task.index) for j in fused_jobs) if len(fused_jobs) > 1 else None
        )
        for j in g.jobs:
            index = j.task.index
            for tr in g.transfers:
                if tr.before == index:
                    k = f"{tr.kind}:{tr.what}@{g.name}#{tr.before}"  # one unit per use
                    shape.append((k, g.name, tr.stage, False))
                    w_t.append(tr.time_s)
                    w_p.append(tr.predicted)
                    w_d.append(0)
                    spreads.append(tr.spread or transfer_spread())
            if fused_key and j in fused_jobs:
                key_of[index] = fused_key
                if j is not fused_jobs[0]:
                    continue
                shape.append((fused_key, g.name, j.task.stage, True))
                w_t.append(sum(time_of[f.task.index] for f in fused_jobs))
                w_p.append(sum(pred_of[f.task.index] for f in fused_jobs))
                w_d.append(max(f.depth for f in fused_jobs))
                spreads.append(job_spread(j.task.kind))
                continue
            key = str(index)
            key_of[index] = key
            shape.append((key, g.name, j.task.stage, True))
            w_t.append(time_of[index])
            w_p.append(pred_of[index])
            w_d.append(j.depth)
            spreads.append(job_spread(j.task.kind))
    syncs, links = _weight_syncs(setup, groups, key_of)
    for what, _, _ in links:
        sync = next(s for s in syncs if s.what == what)
        shape.append((what, f"link:{what}", None, False))
        w_t.append(sync.time_s)
        w_p.append(sync.predicted)
        w_d.append(0)
        spreads.append(sync.spread or transfer_spread())
        if w_low is not None and w_high is not None:
            w_low.append(sync.predicted * spreads[-1].low)
            w_high.append(sync.predicted * spreads[-1].high)
    frozen_links = tuple((what, after, tuple(readers)) for what, after, readers in links)
    plan = template(tuple(shape), placement.staleness, frozen_links)
    per_t, per_p, per_d = plan.period(w_t), plan.value(w_p), plan.value(w_d)
    if w_low is None or w_high is None:
        w_low, w_high = ([w * getattr(sp, end) for w, sp in zip(w_p, spreads, strict=True)]
                         for end in ("low", "high"))  # fmt: skip
    interval = (float(plan.value(w_low)), float(plan.value(w_high)))
    # monotone in the weights: low <= predicted <= high
    interval = (max(interval[0], float(per_t.value)), interval[1])  # never below the bound
    spans_t, spans_p, spans_d = plan.stage_spans(w_t), plan.stage_spans(w_p), plan.stage_spans(w_d)
    stages: dict[Stage, StageResult] = {}
    for stage in setup.alg.stages:
        mine = [j for j in jobs.values() if j.task.stage is stage]
        if not mine:
            continue
        stages[stage] = StageResult(
            stage,
            sum(j.work_flops for j in mine),
            int(spans_d.get(stage, 0)),
            max(j.memory.total for j in mine),
            float(spans_t.get(stage, 0.0)),
            tuple(dict.fromkeys(j.task.group for j in mine)),
            float(spans_p.get(stage, 0.0)),
        )
    for g in groups:
        for j in g.jobs:
            tl = j.timeline
            if tl is not None and tl.waves > 1:
                notes.append(
                    f"{j.task.label()} on {g.name}: the KV cache holds {tl.slots} of each "
                    f"replica's {tl.sequences} sequences at once, so they run in {tl.waves} waves"
                )
    notes += exposed_notes(groups, min(setup.hardware_of(g.name).gpus_per_node for g in groups))
    if fusion is not None and fusion.inter_stage_s == 0 and setup.lengths.is_fixed:
        notes.append(
            "fixed lengths in one wave: every sample finishes at the same step, so streaming "
            "finished samples into assessment hides nothing (try --length-dist)"
        )
    if placement.staleness:
        notes.append(
            f"steady state with staleness {placement.staleness}: rollout may use weights up to "
            f"{placement.staleness} iteration(s) old (off-policy; PPO's clipping bounds the drift)"
        )
    cycle = per_t.cycle
    assert cycle is not None  # a numeric period has its critical cycle
    critical = " -> ".join(_unit_label(k, plan.resource_of[k], jobs) for k in cycle.keys)
    if cycle.shift > 1:
        critical += f" (over {cycle.shift} iterations)"
    return PlacementEstimate(
        setup.alg,
        placement,
        tuple(groups),
        stages,
        float(per_t.value),
        int(ceil(per_d)),
        critical,
        tuple(syncs),
        fusion,
        setup.hardware,
        setup.workload,
        setup.lengths,
        tuple(notes),
        specs=dict(setup.specs),
        values=dict(setup.values),
        calibration=setup.efficiency.name,
        deployment=setup.deployment,
        recommended_gpu_memory_utilization=recommended_fraction(setup, groups),
        iteration_time_s=float(per_p),
        iteration_interval_s=(interval[0], interval[1]),
        phases=_phases(groups, syncs),
        tokens_per_iteration=_trained_tokens(jobs.values()),
        group_hardware={g.name: setup.hardware_of(g.name) for g in groups},
    )


def _phases(groups: Sequence[GroupEstimate], syncs: Sequence[Transfer]) -> tuple[Phase, ...]:
    """The iteration's named phases in the order the groups run them (transfers in front of
    their tasks, weight syncs last), each summed over the jobs and transfers of that name."""
    order: dict[str, list[Any]] = {}
    for g in groups:
        for name, key, predicted, bound in _phase_items(g):
            entry = order.setdefault(name, [key, 0.0, 0.0])
            entry[1] += predicted
            entry[2] += bound
    for tr in syncs:
        entry = order.setdefault(tr.phase, [None, 0.0, 0.0])
        entry[1] += tr.predicted
        entry[2] += tr.time_s
    return tuple(Phase(n, k, p, b) for n, (k, p, b) in order.items() if p or b)


@per_object()
def _phase_items(g: GroupEstimate) -> tuple[tuple[str, Any, float, float], ...]:
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


def _trained_tokens(jobs: Any) -> int:
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


def _unit_label(key: str, resource: str, jobs: Mapping[int, Job]) -> str:
    if key.replace("+", "").isdigit():
        return "+".join(jobs[int(i)].task.label() for i in key.split("+")) + f" [{resource}]"
    return key.rsplit("#", 1)[0]


def _weight_syncs(
    setup: Setup, groups: Sequence[GroupEstimate], key_of: Mapping[int, str]
) -> tuple[list[Transfer], list[tuple[str, str, list[str]]]]:
    """Each trained model read on another group: one copy of its weights after training."""
    trainer = {j.task.role: (g, j) for g in groups for j in g.jobs if j.task.kind is Kind.TRAIN}
    total = sum(g.gpus for g in groups)
    syncs: list[Transfer] = []
    links: list[tuple[str, str, list[str]]] = []
    for g in groups:
        for role in g.shadows:
            if role not in trainer:
                continue
            src, train_job = trainer[role]
            sync = kept_sync(
                setup.groups_seen, src, g,
                (role, total, setup.deployment.ideal, setup.deployment.framework),
                partial(_weight_sync, setup, src, train_job, g, role, total),
            )  # fmt: skip
            syncs.append(sync)
            what = sync.what
            readers = [key_of[j.task.index] for j in g.jobs if j.task.role is role]
            links.append((what, key_of[train_job.task.index], readers))
    return syncs, links


def _weight_sync(setup: Setup, src: GroupEstimate, train_job: Job, g: GroupEstimate, role: Role,
                 total: int) -> Transfer:  # fmt: skip
    """One copy of ``role``'s weights from its trainer's group ``src`` to group ``g`` after
    training (:func:`_weight_syncs`; kept per pair of group estimates, ``kept_sync``)."""
    arch = setup.arch(role)
    head = train_job.task.invocation.model_head
    nbytes = params(arch, head) * setup.workload.weight_dtype.bytes
    what = f"{role}: {src.name} -> {g.name}"
    hw_src, hw_dst = setup.hardware_of(src.name), setup.hardware_of(g.name)
    time = weight_sync_time_s(nbytes, src.gpus, g.gpus, total, hw_src, hw_dst)
    per_device = -(-nbytes // min(src.gpus, g.gpus))
    span = sync_span_gpus(total, hw_src, hw_dst)  # the slower side's link
    predicted = max(link_transfer_s(per_device, hw, span) for hw in (hw_src, hw_dst))
    spread = None
    beh = None if setup.deployment.ideal else behaviour(setup.deployment.framework)
    reader = next((j for j in g.jobs if j.task.role is role), None)
    if beh is not None and reader is not None and reader.task.kind is Kind.GENERATE:
        mech = Refit(beh.apart)  # the framework's broadcast into its engines
        shard = -(-nbytes // reader.layout.tp)
        gpn_src, gpn_dst = hw_src.gpus_per_node, hw_dst.gpus_per_node
        cross = span > min(gpn_src, gpn_dst)
        # each node of the sender holds its own part of the sharded model and sends it
        # over its own NICs, concurrently with the others (one stream per node pair)
        lanes = min(-(-src.gpus // gpn_src), -(-g.gpus // gpn_dst)) if cross else 1
        part = -(-nbytes // lanes)

        def at(end: str, m: Refit = mech, n: int = part, sh: int = shard,
               c: bool = cross) -> float:  # fmt: skip
            return refit_s(m, n, engine_shard_bytes=sh, cross_node=c, end=end)

        predicted, spread = at("value"), spread_of(at, f"{mech} refit constants")
        what += f" ({mech} refit)"
    return Transfer("weight-sync", what, f"link:{what}", nbytes, per_device, time,
                    predicted_s=predicted, spread=spread)  # fmt: skip
