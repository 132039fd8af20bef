"""What one iteration's evaluation advises beside its numbers: the notes that name the
communication that grows with GPUs, and the largest engine reservation that still fits.
Plain functions over the groups :func:`rlmcost.placement.iteration.combine` schedules."""

from __future__ import annotations

from collections.abc import Sequence

from rlmcost.algorithms.kinds import Kind
from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.spec import Overhead
from rlmcost.deployment.terms import communicator_bytes
from rlmcost.memo import Hashed, by_identities, per_instance, table
from rlmcost.placement.group_memory import switches
from rlmcost.placement.inputs import Setup, engine_for
from rlmcost.placement.jobs import GroupEstimate, Transfer

EXPOSED_NOTE_SHARE = 0.01
"""A job whose exposed communication is at least this share of its predicted time is named in
the notes (the term that can make a phase slower on more GPUs)."""


def exposed_notes(groups: Sequence[GroupEstimate], gpus_per_node: int) -> list[str]:
    """One note per group naming each job whose communication does not hide behind its
    compute (ZeRO-3 gathers, TP/CP/EP collectives, pipeline sends, gradient reduction) and the
    transfers that cross nodes (reshards, weight syncs, a driver's padded batch to its workers,
    verl's ``DataProto``): the terms that grow when a group spans more GPUs or nodes, so
    that adding GPUs can make a phase slower."""
    return [n for g in groups for n in _group_notes(g, gpus_per_node)]


@per_instance
def _group_notes(g: GroupEstimate, gpus_per_node: int) -> tuple[str, ...]:
    """:func:`exposed_notes`' notes of one group (kept per group estimate): its exposed
    communication, and its host work on a fixed number of actors (an environment step)."""
    link = "the inter-node link" if g.gpus > gpus_per_node else "NVLink"
    terms = []
    for j in g.jobs:
        parts = j.predicted_parts_s
        kinds = {k[len("exposed_"):-2]: v for k, v in parts.items()
                 if k.startswith("exposed_") and k.endswith("_s") and v > 0}  # fmt: skip
        exposed = sum(kinds.values())
        if j.predicted_s and exposed >= EXPOSED_NOTE_SHARE * j.predicted_s:
            what = "+".join(sorted(kinds)) or "communication"
            terms.append(f"{j.phase} on {g.name} {exposed:.3g} of {j.predicted_s:.3g} s "
                         f"({what})")  # fmt: skip
    if g.gpus > gpus_per_node:
        terms += [f"{tr.phase} on {g.name} {tr.predicted:.3g} s ({tr.bytes_per_device:,} B "
                  "per device across nodes)"
                  for tr in g.transfers
                  if tr.kind in ("reshard", "weight-sync", "controller")
                  and tr.bytes_per_device]  # fmt: skip
    host = [f"{tr.phase} on {g.name} {tr.predicted:.3g} s ({tr.what})" for tr in g.transfers
            if tr.host_bound and tr.predicted > 0]  # fmt: skip
    notes = []
    if terms:
        notes.append(
            f"exposed communication on {link} that compute cannot hide, which grows as a "
            "group spans more GPUs and nodes (adding GPUs can make these phases slower; "
            "larger micro-batches or token budgets hide more): " + "; ".join(terms)
        )
    if host:
        notes.append("host work on a fixed number of actors, which grows with the batch and "
                     "not with the GPUs (more GPUs at the same per-GPU batch lengthen it): "
                     + "; ".join(host))  # fmt: skip
    return tuple(notes)


