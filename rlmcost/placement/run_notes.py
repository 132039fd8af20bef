"""The notes of one evaluation of a deployment (:func:`deployment_notes`), written when first
read (:mod:`rlmcost.placement.later_notes`): what
:func:`~rlmcost.evaluation.deployment.evaluate_in` says beside its numbers, in order, then
the iteration's own (``placement.iteration``). Split from :mod:`rlmcost.evaluation.deployment`
by size; the parts of the notes that can refuse a run (its policy workers' and trained
models' notes) are computed there, before the result is returned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost import memo
from rlmcost.algorithms.kinds import Kind
from rlmcost.deployment.engine_kv import engine_notes
from rlmcost.deployment.kinds import EngineKind
from rlmcost.parallel.zero_groups import hybrid, hybrid_note
from rlmcost.perf.fp4_gemm import w4a4_note
from rlmcost.perf.generation import VLLM_HOST_S_PER_SEQUENCE
from rlmcost.placement.group_offload import offload_notes
from rlmcost.placement.group_train import any_router_fp64
from rlmcost.placement.group_turns import turns_note
from rlmcost.placement.inputs import Setup, engine_for
from rlmcost.placement.jobs import GroupEstimate
from rlmcost.placement.length_notes import length_note, over_budget_note
from rlmcost.placement.speculative import speculation_notes

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rlmcost.deployment.spec import Deployment
    from rlmcost.placement.estimate import PlacementEstimate
    from rlmcost.placement.later_notes import NotesLater
    from rlmcost.placement.query import Query
    from rlmcost.run.spec import Run


def deployment_notes(est: PlacementEstimate, q: Query, run: Run, setup: Setup,
           read: tuple[bool, Deployment, bool, tuple[str, ...], tuple[str, ...], str | None],
           tail: tuple[str, ...] | NotesLater) -> tuple[str, ...]:  # fmt: skip
    """The notes of the estimate ``est`` of ``run`` (query ``q``, evaluated as ``setup``;
    :func:`~rlmcost.evaluation.deployment.evaluate_in`), in order, then the iteration's
    (``tail``, written or to write): the TP per model, the calibration, offloads, the engines'
    host time, lengths, speculation, host memory, refits, idle ranks, hybrid sharding,
    dropout, the policy workers, the query's models and contexts, KV heads, engine caches,
    MoE, prices. ``read``: what the evaluation computed for them (it can refuse a run):
    whether it chose each model's TP, the deployment as its notes see it (``idle_view``),
    whether a model has routed experts, the dropout and worker notes, the missing-price
    note."""
    chosen, view, moe, drops, worker, missing = read
    alg, wl, hw, efficiency = q.alg, q.workload, q.hardware, q.efficiency
    dep, plan, tasks, tps = setup.deployment, setup.placement, setup.tasks, setup.tp
    notes: list[str] = []
    if chosen:  # the smallest tp per model leaving half the HBM free of weights
        notes.append("tp per model (smallest leaving half the HBM free of weights): "
                     + ", ".join(f"{r}={t}" for r, t in tps.items()))
    # the engines that generate: each group's, merged over the run's (deployment.group_engine)
    engines = list({id(e): e for t in tasks if t.kind is Kind.GENERATE  # distinct objects: no
                    for e in (engine_for(setup, t.group),)}.values()) or [dep.engine]  # hash
    if efficiency is not None:
        notes.append(f"time calibrated with {efficiency.name}")
    if plan.offload or view.train.offload:  # the host link; a known host CPU's Adam rate
        _extend(notes, offload_notes(setup.host_bytes_per_s, hw, view))
    if alg.offline:
        notes.append(f"{alg.name} is offline (Table IV †): its responses come from a fixed "
                     "dataset generated before training, so the loop has no Generation stage")
    elif any(e.kind is EngineKind.VLLM for e in engines):
        notes.append(_vllm_note(VLLM_HOST_S_PER_SEQUENCE.value))
    if not alg.offline and not dep.ideal:  # W4A4 weights: FP4 GEMMs, or W4A16 (perf.fp4_gemm)
        gens = [t for t in tasks if t.kind is Kind.GENERATE]
        _extend(notes, (w4a4_note({str(e.weight_format) for e in engines},
                                  [setup.hardware_of(t.group) for t in gens] or [hw]),))
    if not alg.offline and hw.host_time_factor != 1:
        notes.append(
            f"{hw.name}'s host CPU runs PyTorch's per-call work "
            f"{hw.host_time_factor:g}x as long as the x86 hosts the engine's host "
            "constants were measured on (host_time_source): the step's fixed overhead, eager "
            "launches and a streamed engine's per-sequence floor take it; the in-process "
            "per-sequence time keeps its x86 value (rlmcost.perf.engine_host.host_options)"
        )
    _extend(notes, (length_note(setup, wl.response_len, est.groups),
                    over_budget_note(est.groups), turns_note(wl, est.groups)))  # fmt: skip
    _extend(notes, (*speculation_notes(dep), est.host_check.unchecked))  # unknown hosts
    _extend(notes, (_unused_refit_note(setup, est), _handoff_note(setup, est)))
    _extend(notes, _idle_rank_notes(est))  # dp wider than the batch
    _extend(notes, (n for g in est.groups for n in _hybrid_notes_of(g)))
    _extend(notes, drops)  # their config's dropout (placement.model_dropout)
    _extend(notes, worker)
    _extend(notes, (q.group_note, *q.context_notes()))  # a group method at K = 1 first
    for g in est.groups:  # an engine wider than the KV heads replicates them
        _extend(notes, q.kv_notes(g, setup))
    _extend(notes, q.spec_notes())  # decode convention (MLA) and the spec's approximations
    if not alg.offline:  # what the engines' caches hold of windows and Gated DeltaNet states
        kinds = frozenset(e.kind for e in engines)  # the query's models: kept per query
        _extend(notes, q.kept(("engine notes", kinds, dep.ideal), lambda: engine_notes(
            set(kinds), [spec.arch() for spec in q.specs.values()], dep.ideal)))
    if moe:
        from rlmcost.perf.eager_launch import EAGER_MOE_NOTE
        from rlmcost.perf.moe_host import MOE_HOST_NOTE
        from rlmcost.perf.moe_router import ROUTER_FP64_NOTE

        notes.append(MOE_HOST_NOTE)
        if any_router_fp64(dep):
            notes.append(ROUTER_FP64_NOTE)
        if any(e.eager for e in engines) and not dep.ideal and not alg.offline:
            notes.append(EAGER_MOE_NOTE)
    if missing:
        notes.append(missing)
    return tuple(notes) + (tail if isinstance(tail, tuple) else tail(est))


@memo.memoized()
def _vllm_note(per_sequence_s: float) -> str:
    """The note on vLLM's host time per sequence in flight (kept per value)."""
    return (
        f"vLLM decode steps carry {per_sequence_s * 1e6:g} us of host time "
        "per sequence in flight (scheduler, inputs, output processing; measured on "
        "ML.ENERGY v3: rlmcost.perf.engine_host); streamed (--partial-rollout: AsyncLLM, "
        "output processing beside the GPU) it is a floor under the step, not added; none "
        "on SGLang (overlap scheduler)"
    )


