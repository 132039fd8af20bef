"""The dtypes and cache layout one task of a device group runs with (its :class:`Workload`):
a training task's stored parameter dtype, an engine's weight dtype and what its cache holds
(:mod:`rlmcost.deployment.engine_kv`). Split from :mod:`rlmcost.placement.group_own` by
purpose."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.choices import Dtype
from rlmcost.deployment.engine_kv import keeps_window, state_dtype, swa_pool
from rlmcost.errors import SpecError
from rlmcost.frameworks.presets import behaviour
from rlmcost.memo import memoized
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.placement.breakdown_ops import with_terms
from rlmcost.placement.device_groups import Task
from rlmcost.placement.inputs import Setup, engine_for
from rlmcost.specs.workload import Workload

if TYPE_CHECKING:
    from rlmcost.placement.group_own import GroupTasks


@memoized()
def _with(wl: Workload, **update: Any) -> Workload:
    """``wl.model_copy(update=update)``, kept per workload and update."""
    return wl.model_copy(update=update)


def task_workload(setup: Setup, group: str, task: Task, stored: Dtype | None,
                  grads: Dtype | None = None) -> Workload:  # fmt: skip
    """The workload ``task`` runs with on group ``group``
    (:meth:`~rlmcost.placement.group_own.GroupTasks.workload`): generation in its engine's weight
    dtype (an FP8 engine its embedding, head, norms and routers in the model's 16-bit one:
    ``unquantized_dtype``), keys and values in its KV-cache dtype, the Gated DeltaNet state in
    the engine's dtype, the conv state in the model's and sliding layers at their window where
    the engine keeps them so; training with its parameters stored in ``stored`` (the trainer's
    ``param_dtype``; None: the workload's) and its gradients in ``grads`` (Megatron-core's fp32
    buffer, :mod:`rlmcost.placement.grad_buffer`; None: the stored dtype); the paper's idealized
    iteration and every other task the query's workload (a forward multiplies and streams the
    weight dtype; where a frozen model rests wider: :func:`with_stored_teacher`)."""
    wl = setup.workload
    if setup.deployment.ideal:
        return wl
    if task.kind is Kind.GENERATE:
        engine = engine_for(setup, group)
        dtype = engine.dtype or wl.weight_dtype
        update: dict[str, Any] = {}
        if dtype != wl.weight_dtype:
            update.update(weight_dtype=dtype, compute_dtype=dtype)
        if dtype is Dtype.FP8 and wl.weight_dtype.bytes == 2:  # its 16-bit parts (breakdown)
            update["unquantized_dtype"] = wl.weight_dtype
        if engine.weight_format is not None:  # 4-bit parts (parallel.packed_weights)
            if engine.weight_parts == "experts" and not setup.arch(task.role).is_moe:
                raise SpecError(f"--rollout-weights {engine.weight_format}:experts: "
                                f"{setup.specs[task.role].name} has no routed experts; give "
                                ":mlp or :linear")  # fmt: skip
            update.update(packed_format=engine.weight_format, packed_parts=engine.weight_parts)
        # the engine's cache (engine_kv): keys and values in its KV-cache dtype, the Gated
        # DeltaNet state in its dtype (vLLM's "auto": the checkpoint's, FP8 weights or not)
        # and the conv state in the model's, sliding layers at their window
        arch = setup.arch(task.role)
        kv = engine.kv_cache_dtype or wl.kv_dtype
        if kv != wl.kv_dtype:
            update["kv_dtype"] = kv
            if arch.linear_layers:
                update["conv_dtype"] = wl.kv_dtype
        state = state_dtype(engine.kind, wl.weight_dtype, bool(arch.linear_mamba))
        if arch.linear_layers and state != kv:
            update["state_dtype"] = state
        if arch.has_window and keeps_window(engine.kind):
            update["kv_window"] = True
        elif arch.has_window and swa_pool(engine.kind, setup.specs[task.role].model_type):
            update["kv_swa_pool"] = True  # SGLang's hybrid SWA pool
        return _with(wl, **update) if update else wl
    if task.kind is not Kind.TRAIN:
        return wl
    update = {"param_dtype": stored} if stored is not None else {}
    if grads is not None and grads != (stored or wl.stored_dtype):
        update["grad_dtype"] = grads
    return _with(wl, **update) if update else wl


def with_stored_teacher(g: GroupTasks, task: Task, per_stage: list[MemoryBreakdown]
                        ) -> list[MemoryBreakdown]:  # fmt: skip
    """``per_stage`` (a task's bytes per pipeline stage) with a teacher's resident weights in
    its trainer's stored dtype where the framework runs the teacher in a policy worker of its
    own beside the trainer (``Behaviour.teacher_policy_stored``: NeMo RL's distillation.py
    ``Policy(..., init_optimizer=False)``, whose DTensor worker loads every model in fp32,
    nemo_rl/models/automodel/setup.py ``torch_dtype=torch.float32`` @7ea279abf): fp32 shards
    on the device while it runs and on the host between (the offload reads these bytes); the
    forward still gathers, multiplies and streams bf16 units (FSDP2's ``param_dtype``), so
    nothing else moves. A teacher on GPUs of its own (NeMo RL's MOPD: Megatron-core in bf16),
    a Megatron-core student (bf16 ``Float16Module``) and every other task: unchanged."""
    if task.role is not Role.TEACHER or task.kind is not Kind.FORWARD or g.s.deployment.ideal:
        return per_stage
    stored, wl = g.train_layout().param_dtype, g.s.workload
    beh = behaviour(g.s.deployment.framework)
    if stored is None or stored.bytes <= wl.weight_dtype.bytes or beh is None or \
            not beh.teacher_policy_stored or not any(t.kind is Kind.TRAIN for t in g.tasks):
        return per_stage  # fmt: skip
    return [with_terms(m, weights=m.weights * stored.bytes // wl.weight_dtype.bytes)
            for m in per_stage]  # fmt: skip
