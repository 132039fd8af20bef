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
iteration is never longer than the synchronous one on the same groups. Under staleness the
notes name the bottleneck group, the others' idle seconds and the GPU split that balances the
groups' GPU-seconds (:mod:`rlmcost.placement.overlap`); ``--partial-rollout`` (streaming
generation, :mod:`rlmcost.placement.streaming`) needs k >= 1.

A weight sync is its own resource (a link, §IV-E), except a framework's refit into the engines
of another group, which stalls both sides: the engines take no decode step while the weights
load and the trainer waits for the transfer before its next step. NeMo RL v0.5.0
(nemo_rl/algorithms/grpo.py ``async_grpo_train``: ``prepare_for_refit`` pauses new generation
starts, ``refit_policy_generation`` runs in the training loop under the "weight_sync" timer;
nemo_rl/models/generation/vllm/vllm_worker_async.py ``update_weights_from_collective_async``
is a vLLM ``collective_rpc``, which the engine core runs between its steps); verl at b178a3c
(verl/experimental/fully_async_policy/param_sync.py ``sync_weights``: ``rollouter.pause``,
then the NCCL sync, then ``resume``; fully_async_trainer.py ``ray.get``s it). So the sync unit
runs on the engines' group between two of its iterations (its busy time per iteration is its
units and the sync) and the trainer's next iteration waits for it. Throughput:
``tokens_per_s_per_gpu`` = prompt + response tokens the actor trains on per iteration /
(predicted iteration time x GPUs) (NeMo RL's "Tokens/sec/GPU", verl's ``perf/throughput``);
``mfu`` = the iteration's work (the project's exact FLOP count, FLOP = one add or one
multiply, generation + assessment + training) / (predicted iteration time x GPUs x dense peak
of the compute dtype).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from math import ceil
from typing import Any

from rlmcost.algorithms.kinds import Kind, Stage
from rlmcost.memo import per_instance
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.placement.estimate import (
    MFU_CONVENTION as MFU_CONVENTION,  # the estimate report's import
)
from rlmcost.placement.estimate import FusionGain, Phase, PlacementEstimate, StageResult
from rlmcost.placement.frozen import built
from rlmcost.placement.group_gate import GATE_NOTE, KEEP_KV_NOTE, colocated_note, framework_stream
from rlmcost.placement.group_train import offloads_apart_note
from rlmcost.placement.inputs import Setup
from rlmcost.placement.iteration_advice import exposed_notes, recommended_fraction, sync_notes
from rlmcost.placement.iteration_groups import IterationGroups, iteration_groups, jobs_of
from rlmcost.placement.iteration_links import append_links, fused_units, group_hardware, link_part
from rlmcost.placement.jobs import GroupEstimate, Job, Transfer
from rlmcost.placement.later_notes import notes_later
from rlmcost.placement.overlap import busy_per_group, check_partial_rollout, overlap_notes
from rlmcost.placement.prefix_share import PREFIX_NOTE
from rlmcost.placement.schedule_template import Template, template
from rlmcost.placement.task_work import sequence_work
from rlmcost.placement.version_gate import gate_weights
from rlmcost.placement.weight_syncs import weight_syncs


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


IN_TURN = ("; behind the gate the loop is slower than the same groups in turn (staleness 0), "
           "which satisfy every gate: priced in turn")


