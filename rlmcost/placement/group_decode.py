"""What one generation replica's decode steps and prefills cost (:class:`~rlmcost.placement.
rollout.DecodeCost`) on its group: FLOPs per step at a context, prefill FLOPs of the prompt,
weight bytes read per step and KV bytes per cached token on a device, a ZeRO-3 gather's link
seconds, speculative decoding. Split from :mod:`rlmcost.placement.group_jobs` so the
multi-turn pricing (:mod:`rlmcost.placement.group_turns`) reads the same numbers."""

from __future__ import annotations

from rlmcost.arch import Arch
from rlmcost.choices import Head
from rlmcost.compiled.blocks import work_head_per_token, work_prefill
from rlmcost.compiled.memory import memory_per_rank
from rlmcost.deployment.engine_kv import read_workload
from rlmcost.parallel.breakdown import Mode
from rlmcost.parallel.layout import Layout
from rlmcost.perf.decode_kernels import dsa_bound_per_token
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_cost import GroupModel
from rlmcost.placement.rollout import DecodeCost, decode_flops
from rlmcost.placement.speculative import speculative_cost


def decode_cost(g: GroupModel, task: Task, arch: Arch, layout: Layout, prompt: int) -> DecodeCost:
    """The :class:`DecodeCost` of ``task``'s replicas (``layout.dp`` of them) at ``prompt``
    tokens: the KV bytes a step reads pass every pipeline stage too; DSA reads the indexers'
    keys alone; a shared actor-critic backbone adds its value head to every step."""
    replicas = layout.dp
    one_seq = memory_per_rank(
        arch, layout.one_stage(), Mode.GENERATE, replicas, g.seq_len(task),
        read_workload(g.engine.kind, arch, g.workload(task), g.s.deployment.ideal),
        task.invocation.model_head,
    )  # fmt: skip
    tokens = -(-g.seq_len(task) // layout.cp)
    f0, f1 = decode_flops(arch)
    if task.value_head:
        f0 += work_head_per_token(arch, Head.VALUE)
    cost = DecodeCost(
        f0=f0,
        f1=f1,
        prefill_flops=int(work_prefill(arch, prompt, 1, g.s.counting)),
        weight_bytes=float(g.weights_read(task)),
        kv_bytes_per_token=one_seq.kv_cache / tokens if arch.index_topk is None else
        dsa_bound_per_token(arch)[1] / layout.attention_dp,  # DSA: the indexers' keys alone
        gather_s=g.gather_s(task),
    )
    return speculative_cost(g, task, cost, prompt)

