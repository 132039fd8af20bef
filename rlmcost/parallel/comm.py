"""Communication of one training iteration per rank: bytes per collective, link, time.

Volumes are the bytes each rank sends with bandwidth-optimal ring / pairwise algorithms
(Thakur et al. 2005; NCCL's bus-bandwidth convention), for a collective over n ranks on a
tensor of M bytes:

* all-reduce 2 (n - 1)/n M; all-gather and reduce-scatter (n - 1)/n M (M = the gathered
  tensor); all-to-all (n - 1)/n M (M = the rank's send buffer); point-to-point M.

What each strategy sends per iteration (n_mb micro-batches of b sequences, s = seq / P_c
positions each, activation bytes x, hidden d; "recompute" adds the forward's collectives again
under full checkpointing):

* TP (Shoeybi et al. 2019, §3): per layer and micro-batch, 2 all-reduces of the b s d
  activations forward (after attention and after the FFN) and 2 backward; the vocab-parallel
  embedding all-reduces its output (first stage) and the LM head its input gradient (last
  stage). With SP (Korthikanti et al. 2022, §4.2.2) every forward all-reduce becomes a
  reduce-scatter and every all-gather precedes a column-parallel product: forward 2 all-gather
  + 2 reduce-scatter, backward 2 reduce-scatter + 4 all-gather (Megatron-LM re-gathers the
  sharded inputs of the column-parallel products for their weight gradients).
* TP above the KV heads (Megatron-core's QKV sub-sharding, :mod:`rlmcost.perf.qkv_subshard`):
  per softmax-attention layer and micro-batch an all-gather of the QKV output (b s (h + 2 h_kv)
  d_h elements) forward and a reduce-scatter of its gradient backward.
* CP (ring attention, Liu et al. 2023; Megatron-LM's CP): per layer and micro-batch the rank's
  K and V block (b s 2 h_kv d_h / P_t elements) travels P_c - 1 hops forward, and K, V and
  their gradients P_c - 1 hops each backward.
* EP (GShard, Lepikhin et al. 2020): per MoE layer and micro-batch a dispatch and a combine
  all-to-all of the k copies of the rank's tokens (b s k d / P_t with SP) over the P_e ranks of
  its EP group, forward and backward; with an expert TP other than P_t (Megatron-core's
  ``MoEAlltoAllTokenDispatcher``), an all-gather of the dispatched tokens and a reduce-scatter
  of the outputs over the ETP group, and no TP pair around the MoE FFN.
* PP: per micro-batch and model chunk, the stage-boundary activations forward and their
  gradient backward (b s d, / P_t with SP), point-to-point.
* DP / ZeRO (Rajbhandari et al. 2020, §7): the gradients of the rank's parameters over the
  ranks that replicate them, in the weight dtype (the reduces in ``workload.grad_dtype``
  where the gradient buffer is wider: Megatron-core's fp32 ``grad_reduce_in_fp32``,
  :mod:`rlmcost.placement.grad_buffer`): the dense parameters over P_d P_c, the
  routed experts over the expert-DP group (``Layout.expert_dp``). ZeRO-0: one all-reduce
  per iteration; ZeRO-1: reduce-scatter and all-gather of the updated parameters, once; ZeRO-2: the
  reduce-scatter after every micro-batch (gradients live only as shards); ZeRO-3: per
  micro-batch an all-gather of the parameters for the forward, another for the backward, and
  a reduce-scatter of the gradients (1.5x the all-reduce volume per micro-batch). Hybrid
  sharding (``Layout.zero_shard``) runs these within the P_z ranks of a shard group and adds
  an all-reduce of the 1 / P_z gradient shard across the P_d P_c / P_z replicas (once under
  ZeRO-1, per micro-batch under ZeRO-2/3; :mod:`rlmcost.parallel.zero_groups`).

Links: ranks are numbered as Megatron-core numbers them (``parallel_state.RankGenerator``,
default order tp-cp-ep-dp-pp): the dense grid TP innermost, then CP, DP, PP; the expert grid
over the same ranks ETP innermost, then EP, expert DP, PP. A group whose members span at most
one node's GPUs uses the intra-node link
(NVLink), else the inter-node NIC, which then bounds the ring. Time = bytes / per-direction
bandwidth, with no overlap with compute or other collectives and no latency term: an upper
bound on exposed communication for large messages.

Suppressed: the scalar all-reduces of the vocab-parallel cross-entropy, MoE router
statistics, gradient-norm and loss all-reduces, and the optimizer's own traffic.
"""

from __future__ import annotations

from enum import StrEnum
from fractions import Fraction
from math import ceil, prod

from rlmcost.arch import Arch
from rlmcost.choices import Head
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import DataShare, data_share, stage_params
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.shard import PipelineStage, stages, tp_shard
from rlmcost.parallel.validate import check_layout, kv_subsharded
from rlmcost.parallel.zero_groups import zero_groups
from rlmcost.specs.hardware import HardwareSpec
from rlmcost.specs.workload import Workload