def combine(setup: Setup, groups: Sequence[GroupEstimate]) -> PlacementEstimate:
    """The iteration from its groups: schedule, stages, transfers, fusion, fit."""
    placement = setup.placement
    check_partial_rollout(setup.deployment.partial_rollout, placement.staleness,
                          setup.deployment.rollout_in_flight)  # fmt: skip
    static = iteration_groups(setup.groups_seen, groups)
    fusion = None
    if placement.fusion:
        jobs = jobs_of(groups)
        time_of = {i: j.time_s for i, j in jobs.items()}
        pred_of = {i: j.predicted_s for i, j in jobs.items()}
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
    # group merge under fusion (interleaved pipelines); then one unit per weight-sync link.
    # Each unit: its shape (key, resource, stage, barrier), weights (bound, prediction, depth)
    # and spread, in order; without fusion as kept beside the groups' part (iteration_links)
    part = None
    syncs: Sequence[Transfer]
    links: Sequence[tuple[str, str, Sequence[str], tuple[str, str] | None]]
    shape: Sequence[Any]
    w_t: Sequence[Any]
    w_p: Sequence[Any]
    w_d: Sequence[Any]
    w_low: Sequence[Any] | None = None
    w_high: Sequence[Any] | None = None
    if placement.fusion:
        shape, w_t, w_p, w_d, spreads, key_of = fused_units(groups, time_of, pred_of)
        syncs, links = weight_syncs(setup, groups, key_of)
        first_of: dict[str, str] = {}
        last_of: dict[str, str] = {}
        for key, resource, _, _ in shape:
            first_of.setdefault(resource, key)
            last_of[resource] = key
        frozen_links = append_links(syncs, links, (first_of, last_of), shape,
                                    (w_t, w_p, w_d), spreads)  # fmt: skip
    else:
        part = link_part(setup, static, groups, _phases)
        syncs, links, frozen_links, key_of = part.syncs, part.links, part.frozen, static.key_of
        shape, w_t, w_p, w_d, w_low, w_high = static.shape + part.link_shape, part.w_t, \
            part.w_p, part.w_d, part.low, part.high  # fmt: skip
    plan = _template(static, shape, placement.staleness, frozen_links, placement.fusion)
    free_t, free_p = w_t, w_p  # the engines' own stream, for the in-turn comparisons below
    gated = jobs_of(groups) if placement.staleness else {}  # version gates stream async only
    gw, gate_note = gate_weights(plan, gated, key_of, placement.staleness,
                                 (w_t, w_p, w_low, w_high))  # fmt: skip
    serial = None
    if gate_note is not None:  # the same groups in turn satisfy every gate: never slower
        serial = _template(static, shape, 0, frozen_links, placement.fusion)
        if float(serial.value(free_p)) < float(plan.value(gw[1] or w_p)):
            plan, gw, gate_note = serial, [None, None, w_low, w_high], gate_note + IN_TURN
    w_t, w_p, w_low, w_high = gw[0] or w_t, gw[1] or w_p, gw[2], gw[3]
    per_t, per_d = plan.period(w_t), plan.value(w_d)
    if serial is not None and plan is not serial and serial.period(free_t).value < per_t.value:
        per_t = serial.period(free_t)  # the bound likewise
    if w_low is None or w_high is None:  # with fusion
        w_low, w_high = ([w * getattr(sp, end) for w, sp in zip(w_p, spreads, strict=True)]
                         for end in ("low", "high"))  # fmt: skip
    per_p, low, high = plan.values3(w_p, w_low, w_high)  # each plan.value(w): one call
    interval = (float(low), float(high))
    # monotone in the weights: low <= predicted <= high
    interval = (max(interval[0], float(per_t.value)), interval[1])  # never below the bound
    spans_t, spans_p, spans_d = plan.stage_spans(w_t), plan.stage_spans(w_p), plan.stage_spans(w_d)
    stages: dict[Stage, StageResult] = {}
    for stage, (work, memory, active) in static.stages.items():  # the stages in order
        stages[stage] = built(StageResult, stage, work, int(spans_d.get(stage, 0)), memory,
                              float(spans_t.get(stage, 0.0)), active,
                              float(spans_p.get(stage, 0.0)))  # fmt: skip
    hardware = group_hardware(setup, groups)
    cycle = per_t.cycle
    assert cycle is not None  # a numeric period has its critical cycle
    critical = static.labels.get(cycle.keys)  # the same units, the same label
    if critical is None:
        critical = static.labels[cycle.keys] = _critical_label(setup, plan, cycle.keys,
                                                                     jobs_of(groups))
    if cycle.shift > 1:
        critical += f" (over {cycle.shift} iterations)"
    out = built(  # PlacementEstimate(...) with every field given, in order
        PlacementEstimate, setup.alg, placement, tuple(groups), stages, float(per_t.value),
        int(ceil(per_d)), critical, tuple(syncs), fusion, setup.hardware, setup.workload,
        setup.lengths, (), dict(setup.specs), dict(setup.values),
        setup.efficiency.name, setup.deployment, recommended_fraction(setup, groups),
        float(per_p), (interval[0], interval[1]),
        _phases(static, syncs) if part is None else part.phases, static.trained_tokens,
        hardware, {}, setup.host_memory_gib,
    )  # fmt: skip
    # its notes written when read (placement.later_notes): nothing below can refuse the run
    notes_later(out, _notes, setup, static, (shape, links, frozen_links), (w_p, free_p),
                gate_note)  # fmt: skip
    return out


