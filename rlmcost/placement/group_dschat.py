"""DeepSpeed's trainers beside their generation as a group's jobs meet them: DeepSpeed-Chat's
Hybrid Engine groups and frameworks that train with DeepSpeed on Hugging Face models (OpenRLHF);
their training-rate floor and DeepSpeed-Chat's exposed ZeRO-3 gathers
(:mod:`rlmcost.perf.deepspeed_chat`). Split from :mod:`rlmcost.placement.group_jobs` by purpose.
"""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind
from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.layout import Checkpointing
from rlmcost.perf.deepspeed_chat import (
    dschat_forward_flops,
    dschat_train_floor_s,
    dschat_train_flops,
)
from rlmcost.perf.rl_step import Packed
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_cost import GroupModel


def dschat_group(g: GroupModel) -> bool:
    """Whether the group is DeepSpeed-Chat's: its generation runs on the Hybrid Engine
    (``ds-hybrid``, pinned or not: generation on the training weights in the same group)."""
    if g.s.deployment.ideal or not g.engine.kind.hybrid_engine:
        return False
    return any(t.kind is Kind.GENERATE for t in g.tasks)


def dschat_floor_s(g: GroupModel, task: Task, per_step: Packed, micro_batches: int) -> float:
    """One DeepSpeed-Chat training step (0 outside a :func:`dschat_group` or a framework whose
    :class:`~rlmcost.frameworks.preset_model.Behaviour` is ``deepspeed_hf_trainer``): its FLOPs
    at the rate its blog measured (:mod:`rlmcost.perf.deepspeed_chat`), plus, in DeepSpeed-Chat,
    every ZeRO-3 parameter gather of its passes (forward, the checkpointed forward again,
    backward) exposed (:func:`dschat_gathers_s`; other frameworks keep DeepSpeed's prefetch)."""
    beh = None if g.s.deployment.ideal else behaviour(g.s.deployment.framework)
    if not dschat_group(g) and not (beh is not None and beh.deepspeed_hf_trainer):
        return 0.0
    layout = g.layouts[task.index]
    ckpt = layout.ckpt is not Checkpointing.NONE
    lora = g.s.deployment.lora
    flops = dschat_train_flops(
        g.s.arch(task.role), per_step.sequences, per_step.seq_len, ckpt,
        lora.rank if lora is not None else 0,
    )  # fmt: skip
    peak = g.s.hardware.peak(g.s.workload.compute_dtype)
    passes = 3 if ckpt else 2
    gathers = dschat_gathers_s(g, task, passes * micro_batches) if dschat_group(g) else 0.0
    return dschat_train_floor_s(flops, layout.n_gpus, peak) + gathers


def dschat_forward_floor_s(g: GroupModel, task: Task) -> float:
    """One DeepSpeed-Chat forward (reference, old log-probs, critic values, reward) of the
    task's whole batch, at the rate its blog measured (0 outside a :func:`dschat_group`):
    its FLOPs as DeepSpeed-Chat counts a forward (:func:`~rlmcost.perf.deepspeed_chat.
    dschat_forward_flops`) at DSCHAT_TRAIN_PEAK_FRACTION of the peak. The forwards run the
    same Hugging Face modules under the same ZeRO-3 engines as the training steps whose rate
    Figure 6 measured (ppo_trainer.py ``generate_experience`` at DeepSpeedExamples e468799f:
    ``self.train()`` after generating, which gives the actor back its Hugging Face forwards
    in place of the Hybrid Engine's inference containers, then ``self.actor_model(seq)``,
    ``self.ref_model(seq)``, ``self.reward_model.forward_value``, ``self.critic_model.
    forward_value``; rlhf_engine.py ``_init_ref``: a ZeRO-3 engine of its own), so the
    engine's overheads that keep training at that rate (module docstring of
    :mod:`rlmcost.perf.deepspeed_chat`) hold for them too. The forward of a model the group
    trains (the actor's old log-probs, the critic's values) runs on its training engine, whose
    ZeRO-3 config (ds_utils.py ``get_train_ds_config``: 3e7-element live and prefetch limits)
    leaves its gather exposed (:func:`dschat_gathers_s`, one pass); the reference's and the
    reward's engines take ``get_eval_ds_config`` (rlhf_engine.py ``_init_ref``,
    ``_init_reward``), DeepSpeed's defaults, which prefetch."""
    if not dschat_group(g):
        return 0.0
    layout = g.layouts[task.index]
    flops = dschat_forward_flops(g.s.arch(task.role), g.batch(task), g.seq_len(task))
    peak = g.s.hardware.peak(g.s.workload.compute_dtype)
    gathers = dschat_gathers_s(g, task, 1) if g.trains_here(task.role) is not None else 0.0
    return dschat_train_floor_s(flops, layout.n_gpus, peak) + gathers


def dschat_gathers_s(g: GroupModel, task: Task, passes: int) -> float:
    """``passes`` ZeRO-3 parameter gathers of a DeepSpeed-Chat model, none hidden behind
    compute: dschat/utils/ds_utils.py sets stage3_max_live_parameters and
    stage3_prefetch_bucket_size to 3e7 elements, and DeepSpeed prefetches at most
    min(max_live - available, bucket) elements ahead (deepspeed/runtime/zero/
    partitioned_param_coordinator.py fetch_sub_module), nothing while a larger weight (every
    FFN matrix from OPT-6.7B up) is live; so each module's gather waits in line."""
    return passes * g.gather_s(task)
