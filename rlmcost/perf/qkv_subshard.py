"""Megatron-core's QKV activation sub-sharding: a training TP above the KV heads.

Source: NVIDIA/Megatron-LM f7dfb99795 ("Support TP greater than num_kv_heads by supporting QKV
activation sub-sharding (#2565)"), the same at d98e8a64dd, megatron/core/transformer/
attention.py. When ``num_query_groups`` h_kv < P_t (P_t a multiple of h_kv):

* ``linear_qkv`` stays column-parallel over the whole fused width, so each rank's GEMM and
  weights are 1 / P_t of it, as always;
* ``get_query_key_value_tensors`` all-gathers ``mixed_qkv`` over the TP group along its last
  dimension (``all_gather_last_dim_from_tensor_parallel_region``), keeps its group's slice
  (h / h_kv query heads, one key and one value head) and then its own h / P_t query heads;
  the core attention is built as if ``num_query_groups`` were P_t (one KV head per rank);
* the gathered tensor is [s, b, (h + 2 h_kv) d_h] (with an output gate, ``attention_output_gate``:
  [s, b, (2 h + 2 h_kv) d_h], the gate's h d_h travelling with the queries), in the activation
  dtype, for every position the linear_qkv's output holds: all of the micro-batch's T tokens
  (under sequence parallelism the QKV input is all-gathered first, so its output is too);
* the autograd function ``_AllGatherFromTensorParallelRegion`` (megatron/core/tensor_parallel/
  mappings.py) saves nothing (``ctx.group`` only); its backward is
  ``_reduce_scatter_along_last_dim`` of the same [T, width] gradient.

So each softmax-attention layer adds, per micro-batch, one all-gather forward (again under
full recomputation, which reruns the forward) and one reduce-scatter backward over the P_t
ranks, of T (h + 2 h_kv) d_h x bytes each (``parallel.comm.qkv_gather_bytes``), exposed:
the attention core waits for it. A linear-attention layer (Gated DeltaNet) has no such gather
(``perf.linear_mixer`` removes it with the attention block it replaces).

Memory: nothing is saved for backward by the gather itself; the per-rank q (h / P_t heads), k
and v (one head each) that the attention core and the q/k norms keep are those of
``parallel.shard.tp_shard`` (one KV head per rank). The gathered [T, width] buffer is a
transient of the layer's forward, not priced. Deviation: ``tp_shard`` gives each rank whole
k and v projections (one head each) where Megatron-core splits the fused projection, so a
rank's QKV weights and GEMM are priced at (h / P_t + 2) d_h columns instead of
(h + 2 h_kv) d_h / P_t: for Qwen3.5-397B-A17B at TP 8 (h 32, h_kv 2, d_h 256, d 4096) 1.5 heads,
1.57 M parameters more per attention layer and rank.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.comm import Collective, qkv_gather_bytes

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass, StepContext

PART = "tp_qkv"
"""The exposed-communication part that holds the gather and its reduce-scatter
(``StepTime.exposed_comm_s``, a group's ``exposed_tp_qkv_s``)."""


def add_qkv_gather(c: StepContext, out: StagePass, sign: int = 1) -> None:
    """Adds (``sign`` -1: removes) one attention layer's gather forward and reduce-scatter
    backward for the micro-batch to ``out`` (module docstring)."""
    t = c.layout.tp
    payload = qkv_gather_bytes(c.arch, t, c.tokens, c.workload.activation_dtype.bytes)
    if not payload:
        return
    out.fwd[PART] += sign * c.comm(Collective.ALL_GATHER, payload, t, ("tp",))
    out.bwd[PART] += sign * c.comm(Collective.REDUCE_SCATTER, payload, t, ("tp",))
