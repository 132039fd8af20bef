"""The iteration's batch of samples on a group's devices, as the deployment's framework keeps
it (rollout buffers, :func:`~rlmcost.deployment.buffers.rollout_buffer_bytes`), for
:meth:`~rlmcost.placement.group_memory.GroupMemory.rollout_buffers`. Split from
:mod:`rlmcost.placement.group_memory` by purpose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.deployment.buffers import RolloutBuffers, Routes, rollout_buffer_bytes
from rlmcost.errors import SpecError
from rlmcost.frameworks.buffers import FRAMEWORK_BUFFERS, Needs, expert_id_bytes
from rlmcost.memo import per_object
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_key import per_query

if TYPE_CHECKING:
    from rlmcost.placement.group_own import GroupTasks

_NONE = RolloutBuffers(0, 0)
_NO_ROUTES = Routes()
_REPLAY = frozenset((Needs.ROUTING_REPLAY,))


def rollout_buffers_of(g: GroupTasks, task: Task) -> RolloutBuffers:
    """The batch's bytes on each device and in host memory per device while ``task`` runs on
    group ``g`` (``GroupMemory.rollout_buffers``): during the forwards and the update of an
    algorithm that generates (none while generating: the batch is assembled after it, and
    freed after the update). The batch is the task's sequences at their response lengths;
    the reference's log-probs exist when the algorithm runs a reference, values and GAE
    advantages when it runs a critic, routed-expert ids under ``routing_replay`` of an MoE
    actor."""
    dep = g.s.deployment
    if dep.ideal or task.kind is Kind.GENERATE:
        return _NONE
    generates, needs = batch_needs(g.s.tasks)
    if not generates:
        return _NONE  # offline pairs (DPO): no rollout batch
    has_, routes = needs, _NO_ROUTES
    if dep.routing_replay:
        has_, routes = needs | _REPLAY, _routes(g, task)
    layout = g.layouts[task.index]
    lengths = g.lengths(task)
    prompt = g._int_at(task.invocation.prompt, g.longest(task))
    train = task.kind is Kind.TRAIN
    # the lengths are the query's for the task's sequence count (``GroupSizes.lengths``);
    # the routes (a frozen dataclass, hashed in Python) only under routing replay, else None
    key = ("rollout buffers", dep.framework, train, prompt, len(lengths), layout.dp,
           layout.micro_batch, g.gpus, has_, routes if dep.routing_replay else None)  # fmt: skip
    out: RolloutBuffers = per_query(g.s, key, lambda: rollout_buffer_bytes(
        dep.framework, train, prompt, lengths, layout.dp, layout.micro_batch, g.gpus, has_,
        routes))  # fmt: skip
    return out


@per_object()
def batch_needs(tasks: tuple[Task, ...]) -> tuple[bool, frozenset[Needs]]:
    """Whether any of the placement's ``tasks`` generates, and the batch's tensors their
    roles need (a reference's log-probs, a critic's values); kept per task tuple."""
    roles = {t.role for t in tasks}
    return (any(t.kind is Kind.GENERATE for t in tasks),
            frozenset(need for role, need in ((Role.REFERENCE, Needs.REFERENCE),
                                              (Role.CRITIC, Needs.CRITIC)) if role in roles))


def _routes(g: GroupTasks, task: Task) -> Routes:
    """The routed-expert ids per token that routing replay keeps for the actor
    (:class:`~rlmcost.deployment.buffers.Routes`); SpecError for a dense actor, or a
    framework whose routing-replay buffers are not tabled."""
    dep = g.s.deployment
    fw = FRAMEWORK_BUFFERS.get(dep.framework or "")
    if fw is None or not any(t.needs is Needs.ROUTING_REPLAY for t in fw.tensors):
        tabled = ", ".join(k for k, v in FRAMEWORK_BUFFERS.items()
                           if any(t.needs is Needs.ROUTING_REPLAY for t in v.tensors))
        raise SpecError(
            f"--routing-replay: the routed experts' buffers are known for {tabled}, not "
            f"for --framework {dep.framework or 'none'}; use one of those or drop "
            "--routing-replay"
        )  # fmt: skip
    actor = g.s.arch(Role.ACTOR)
    if not actor.is_moe:
        raise SpecError(
            f"--routing-replay keeps an MoE actor's routed experts; "
            f"{g.s.specs[Role.ACTOR].name} is dense: drop --routing-replay"
        )
    k, moe = int(actor.top_k), int(actor.n_moe_layers)
    stage = -(-moe // g.layouts[task.index].pp)
    return Routes(int(actor.n_layers) * k, stage * k, moe * k,
                  expert_id_bytes(int(actor.n_experts)))  # fmt: skip
