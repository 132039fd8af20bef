"""One micro-batch through one rank of a pipeline stage: the kernels of a training step.

Every rank of a pipeline stage runs, per micro-batch (``b`` sequences, ``s / P_c`` positions
each, so ``T = b s / P_c`` tokens), the stage's layers forward and backward on its TP shard
(``parallel.shard.tp_shard``). Each kernel is timed by its shape (``perf.efficiency``) and each
collective by the alpha-beta model (``perf.collectives``):

* **GEMMs** per layer: QKV [T, (h + 2 h_kv) d_h / P_t, d], output [T, d, h d_h / P_t], FFN up (gate
  and up fused for a gated FFN) and down, MoE router [T, E, d] and grouped expert GEMMs on
  Megatron-core's expert grid (E / P_e local experts of width d_e / ETP; the stage's token copies
  spread evenly over its P_t P_c P_d ranks in ETP groups, so ``T k ETP P_e / (P_t E)`` tokens per
  local expert under balanced routing, the busiest rank's otherwise), the LM head [T, V / P_t, d] on
  the last stage. Backward: for every [m, n, k] GEMM a data-gradient [m, k, n] and a weight-gradient
  [k, n, m] GEMM.
* **Attention core**: ``flash`` (default): a fused FlashAttention-class kernel on the causal pairs,
  4 h d_h / P_t FLOPs per query-key pair forward, 2.5 x backward (Dao 2023), at the device's best
  kernel (FlashAttention-3 / cuDNN class on Hopper: a Megatron-core trainer); ``flash2`` the same
  pairs on a pre-FA3 kernel (FlashAttention-2 or SDPA's flash backend: a Hugging Face model's
  ``attn_implementation``; :mod:`~rlmcost.perf.efficiency`); ``materialized`` (Megatron-LM 2021-22,
  before fused attention): batched QK^T and PV GEMMs over the full s x s scores, a fused
  scale-mask-softmax and a dropout kernel reading and writing the scores in HBM.
* **Memory-bound kernels** per layer forward (bytes read + written per token, activation dtype,
  d-wide tensors / P_t under SP): two norms (2 d each), two residual adds (3 d each, plus a
  1-byte mask with ``hidden_dropout`` fused into them, or eager dropout kernels:
  :mod:`~rlmcost.perf.dropout`), the FFN activation (2 or 3 x d_ff / P_t), RoPE on q and k, MoE
  token permutation (unfused: :mod:`~rlmcost.perf.moe_permute`; by local expert:
  :mod:`~rlmcost.perf.moe_sort_chunks`); the log-softmax over fp32 logits (``logprob_head``).
  Backward moves twice the forward bytes (reads output gradient, saved input; writes input's).
* **MoE terms**: host floor (``host``), :mod:`~rlmcost.perf.moe_host`; fp64 router (NeMo RL's)
  :mod:`~rlmcost.perf.moe_router`; busiest EP rank's load :mod:`~rlmcost.perf.moe_imbalance`.
* **Recomputation** (:mod:`~rlmcost.perf.selective_ac`): ``full`` reruns each layer's forward
  (GEMMs, kernels, TP and EP collectives) before its backward; ``selective`` the attention core's
  forward (Korthikanti et al. 2022, §5) or, torchtitan's kind, every second GEMM.
* **Communication**, with overlap rules per strategy:

  - TP above the KV heads (Megatron-core's QKV sub-sharding): an all-gather of the QKV
    output per attention layer forward, a reduce-scatter backward (:mod:`~rlmcost.perf.
    qkv_subshard`), exposed.
  - TP (Shoeybi et al. 2019): 2 all-reduces of the [T, d] activations per layer forward and 2
    backward (SP: all-gather + reduce-scatter pairs, the same bytes; Korthikanti et al. 2022 §4.2.2;
    the backward re-gathers overlap the data-gradient GEMMs), plus the vocabulary-parallel embedding
    and head; **exposed** (they sit between dependent GEMMs).
  - EP (GShard): dispatch and combine all-to-all per MoE layer over the P_e ranks of the EP group
    (spanning ETP x EP of Megatron-core's expert grid), forward and backward; with ETP > 1, the
    dispatched tokens' all-gather and the outputs' reduce-scatter over the ETP group (Megatron-core
    ``MoEAlltoAllTokenDispatcher``); **exposed** (Megatron-core's EP overlap hides a share:
    :mod:`~rlmcost.perf.ep_overlap`); across nodes: :mod:`~rlmcost.perf.ep_dispatch`.
  - CP (ring attention, Liu et al. 2023): P_c - 1 hops of the K, V block per layer forward (K, V,
    their gradients backward), each **hidden behind** one block's attention; the excess exposed.
  - PP: per micro-batch and chunk the boundary activations forward and gradients backward, p2p
    (1 / P_t over the NIC, then an NVLink all-gather: Narayanan et al. 2021 §4.1, or SP), exposed
    (Megatron's interleaved ``overlap_p2p_comm``: :mod:`~rlmcost.perf.megatron_pipe`). Bubbles:
    :func:`~rlmcost.parallel.pipeline.bubble_fraction` of the slowest stage's micro-batch time.
**Gradient accumulation**: when the weight-gradient GEMMs write a 16-bit gradient that a separate
kernel adds into the accumulation buffer (``fused_grad_accumulation`` off), every micro-batch reads
2 + g and writes g bytes per parameter of the rank, g = ``main_grad_bytes``: 4 for Megatron-LM's
fp32 main grads before its gradient-accumulation fusion; 2 for DeepSpeed's fp16 engine, whose
autograd accumulates into the 16-bit ``param.grad`` (``grad_accum_dtype``, DeepSpeed commit
21c280296, 2022-11-27; default: the model dtype). DeepSpeed's 2021 pipeline engine (whole gradient
sends, recomputed embedding and head): :mod:`~rlmcost.perf.deepspeed_pipe`. ``train_step`` adds
DP, the optimizer and the bubbles to these passes (``rl_step``: forward-only, one context)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import field, replace
from functools import cache

from rlmcost.arch import Arch
from rlmcost.choices import Head
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import DataShare, stage_params
from rlmcost.parallel.comm import Collective, group_is_intra_node, group_ranks_per_node
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import PipelineStage, tp_shard
from rlmcost.perf.attention_shapes import (
    causal_pairs,
    indexer_flops,
    mla_projections,
    module_gemm,
    pair_flops,
)
from rlmcost.perf.collectives import collective_time_s, link
from rlmcost.perf.deepspeed_pipe import recomputes_embeddings
from rlmcost.perf.dropout import add_eager_dropout, attention_dropout_bytes, fused_mask_bytes
from rlmcost.perf.efficiency import Device
from rlmcost.perf.ffn_free import take_off_free_ffns
from rlmcost.perf.fp8_train import linear_pricer
from rlmcost.perf.full_layers import kv_projections, layer_kinds, ple_gemms
from rlmcost.perf.head_dim_attention import timed_attention_flops  # head dim 64, 128-key window
from rlmcost.perf.linear_mixer import add_linear_mixers
from rlmcost.perf.moe_host import floor_host_bound
from rlmcost.perf.moe_sort_chunks import dispatcher_permute_s
from rlmcost.perf.mtp_pass import add_mtp
from rlmcost.perf.qkv_subshard import PART, add_qkv_gather
from rlmcost.perf.selective_ac import recompute
from rlmcost.perf.step_options import AttentionKernel, StepOptions
from rlmcost.specs.workload import Workload

COMPUTE_PARTS = ("gemm", "attention", "elementwise", "recompute", "host")
COMM_PARTS = ("tp", "sp", PART, "cp", "ep", "pp", "dp")  # PART: perf.qkv_subshard


@dataclass
class StagePass:
    """Seconds of one micro-batch through a stage, by part, forward and backward."""

    fwd: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    bwd: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    flops: int = 0  # FLOPs run on the rank: fwd + bwd (+ recompute), causal for flash
    modules: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # selective_ac
    module_flops: dict[str, int] = field(default_factory=dict)  # their forward FLOPs
    fp8_weights_fwd_s: float = 0.0  # casting its FP8 weights once, a forward call's (fp8_train)
    fp8_weights_s: float = 0.0  # once, a training step's (both copies: perf.fp8_train)

    @property
    def fwd_s(self) -> float:
        return sum(self.fwd.values())

    @property
    def bwd_s(self) -> float:
        return sum(self.bwd.values())

    @property
    def total_s(self) -> float:
        return self.fwd_s + self.bwd_s

    def compute(self, side: str) -> float:
        return sum((self.fwd if side == "fwd" else self.bwd)[k] for k in COMPUTE_PARTS)

    def add(self, layer: StagePass, n: int, rec_s: float = 0.0, rec_flops: int = 0) -> None:
        """Add ``n`` passes of ``layer`` with its recomputation (seconds and FLOPs) to this."""
        for side in ("fwd", "bwd"):
            for k, v in getattr(layer, side).items():
                getattr(self, side)[k] += n * v
        self.bwd["recompute"] += n * rec_s
        self.flops += n * (layer.flops + rec_flops)
        self.fp8_weights_fwd_s += n * layer.fp8_weights_fwd_s
        self.fp8_weights_s += n * layer.fp8_weights_s


@dataclass(frozen=True)
class StepContext:
    """What every kernel of one rank's training step reads: the model, layout, sequence and
    micro-batch sizes, the device's kernel model, the options, dtypes and node size (shared
    with :mod:`rlmcost.perf.rl_step`, which times forward-only passes the same way)."""

    arch: Arch
    layout: Layout
    seq: int
    micro_batch: int
    tokens: int  # T per micro-batch on the rank
    positions: int  # s / P_c
    device: Device
    options: StepOptions
    workload: Workload
    gpus_per_node: int

    @classmethod
    def of(cls, arch: Arch, layout: Layout, seq_len: int, share: DataShare, device: Device,
           options: StepOptions, workload: Workload) -> StepContext:  # fmt: skip
        """The context of one rank running its ``share`` of the batch (sequences of
        ``seq_len`` tokens) on ``device``."""
        return cls(arch=arch, layout=layout, seq=seq_len, micro_batch=share.micro_batch,
                   tokens=share.tokens_per_micro_batch, positions=share.tokens_per_sequence,
                   device=device, options=options, workload=workload,
                   gpus_per_node=device.hardware.gpus_per_node)  # fmt: skip

    def comm(self, kind: Collective, payload: float, ranks: int, dims: tuple[str, ...]) -> float:
        intra = group_is_intra_node(self.layout, dims, self.gpus_per_node)
        # a ring's node crossings spread over the NICs of the group's ranks in a node; a
        # point-to-point send or an all-to-all (each rank's own bytes to each other rank, no
        # forwarding) leaves through the rank's own NIC
        per_node = 1
        if not intra and kind not in (Collective.P2P, Collective.ALL_TO_ALL):
            per_node = group_ranks_per_node(self.layout, dims, self.gpus_per_node)
        lk = link(self.device.hardware, intra, per_node)
        measured = self.device.measured
        if measured is not None and hasattr(measured, "link"):
            try:
                eff = float(measured.link(payload, str(kind).replace("-", "_")))
                lk = type(lk)(lk.bandwidth_bytes_per_s, lk.latency_s, min(1.0, eff))
            except SpecError:
                pass
        return collective_time_s(kind, payload, ranks, lk, self.options.algorithm)


def gemm_fwd_bwd_s(dev: Device, m: int, n: int, k: int, batch: int = 1) -> tuple[float, float]:
    """(forward, backward) seconds of one GEMM: backward = data- and weight-gradient GEMMs."""
    return dev.gemm_s(m, n, k, batch), dev.gemm_s(m, k, n, batch) + dev.gemm_s(k, n, m, batch)


def _layer(c: StepContext, moe: bool) -> StagePass:
    """One layer's pass on one rank for one micro-batch (without recomputation)."""
    arch, lay, dev, opt = c.arch, c.layout, c.device, c.options
    sh = tp_shard(arch, lay.tp)
    t, T, x = lay.tp, c.tokens, c.workload.activation_dtype.bytes
    d, q, kv = int(arch.d_model), int(sh.q_width), int(sh.kv_width)
    out, lin = StagePass(), linear_pricer(c)  # FP8 Linear layers: perf.fp8_train

    def gemm(m: int, n: int, k: int, batch: int = 1, linear: bool = True) -> None:
        f, b, wf, wb = lin(m, n, k, batch) if linear else (*gemm_fwd_bwd_s(dev, m, n, k, batch),
                                                           0.0, 0.0)  # fmt: skip
        out.fwd["gemm"], out.bwd["gemm"] = out.fwd["gemm"] + f, out.bwd["gemm"] + b
        out.fp8_weights_fwd_s += wf
        out.fp8_weights_s += wb
        out.flops += 6 * m * n * k * batch

    if arch.is_mla:  # its up-projections also a Megatron module (selective_ac)
        mla_projections(arch, int(sh.n_heads), T, gemm, module_gemm(out, "mla_up_proj", gemm))
    else:
        gemm(T, q + kv_projections(arch) * kv, d)  # Gemma 4's full layers: no v_proj
        gemm(T, d, q)
    ple_gemms(arch, T, gemm)  # Gemma 4 E's per-layer input path (perf.full_layers)
    p = arch.ffn_kind.projections
    act_widths: list[tuple[int, int]] = []  # (tokens, per-rank inner width) of activations
    g0, f0, mods = out.fwd["gemm"], out.flops, out.modules  # Megatron's modules (selective_ac)
    b0, w0 = out.bwd["gemm"], (out.fp8_weights_fwd_s, out.fp8_weights_s)
    if moe:
        from rlmcost.perf.moe_ffn import routed_experts

        act_widths.append(routed_experts(c, gemm, out))  # router, experts (perf.moe_ffn)
        if arch.n_shared_experts:
            ds = int(sh.d_shared_expert) * int(arch.n_shared_experts)
            g1 = out.fwd["gemm"]
            gemm(T, (p - 1) * ds, d)
            gemm(T, d, ds)
            act_widths.append((T, ds))
            mods["shared_experts"] = out.fwd["gemm"] - g1 + dev.elementwise_s(T * p * ds * x)
    else:
        ff = int(sh.d_ff)
        gemm(T, (p - 1) * ff, d)
        gemm(T, d, ff)
        act_widths.append((T, ff))
    mods["ffn_gemm"], mods["ffn_gemm_bwd"] = out.fwd["gemm"] - g0, out.bwd["gemm"] - b0
    mods["fp8_ffn_w"] = out.fp8_weights_fwd_s - w0[0]  # its weights' casts (perf.ffn_free)
    mods["fp8_ffn_wt"] = out.fp8_weights_s - w0[1]
    name = "moe" if moe else "mlp"  # the FFN's forward GEMMs, FLOPs and activations
    mods[name] = out.fwd["gemm"] - g0 + sum(dev.elementwise_s(n * p * w * x) for n, w in act_widths)
    out.module_flops[name] = (out.flops - f0) // 3

    # attention core
    heads, dh, b, s_loc, s = int(sh.n_heads), int(arch.head_dim), c.micro_batch, c.positions, c.seq
    attn_fwd_flops = pair_flops(arch, heads) * (b * causal_pairs(arch, s) // lay.cp)
    if opt.attention.fused:
        fa2 = opt.attention is AttentionKernel.FLASH2
        timed = timed_attention_flops(c, attn_fwd_flops)  # cuDNN's rate by head dim and window
        f = dev.flash_attention_s(timed, False, opt.attention_dropout, fa2)
        bw = dev.flash_attention_s(timed, True, opt.attention_dropout, fa2)
        out.flops += 3 * attn_fwd_flops
    else:
        f1, b1 = gemm_fwd_bwd_s(dev, s_loc, s, dh, b * heads)  # scores (DSA: dense, masked)
        dv = int(arch.v_head_dim) if arch.is_mla else dh
        f2, b2 = gemm_fwd_bwd_s(dev, s_loc, dv, s, b * heads)  # probabilities x values
        scores = b * heads * s_loc * s
        softmax_f = dev.elementwise_s(2 * scores * x)
        softmax_b = dev.elementwise_s(3 * scores * x)
        drop_f = drop_b = dev.elementwise_s(attention_dropout_bytes(scores, x)) \
            if opt.attention_dropout else 0.0  # fmt: skip
        f = f1 + f2 + softmax_f + drop_f
        bw = b1 + b2 + softmax_b + drop_b
        out.flops += 3 * pair_flops(arch, heads, dense=True) * b * s_loc * s
    if arch.index_topk is not None:  # DSA's lightning indexers: forward only, S^2 / 2 scores
        pairs = b * s * (s + 1) // 2 // lay.cp if opt.attention.fused else b * s_loc * s
        idx = indexer_flops(arch, T, pairs) // int(arch.n_layers)  # one layer's mean
        f += dev.flash_attention_s(idx, False, False, False)
        out.flops += idx
    out.fwd["attention"], out.bwd["attention"] = attn_f, attn_b = f, bw

    # memory-bound kernels (bytes per token, forward)
    dd = d // t if lay.sp else d
    masks = fused_mask_bytes(T, dd, opt.hidden_dropout and opt.dropout_add_fused)  # perf.dropout
    fwd_bytes, kernels = T * (2 * 2 * dd * x + 2 * 3 * dd * x) + masks, 4  # 2 norms, 2 adds
    for tokens, width in act_widths:
        fwd_bytes += tokens * (p * width) * x  # activation: reads (p-1) inputs, writes 1
        kernels += 1
    if not arch.n_positions and not opt.rope_unfused:  # RoPE on q and k, one fused pass
        fwd_bytes += T * 2 * (q + kv) * x
        kernels += 1
    elif not arch.n_positions:
        from rlmcost.perf.megatron_rope import price_unfused_rope

        price_unfused_rope(c, q, kv, out)  # Megatron-core's eager kernels (perf.megatron_rope)
    unf_f, unf_b = dispatcher_permute_s(c, moe, act_widths[0][0] if moe else 0)  # unfused, sort
    if moe:  # permute the rank's expert token copies to experts and back (TE's fused pair)
        from rlmcost.perf.moe_ffn import permuted_rows

        permute = 2 * 2 * permuted_rows(c) * d * x  # kept copies under a capacity
        fwd_bytes, kernels = fwd_bytes + permute, kernels + 2
        mods["moe"] += dev.elementwise_s(permute, 2) + unf_f
        rows, width = act_widths[0]
        mods["moe_act"] += dev.elementwise_s(rows * p * width * x)  # + moe_eager_ops
    mods["layernorm"] = dev.elementwise_s(T * 2 * 2 * dd * x, 2)
    out.fwd["elementwise"] += dev.elementwise_s(fwd_bytes, kernels) + unf_f
    out.bwd["elementwise"] += dev.elementwise_s(2 * fwd_bytes, 2 * kernels) + unf_b
    add_eager_dropout(c, out, dd)  # a Hugging Face model's own dropout kernels (perf.dropout)

    # TP / SP collectives: 2 per layer forward, 2 backward (all-reduce or AG + RS pairs); a
    # MoE layer whose experts are not split over the TP group (ETP != TP) has the attention's
    # only: its FFN's tokens move by the EP dispatcher instead
    if t > 1:
        act = T * d * x
        n = 1 if moe and lay.expert_tp != t else 2
        if lay.sp:
            pair = c.comm(Collective.ALL_GATHER, act, t, ("tp",))
            pair += c.comm(Collective.REDUCE_SCATTER, act, t, ("tp",))
            out.fwd["sp"] += n * pair
            out.bwd["sp"] += n * pair
        else:
            ar = c.comm(Collective.ALL_REDUCE, act, t, ("tp",))
            out.fwd["tp"] += n * ar
            out.bwd["tp"] += n * ar
    add_qkv_gather(c, out)  # a TP above the KV heads: Megatron-core's QKV all-gather
    if moe and lay.ep > 1:
        from rlmcost.perf.ep_overlap import exposed_ep_s
        from rlmcost.perf.moe_ffn import ep_comm_s

        a2a = exposed_ep_s(opt, ep_comm_s(c))  # dispatch, combine; EP overlap (perf.ep_overlap)
        out.fwd["ep"], out.bwd["ep"] = out.fwd["ep"] + a2a, out.bwd["ep"] + a2a
        mods["moe"] += a2a
        mods["ffn_ep"] = a2a
    if lay.cp > 1:
        block = T * 2 * kv * x
        hop = c.comm(Collective.P2P, block, 2, ("cp",))
        hops = lay.cp - 1
        exposed_f = hops * max(0.0, hop - attn_f / lay.cp)
        out.fwd["cp"] += exposed_f
        out.bwd["cp"] += hops * max(0.0, 2 * hop - attn_b / lay.cp)
    return out


def stage_pass(c: StepContext, stage: PipelineStage) -> StagePass:
    """One micro-batch through every layer the stage's rank holds (all its chunks)."""
    out = StagePass()
    for moe, layers in ((False, stage.dense_layers), (True, stage.moe_layers)):
        # Gemma 4's full-attention layers are a kind of their own (perf.full_layers)
        for kind, count in layer_kinds(c.arch, layers) if layers else ():
            if not count:
                continue
            k_c = c if kind is c.arch else replace(c, arch=kind)
            layer = _layer(k_c, moe)
            rec_s, rec_flops = recompute(k_c, layer, moe)
            if moe:
                floor_host_bound(layer, c.options.moe_layer_host_s, rec_s, c.layout.ckpt)
            out.add(layer, count, rec_s, rec_flops)
    take_off_free_ffns(c, stage, out, _layer)  # Nemotron-H's mixer-only layers
    add_linear_mixers(c, stage, out)
    arch, lay, dev, x = c.arch, c.layout, c.device, c.workload.activation_dtype.bytes
    t, T, d = lay.tp, c.tokens, int(arch.d_model)
    act = T * d * x
    if stage.last:
        v = int(tp_shard(arch, t).vocab)
        f, b = gemm_fwd_bwd_s(dev, T, v, d)
        out.fwd["gemm"], out.bwd["gemm"] = out.fwd["gemm"] + f, out.bwd["gemm"] + b
        out.flops += (8 if recomputes_embeddings(c) else 6) * T * v * d
        n, h = T * 2 * (d // t if lay.sp else d) * x, c.options.logprob_head  # norm; log-softmax
        out.fwd["elementwise"] += dev.elementwise_s(T * v * h.fwd_bytes + n, h.fwd_kernels)
        out.bwd["elementwise"] += dev.elementwise_s(T * v * h.bwd_bytes + 2 * n, h.bwd_kernels)
        if recomputes_embeddings(c):  # norm and head again (perf.deepspeed_pipe)
            out.bwd["recompute"] += f + dev.elementwise_s(n)
    if stage.last:
        add_mtp(c, out, _layer)  # multi-token prediction's depths (perf.mtp_pass)
    if t > 1:  # vocabulary-parallel embedding (first) and head input gradient (last)
        strategy = "sp" if lay.sp else "tp"
        ar = c.comm(Collective.ALL_REDUCE, act, t, ("tp",))
        out.fwd[strategy] += ar if stage.first else 0.0
        out.bwd[strategy] += ar if stage.last or (stage.first and recomputes_embeddings(c)) else 0.0
    if lay.pp > 1:
        v = lay.virtual_stages
        split = t if (t > 1 and (lay.sp or c.options.pp_scatter_gather)) else 1
        send = c.comm(Collective.P2P, act / split, 2, ("pp",))
        if split > 1 and not lay.sp:
            send += c.comm(Collective.ALL_GATHER, act, t, ("tp",))
        out.fwd["pp"] += v * send
        if split > 1 and not lay.sp and not c.options.pp_grad_scatter_gather:
            # DeepSpeed (``_exec_recv_grads``): the stage all-gathers its partitioned output
            # back, then every TP rank receives the whole gradient
            send = c.comm(Collective.ALL_GATHER, act, t, ("tp",))
            send += c.comm(Collective.P2P, act, 2, ("pp",))
        out.bwd["pp"] += v * send
    if not c.options.fused_grad_accumulation:
        dense, expert = stage_param_counts(arch, lay, stage)
        g = 2 + 2 * c.options.main_grad_bytes  # read the 16-bit grad and g, write g
        out.bwd["elementwise"] += dev.elementwise_s((dense + expert) * g)
    return out


def stage_param_counts(arch: Arch, layout: Layout, stage: PipelineStage) -> tuple[int, int]:
    """(dense, routed-expert) parameter elements on one rank of ``stage``."""
    n = stage.n_stages
    role = 0 if stage.first else (n - 1 if stage.last else min(1, n - 1))
    return _params_of(arch, layout, PipelineStage(role, n, stage.dense_layers, stage.moe_layers))


@cache
def _params_of(arch: Arch, layout: Layout, stage: PipelineStage) -> tuple[int, int]:
    p = stage_params(arch, layout, stage, Head.LM)
    return p.dense, p.expert
