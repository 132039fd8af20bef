"""A device group's generation engine as its memory sees it: which task the engine runs, its
spec and ``gpu_memory_utilization``, its reservation, its weights and what its refit adds to
the generation peak: :class:`GroupEngine`, a base of
:class:`~rlmcost.placement.group_memory.GroupMemory`. Split from
:mod:`rlmcost.placement.group_memory` by purpose."""

from __future__ import annotations

from typing import Any

from rlmcost.algorithms.kinds import Kind
from rlmcost.compiled.blocks import params
from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.megatron_engine import kv_buffer_bytes
from rlmcost.deployment.spec import ENGINE_COLOCATED_FRACTION, ENGINE_DEDICATED_FRACTION, EngineSpec
from rlmcost.deployment.terms import refit_buffer_bytes, reservation_bytes
from rlmcost.memo import kept_property
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_offload import GroupOffload
from rlmcost.placement.inputs import device_capacity_bytes, engine_for
from rlmcost.placement.lora_gather import apart_extra, gather_extra


class GroupEngine(GroupOffload):
    """A group's generation engine: its task, spec, reservation, weights and refit buffer."""

    @kept_property
    def engine_task(self) -> Task | None:
        """The group's generation task, run by an inference engine when deployed."""
        if self.s.deployment.ideal or self.engine.kind.static:
            return None  # generation on the training weights: no engine of its own
        return next((t for t in self.tasks if t.kind is Kind.GENERATE), None)

    @kept_property
    def engine(self) -> EngineSpec:
        return engine_for(self.s, self.group.name)

    @kept_property
    def engine_fraction(self) -> float:
        """``gpu_memory_utilization``: given, else the default for where the engine runs; an
        SGLang engine on GPUs of its own takes SGLang's own ``mem_fraction_static``
        (:func:`~rlmcost.deployment.sglang_fraction.engine_sglang_fraction`)."""
        given = self.engine.gpu_memory_utilization
        if given is not None:
            return given
        if any(t.kind is Kind.TRAIN for t in self.tasks):
            return ENGINE_COLOCATED_FRACTION
        task = self.engine_task
        if self.engine.kind is EngineKind.SGLANG and task is not None:
            from rlmcost.deployment.sglang_fraction import engine_sglang_fraction

            layout = self.layouts[task.index]
            return engine_sglang_fraction(self.engine, self.s.capacity_bytes, layout.tp,
                                          layout.pp)  # fmt: skip
        return ENGINE_DEDICATED_FRACTION

    @kept_property
    def reservation(self) -> int:
        """The engine's bytes per device beside the trainer when it does not sleep: vLLM's
        ``gpu_memory_utilization`` of the device; Megatron-core's KV pool of
        ``buffer_size_gb`` (:mod:`rlmcost.deployment.megatron_engine`: it serves the trainer's
        weights, or offloads its own inference copy while the trainer runs)."""
        if self.engine.kind is EngineKind.MEGATRON:
            return kv_buffer_bytes(self.engine.kv_buffer_gib)
        return reservation_bytes(self.engine_fraction, self.s.capacity_bytes)

    @kept_property
    def sglang_gpus(self) -> int:
        """The GPUs of one replica of the group's SGLang engine (TP x PP: the process group
        ``init_torch_distributed`` sets up); 0 where the group runs no SGLang engine. Its
        communicators are the device's (:func:`~rlmcost.deployment.terms.communicator_bytes`)
        and what SGLang's pool leaves out (:mod:`rlmcost.placement.engine_budget`)."""
        task = self.engine_task
        if task is None or self.engine.kind is not EngineKind.SGLANG:
            return 0
        layout = self.layouts[task.index]
        return layout.tp * layout.pp

    @kept_property
    def engine_weights(self) -> int:
        """The engine's own weights per device: none for a Megatron engine that serves the
        trainer's weights in their layout (:mod:`rlmcost.deployment.megatron_engine`)."""
        task = self.engine_task
        if task is None or self.serves_trainer_weights(task):
            return 0
        return self.own(task, self.replicas(task)).weights

    @kept_property
    def engine_parked(self) -> int:
        """The engine's bytes per device in host memory while the group's other tasks run: a
        sleeping engine's weights (vLLM sleep level 1); a Megatron engine's dedicated inference
        copy, which it always backs to host memory (megatron_worker.py
        ``_offload_inference_model``), and under offload mode (``sleep``) its KV pool
        (:mod:`rlmcost.placement.megatron_suspend`)."""
        if self.engine.kind is EngineKind.MEGATRON:
            return self.engine_weights + (self.reservation if self.engine.sleep else 0)
        return self.engine_weights if self.engine.sleep else 0

    def serves_trainer_weights(self, task: Task) -> bool:
        """``task`` generates on a Megatron engine from the weights its model trains with
        here, in the same layout (NeMo RL's ``_gen_model``: the training model itself)."""
        if self.engine.kind is not EngineKind.MEGATRON:
            return False
        train = next((t for t in self.tasks if t.role is task.role and t.kind is Kind.TRAIN),
                     None)  # fmt: skip
        return train is not None and self.same_model(task, train)

    def same_model(self, task: Task, train: Task) -> bool:
        """``task`` runs the model ``train`` trains in its layout: the same layout but for its
        micro-batch and recomputation, which are how a pass runs, not a second model (the
        old log-prob forward runs in the training module with its own micro-batch: NeMo RL
        ``get_logprobs`` in dtensor_policy_worker_v2.py, verl ``compute_log_prob`` on the
        actor's FSDP module, OpenRLHF's and slime's actor the same); or, for a Megatron
        engine's generation, the same parallel degrees (NeMo RL
        ``dedicated_inference_megatron_cfg`` compares TP, PP, EP, expert TP and CP)."""
        a, b = self.layouts[task.index], self.layouts[train.index]
        if task.kind is Kind.GENERATE and self.engine.kind is EngineKind.MEGATRON:
            return all(getattr(a, k) == getattr(b, k)
                       for k in ("dp", "tp", "pp", "cp", "ep", "expert_tp"))  # fmt: skip
        return a == b or a.with_(micro_batch=b.micro_batch, ckpt=b.ckpt) == b

    def refit_extra(self, task: Task, own: MemoryBreakdown, generating: int) -> int:
        """What the engine's refit adds to its generation peak of ``generating`` bytes per
        device (its ``buffers`` term): the weights in
        flight (:func:`~rlmcost.deployment.terms.refit_buffer_bytes`, per the framework) sit
        beside the whole reservation when the engine stays awake (a separate server:
        TRL ``vllm_mode=server``, OpenRLHF without ``--vllm_enable_sleep``); a sleeping
        engine is refitted with its weights woken and its KV pool not yet allocated (vLLM
        ``wake_up(tags=["weights"])`` before ``tags=["kv_cache"]``: verl's sharding manager,
        NeMo RL ``prepare_for_generation``), so the buffer raises the peak only past the
        pool and workspace it precedes. A Megatron engine is not refitted (it serves the
        trainer's weights, or reshards on the same ranks: :mod:`rlmcost.deployment.
        megatron_engine`): nothing. Under LoRA a colocated trainer may first gather its
        weights, before the engine wakes (:mod:`rlmcost.placement.lora_gather`): the larger of
        the two. Any other task: what a gather for engines on other GPUs adds to its peak
        (:func:`~rlmcost.placement.lora_gather.apart_extra`; 0 for most)."""
        if task is not self.engine_task:
            return apart_extra(self, task, generating)
        if self.engine.kind is EngineKind.MEGATRON:
            return 0
        gather = gather_extra(self, task, own)
        arch = self.s.arch(task.role)
        d, w = int(arch.d_model), self.s.workload.weight_dtype.bytes
        widths = (int(arch.vocab), int(arch.d_ff), int(arch.q_width), int(arch.d_expert))
        largest = d * max(widths) * w
        pooled = own.total - own.weights  # KV pool and workspace
        before = generating if not self.engine.sleep else generating - pooled
        free = self.s.capacity_bytes - before
        refit = refit_buffer_bytes(
            self.s.deployment.framework, largest, params(arch) * w, free
        )
        return max(gather, refit if not self.engine.sleep else max(0, refit - pooled))

    def replicas(self, task: Task) -> int:
        layout = self.layouts[task.index]
        return layout.dp


def sglang_default(e: Any, g: Any) -> float | None:
    """SGLang's own ``mem_fraction_static`` for group ``g`` of estimate ``e`` where its engine
    is SGLang on GPUs of its own (:func:`rlmcost.deployment.sglang_fraction.
    engine_sglang_fraction`, as :attr:`GroupEngine.engine_fraction` takes it); else None."""
    from rlmcost.deployment.group_engine import group_engine
    from rlmcost.deployment.sglang_fraction import engine_sglang_fraction

    dep = e.deployment
    if dep.ideal or any(j.task.kind is Kind.TRAIN for j in g.jobs):
        return None
    gen = next((j.layout for j in g.jobs if j.task.kind is Kind.GENERATE), None)
    own = dep.group(g.name)
    eng = dep.engine if own is None or own.engine is None else group_engine(dep, g.name)
    if gen is None or eng.kind is not EngineKind.SGLANG:
        return None
    hw = e.group_hardware.get(g.name, e.hardware)
    return engine_sglang_fraction(eng, device_capacity_bytes(hw, False), gen.tp, gen.pp)
