"""The memory timeline of one iteration per device group: init, the first optimizer step, and
each phase of the steady state, with every memory term in three views.

Per group (:func:`memory_timeline`), in order:

* ``init``: what the group holds before its first step: every resident model's weights and
  the gradient buffers the cost model keeps resident all iteration, as loaded (a framework
  that offloads between phases moves some of them to host memory afterwards, which the
  phase entries show). Megatron's ``DistributedDataParallel`` allocates its contiguous
  gradient buffer when it wraps the model (``megatron/core/distributed/
  param_and_grad_buffer.py``), DeepSpeed ZeRO its partitioned gradient buffers at engine
  init. Plus an awake inference engine's reservation (vLLM reserves
  ``gpu_memory_utilization`` of the device when the engine starts; a sleeping engine beside
  a trainer is put to sleep after its start and holds nothing). No optimizer state exists.
  Under a load mode that holds a model whole on the GPU before sharding it (the
  deployment's ``init_load``, :mod:`rlmcost.deployment.init`: OpenRLHF's
  ``--actor_init_on_gpu``), the entry is that peak: the model whole, in its load dtype, in
  place of its resident weights and gradient buffers (:func:`rlmcost.placement.init_peak.
  group_init`); a load in host memory adds ``init_host_bytes_per_node`` instead.
* ``first step`` (the first optimizer step): the Adam states appear. ``torch.optim.AdamW`` creates
  ``exp_avg`` and ``exp_avg_sq`` (and the ``step`` counter) lazily, on the first ``step()``
  call (``torch/optim/adamw.py``: ``AdamW(Adam)``; ``torch/optim/adam.py`` ``_init_group``:
  "Lazy state initialization", ``if len(state) == 0``, torch 2.13); Megatron's
  distributed optimizer and DeepSpeed wrap the same torch optimizer and its fp32 master copy.
  The entry is the resident states as loaded (``init`` without a whole-model load) plus the
  optimizer bytes the group's first update holds on the
  device (:attr:`Job.memory` of its first train job: the Adam states of
  ``rlmcost.parallel.zero`` after ZeRO sharding and offload: those of every model the group
  trains, which the cost model keeps resident from their first steps on, or, under a
  between-phases offload such as verl's ``optimizer_offload``, those of the model it updates).
* one entry per job of the group, in the group's order: the bytes the evaluation has for it
  (:attr:`rlmcost.placement.jobs.Job.memory`), the steady state from the second iteration on;
  its ``rollout`` term is the iteration's batch of samples as the framework keeps it on the
  device during the forwards and the update (:mod:`rlmcost.deployment.buffers`).
  Its peak is the group's peak (:attr:`~rlmcost.placement.jobs.GroupEstimate.
  peak_memory_bytes_per_device`).

Views of each entry, exact ints, bytes per device in the dtypes of the run's workload
(weights in the weight dtype or a trainer's stored ``param_dtype``, Adam states fp32,
activations in the activation dtype):

* ``allocated``: the tensors (``torch.cuda.memory_allocated``): every term but ``overhead``;
* ``reserved``: what PyTorch's caching allocator holds (``torch.cuda.memory_reserved``):
  allocated x (1 + allocator slack), the slack of the deployment's
  :class:`~rlmcost.deployment.spec.Overhead` for the group (larger where its GPUs switch
  between generation and training, unless expandable segments are on: ``Overhead.
  allocator_slack_for``) applied to all but an engine's preallocated
  pool (:func:`rlmcost.deployment.terms.overhead_bytes`, as
  :meth:`rlmcost.placement.group_memory.GroupMemory.with_residents` applies it);
* ``device``: what ``nvidia-smi`` shows: reserved + the CUDA context + the communicator
  buffers (a group of more than one GPU). Under the paper's ideal deployment the three agree.

Start and end seconds per job: the predicted seconds of the synchronous loop's schedule
(:mod:`rlmcost.placement.schedule`): inside a group the jobs run one after another; a stage
starts when the previous stage has finished on every group (the stage barrier). Transfers
(weight sync, resharding, offload switches) and controller time are not drawn, so the last
job's end may fall short of the iteration's predicted seconds.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import Kind, Stage
from rlmcost.deployment.init import InitLoad, transient
from rlmcost.deployment.terms import overhead_bytes
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.placement.group_memory import switches
from rlmcost.placement.init_peak import InitPeak, steady_init

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment
    from rlmcost.placement.estimate import PlacementEstimate
    from rlmcost.placement.jobs import GroupEstimate

TERMS = tuple(f.name for f in fields(MemoryBreakdown) if f.name != "overhead")
"""The allocated terms of an entry (``overhead`` is what the views add)."""

INIT, FIRST_STEP = "init", "first step"


@dataclass(frozen=True)
class Entry:
    """One point of a group's timeline: its allocated terms (``memory``, ``overhead`` 0) and
    the three views, exact bytes per device; ``start_s``/``end_s`` for a job."""

    phase: str
    what: str
    memory: MemoryBreakdown
    reserved_bytes: int
    device_bytes: int
    start_s: float | None = None
    end_s: float | None = None

    @property
    def allocated_bytes(self) -> int:
        return self.memory.total

    def to_json(self) -> dict[str, Any]:
        terms = {name: getattr(self.memory, name) for name in TERMS}
        return {
            "phase": self.phase,
            "what": self.what,
            "terms_bytes": terms,
            "allocated_bytes": self.allocated_bytes,
            "reserved_bytes": self.reserved_bytes,
            "device_bytes": self.device_bytes,
            "start_s": self.start_s,
            "end_s": self.end_s,
        }


@dataclass(frozen=True)
class GroupTimeline:
    """One device group's entries: init, first optimizer step, then its jobs in order."""

    group: str
    gpus: int
    capacity_bytes: int
    entries: tuple[Entry, ...]
    init_host_bytes_per_node: int = 0  # host memory a node holds while a model loads whole

    @property
    def init(self) -> Entry:
        return self.entries[0]

    @property
    def first_step(self) -> Entry:
        return self.entries[1]

    @property
    def phases(self) -> tuple[Entry, ...]:
        """The steady state: one entry per job."""
        return self.entries[2:]

    @property
    def steady_peak_bytes(self) -> int:
        """The largest device view over the steady-state phases."""
        return max(e.device_bytes for e in self.phases)

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "gpus": self.gpus,
            "capacity_bytes_per_device": self.capacity_bytes,
            "steady_peak_bytes_per_device": self.steady_peak_bytes,
            "init_host_bytes_per_node": self.init_host_bytes_per_node,
            "entries": [e.to_json() for e in self.entries],
        }