class Collective(StrEnum):
    ALL_REDUCE = "all-reduce"
    ALL_GATHER = "all-gather"
    REDUCE_SCATTER = "reduce-scatter"
    ALL_TO_ALL = "all-to-all"
    P2P = "p2p"


def bytes_sent_per_rank(kind: Collective, payload_bytes: int, ranks: int) -> Fraction:
    """Bytes one rank sends in one collective of ``payload_bytes`` over ``ranks`` ranks.

    >>> bytes_sent_per_rank(Collective.ALL_REDUCE, 1000, 8)
    Fraction(1750, 1)
    """
    if kind is Collective.P2P:
        return Fraction(payload_bytes)
    factor = 2 if kind is Collective.ALL_REDUCE else 1
    return Fraction(factor * (ranks - 1) * payload_bytes, ranks)


RANK_ORDER = ("tp", "cp", "dp", "pp")
"""The dense grid, innermost first (Megatron-core's ``tp-cp-ep-dp-pp`` with EP 1)."""

EXPERT_ORDER = ("etp", "ep", "edp", "pp")
"""The expert grid over the same ranks, innermost first (Megatron-core's expert
``RankGenerator``: tp = ETP, ep = EP, dp = expert DP, cp = 1, the same order)."""


ZERO_ORDER = ("tp", "zs", "zr", "pp")
"""The dense grid with its data ranks (CP inside DP, :data:`RANK_ORDER`) split for hybrid
sharding: ``zs`` the P_z consecutive ranks of a ZeRO shard group, ``zr`` its P_d P_c / P_z
replicas (``Layout.zero_group``; FSDP2's 2-D mesh (replicate, shard) puts the shard dim
innermost, verl ``create_device_mesh`` mesh (world / fsdp_size, fsdp_size))."""


def _order(dims: tuple[str, ...]) -> tuple[str, ...]:
    if set(dims) & {"etp", "ep", "edp"}:
        return EXPERT_ORDER
    return ZERO_ORDER if set(dims) & {"zs", "zr"} else RANK_ORDER


def _degree(layout: Layout, dim: str) -> int:
    if dim == "zs":
        return layout.zero_group
    if dim == "zr":
        return layout.zero_replicas
    if dim == "etp":
        return layout.expert_tp
    if dim == "edp":
        return layout.expert_dp
    return int(getattr(layout, dim))


def group_is_intra_node(layout: Layout, dims: tuple[str, ...], gpus_per_node: int) -> bool:
    """Whether the group over ``dims`` fits in one node: dense dims (e.g. ("dp", "cp")) of
    :data:`RANK_ORDER`, hybrid-shard dims (("zs",), ("zr",)) of :data:`ZERO_ORDER`, or
    expert dims (("ep",), ("edp",)) of :data:`EXPERT_ORDER`.

    The group's members are spread over the rank range spanned by its outermost dimension:
    the product of every degree up to and including it in its grid's order.
    """
    order = _order(dims)
    outer = max(order.index(x) for x in dims)
    span = prod(_degree(layout, x) for x in order[: outer + 1])
    return span <= gpus_per_node


