"""What a trainer gathers when it refits a colocated engine under LoRA, and what that adds to
the generation stage's peak (``LoraSpec.gather``).

verl's FSDP hybrid worker (verl/workers/fsdp_workers.py ``rollout_mode`` @b178a3cd) loads its
parameter shard back to the GPU (``load_fsdp_model_to_gpu`` under ``param_offload``), collects
the weights to send (verl/utils/fsdp_utils.py ``collect_lora_params``), and only then wakes the
engine's weights (``rollout.resume(tags=["weights"])``) and, after the sync, its KV cache. With
LoRA the collection is:

* ``model``: ``FSDP.summon_full_params(module, writeback=False)`` around the whole model, so
  every trainer GPU holds all the model's parameters unsharded, in their stored dtype (FSDP1
  summons full precision under mixed precision: fp32 where verl stores the actor in fp32),
  beside its own shard, while the engine sleeps. This is FSDP1's path (``actor.strategy: fsdp``,
  verl's default); verl's docs (docs/advance/ppo_lora.rst) recommend ``layered_summon`` for
  large models or small GPUs to lower this peak.
* ``layers`` (``rollout.layered_summon=True``): the same, one FSDP unit at a time
  (``layered_summon_lora_params``): the largest unit, a layer or the embedding, at once.
* ``adapters``: only the adapters' tensors are gathered (FSDP2, ``strategy: fsdp2``: FSDP1's
  ``summon_full_params`` finds no FSDP1 unit to unshard, and ``get_peft_model_state_dict``
  returns the LoRA DTensors, each ``full_tensor()`` on its own; other frameworks): nothing
  priced.

TRL (trl/generation/vllm_generation.py ``sync_weights`` @f2cd5771) gathers a PEFT model whole
under DeepSpeed ZeRO-3 (``gather_params(list(model.parameters()))``: "we must gather the full
model at once before merging") after waking the colocated engine's weights
(``wake_up(tags=["weights"])``) and before its KV cache (``generate``): ``model``; under FSDP1
module by module (``_sync_fsdp1_params_to_vllm``, ``summon_full_params(recurse=False)``):
``layers``; FSDP2 one tensor at a time (its refit buffer).

rlmcost prices the gather's bytes under ZeRO-3 (below it every GPU holds whole parameters
already) on a group that trains the model it generates with (the colocated engine), at the
moment above: what stays on the device through generation, plus the parameter shard loaded
back where it waits in host memory between phases, plus the gathered bytes, less the sleeping
engine (verl: its weights and pool; TRL: its pool, the weights woken first). The gather's time
(an all-gather of those bytes inside the node, about 0.15 s for a 14B model's fp32 parameters
on two H100) is not priced. A trainer whose engine runs on other GPUs (TRL's server mode)
gathers after its update: its states, the other models beside it and the gathered bytes, a
peak of the training job where that is more (:func:`apart_extra`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import Kind
from rlmcost.compiled.blocks import params
from rlmcost.deployment.kinds import LoraGather
from rlmcost.parallel.breakdown import stage_params
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.shard import stages

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment
    from rlmcost.parallel.breakdown import MemoryBreakdown
    from rlmcost.placement.device_groups import Task

DEFAULTS = {"verl": LoraGather.MODEL, "trl": LoraGather.MODEL}
"""A framework's gather where ``LoraSpec.gather`` is not given: verl's default worker is FSDP1
(``actor.strategy: fsdp``) without ``rollout.layered_summon`` (verl/trainer/config/
ppo_trainer.yaml @b178a3cd); TRL's ZeRO-3 is DeepSpeed's; every other framework:
``adapters``."""

WEIGHTS_FIRST = frozenset({"trl"})
"""Frameworks that wake a sleeping engine's weights before they gather (module docstring)."""

GATHERS_APART = frozenset({"trl"})
"""Frameworks that gather the same way for engines on other GPUs: TRL's ``sync_weights`` runs
the gather on every training process in server mode too, rank 0 then pushing each merged
tensor to the server (``vllm_client.update_named_param``)."""


def lora_gather(dep: Deployment) -> LoraGather:
    """The gather of ``dep``'s LoRA refit: given, else the framework's (:data:`DEFAULTS`);
    ``adapters`` without LoRA and in the paper's ideal run."""
    if dep.lora is None or dep.ideal:
        return LoraGather.ADAPTERS
    if dep.lora.gather is not None:
        return dep.lora.gather
    return DEFAULTS.get(str(dep.framework or "").lower(), LoraGather.ADAPTERS)


def gathered_bytes(g: Any, task: Task) -> int:
    """Bytes per device the LoRA refit of ``task``'s model (its generation, or its update where
    the engines are apart) gathers on group ``g`` (a ``GroupMemory``; module docstring): 0 but
    where the group trains the model at ZeRO-3; the whole model's parameters or its largest
    FSDP unit's, in the trainer's stored dtype."""
    how = lora_gather(g.s.deployment)
    if how is LoraGather.ADAPTERS:
        return 0
    train = g.trains_here(task.role)
    if train is None or g.layouts[train.index].zero is not ZeroStage.OS_G_P:
        return 0  # below ZeRO-3 the parameters are whole on every GPU already
    arch = g.s.arch(task.role)
    width = g.workload(train).stored_dtype.bytes
    if how is LoraGather.MODEL:
        return int(params(arch)) * width
    whole = Layout()  # one rank holding every layer: its largest unit is the layered gather's
    return stage_params(arch, whole, stages(arch, whole)[0]).largest_unit * width


def gather_extra(g: Any, task: Task, own: MemoryBreakdown) -> int:
    """What the gather adds to the generation peak (``own``: the engine's own bytes): the
    gathered bytes and the parameter shard loaded back for them, less the sleeping engine's
    parts not yet woken; 0 where nothing is gathered or that is not more."""
    gathered = gathered_bytes(g, task)
    if not gathered:
        return 0
    away = g.phase_offloaded(task.role, task)
    loaded = away[0] if away is not None else 0
    asleep = own.total if g.engine.sleep else 0
    if asleep and str(g.s.deployment.framework or "").lower() in WEIGHTS_FIRST:
        asleep -= g.engine_weights
    return max(0, loaded + gathered - asleep)


def apart_extra(g: Any, task: Task, peak: int) -> int:
    """What a gather for engines on other GPUs adds to the peak of ``peak`` bytes per device of
    training ``task`` on group ``g`` (a framework of :data:`GATHERS_APART`, the model generated
    on no GPU of ``g``): after the update, the model's states (as ``GroupMemory.states``) and
    the other models' beside it (the same task's), plus the gathered bytes; 0 for any other
    task, or where that is not more."""
    if task.kind is not Kind.TRAIN or str(g.s.deployment.framework or "").lower() not in \
            GATHERS_APART:
        return 0
    generated = [t for t in g.s.tasks if t.kind is Kind.GENERATE and t.role is task.role]
    if not generated or any(t.group == g.group.name for t in generated):
        return 0  # nothing to refit, or the generation peak holds it (gather_extra)
    gathered = gathered_bytes(g, task)
    if not gathered:
        return 0
    rest = g._beside(task)[2]
    return max(0, sum(g.states(task.role)) + rest[0] + rest[1] + rest[2] + gathered - peak)

