"""The weight syncs of an iteration: each trained model read on another device group gets one
copy of its weights after training, over the links :mod:`rlmcost.placement.transfer` prices, or
the framework's refit into its engines (:mod:`rlmcost.perf.refit`), which stalls both sides;
AReaL's refit through shared storage in its synchronous loop also carries the loop's hand-offs
(:mod:`rlmcost.perf.areal_sync`).

Split from :mod:`rlmcost.placement.iteration` (which schedules them) by purpose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.choices import Dtype
from rlmcost.compiled.blocks import params
from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.refit import Refit, refit_s, spread_of
from rlmcost.perf.rl_step import link_transfer_s
from rlmcost.placement.inputs import Setup, engine_for
from rlmcost.placement.jobs import GroupEstimate, Job, Transfer
from rlmcost.placement.mtp import trained_mtp_params
from rlmcost.placement.transfer import sync_span_gpus, weight_sync_time_s

if TYPE_CHECKING:
    from rlmcost.specs.hardware import HardwareSpec


def weight_syncs(
    setup: Setup, groups: Sequence[GroupEstimate], key_of: Mapping[int, str],
    trainers: Mapping[Role, tuple[GroupEstimate, Job]] | None = None,
) -> tuple[list[Transfer], list[tuple[str, str, list[str], tuple[str, str] | None]]]:
    """Each trained model read on another group: one copy of its weights after training, with
    (the engines' group, the trainer's group) where the framework's refit stalls both.
    ``trainers``: each trained model's group and training job, when known."""
    trainer = trainers if trainers is not None else {
        j.task.role: (g, j) for g in groups for j in g.jobs if j.task.kind is Kind.TRAIN
    }
    total = sum(g.gpus for g in groups)
    syncs: list[Transfer] = []
    links: list[tuple[str, str, list[str], tuple[str, str] | None]] = []
    seen = setup.groups_seen
    for g in groups:
        for role in g.shadows:
            if role not in trainer:
                continue
            src, train_job = trainer[role]
            reads = sync_reads(setup, src, train_job, g, role, total)
            kept = None if seen is None else seen.get(reads)  # None: nothing kept (memo.plain)
            sync: Transfer = kept if kept is not None else _weight_sync(setup, reads)
            if kept is None and seen is not None:
                seen[reads] = sync
            syncs.append(sync)
            # a framework's refit into its engines stalls both sides (schedule.Link)
            stall = None if reads.mech is None else (g.name, src.name)
            readers = [key_of[j.task.index] for j in g.jobs if j.task.role is role]
            links.append((sync.what, key_of[train_job.task.index], readers, stall))
    return syncs, links


class SyncReads(NamedTuple):
    """What one weight sync reads beside the query (:func:`sync_reads`), led by its tag."""

    tag: str
    role: Role
    head: Any
    src: str
    dst: str
    src_gpus: int
    dst_gpus: int
    hw_src: Any
    hw_dst: Any
    total: int
    mech: Refit | None
    tp: int | None
    dtype: Dtype | None
    streams: bool | None
    mtp_params: int = 0  # the trained MTP modules' (placement.mtp.trained_mtp_params)


def sync_reads(setup: Setup, src: GroupEstimate, train_job: Job, g: GroupEstimate, role: Role,
               total: int) -> SyncReads:  # fmt: skip
    """What one copy of ``role``'s weights from its trainer's group ``src`` to group ``g``
    reads beside the query (its model, dtypes and prompts: ``Setup.groups_seen`` is the
    query's): led by a tag, the model and its head, the two groups' names, GPUs and
    accelerators, the GPUs of the iteration, and for a framework's refit into an engine that
    generates there the mechanism, the engine's TP, its dtype (read by NeMo RL's packed
    broadcast alone) and whether the rollout streams (None each otherwise). The key under
    which the query keeps the sync (:func:`weight_syncs`): the planner's deployments ask
    1,184 syncs of 60 distinct reads (PPO Llama-3.1-70B on 32 A100,
    ``benchmarks/bench_rl_eval.py``), each pair of new group estimates with the same."""
    mechanism = _refit_mechanism(setup, g.name)
    reader = next((j for j in g.jobs if j.task.role is role), None)
    mech = tp = dtype = streams = None
    if mechanism is not None and reader is not None and reader.task.kind is Kind.GENERATE:
        mech, tp = Refit(mechanism), reader.layout.tp
        streams = setup.deployment.partial_rollout
        if mech is Refit.PACKED_NCCL:
            dtype = engine_for(setup, g.name).dtype
    return SyncReads("weight sync", role, train_job.task.invocation.model_head, src.name,
                     g.name, src.gpus, g.gpus, setup.hardware_of(src.name),
                     setup.hardware_of(g.name), total, mech, tp, dtype, streams,
                     trained_mtp_params(setup, role, src.name))  # fmt: skip