def group_ranks_per_node(layout: Layout, dims: tuple[str, ...], gpus_per_node: int) -> int:
    """Members of the group over ``dims`` inside one node (``gpus_per_node`` consecutive
    ranks): per dimension, as many of its values as fit within a node at its stride (the
    product of the degrees inside it in its grid's order), at least one.

    >>> from rlmcost.parallel.layout import Layout
    >>> group_ranks_per_node(Layout(tp=8, dp=4), ("dp",), 8)  # TP fills the node
    1
    >>> group_ranks_per_node(Layout(dp=32, cp=2), ("dp", "cp"), 8)  # FSDP over 8 nodes
    8
    """
    order = _order(dims)
    count = 1
    for d in dims:
        stride = prod(_degree(layout, x) for x in order[: order.index(d)])
        count *= max(1, min(_degree(layout, d), gpus_per_node // stride))
    return max(1, min(count, gpus_per_node))


def group_ranks(layout: Layout, dims: tuple[str, ...]) -> int:
    """Ranks of the group over ``dims`` (a product of their degrees)."""
    return prod(_degree(layout, x) for x in dims)


@dataclass(frozen=True)
class Traffic:
    """One kind of communication of one strategy on one rank, per iteration."""

    strategy: str  # tp, sp, cp, ep, pp, dp
    collective: Collective
    ranks: int  # group size
    calls: int  # collectives per iteration
    payload_bytes: int  # M of one call
    bytes_per_rank: int  # sent by the rank over the iteration
    intra_node: bool
    bandwidth_bytes_per_s: int | None = None
    time_s: float | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "strategy": self.strategy,
            "collective": str(self.collective),
            "ranks": self.ranks,
            "calls": self.calls,
            "payload_bytes": self.payload_bytes,
            "bytes_per_rank": self.bytes_per_rank,
            "link": "intra-node" if self.intra_node else "inter-node",
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "time_s": self.time_s,
        }


def _traffic(
    strategy: str,
    kind: Collective,
    ranks: int,
    calls: int,
    payload: int,
    intra: bool,
    hw: HardwareSpec | None,
    per_node: int = 1,
) -> Traffic:
    """One row of the traffic table; across nodes a ring collective's bandwidth is that of the
    ``per_node`` NICs its group's ranks in a node cross on
    (:func:`rlmcost.perf.collectives.inter_node_bytes_per_s`), an all-to-all or a send one
    NIC's."""
    sent = ceil(calls * bytes_sent_per_rank(kind, payload, ranks))
    bw = time = None
    if hw is not None:
        if intra:
            bw = hw.intra_node_bandwidth_bytes_per_s
        else:
            nics = 1 if kind in (Collective.P2P, Collective.ALL_TO_ALL) else per_node
            bw = min(hw.inter_node_bandwidth_bytes_per_s * nics,
                     hw.intra_node_bandwidth_bytes_per_s)  # fmt: skip
        time = sent / bw
    return Traffic(strategy, kind, ranks, calls, payload, sent, intra, bw, time)


def _stage_traffic(
    arch: Arch,
    layout: Layout,
    stage: PipelineStage,
    share: DataShare,
    workload: Workload,
    hw: HardwareSpec | None,
    gpus_per_node: int,
) -> list[Traffic]:
    x = workload.activation_dtype.bytes
    d = int(arch.d_model)
    tokens = share.tokens_per_micro_batch
    n_mb = share.micro_batches
    fwd_passes = 2 if layout.ckpt is Checkpointing.FULL else 1  # forward + recompute
    act = tokens * d * x
    out: list[Traffic] = []

    def add(strategy: str, kind: Collective, ranks: int, calls: int, payload: int, dims) -> None:
        if ranks > 1 and calls > 0 and payload > 0:
            intra = group_is_intra_node(layout, dims, gpus_per_node)
            per_node = group_ranks_per_node(layout, dims, gpus_per_node)
            out.append(_traffic(strategy, kind, ranks, calls, payload, intra, hw, per_node))

    t, etp = layout.tp, layout.expert_tp
    free = int(arch.ffn_free_layers_of(stage.layers))  # mixer-only layers: no FFN traffic
    if t > 1:
        boundary = (1 if stage.first else 0) + (1 if stage.last else 0)
        # a MoE layer whose experts are not split over the TP group moves its FFN's tokens
        # by the EP dispatcher: the attention's pair only
        per_mb = stage.dense_layers * 2 + stage.moe_layers * (1 if etp != t else 2)
        if not (stage.moe_layers and etp != t):  # FFN-free layers: no FFN pair (Nemotron-H)
            per_mb -= free
        reduce_calls = n_mb * (per_mb * (fwd_passes + 1) + boundary)
        if layout.sp:
            gathers = n_mb * per_mb * (fwd_passes + 2)
            add("sp", Collective.ALL_GATHER, t, gathers, act, ("tp",))
            add("sp", Collective.REDUCE_SCATTER, t, reduce_calls, act, ("tp",))
        else:
            add("tp", Collective.ALL_REDUCE, t, reduce_calls, act, ("tp",))
        attention = stage.layers - int(arch.linear_layers_of(stage.layers))  # softmax layers
        gathered = qkv_gather_bytes(arch, t, tokens, x)  # QKV sub-sharding (tp > kv heads)
        add("tp", Collective.ALL_GATHER, t, n_mb * attention * fwd_passes, gathered, ("tp",))
        add("tp", Collective.REDUCE_SCATTER, t, n_mb * attention, gathered, ("tp",))
    if layout.cp > 1:
        kv_block = tokens * 2 * int(tp_shard(arch, t).kv_width) * x
        hops = (layout.cp - 1) * stage.layers * n_mb * (fwd_passes + 2)
        add("cp", Collective.P2P, layout.cp, hops, kv_block, ("cp",))
    if layout.ep > 1 and stage.moe_layers:
        w_e = int(arch.expert_width)  # tokens travel at the latent width of a latent MoE
        dispatched = tokens * int(arch.top_k) * w_e * x // (t if layout.sp else 1)
        calls = (stage.moe_layers - free) * n_mb * 2 * (fwd_passes + 1)
        add("ep", Collective.ALL_TO_ALL, layout.ep, calls, dispatched, ("ep",))
        if etp > 1 and etp != t:  # expert TP: gather the dispatched tokens, scatter outputs
            gathered = tokens * int(arch.top_k) * w_e * x * etp // t
            add("ep", Collective.ALL_GATHER, etp, calls // 2, gathered, ("etp",))
            add("ep", Collective.REDUCE_SCATTER, etp, calls // 2, gathered, ("etp",))
    if layout.pp > 1:
        v = layout.virtual_stages
        sends = n_mb * ((v - (1 if stage.last else 0)) + (v - (1 if stage.first else 0)))
        add("pp", Collective.P2P, 2, sends, act // (t if layout.sp else 1), ("pp",))
    params = stage_params(arch, layout, stage, Head.LM)
    w = workload.weight_dtype.bytes
    r = (workload.grad_dtype or workload.weight_dtype).bytes  # a wider gradient buffer's reduce
    dense_group, expert_group = zero_groups(layout, experts=True)
    for strategy, n_params, g in (
        ("dp", params.dense, dense_group),
        ("dp-experts", params.expert, expert_group),
    ):
        dims, ranks = g.dims, g.ranks
        grads, weights = n_params * r, n_params * w
        z = layout.zero
        if z is ZeroStage.NONE:
            add(strategy, Collective.ALL_REDUCE, ranks, 1, grads, dims)
        elif z is ZeroStage.OS:
            add(strategy, Collective.REDUCE_SCATTER, ranks, 1, grads, dims)
            add(strategy, Collective.ALL_GATHER, ranks, 1, weights, dims)
        elif z is ZeroStage.OS_G:
            add(strategy, Collective.REDUCE_SCATTER, ranks, n_mb, grads, dims)
            add(strategy, Collective.ALL_GATHER, ranks, 1, weights, dims)
        else:
            add(strategy, Collective.ALL_GATHER, ranks, 2 * n_mb, weights, dims)
            add(strategy, Collective.REDUCE_SCATTER, ranks, n_mb, grads, dims)
        if g.replicas > 1:  # hybrid sharding: the gradient shard across the replicas
            calls = 1 if z is ZeroStage.OS else n_mb
            shard = -(-n_params // ranks) * r
            add(strategy, Collective.ALL_REDUCE, g.replicas, calls, shard, g.replica_dims)
    return out


def qkv_gather_elements_per_token(arch: Arch) -> int:
    """Elements of ``mixed_qkv`` per token after the all-gather of Megatron-core's QKV
    sub-sharding: (h + 2 h_kv) d_h, plus h d_h with an output gate
    (:mod:`rlmcost.perf.qkv_subshard`).

    >>> from rlmcost.specs import get_model
    >>> qkv_gather_elements_per_token(get_model("llama-3.1-70b").arch())  # (64 + 16) * 128
    10240
    """
    h, h_kv, d_h = int(arch.n_heads), int(arch.n_kv_heads), int(arch.head_dim)
    return ((2 if arch.attn_output_gate else 1) * h + 2 * h_kv) * d_h


def qkv_gather_bytes(arch: Arch, tp: int, tokens: int, x: int) -> int:
    """The gathered tensor's bytes (the all-gather's and the reduce-scatter's M) of one
    softmax-attention layer for ``tokens`` positions at ``x`` bytes an element (the activation
    dtype) on a Megatron-core trainer at TP ``tp`` (:mod:`rlmcost.perf.qkv_subshard`); 0
    where ``tp`` does not exceed the KV heads (or for MLA, whose heads split as usual)."""
    if tp == 1 or arch.is_mla or not kv_subsharded(arch, tp):
        return 0
    return tokens * qkv_gather_elements_per_token(arch) * x


def traffic_per_stage(
    arch: Arch,
    layout: Layout,
    sequences: int,
    seq_len: int,
    workload: Workload | None = None,
    hardware: HardwareSpec | None = None,
    gpus_per_node: int | None = None,
) -> list[list[Traffic]]:
    """Per pipeline stage, what one of its ranks sends in one training iteration."""
    workload = workload or Workload()
    check_layout(arch, layout)
    share = data_share(layout, sequences, seq_len)
    per_node = gpus_per_node or (hardware.gpus_per_node if hardware else 8)
    return [
        _stage_traffic(arch, layout, s, share, workload, hardware, per_node)
        for s in stages(arch, layout)
    ]


def traffic_per_rank(
    arch: Arch,
    layout: Layout,
    sequences: int,
    seq_len: int,
    workload: Workload | None = None,
    hardware: HardwareSpec | None = None,
    gpus_per_node: int | None = None,
) -> list[Traffic]:
    """The busiest rank's traffic (most bytes sent) in one training iteration."""
    return max(
        traffic_per_stage(arch, layout, sequences, seq_len, workload, hardware, gpus_per_node),
        key=lambda ts: (sum(t.time_s or 0 for t in ts), sum(t.bytes_per_rank for t in ts)),
    )
