"""The DeepSpeed-Inference workspace of a group whose generation runs on DeepSpeed-Chat's
Hybrid Engine (:mod:`rlmcost.frameworks.ds_hybrid`): what it adds to each invocation's bytes
per device.

The workspace is sized once by the first generate() call of ``batch`` sequences (each
rank's per-device generation batch, together over its inference TP group: hybrid_engine.py
all-gathers the inputs) at 512 positions, outside PyTorch's allocator, and stays allocated
(``release_inference_cache`` off). Generation holds all of it (its K, V part is the cache the
decode steps read, counted by the KV-cache term at the run's context, so only what the
workspace holds beyond that is added); every other invocation of the group runs beside the
whole of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind
from rlmcost.frameworks.ds_hybrid import Workspace, inference_workspace

if TYPE_CHECKING:
    from rlmcost.parallel.breakdown import MemoryBreakdown
    from rlmcost.placement.device_groups import Task
    from rlmcost.placement.group_memory import GroupMemory


def group_workspace(g: GroupMemory) -> Workspace | None:
    """The workspace on each device of ``g`` (None unless a deployed Hybrid Engine generates
    there): generate() calls of min(sequences per inference replica, ``max_num_seqs``)
    sequences, the engine's static batch (:func:`~rlmcost.placement.group_jobs._generate`),
    in the workload's KV dtype."""
    key = ("hybrid-workspace",)
    if key not in g.kept:
        g.kept[key] = None
        gen = next((t for t in g.tasks if t.kind is Kind.GENERATE), None)
        if gen is not None and not g.s.deployment.ideal and g.engine.kind.hybrid_engine:
            arch = g.s.arch(gen.role)
            layout = g.layouts[gen.index]
            per_replica = -(-g._int(gen.invocation.sequences) // layout.dp)
            batch = max(1, min(per_replica, g.engine.max_num_seqs))
            g.kept[key] = inference_workspace(
                int(arch.n_layers), int(arch.d_model), int(arch.n_heads), batch, layout.tp,
                g.s.workload.kv_dtype.bytes,
            )  # fmt: skip
    ws: Workspace | None = g.kept[key]
    return ws


def workspace_bytes(g: GroupMemory, task: Task, own: MemoryBreakdown) -> int:
    """What the workspace adds to ``task``'s bytes per device: beyond the KV cache already
    counted while generating, all of it otherwise (module docstring); 0 without one."""
    ws = group_workspace(g)
    if ws is None:
        return 0
    if task.kind is Kind.GENERATE:
        return ws.activations + ws.scores + max(0, ws.kv_cache - own.kv_cache)
    return ws.total
