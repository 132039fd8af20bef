"""What a training or forward task's own numbers read of the group it runs on, beyond the
task in its final layout and the deployment's settings for that group: the key parts that let
groups of different membership share them (``group_key.role_key``, ``group_key.forward_key``).

The own bytes of a training or forward task (``GroupTasks.own``), a training job's numbers
(``group_jobs._train``: time, bound, bubble, prediction and parts) and a forward job's
(``group_jobs._forward``) read of their group, beside the task's layout, GPU count, own settings
(looked up by the group's name: ``Deployment.group``) and the run-wide inputs:

* the group's given layouts, ``[...]`` settings and accelerator (``DeviceGroup.layouts``,
  ``settings``, ``hardware``; :func:`unnamed_group`), not its name or members;
* of the group's other tasks (:func:`composition`) only: the tasks of the same model (a
  trainer's parameter round trips, one per phase of its model on the group less the forwards
  that carry their own, ``GroupOffload._train_param_trips``); whether the actor runs there
  (under LoRA the reference is the actor's base, ``GroupTasks.shares_base``) and whether it
  trains there (NeMo RL's reference swap waits for the actor's trainer,
  ``group_passes.reference_swap_s_of``); whether the task's own model trains there
  (DeepSpeed-Chat's gathers of a model trained on the group, ``group_dschat``); whether the
  group generates on DeepSpeed-Chat's Hybrid Engine (``group_dschat.dschat_group``: the one
  reader of whether a group generates, the engine's kind beside it).

Everything else of a group's membership (the other models' residents, the memory beside a
task, the start-up peak) is the group's and stays under ``group_key.group_key``.
"""

from __future__ import annotations

from typing import Any

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.placement.device_groups import DeviceGroup


def composition(g: Any, role: Role) -> tuple[Any, ...]:
    """What a task of model ``role`` reads of the other tasks on the group of model ``g`` (a
    ``GroupModel``; module docstring): the tasks of that model (their indices, which name
    the invocation in the query, and value heads), whether the actor runs on the group and
    whether it trains there, whether ``role`` trains there, whether the group generates on
    DeepSpeed-Chat's Hybrid Engine. Kept per group model and role."""
    key = ("composition", role)
    try:
        return g.kept[key]
    except KeyError:
        tasks = g.tasks
        out = g.kept[key] = (
            tuple((t.index, t.value_head) for t in tasks if t.role is role),
            any(t.role is Role.ACTOR for t in tasks),
            g.trains_here(Role.ACTOR) is not None,
            g.trains_here(role) is not None,
            # group_dschat.dschat_group (not imported: it imports the group model)
            not g.s.deployment.ideal and g.engine.kind.hybrid_engine
            and any(t.kind is Kind.GENERATE for t in tasks),
        )  # fmt: skip
        return out


def unnamed_group(group: DeviceGroup) -> tuple[Any, ...]:
    """The group less its name and members (module docstring)."""
    return (group.gpus, group.layouts, group.settings, group.hardware)


def unnamed_settings(own: Any) -> Any:
    """A group's own settings as ``group_key`` keys them (``Deployment.group``, alone or with
    the fields it gives) less the group's ``members``: the name it is looked up by, which no
    number reads (module docstring); the other fields' values in order."""
    if own is None:
        return None
    if isinstance(own, tuple):  # (settings, given fields)
        return (unnamed_settings(own[0]), own[1])
    return tuple(v for k, v in own.__dict__.items() if k != "members")
