"""AReaL v0.3's trainer (realhf, ``--trainer-kernels realhf``) as a group's jobs meet it: its
training steps and log-prob forwards run no faster than the rate its authors measured
(:mod:`rlmcost.perf.realhf_rate`); and how AReaL's generation-server manager loads its
engines (:func:`areal_server_lengths`). Split from :mod:`rlmcost.placement.group_jobs` by purpose,
as :mod:`rlmcost.placement.group_dschat` for DeepSpeed-Chat's."""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind
from rlmcost.perf.realhf_rate import REALHF_TRAIN_FACTOR, realhf_floor_s, realhf_forward_flops
from rlmcost.placement.admission import replica_lengths
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_cost import GroupModel
from rlmcost.placement.group_passes import packed_lengths
from rlmcost.placement.group_train import group_deployment
from rlmcost.placement.pass_options import realhf_kernels


def realhf_task_floor_s(g: GroupModel, task: Task) -> float:
    """The whole task at realhf's measured rate (0 unless the deployment's trainer is realhf,
    :func:`~rlmcost.placement.pass_options.realhf_kernels`): its sequences' FLOPs as realhf
    counts them (a forward, or 4 forwards per epoch for a training task,
    :data:`~rlmcost.perf.realhf_rate.REALHF_TRAIN_FACTOR`) over the layout's GPUs. Dense
    models only: Figure 6a measured dense models, and realhf's count has no MoE terms."""
    dep = group_deployment(g.s.deployment, g.group.name)  # the group's trainer (group_train)
    if not realhf_kernels(dep) or task.kind not in (Kind.TRAIN, Kind.FORWARD):
        return 0.0
    if g.s.arch(task.role).is_moe:
        return 0.0
    flops = realhf_forward_flops(g.s.arch(task.role), packed_lengths(g, task))
    if task.kind is Kind.TRAIN:
        flops *= REALHF_TRAIN_FACTOR * g._int(task.invocation.passes)
    peak = g.s.hardware.peak(g.s.workload.compute_dtype)
    return realhf_floor_s(flops, g.layouts[task.index].n_gpus, peak)


def areal_server_lengths(g: GroupModel, responses: tuple[int, ...], replicas: int
                         ) -> tuple[int, ...]:  # fmt: skip
    """The response lengths of the most loaded generation replica, longest first: the rollout's
    stride share (:func:`~rlmcost.placement.rollout.replica_lengths`), but whole prompt groups
    on engines that AReaL's generation-server manager runs (``--refit disk``, its weight
    reload): ``realhf/system/gserver_manager.py`` ``schedule_request`` at inclusionAI/AReaL
    23df2682a sends a prompt's ``group_size`` samples to one server ("qid prompt (n samples)
    use the same dst server", ``partial_rollout.py`` ``poll_fresh_requests_task`` issues all
    K to that URL), choosing servers round robin over prompts (``schedule_policy``
    ``round_robin``, the default of ``AsyncRLOptions``), so a server holds ceil(B / R) whole
    groups of K, ceil(B / R) K samples, where the stride share holds ceil(B K / R). The
    lengths are spread evenly over the sorted ones from the longest
    (:func:`spread_lengths`)."""
    if g.s.deployment.ideal or g.engine.refit != "disk":
        return replica_lengths(responses, replicas)
    k = max(1, int(g.s.values["K"]))
    prompts = -(-len(responses) // k)
    return spread_lengths(responses, min(len(responses), -(-prompts // replicas) * k))


def spread_lengths(lengths: tuple[int, ...], count: int) -> tuple[int, ...]:
    """``count`` of ``lengths`` spread evenly over their sorted order, the longest first.

    >>> spread_lengths((1, 2, 3, 4, 5, 6, 7), 3)
    (7, 5, 3)
    >>> spread_lengths((1, 2, 3, 4), 4)
    (4, 3, 2, 1)
    """
    ordered, n = sorted(lengths), len(lengths)
    return tuple(ordered[n - 1 - i * n // count] for i in range(count))
