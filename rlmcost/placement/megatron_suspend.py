"""What a Megatron-core engine moves over the host link when it stands down for training and
wakes after it (:mod:`rlmcost.deployment.megatron_engine`), on a group that also trains.

NeMo RL at 7ea279abf, nemo_rl/models/generation/megatron/megatron_worker.py:
``finish_generation(release_gpu=True)`` suspends the engine (``suspend_engines``) and, with a
dedicated inference layout, backs its weights to host memory (``_offload_inference_model``:
``torch_memory_saver.pause`` of a region made with ``enable_cpu_backup=True``,
nemo_rl/models/megatron/memory_saver.py); ``prepare_for_generation`` restores them
(``_onload_inference_model``) before resharding into them. The KV pool stays on the GPU under
``kv_cache_management_mode: persist`` (NeMo RL's default) and goes to host memory and back
under ``offload`` (Megatron-core ``KVCacheManagementMode.OFFLOAD``: "Offload large tensors to
CPU during deallocation; onload during allocation"; rlmcost's ``sleep``). An engine that serves
the trainer's own weights with a persisting pool moves nothing: no transfer. The training
model's own offload while a dedicated copy generates is the trainer's between-phases offload
(``params-idle``), priced with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.placement.jobs import Transfer

if TYPE_CHECKING:
    from rlmcost.placement.device_groups import Task
    from rlmcost.placement.group_cost import GroupModel


def megatron_suspend(g: GroupModel, engine: Task) -> list[Transfer]:
    """The engine's suspend/resume copies per iteration on group ``g`` (module docstring):
    its own weights (a dedicated inference layout) and, under ``sleep`` (offload mode), its
    KV pool, each to host memory and back; none when nothing moves or the group only
    generates."""
    if len(g.tasks) < 2 or g.s.deployment.ideal:
        return []
    weights = g.engine_weights
    pool = g.reservation if g.engine.sleep else 0
    moved = 2 * (weights + pool)
    if not moved:
        return []
    what = " and ".join(w for w, n in (("its inference weights", weights),
                                       ("its KV pool", pool)) if n)  # fmt: skip
    return [Transfer(
        "offload", f"engine suspend/resume: {engine.role} {what} to host and back",
        g.group.name, moved * g.gpus, moved, moved / g.s.host_bytes_per_s, engine.stage,
        engine.index, phase_name="engine sleep/wake", unit=f"engine suspend/resume: {engine.role}",
    )]  # fmt: skip
