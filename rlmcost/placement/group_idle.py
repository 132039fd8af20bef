"""What a group's devices hold while a program verifier runs on the CPU.

A rule-based reward (Table II's verifier: an answer checker, unit tests) is an invocation with
no GPU job, so the stage it belongs to shows the states the devices hold between the
models' phases: each model's states present while a task not its own runs, as the jobs'
memory reads them (:meth:`~rlmcost.placement.group_memory.GroupMemory.present`: less what
the trainer's between-phases offload keeps in host memory, less gradients the framework frees
after its update), none of a model that waits in host memory while idle
(``Placement.offload``, ``--offload-idle``). Weights, gradients, Adam states, in the bytes
the trainer's dtypes give (``--param-dtype``; fp32 Adam m, v)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind
from rlmcost.placement.breakdown_ops import breakdown
from rlmcost.placement.device_groups import Task

if TYPE_CHECKING:
    from rlmcost.parallel.breakdown import MemoryBreakdown
    from rlmcost.placement.group_cost import GroupModel


def verifier_states(g: GroupModel) -> MemoryBreakdown | None:
    """The states on each of ``g``'s devices while the algorithm's verifier runs (None: the
    algorithm has none)."""
    found = next(((i, inv) for i, inv in enumerate(g.s.alg.invocations)
                  if inv.kind is Kind.VERIFY), None)  # fmt: skip
    if found is None:
        return None
    task = Task(found[0], found[1], g.group.name)  # placed nowhere: a CPU program
    w = grads = opt = 0
    if not g.s.placement.offload:  # idle models wait in host memory: nothing on the devices
        for role in g.roles:
            rw, rg, ro = g.present(role, task)
            w, grads, opt = w + rw, grads + rg, opt + ro
    return breakdown((w, grads, opt, 0, 0, 0, 0, 0, 0, 0))
