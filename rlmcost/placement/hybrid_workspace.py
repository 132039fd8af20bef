"""The DeepSpeed-Inference workspace of a group whose generation runs on DeepSpeed-Chat's
Hybrid Engine (:mod:`rlmcost.frameworks.ds_hybrid`): what it adds to each invocation's bytes
per device.

The workspace is sized once by the first generate() call of ``batch`` sequences (each
rank's per-device generation batch, together over its inference TP group: hybrid_engine.py
all-gathers the inputs) at ``max_out_tokens`` positions (:func:`group_workspace`), outside
PyTorch's allocator, and stays allocated (``release_inference_cache`` off). Generation holds
all of it (its K, V part is the cache the decode steps read, counted by the KV-cache term at
the run's context, so only what the workspace holds beyond that is added); every other
invocation of the group runs beside the whole of it.

At inference TP > 1 the engine's generate() also gathers the decoder layers whole,
``gather_layers`` at a time (DeepSpeed-Chat ``--tp_gather_partition_size``), to copy each
rank's TP shard out of them (hybrid_engine.py ``generate`` at DeepSpeed 9408a86:
``GatheredParameters`` over each group of layers, then ``apply_tensor_parallelism``), while the
workspace kept from the previous generate() and the shards already copied are allocated: one
group of whole layers (at the weights' dtype) is added to generation's bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind
from rlmcost.compiled import blocks_gen
from rlmcost.compiled.arch import arch_numbers
from rlmcost.frameworks.ds_hybrid import (
    HYBRID_ENGINE_MAX_OUT_TOKENS,
    Workspace,
    inference_workspace,
)

if TYPE_CHECKING:
    from rlmcost.parallel.breakdown import MemoryBreakdown
    from rlmcost.placement.device_groups import Task
    from rlmcost.placement.group_memory import GroupMemory


def group_workspace(g: GroupMemory) -> Workspace | None:
    """The workspace on each device of ``g`` (None unless a deployed Hybrid Engine generates
    there): generate() calls of min(sequences per inference replica, ``max_num_seqs``)
    sequences, the engine's static batch (:func:`~rlmcost.placement.group_jobs._generate`),
    in the workload's KV dtype, at ``max_out_tokens`` positions: the prompt and response
    tokens, as DeepSpeed-Chat sets it (dschat/rlhf/rlhf_engine.py at DeepSpeedExamples HEAD:
    ``max_out_tokens=max_prompt_seq_len + max_answer_seq_len``), at least DeepSpeed's default
    512 (what the release, which did not set it, ran with)."""
    key = ("hybrid-workspace",)
    if key not in g.kept:
        g.kept[key] = None
        gen = next((t for t in g.tasks if t.kind is Kind.GENERATE), None)
        if gen is not None and not g.s.deployment.ideal and g.engine.kind.hybrid_engine:
            arch = g.s.arch(gen.role)
            layout = g.layouts[gen.index]
            per_replica = -(-g._int(gen.invocation.sequences) // layout.dp)
            batch = max(1, min(per_replica, g.engine.max_seqs))
            positions = max(HYBRID_ENGINE_MAX_OUT_TOKENS, g.seq_len(gen))
            g.kept[key] = inference_workspace(
                int(arch.n_layers), int(arch.d_model), int(arch.n_heads), batch, layout.tp,
                g.s.workload.kv_dtype.bytes, positions,
            )  # fmt: skip
    ws: Workspace | None = g.kept[key]
    return ws


def workspace_bytes(g: GroupMemory, task: Task, own: MemoryBreakdown) -> tuple[int, int]:
    """What the Hybrid Engine adds to ``task``'s bytes per device, as (the workspace,
    ``cudaMalloc``'d outside PyTorch's allocator; the gathered layers, PyTorch tensors): the
    workspace beyond the KV cache already counted while generating, all of it otherwise, and
    while generating one group of whole layers (module docstring); (0, 0) without one."""
    ws = group_workspace(g)
    if ws is None:
        return 0, 0
    if task.kind is Kind.GENERATE:
        beyond = ws.activations + ws.scores + max(0, ws.kv_cache - own.kv_cache)
        return beyond, gathered_layers_bytes(g, task)
    return ws.total, 0


def gathered_layers_bytes(g: GroupMemory, task: Task) -> int:
    """One group of ``gather_layers`` whole decoder layers of the generating model (module
    docstring; 0 at inference TP 1, where the engine gathers the whole model, already its
    weights): a dense (or MoE) layer's parameters (``params_layer_dense``, Table III's
    per-layer count, compiled), with their LoRA adapters under LoRA (hybrid_engine.py
    ``generate`` gathers ``layer_lora_params`` with the layer's weights), x the weights'
    bytes."""
    layout = g.layouts[task.index]
    if layout.tp == 1:
        return 0
    arch = g.s.arch(task.role)
    numbers = arch_numbers(arch)
    per_layer = int(blocks_gen.params_layer_moe(numbers) if arch.is_moe
                    else blocks_gen.params_layer_dense(numbers))  # fmt: skip
    layers = int(arch.n_layers)
    count = min(g.engine.gather_layers, layers)
    lora = 0
    if g.s.deployment.lora is not None and task.role in g.s.trained_roles:
        # the adapters of every layer on one rank of the TP x PP layout, times that layout's
        # ranks: the whole model's adapters, spread evenly over its layers
        whole = g.adapters(task) * layout.tp * layout.pp
        lora = -(-whole * count // layers)
    return (count * per_layer + lora) * g.s.workload.weight_dtype.bytes
