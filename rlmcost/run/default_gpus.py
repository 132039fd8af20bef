"""The GPUs a co-located query runs on when it names none: whole trainer and engine
replicas (:func:`engine_filled_gpus`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.run.spec import Run


def engine_filled_gpus(run: Run) -> tuple[int | None, str | None]:
    """The GPUs of a co-located Run that names neither ``cluster.gpus`` nor ``cluster.dp``
    (nor a placement, groups or ``tp_per_model``), and the note that says so: None (the
    trainer's layout, tp*pp*cp GPUs) unless the engine's replica, its own TP times its PP (a
    Megatron engine's: times the trainer's PP), does not divide that; then their least
    common multiple, the fewest GPUs that hold whole trainer and engine replicas (data
    parallelism fills the rest), as a framework needs: verl builds its rollout mesh only
    when the world size is a multiple of the replica (verl/workers/fsdp_workers.py
    @b178a3cd: ``assert self.world_size % infer_world_size == 0``, infer_world_size =
    rollout TP x DP x PP), so ``--framework verl`` (rollout TP 2) runs on 2 GPUs, not 1. An
    offline algorithm (no generation) and the idealized iteration keep the trainer's."""
    from math import lcm

    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.deployment.kinds import EngineKind

    c, d = run.cluster, run.deployment
    if c.gpus is not None or c.dp is not None or run.grouped or run.tp_per_model or d.ideal:
        return None, None
    e, t = d.engine, d.train
    if e.tp is None:
        return None, None
    alg = get_algorithm(run.algorithm.name)
    if alg.offline or not any(i.kind is Kind.GENERATE for i in alg.invocations):
        return None, None
    replica = e.tp * (t.pp if e.kind is EngineKind.MEGATRON else e.pp)
    trainer = t.tp * t.pp * t.cp
    if trainer % replica == 0:
        return None, None
    gpus = lcm(trainer, replica)
    return gpus, (f"GPUs not given: {gpus}, the fewest that hold whole replicas of both the "
                  f"trainer (tp*pp*cp = {trainer}) and the engine ({replica} GPUs: rollout "
                  f"TP {e.tp}); give --gpus to choose")  # fmt: skip
