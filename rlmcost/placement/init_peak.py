"""A device group's memory at start-up: the resident states as loaded, an awake engine's
reservation, and the init-time peak of the deployment's load mode
(:mod:`rlmcost.deployment.init`), with the problem it raises when it exceeds the device.

:func:`group_init` gives the allocated terms per device at the init peak: every model's
resident weights and gradient buffers (``init`` of :mod:`rlmcost.reports.timeline`) plus the
engine's reservation, with the model a ``gpu`` load holds whole in place of its resident
states; and the host bytes a node holds while that load lasts. :func:`init_problem` is the
fit verdict of that peak: "does not fit at init: ..." with a hint, when the device view
(allocated + the deployment's overhead, :func:`~rlmcost.deployment.terms.overhead_bytes`)
exceeds what the device gives programs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.compiled.blocks import params
from rlmcost.deployment.group_engine import group_engine
from rlmcost.deployment.init import InitLoad, Loaded, Transient, transient
from rlmcost.deployment.terms import overhead_bytes
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.placement.breakdown_ops import EMPTY, with_terms
from rlmcost.placement.group_memory import switches
from rlmcost.placement.reference_swap import device_residents

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment
    from rlmcost.placement.group_cost import GroupModel
    from rlmcost.placement.jobs import Job

GIB = 2**30


@dataclass(frozen=True)
class InitPeak:
    """A group's start-up memory per device: ``memory`` (allocated terms, ``overhead`` 0),
    ``pool`` (the engine's preallocated bytes, which take no allocator slack), ``load``
    (what the load mode adds, :class:`~rlmcost.deployment.init.Transient`) and
    ``load_dtype`` (the dtype the model held whole is loaded in)."""

    memory: MemoryBreakdown
    pool: int
    load: Transient
    load_dtype: str = ""

    def words(self) -> str:
        """The load in words, for a timeline entry."""
        t = self.load
        if t.role is None:
            return ""
        where = t.mode.words
        host = f", {t.host_bytes_per_node / GIB:.1f} GiB host memory per node" \
            if t.host_bytes_per_node else ""  # fmt: skip
        return f"{t.role} {where} ({self.load_dtype}{host})"


def engine_at_init(name: str, jobs: Sequence[Job], deployment: Deployment) -> tuple[int, int]:
    """An awake engine's reservation, beside the resident weights, before the first step: the
    ``engine`` term the other phases carry; on a group that only generates, the generation
    job's pool and workspace (its weights are resident already; with no trainer beside it the
    engine never sleeps). 0 under the ideal deployment, for a static engine (generation on the
    training weights) and for a sleeping engine beside a trainer (verl, NeMo RL: asleep after
    start-up until the first generation). Returned with the bytes of the engine's preallocated
    reservation that take no allocator slack (the whole reservation, weights included)."""
    if deployment.ideal:
        return 0, 0
    beside = max((j.memory.engine for j in jobs), default=0)
    if beside or any(j.task.kind is not Kind.GENERATE for j in jobs):
        return beside, beside
    engine = group_engine(deployment, name)
    if engine.kind.static:
        return 0, 0
    job = max(jobs, key=lambda j: j.own.total)
    return job.own.total - job.own.weights, job.own.total


def steady_init(
    name: str, jobs: Sequence[Job], resident: Mapping[Role, MemoryBreakdown],
    deployment: Deployment,
) -> tuple[MemoryBreakdown, int]:  # fmt: skip
    """The resident weights and gradient buffers as loaded, and an awake engine's reservation
    (allocated terms), with the engine's preallocated ``pool``."""
    weights = gradients = 0  # term by term, exact ints
    for m in resident.values():
        weights, gradients = weights + m.weights, gradients + m.gradients
    engine, pool = engine_at_init(name, jobs, deployment)
    return with_terms(EMPTY, weights=weights, gradients=gradients, engine=engine), pool


def group_init(g: GroupModel, jobs: Sequence[Job]) -> InitPeak:
    """The group's start-up peak (module docstring): the steady init, with the model the
    deployment's load mode holds whole on the device in place of its resident states; a
    reference the framework swaps through the policy's model takes no device memory of its own
    (:mod:`rlmcost.placement.reference_swap`). A peak
    above the device adds its :func:`init_problem` to the group's problems."""
    d = g.s.deployment
    resident = device_residents(g)  # less a reference swapped through the policy's model
    memory, pool = steady_init(g.group.name, jobs, resident, d)
    mode = InitLoad.SHARDED if d.ideal else d.init_load
    if mode is InitLoad.SHARDED:
        return InitPeak(memory, pool, transient(mode, (), g.gpus, 1))
    loaded, dtypes = [], {}
    for role, states in resident.items():
        task = g.trains_here(role) or next(t for t in g.tasks if t.role is role)
        trained = g.trains_here(role) is not None
        wl = g.workload(task)
        dtype = wl.stored_dtype if trained else wl.weight_dtype
        whole = int(params(g.s.arch(role), task.invocation.model_head)) * dtype.bytes
        loaded.append(Loaded(str(role), whole, states.weights, states.gradients, trained))
        dtypes[str(role)] = str(dtype)
    load = transient(mode, loaded, g.gpus, g.s.hardware.host_gpus)
    if load.device_extra_bytes:
        top = next(m for m in loaded if m.role == load.role)
        memory = with_terms(memory, weights=memory.weights + top.whole_bytes - top.weights,
                            gradients=memory.gradients - top.gradients)  # fmt: skip
    peak = InitPeak(memory, pool, load, dtypes.get(load.role or "", ""))
    kinds = [t.kind for t in g.tasks]
    problem = init_problem(g.group.name, peak, g.gpus, kinds, d, g.s.capacity_bytes,
                           g.sglang_gpus)  # fmt: skip
    if problem is not None:
        g.problems.append(problem)
    return peak


def device_bytes(
    peak: InitPeak, gpus: int, kinds: Sequence[Kind], deployment: Deployment, sglang_gpus: int = 0
) -> int:
    """The ``nvidia-smi`` view of ``peak``: allocated + the allocator's slack on all but the
    engine's pool + the CUDA context and communicator buffers (SGLang's process group on the
    GPUs of an SGLang replica of ``sglang_gpus`` > 1: :func:`~rlmcost.deployment.terms.
    communicator_bytes`; the allocated total under the ideal deployment)."""
    total = peak.memory.total
    if deployment.ideal:
        return total
    moves = switches(kinds)
    return total + overhead_bytes(total - peak.pool, gpus, deployment.overhead, moves,
                                  sglang_gpus)  # fmt: skip


def init_problem(
    name: str, peak: InitPeak, gpus: int, kinds: Sequence[Kind], deployment: Deployment,
    capacity_bytes: int, sglang_gpus: int = 0,
) -> str | None:  # fmt: skip
    """"does not fit at init: ..." with a one-line hint, when the start-up load of a model
    held whole on the device exceeds ``capacity_bytes``; None otherwise (and for a load that
    holds nothing whole on the device: the steady state's verdict covers it)."""
    if not peak.load.device_extra_bytes:
        return None
    need = device_bytes(peak, gpus, kinds, deployment, sglang_gpus)
    if need <= capacity_bytes:
        return None
    return (
        f"does not fit at init: on {name}, {peak.load.role} loaded whole on each GPU "
        f"({peak.load_dtype}) before it is sharded needs {need / GIB:.1f} GiB per device, "
        f"above the {capacity_bytes / GIB:.1f} GiB the device gives; load it sharded "
        "(drop --init-on-gpu: --init-load sharded or host-each)"
    )