def _handoff_note(setup: Setup, result: PlacementEstimate) -> str | None:
    """:data:`~rlmcost.perf.areal_sync.HANDOFF_NOTE` where a disk refit without streaming
    carries synchronous AReaL's hand-offs (``placement.weight_syncs``)."""
    dep = setup.deployment
    if dep.ideal or dep.partial_rollout:
        return None
    if not any(s.what.endswith("(disk refit)") for s in result.syncs):
        return None
    from rlmcost.perf.areal_sync import HANDOFF_NOTE

    return HANDOFF_NOTE


def _unused_refit_note(setup: Setup, result: PlacementEstimate) -> str | None:
    """A note when an engine's own refit (``--refit disk``) prices nothing: it applies to the
    weights sent to engines on other GPUs; an engine beside its trainer takes them as the
    framework refits in place."""
    dep = setup.deployment
    if dep.ideal or (dep.engine.refit is None
                     and all(g.engine is None or g.engine.refit is None for g in dep.groups)):
        return None  # no engine of any group refits on its own (engine_for reads only these)
    own = {g.name for g in result.groups if engine_for(setup, g.name).refit is not None}
    if not own:
        return None
    if any(s.what.endswith("(disk refit)") for s in result.syncs):
        return None
    return ("--refit disk is not used: no trained model's weights go to an engine on other GPUs "
            "(a co-located engine takes them as the framework refits in place; the weight "
            "sync above is that refit)")


def _idle_rank_notes(result: PlacementEstimate) -> list[str]:
    """One note per training or forward job whose data-parallel ranks outnumber its sequences.

    The memory and time model splits a job's sequences over its dp ranks, rounding up
    (:func:`rlmcost.parallel.breakdown.data_share`: "fewer sequences than shards: some ranks
    idle"), so the extra ranks add GPUs, and cost, but no speed; a framework refuses such a
    batch outright (verl/workers/fsdp_workers.py ``ActorRolloutRefWorker.__init__``:
    ``ppo_mini_batch_size //= device_mesh.size() // ulysses_sequence_parallel_size``, then
    ``assert ppo_mini_batch_size > 0, "... should be larger than 0 after normalization"``).
    Stated, not silent. The training jobs' notes first, then the forwards', each kind group
    by group (:func:`_idle_ranks_of`: kept per group estimate)."""
    parts = [_idle_ranks_of(g) for g in result.groups]
    return [n for kind in (0, 1) for p in parts for n in p[kind]]


@memo.per_instance
def _hybrid_notes_of(g: GroupEstimate) -> tuple[str, ...]:
    """The hybrid-sharding note of each training job of group estimate ``g`` whose layout
    shards ZeRO within a replica group (``parallel.zero_groups``), kept per estimate."""
    return tuple(hybrid_note(j.layout) for j in g.jobs
                 if j.task.kind is Kind.TRAIN and hybrid(j.layout))  # fmt: skip


@memo.per_instance
def _idle_ranks_of(g: GroupEstimate) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`_idle_rank_notes` of one group estimate: its training jobs' notes and its
    forwards' (kept per estimate, which the deployments of a query share)."""
    out: tuple[list[str], list[str]] = ([], [])
    for job in g.jobs:
        if job.task.kind not in (Kind.TRAIN, Kind.FORWARD):
            continue
        dp = job.layout.dp
        if dp > job.sequences:
            out[job.task.kind is Kind.FORWARD].append(
                f"{job.task.label()} on {job.task.group}: {job.sequences} sequences over "
                f"dp = {dp} data-parallel ranks, so {dp - job.sequences} ranks hold none "
                "and idle (their GPUs count in the cost); give fewer GPUs or a larger "
                "--batch"
            )
    return tuple(out[0]), tuple(out[1])


def _extend(notes: list[str], new: Iterable[str | None]) -> None:
    """Append each of ``new`` that is not empty and not in ``notes`` yet, in order."""
    for note in new:
        if note and note not in notes:
            notes.append(note)
