"""AReaL v0.3's trainer (realhf, ``--trainer-kernels realhf``) as a group's jobs meet it: its
training steps and log-prob forwards run no faster than the rate its authors measured
(:mod:`rlmcost.perf.realhf_rate`). Split from :mod:`rlmcost.placement.group_jobs` by purpose,
as :mod:`rlmcost.placement.group_dschat` for DeepSpeed-Chat's."""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind
from rlmcost.perf.realhf_rate import REALHF_TRAIN_FACTOR, realhf_floor_s, realhf_forward_flops
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_cost import GroupModel
from rlmcost.placement.group_passes import packed_lengths
from rlmcost.placement.pass_options import realhf_kernels


def realhf_task_floor_s(g: GroupModel, task: Task) -> float:
    """The whole task at realhf's measured rate (0 unless the deployment's trainer is realhf,
    :func:`~rlmcost.placement.pass_options.realhf_kernels`): its sequences' FLOPs as realhf
    counts them (a forward, or 4 forwards per epoch for a training task,
    :data:`~rlmcost.perf.realhf_rate.REALHF_TRAIN_FACTOR`) over the layout's GPUs. Dense
    models only: Figure 6a measured dense models, and realhf's count has no MoE terms."""
    if not realhf_kernels(g.s.deployment) or task.kind not in (Kind.TRAIN, Kind.FORWARD):
        return 0.0
    if g.s.arch(task.role).is_moe:
        return 0.0
    flops = realhf_forward_flops(g.s.arch(task.role), packed_lengths(g, task))
    if task.kind is Kind.TRAIN:
        flops *= REALHF_TRAIN_FACTOR * g._int(task.invocation.passes)
    peak = g.s.hardware.peak(g.s.workload.compute_dtype)
    return realhf_floor_s(flops, g.layouts[task.index].n_gpus, peak)