def _fixed_bytes(deployment: Deployment, g: GroupEstimate) -> int:
    """CUDA context + communicator buffers per device (0 under the ideal deployment)."""
    if deployment.ideal:
        return 0
    return overhead_bytes(0, g.gpus, deployment.overhead, sglang_gpus=g.sglang_gpus)


def _at_rest(
    phase: str, what: str, memory: MemoryBreakdown, pool: int, g: GroupEstimate,
    deployment: Deployment,
) -> Entry:  # fmt: skip
    """An entry between phases: ``memory``'s terms, the allocator's slack on all but the
    engine's preallocated ``pool`` (the group's, as its phases have it), and the fixed
    per-process bytes."""
    if deployment.ideal:
        return Entry(phase, what, memory, memory.total, memory.total)
    moves = switches(j.task.kind for j in g.jobs)
    overhead = overhead_bytes(memory.total - pool, g.gpus, deployment.overhead, moves,
                              g.sglang_gpus)  # fmt: skip
    device = memory.total + overhead
    return Entry(phase, what, memory, device - _fixed_bytes(deployment, g), device)


def _schedule(estimate: PlacementEstimate) -> dict[tuple[str, int], tuple[float, float]]:
    """(group, job position) -> (start, end) seconds under the stage barrier (module
    docstring)."""
    out: dict[tuple[str, int], tuple[float, float]] = {}
    begin = 0.0
    for stage in Stage:
        span = 0.0
        for g in estimate.groups:
            t = begin
            for i, job in enumerate(g.jobs):
                if job.task.stage is stage:
                    out[(g.name, i)] = (t, t + job.predicted_s)
                    t += job.predicted_s
            span = max(span, t - begin)
        begin += span
    return out


def group_timeline(
    g: GroupEstimate, deployment: Deployment, when: dict[tuple[str, int], tuple[float, float]]
) -> GroupTimeline:
    """One group's timeline (module docstring)."""
    init_mem, pool = steady_init(g.name, g.jobs, g.resident, deployment)
    peak = g.init or InitPeak(init_mem, pool, transient(InitLoad.SHARDED, (), g.gpus, 1))
    update = next((j for j in g.jobs if j.task.kind is Kind.TRAIN), None)
    adam = update.memory.optimizer if update is not None else 0
    roles = ", ".join(str(r) for r in g.resident)
    entries = [
        _at_rest(INIT, "; ".join(w for w in (f"weights, gradient buffers: {roles}",
                                              peak.words()) if w),
                 peak.memory, peak.pool, g, deployment),  # fmt: skip
        _at_rest(
            FIRST_STEP,
            f"+ Adam states at {update.task.label()}" if update else "no optimizer here",
            replace(init_mem, optimizer=adam),
            pool,
            g,
            deployment,
        ),
    ]
    fixed = _fixed_bytes(deployment, g)
    for i, job in enumerate(g.jobs):
        m = job.memory
        start, end = when.get((g.name, i), (None, None))
        entries.append(
            Entry(
                job.phase,
                job.task.label(),
                replace(m, overhead=0),
                m.total - fixed,
                m.total,
                start,
                end,
            )
        )
    return GroupTimeline(g.name, g.gpus, g.hbm_bytes, tuple(entries),
                         peak.load.host_bytes_per_node)  # fmt: skip


def memory_timeline(estimate: PlacementEstimate) -> tuple[GroupTimeline, ...]:
    """Every group's timeline, in the estimate's group order."""
    when = _schedule(estimate)
    return tuple(group_timeline(g, estimate.deployment, when) for g in estimate.groups)


def timeline_json(estimate: PlacementEstimate) -> list[dict[str, Any]]:
    """The ``memory_timeline`` key of an algorithm command's ``--timeline --json``."""
    return [t.to_json() for t in memory_timeline(estimate)]