def sync_notes(syncs: Sequence[Transfer], total_gpus: int, gpus_per_node: int,
               mixed: bool) -> list[str]:  # fmt: skip
    """The weight syncs between groups that cross nodes, named where they can grow with GPUs:
    groups that together span more than a node, or sit on different accelerators (which never
    share a node), copy over the inter-node link (:func:`rlmcost.placement.transfer.
    sync_span_gpus`, which times them). The groups' own notes (:func:`exposed_notes`) list
    only the transfers inside a group, so without this a weight sync that moved across nodes
    as GPUs were added grew unnamed (issue 18 audit: verl async GRPO, 8 -> 16 GPUs)."""
    if total_gpus <= gpus_per_node and not mixed:
        return []
    terms = [f"{tr.phase} on {tr.what} {tr.predicted:.3g} s ({tr.bytes_per_device:,} B per "
             "device across nodes)" for tr in syncs if tr.bytes_per_device]  # fmt: skip
    if not terms:
        return []
    return ["exposed communication between device groups across nodes, which grows as the "
            "groups span more nodes (adding GPUs can make the weight sync slower): "
            + "; ".join(terms)]  # fmt: skip


def recommended_fraction(setup: Setup, groups: Sequence[GroupEstimate]) -> float | None:
    """The largest engine ``gpu_memory_utilization`` (down to the hundredth) at which every
    engine's generation still fits beside what its group holds (and, for an engine that does
    not sleep, beside the group's other phases); None without an engine or when even the
    smallest useful reservation does not fit.

    A phase holds A bytes besides the engine's R = f x capacity, and the overhead adds the
    fixed context/communicator bytes F and the slack s of the allocated total, so it fits when
    (A + R)(1 + s) + F <= capacity: f <= ((capacity - F) / (1 + s) - A) / capacity.

    Kept by the identities of what it reads (the overhead settings, the run's engine and the
    groups' own settings, which give each group's engine; the group estimates): the
    deployments of a query that share them.
    """
    dep = setup.deployment
    if dep.ideal:
        return None
    return by_identities(_FRACTIONS, (dep.overhead, dep.engine, *dep.groups, *groups),
                         lambda: _fraction(setup, groups), also=(len(dep.groups),))


_FRACTIONS = table()
""":func:`recommended_fraction` by the identities of what it reads."""


def _fraction(setup: Setup, groups: Sequence[GroupEstimate]) -> float | None:
    """:func:`recommended_fraction`, computed."""
    best: float | None = None
    ov = setup.deployment.overhead  # by its values: a pydantic model hashes in Python
    key = by_identities(_OVERHEADS, (ov,), lambda: Hashed((type(ov), tuple(ov.__dict__.items()))))
    for g in groups:
        if engine_for(setup, g.name).kind is EngineKind.MEGATRON:
            continue  # no fraction: its pool is buffer_size_gb (deployment.megatron_engine)
        f = _group_fraction(g, key)
        if f is None:
            continue
        if f <= 0:
            return None
        best = f if best is None else min(best, f)
    return best


_OVERHEADS = table()
"""Each overhead settings object's key (:func:`_group_fraction`), made and hashed once by its
identity (the planner's candidates share their validated sections)."""


@per_instance
def _group_fraction(g: GroupEstimate, overhead_key: Hashed) -> float | None:
    """:func:`recommended_fraction` of one group (None: it runs no engine), kept per group
    estimate and overhead settings (``overhead_key``: the model's type and its fields'
    values, all it holds: ``extra="forbid"``; hashed once)."""
    gen = [j for j in g.jobs if j.task.kind is Kind.GENERATE]
    if not gen:
        return None
    kind, items = overhead_key.value
    overhead: Overhead = kind.model_construct(**dict(items))  # validated when it was made
    cap = g.hbm_bytes  # the capacity of the group's own device
    limits = []
    for j in g.jobs:
        awake = j.task.kind is Kind.GENERATE or j.memory.engine > 0
        if not awake:
            continue
        engine = j.memory.engine if j.task.kind is not Kind.GENERATE else (
            j.own.total
        )
        others = j.memory.total - j.memory.overhead - engine
        fixed = overhead.cuda_context_bytes + communicator_bytes(g.gpus, overhead, g.sglang_gpus)
        # others (1 + s) + f cap + F <= cap: no allocator slack on the engine's pool
        slack = overhead.allocator_slack_for(switches(x.task.kind for x in g.jobs))
        limits.append((cap - fixed - others * (1 + slack)) / cap)
    return int(min(limits) * 100) / 100