def _notes(est: PlacementEstimate, setup: Setup, static: IterationGroups,
           units: tuple[Sequence[Any], Sequence[Any], tuple[Any, ...]],
           weights: tuple[Sequence[Any], Sequence[Any]], gate_note: str | None) -> tuple[str, ...]:
    """The notes of :func:`combine`'s estimate ``est``, in order: the groups' waves, exposed
    transfers, offloads left out, weight syncs, fusion and staleness (the bottleneck, the
    in-turn loop, the version gate), partial rollout. ``units``: the schedule's shape, links
    and frozen links; ``weights``: the predicted weights the schedule took (after a version
    gate) and the engines' own (before it)."""
    shape, links, frozen_links = units
    w_p, free_p = weights
    groups, syncs, fusion, placement = est.groups, est.syncs, est.fusion, setup.placement
    hardware = est.group_hardware
    notes: list[str] = []
    notes += static.wave_notes
    per_node = min(h.gpus_per_node for h in hardware.values())
    notes += exposed_notes(groups, per_node)
    notes += offloads_apart_note(setup.deployment, groups, setup.placement)
    notes += sync_notes(syncs, sum(g.gpus for g in groups), per_node,
                        len({h.name for h in hardware.values()}) > 1)  # fmt: skip
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
        names = [g.name for g in groups]
        in_turn = float(_template(static, shape, 0, frozen_links, placement.fusion).value(free_p))
        busy = busy_per_group(shape, w_p, names)
        for what, _, _, stall in links:
            for side in stall or ():  # the engines pause for the refit, the trainer sends it
                busy[side] += float(w_p[[k for k, *_ in shape].index(what)])
        notes += [gate_note] if gate_note else []
        kinds = {d.hardware or setup.hardware.name for d in placement.groups}  # mixed?
        notes += overlap_notes(est.iteration_time_s, busy, {g.name: g.gpus for g in groups},
                               placement.staleness, in_turn, mixed=len(kinds) > 1)  # fmt: skip
        notes += colocated_note(setup)
    if setup.deployment.partial_rollout:
        rules = framework_stream(setup, (1,), 1, 1)
        notes.append(
            "partial rollout: the engines stream across batches ("
            + (GATE_NOTE if rules.gate else "a finished sample's slot refilled at once")
            + (", the in-flight samples interrupted at each weight update and resumed with "
               "their KV cache recomputed" if rules.reprefill else KEEP_KV_NOTE)
            + "): generation is one batch at the stream's occupancy"
            + (" plus that re-prefill" if rules.reprefill else "")
            + ", without the batch's long tail"
            + (f"; up to {setup.deployment.rollout_in_flight} batches in flight at once"
               if setup.deployment.rollout_in_flight > 1 else "")
            + (f"; {PREFIX_NOTE}" if rules.share else "")
        )  # fmt: skip
    return tuple(notes)


def _template(static: IterationGroups, shape: Sequence[Any], staleness: int,
              links: tuple[Any, ...], fused: bool) -> Template:  # fmt: skip
    """``template(tuple(shape), staleness, links)``; without fusion kept beside the groups'
    part by the staleness and links: the shape is then the groups' units
    (``static.shape``) and one unit per link, named by the link (so a function of the two),
    and the whole shape is neither hashed nor compared again."""
    if fused:
        return template(tuple(shape), staleness, links)
    key = (staleness, links)
    plan = static.plans.get(key)
    if plan is None:
        plan = static.plans[key] = template(tuple(shape), staleness, links)
    return plan


def _phases(static: IterationGroups, syncs: Sequence[Transfer]) -> tuple[Phase, ...]:
    """The iteration's named phases in the order the groups run them (transfers in front of
    their tasks, weight syncs last), each summed over the jobs and transfers of that name:
    the groups' sums (``IterationGroups.phases``) plus the weight syncs'. Where no two syncs
    and no sync and group share a name, the groups' own phases as built once and each sync's
    phase as kept per sync (:func:`_sync_phase`; the syncs are kept objects,
    ``weight_syncs.sync_reads``): nothing new kept per deployment."""
    own = [_sync_phase(tr) for tr in syncs]
    names = static.names
    if all(n not in names for n, _ in own) and len({n for n, _ in own}) == len(own):
        return static.phase_list + tuple(p for _, p in own if p is not None)
    order = {name: [key, predicted, bound] for name, key, predicted, bound in static.phases}
    for tr in syncs:
        entry = order.setdefault(tr.phase, [None, 0.0, 0.0])
        entry[1] += tr.predicted
        entry[2] += tr.time_s
    return tuple(Phase(n, k, p, b) for n, (k, p, b) in order.items() if p or b)


@per_instance
def _sync_phase(tr: Transfer) -> tuple[str, Phase | None]:
    """The phase name of weight sync ``tr`` and its phase alone (None: no time), summed from
    0.0 as :func:`_phases` sums (kept per sync)."""
    p, b = 0.0 + tr.predicted, 0.0 + tr.time_s
    return tr.phase, (Phase(tr.phase, None, p, b) if p or b else None)


def _critical_label(setup: Setup, plan: Any, keys: tuple[str, ...],
                    jobs: Mapping[int, Job]) -> str:  # fmt: skip
    """The critical cycle's label: its units' labels (:func:`_unit_label`) in order. A
    function of the template ``plan`` (each unit's resource), the placement's tasks (a job's
    label is its task's, and the job of index i on a group is the task of index i of every
    deployment that shares the group's estimate, ``group_key``) and the cycle's keys: kept
    per query by the template's and the tasks' identities (the objects kept beside)."""
    seen = setup.groups_seen
    if seen is None:
        return " -> ".join(_unit_label(k, plan.resource_of[k], jobs) for k in keys)
    key = ("critical label", id(plan), id(setup.tasks), keys)
    hit = seen.get(key)
    if hit is not None and hit[0] is plan and hit[1] is setup.tasks:
        return hit[2]
    label = " -> ".join(_unit_label(k, plan.resource_of[k], jobs) for k in keys)
    seen[key] = (plan, setup.tasks, label)
    return label


def _unit_label(key: str, resource: str, jobs: Mapping[int, Job]) -> str:
    if key.replace("+", "").isdigit():
        return "+".join(jobs[int(i)].task.label() for i in key.split("+")) + f" [{resource}]"
    return key.rsplit("#", 1)[0]