def _weight_sync(setup: Setup, reads: SyncReads) -> Transfer:
    """One copy of a trained model's weights from its trainer's group to another group after
    training, from what it reads (:func:`sync_reads`) and the query's model, weight dtype and
    prompts (:func:`weight_syncs`)."""
    _, role, head, src_name, dst_name, src_gpus, dst_gpus, hw_src, hw_dst, total, mech, tp, \
        dtype, streams, mtp = reads  # fmt: skip
    arch = setup.arch(role)
    nbytes = (params(arch, head) + mtp) * setup.workload.weight_dtype.bytes
    what = f"{role}: {src_name} -> {dst_name}"
    time = weight_sync_time_s(nbytes, src_gpus, dst_gpus, total, hw_src, hw_dst)
    per_device = -(-nbytes // min(src_gpus, dst_gpus))
    span = sync_span_gpus(total, hw_src, hw_dst)  # the slower side's link
    predicted = max(link_transfer_s(per_device, hw, span) for hw in (hw_src, hw_dst))
    spread = None
    if mech is not None:  # the framework's broadcast into its engines, or the disk
        assert tp is not None  # sync_reads sets the engine's TP with its mechanism
        shard = -(-nbytes // tp)
        cross = span > min(hw_src.gpus_per_node, hw_dst.gpus_per_node)
        # each host of the sender holds its own part of the sharded model and sends it over
        # its own NICs, concurrently with the others (one stream per host pair; a GB200 NVL72
        # rack is 18 hosts of 4 GPUs, HardwareSpec.host_gpus)
        hosts_src, hosts_dst = hw_src.host_gpus, hw_dst.host_gpus
        lanes = min(-(-src_gpus // hosts_src), -(-dst_gpus // hosts_dst)) if cross else 1
        # through shared storage the full model is saved once and reloaded by every server;
        # NeMo RL's packed broadcast pipelines the full model through one group (packed_refit)
        whole = mech in (Refit.DISK, Refit.PACKED_NCCL)
        part = nbytes if whole else -(-nbytes // lanes)

        # NeMo RL's FP8 engines quantize the whole received model on every rank (packed_refit)
        fp8 = mech is Refit.PACKED_NCCL and dtype is Dtype.FP8
        requant = _fp8_requant_s(params(arch, head), hw_dst) if fp8 else 0.0

        # synchronous AReaL: the manager's poll, the next batch's submission and the trainer's
        # data poll also sit between the save and the next training step (perf.areal_sync)
        handoff = mech is Refit.DISK and not streams
        prompts, workers = int(setup.values["B"]), src_gpus

        def at(end: str, m: Refit = mech, n: int = part, sh: int = shard,
               c: bool = cross) -> float:  # fmt: skip
            out = refit_s(m, n, engine_shard_bytes=sh, cross_node=c, end=end) + requant
            return out + (_sync_handoff_s(prompts, workers, end) if handoff else 0.0)

        predicted, spread = at("value"), spread_of(at, f"{mech} refit constants")
        what += f" ({mech} refit)"  # the hand-offs: evaluation.deployment's note
    return Transfer("weight-sync", what, f"link:{what}", nbytes, per_device, time,
                    predicted_s=predicted, spread=spread)  # fmt: skip


def _refit_kind(setup: Setup, group: str) -> str | None:
    """The engine's own refit setting on ``group`` (``EngineSpec.refit``), None in the ideal."""
    return None if setup.deployment.ideal else engine_for(setup, group).refit


def _refit_mechanism(setup: Setup, group: str) -> str | None:
    """How the engines on ``group`` take the trained weights: the engine's ``refit`` (``disk``:
    :mod:`rlmcost.perf.disk_refit`), else the framework's (``Behaviour.apart``); None: a copy
    over the links (no framework, or the paper's ideal)."""
    if setup.deployment.ideal:
        return None
    own = _refit_kind(setup, group)
    if own is not None:
        return own
    beh = behaviour(setup.deployment.framework)
    return None if beh is None else beh.apart


def _fp8_requant_s(n: int, hw: HardwareSpec) -> float:
    """:func:`rlmcost.perf.packed_refit.fp8_requant_s` (imported for FP8 engines only)."""
    from rlmcost.perf.packed_refit import fp8_requant_s

    return fp8_requant_s(n, hw)


def _sync_handoff_s(prompts: int, workers: int, end: str) -> float:
    """:func:`rlmcost.perf.areal_sync.sync_handoff_s` (imported for a disk refit only)."""
    from rlmcost.perf.areal_sync import sync_handoff_s

    return sync_handoff_s(prompts, workers, end)
