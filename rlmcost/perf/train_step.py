"""Predicted time of one training step of a model under a parallel layout.

Every rank of a pipeline stage runs, per micro-batch (``b`` sequences, ``s / P_c`` positions
each, so ``T = b s / P_c`` tokens), the stage's layers forward and backward on its TP shard
(:func:`~rlmcost.parallel.shard.tp_shard`). Each kernel is timed by its shape
(:mod:`~rlmcost.perf.efficiency`) and each collective by the alpha-beta model
(:mod:`~rlmcost.perf.collectives`):

* **GEMMs** per layer: QKV [T, (h + 2 h_kv) d_h / P_t, d], output [T, d, h d_h / P_t], FFN
  up (gate and up fused for a gated FFN) and down, MoE router [T, E, d] and grouped expert
  GEMMs (E / P_e local experts, ``T k P_e / E`` tokens each, balanced routing), the LM head
  [T, V / P_t, d] on the last stage. Backward: for every [m, n, k] GEMM a data-gradient
  [m, k, n] and a weight-gradient [k, n, m] GEMM.
* **Attention core**: ``flash`` (default): a fused FlashAttention-class kernel on the causal
  pairs, 4 h d_h / P_t FLOPs per query-key pair forward, 2.5 x backward (Dao 2023);
  ``materialized`` (Megatron-LM 2021-22, before fused attention): batched QK^T and PV GEMMs
  over the full s x s scores, a fused scale-mask-softmax and a dropout kernel reading and
  writing the scores in HBM.
* **Memory-bound kernels** per layer forward (bytes read + written per token, activation
  dtype, d-wide tensors / P_t under SP): two norms (2 d each), two residual adds (3 d each,
  plus a 1-byte dropout mask with ``dropout``), the FFN activation (2 or 3 x d_ff / P_t),
  RoPE on q and k, MoE token permutation; the vocabulary-parallel cross-entropy on fp32
  logits (4 passes of 4 V / P_t bytes). Backward moves twice the forward bytes (reads the
  output gradient and the saved input, writes the input gradient).
* **Recomputation**: ``full`` runs each layer's forward again (GEMMs, kernels, TP and EP
  collectives) before its backward; ``selective`` the attention core's forward
  (Korthikanti et al. 2022, §5).
* **Communication**, with overlap rules per strategy:

  - TP (Shoeybi et al. 2019): 2 all-reduces of the [T, d] activations per layer forward and 2
    backward (SP: all-gather + reduce-scatter pairs, the same bytes; Korthikanti et al.
    2022 §4.2.2; the backward re-gathers overlap the data-gradient GEMMs), plus the
    vocabulary-parallel embedding and head; **exposed** (they sit between dependent GEMMs).
  - EP (GShard): dispatch and combine all-to-all per MoE layer, forward and backward;
    **exposed**.
  - CP (ring attention, Liu et al. 2023): P_c - 1 hops of the K, V block per layer forward
    (K, V and their gradients backward), each **hidden behind** the attention of one block;
    only the excess is exposed.
  - PP: per micro-batch and model chunk the boundary activations forward and gradients
    backward, point-to-point (1 / P_t of them over the NIC then an NVLink all-gather: the
    scatter/gather optimization of Narayanan et al. 2021 §4.1, or SP); **exposed** on the
    critical path. Bubbles: :func:`~rlmcost.parallel.pipeline.bubble_fraction` of the slowest
    stage's micro-batch time.
  - DP / ZeRO-0/1/2 gradient reduction (all-reduce, or reduce-scatter): **overlapped** with
    the backward of the last micro-batch when ``overlap_grad_reduce`` (PyTorch DDP, Megatron
    ``overlap_grad_reduce``; Li et al. 2020, arXiv 2006.15704), only the excess exposed;
    else fully exposed after the flush. ZeRO-1/2 parameter all-gather after the optimizer:
    overlapped with the first forward when ``overlap_param_gather``. ZeRO-2 reduce-scatters
    every micro-batch behind its backward. ZeRO-3 / FSDP: per micro-batch an all-gather
    behind the forward and an all-gather plus a reduce-scatter behind the backward
    (prefetching), exposed beyond the compute they hide behind.
* **Optimizer step**: memory-bound over the rank's shard of parameters (1 / P_d of them under
  ZeRO >= 1): mixed-precision Adam reads the gradient (``main_grad_bytes``, fp32 in
  Megatron-LM), reads and writes fp32 master weights, m and v (24 B), writes the 16-bit
  weights (2 B), and reads the gradient again for the global norm: 26 + 2 g bytes per
  parameter. ``offload_optimizer`` (ZeRO-Offload, Ren et al. 2021) instead moves the
  gradients to the host and the updated 16-bit weights back at host-link bandwidth,
  exposed; the CPU's Adam time is not modelled.

**Gradient accumulation**: when the weight-gradient GEMMs write a 16-bit gradient that a
separate kernel adds into the fp32 main-gradient buffer (``fused_grad_accumulation`` off, as
Megatron-LM before its gradient-accumulation fusion), every micro-batch reads 2 + 4 and writes
4 bytes per parameter of the rank.

Step time = slowest stage's micro-batch time x micro-batches x (1 + bubble fraction) +
exposed DP / ZeRO communication + optimizer + offload.

FLOP conventions. ``model_flops``: the project's exact matrix-product count of forward +
backward (3 x forward), attention counted over the full S x S (as FlopCounterMode and as
PaLM's and Megatron-LM's MFU formulas do), no recomputation; ``MFU = model_flops / (step x
GPUs x dense peak)``. ``hardware_flops`` adds the recomputed forward. The roofline bound
(:attr:`StepTime.roofline_bound_s`) divides the busiest rank's FLOPs with causal attention
pairs and recomputation by the dense peak: no kernel can beat it, so a prediction is never
below it.

Suppressed: the tied-embedding gradient all-reduce between the first and last stage, the
scalar all-reduces (loss, grad norm), data loading, stragglers, NCCL's contention with
compute for SMs, and the gradient-accumulation add when it is not fused into the GEMM.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.choices import Head
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import DataShare, data_share, stage_params
from rlmcost.parallel.comm import Collective, group_is_intra_node
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.parallel.shard import PipelineStage, stages, tp_shard
from rlmcost.parallel.validate import check_layout
from rlmcost.perf.collectives import (
    Algorithm,
    collective_time_s,
    host_link_bytes_per_s,
    link,
)
from rlmcost.perf.efficiency import AcceleratorProfile, Device
from rlmcost.specs.workload import Workload

if TYPE_CHECKING:
    from rlmcost.specs import HardwareSpec
    from rlmcost.timing import Efficiency


class AttentionKernel(StrEnum):
    FLASH = "flash"  # fused, causal pairs only (FlashAttention-class)
    MATERIALIZED = "materialized"  # s x s scores in HBM: softmax and dropout kernels


@dataclass(frozen=True)
class StepOptions:
    """How the framework runs the step (defaults: a current Megatron-core / FSDP setup)."""

    attention: AttentionKernel = AttentionKernel.FLASH
    dropout: bool = False  # attention and hidden dropout kernels (GPT-3-era training)
    overlap_grad_reduce: bool = True
    overlap_param_gather: bool = True
    pp_scatter_gather: bool = True  # PP sends 1/P_t over the NIC, NVLink all-gather after
    offload_optimizer: bool = False
    host_link_bytes_per_s: float | None = None  # default: the spec's, else PCIe Gen4 x16
    main_grad_bytes: int = 4  # gradient buffer the optimizer reads (fp32 main grads)
    fused_grad_accumulation: bool = True  # weight-gradient GEMMs accumulate into main grads
    algorithm: Algorithm = Algorithm.AUTO


COMPUTE_PARTS = ("gemm", "attention", "elementwise", "recompute")
COMM_PARTS = ("tp", "sp", "cp", "ep", "pp", "dp")


@dataclass(frozen=True)
class StepTime:
    """Predicted seconds of one training step and where they go (see the module docstring)."""

    step_s: float
    compute_s: dict[str, float]  # gemm, attention, elementwise, recompute (slowest stage)
    exposed_comm_s: dict[str, float]  # per strategy: tp or sp, cp, ep, pp, dp
    bubble_s: float
    optimizer_s: float
    offload_s: float
    model_flops: int  # global, fwd + bwd, attention full, no recomputation
    hardware_flops: int  # global, + recomputation
    gpus: int
    peak_flops_per_s: float  # dense peak of the compute dtype per GPU
    roofline_bound_s: float  # busiest rank's FLOPs (causal, with recomputation) / peak
    slowest_stage: int
    micro_batches: int
    efficiency_source: str
    notes: tuple[str, ...] = field(default=())

    @property
    def tflops_per_gpu(self) -> float:
        """Model FLOPs per second per GPU, in TFLOP/s."""
        return self.model_flops / (self.step_s * self.gpus) / 1e12

    @property
    def mfu(self) -> float:
        """Model FLOPs utilization: model FLOP/s per GPU / dense peak."""
        return self.model_flops / (self.step_s * self.gpus * self.peak_flops_per_s)

    @property
    def exposed_comm_total_s(self) -> float:
        return sum(self.exposed_comm_s.values())

    def to_json(self) -> dict[str, object]:
        return {
            "step_time_s": self.step_s,
            "tflops_per_gpu": self.tflops_per_gpu,
            "mfu": self.mfu,
            "compute_s": dict(self.compute_s),
            "exposed_communication_s": dict(self.exposed_comm_s),
            "bubble_s": self.bubble_s,
            "optimizer_s": self.optimizer_s,
            "offload_s": self.offload_s,
            "model_flops": self.model_flops,
            "hardware_flops": self.hardware_flops,
            "roofline_bound_s": self.roofline_bound_s,
            "slowest_stage": self.slowest_stage,
            "efficiency_source": self.efficiency_source,
        }


# --------------------------------------------------------------------------------------------
# FLOPs (plain integers; the same counts as rlmcost.blocks, checked by a test)
# --------------------------------------------------------------------------------------------


def _ffn_weights(arch: Arch, moe: bool) -> int:
    """Weight elements one token multiplies in one layer's FFN (router, k experts, shared)."""
    p = arch.ffn_kind.projections
    if not moe:
        return p * int(arch.d_model) * int(arch.d_ff)
    d = int(arch.d_model)
    w = d * int(arch.n_experts) + int(arch.top_k) * p * d * int(arch.d_expert)
    if arch.n_shared_experts:
        w += int(arch.n_shared_experts) * p * d * int(arch.d_shared_expert)
        w += d if arch.shared_expert_gate else 0
    return w


def _attn_weights(arch: Arch) -> int:
    d, q, kv = int(arch.d_model), int(arch.q_width), int(arch.kv_width)
    return d * (q + 2 * kv) + q * d


def model_flops_train(arch: Arch, sequences: int, seq_len: int) -> int:
    """Forward + backward matrix-product FLOPs of ``sequences`` x ``seq_len`` tokens, attention
    over the full S x S (= ``blocks.work_train`` with full counting and the LM head)."""
    dense, moe = int(arch.n_dense_layers), int(arch.n_moe_layers) if arch.is_moe else 0
    per_token = 2 * (int(arch.n_layers) * _attn_weights(arch) + dense * _ffn_weights(arch, False))
    per_token += 2 * moe * _ffn_weights(arch, True) if moe else 0
    per_token += 2 * int(arch.d_model) * int(arch.vocab)
    attention = 4 * int(arch.n_layers) * int(arch.q_width) * seq_len * seq_len
    return 3 * sequences * (seq_len * per_token + attention)


# --------------------------------------------------------------------------------------------
# One stage, one micro-batch
# --------------------------------------------------------------------------------------------


@dataclass
class StagePass:
    """Seconds of one micro-batch through a stage, by part, forward and backward."""

    fwd: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    bwd: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    flops: int = 0  # FLOPs run on the rank: fwd + bwd (+ recompute), causal for flash

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
        d = self.fwd if side == "fwd" else self.bwd
        return sum(d[k] for k in COMPUTE_PARTS)


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
    def of(
        cls,
        arch: Arch,
        layout: Layout,
        seq_len: int,
        share: DataShare,
        device: Device,
        options: StepOptions,
        workload: Workload,
    ) -> StepContext:
        """The context of one rank running its ``share`` of the batch (sequences of
        ``seq_len`` tokens) on ``device``."""
        return cls(
            arch=arch, layout=layout, seq=seq_len,
            micro_batch=share.micro_batch, tokens=share.tokens_per_micro_batch,
            positions=share.tokens_per_sequence, device=device, options=options,
            workload=workload, gpus_per_node=device.hardware.gpus_per_node,
        )  # fmt: skip

    def comm(self, kind: Collective, payload: float, ranks: int, dims: tuple[str, ...]) -> float:
        intra = group_is_intra_node(self.layout, dims, self.gpus_per_node)
        lk = link(self.device.hardware, intra)
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
    out = StagePass()

    def gemm(m: int, n: int, k: int, batch: int = 1) -> None:
        f, b = gemm_fwd_bwd_s(dev, m, n, k, batch)
        out.fwd["gemm"] += f
        out.bwd["gemm"] += b
        out.flops += 6 * m * n * k * batch

    gemm(T, q + 2 * kv, d)
    gemm(T, d, q)
    p = arch.ffn_kind.projections
    act_widths: list[tuple[int, int]] = []  # (tokens, per-rank inner width) of activations
    if moe:
        e, k = int(arch.n_experts), int(arch.top_k)
        local = e // lay.ep
        per_expert = max(1, -(-T * k * lay.ep // e))
        gemm(T, e, d)  # router
        de = int(sh.d_expert)
        gemm(per_expert, (p - 1) * de, d, local)
        gemm(per_expert, d, de, local)
        act_widths.append((per_expert * local, de))
        if arch.n_shared_experts:
            ds = int(sh.d_shared_expert) * int(arch.n_shared_experts)
            gemm(T, (p - 1) * ds, d)
            gemm(T, d, ds)
            act_widths.append((T, ds))
    else:
        ff = int(sh.d_ff)
        gemm(T, (p - 1) * ff, d)
        gemm(T, d, ff)
        act_widths.append((T, ff))

    # attention core
    heads, dh = int(sh.n_heads), int(arch.head_dim)
    b, s_loc, s = c.micro_batch, c.positions, c.seq
    causal_pairs = b * s * (s + 1) // 2 // lay.cp
    attn_fwd_flops = 4 * heads * dh * causal_pairs
    if opt.attention is AttentionKernel.FLASH:
        f = dev.flash_attention_s(attn_fwd_flops, backward=False)
        bw = dev.flash_attention_s(attn_fwd_flops, backward=True)
        out.flops += 3 * attn_fwd_flops
    else:
        f1, b1 = gemm_fwd_bwd_s(dev, s_loc, s, dh, b * heads)  # scores
        f2, b2 = gemm_fwd_bwd_s(dev, s_loc, dh, s, b * heads)  # probabilities x values
        scores = b * heads * s_loc * s
        softmax_f = dev.elementwise_s(2 * scores * x)
        softmax_b = dev.elementwise_s(3 * scores * x)
        drop_f = dev.elementwise_s(scores * (2 * x + 1)) if opt.dropout else 0.0
        drop_b = dev.elementwise_s(scores * (2 * x + 1)) if opt.dropout else 0.0
        f = f1 + f2 + softmax_f + drop_f
        bw = b1 + b2 + softmax_b + drop_b
        out.flops += 3 * 4 * heads * dh * b * s_loc * s
    out.fwd["attention"] += f
    out.bwd["attention"] += bw
    attn_f, attn_b = f, bw

    # memory-bound kernels (bytes per token, forward)
    dd = d // t if lay.sp else d
    mask = dd if opt.dropout else 0
    fwd_bytes = T * (2 * 2 * dd * x + 2 * (3 * dd * x + mask))  # 2 norms, 2 residual adds
    kernels = 4
    for tokens, width in act_widths:
        fwd_bytes += tokens * (p * width) * x  # activation: reads (p-1) inputs, writes 1
        kernels += 1
    if not arch.n_positions:  # RoPE on q and k
        fwd_bytes += T * 2 * (q + kv) * x
        kernels += 1
    if moe:  # permute to experts and back
        fwd_bytes += 2 * 2 * T * int(arch.top_k) * d * x
        kernels += 2
    ew_f = dev.elementwise_s(fwd_bytes, kernels)
    ew_b = dev.elementwise_s(2 * fwd_bytes, 2 * kernels)
    out.fwd["elementwise"] += ew_f
    out.bwd["elementwise"] += ew_b

    # TP / SP collectives: 2 per layer forward, 2 backward (all-reduce or AG + RS pairs)
    if t > 1:
        act = T * d * x
        if lay.sp:
            pair = c.comm(Collective.ALL_GATHER, act, t, ("tp",))
            pair += c.comm(Collective.REDUCE_SCATTER, act, t, ("tp",))
            out.fwd["sp"] += 2 * pair
            out.bwd["sp"] += 2 * pair
        else:
            ar = c.comm(Collective.ALL_REDUCE, act, t, ("tp",))
            out.fwd["tp"] += 2 * ar
            out.bwd["tp"] += 2 * ar
    if moe and lay.ep > 1:
        sent = T * int(arch.top_k) * d * x // (t if lay.sp else 1)
        a2a = 2 * c.comm(Collective.ALL_TO_ALL, sent, lay.ep, ("ep",))
        out.fwd["ep"] += a2a
        out.bwd["ep"] += a2a
    if lay.cp > 1:
        block = T * 2 * kv * x
        hop = c.comm(Collective.P2P, block, 2, ("cp",))
        hops = lay.cp - 1
        exposed_f = hops * max(0.0, hop - attn_f / lay.cp)
        out.fwd["cp"] += exposed_f
        out.bwd["cp"] += hops * max(0.0, 2 * hop - attn_b / lay.cp)
    return out


def _recompute(c: StepContext, layer: StagePass) -> tuple[float, int]:
    """Seconds and FLOPs the checkpointing policy adds to one layer's backward: its whole
    forward (``full``; every FLOP above was counted as 3 x forward) or the attention core's
    forward (``selective``)."""
    ckpt = c.layout.ckpt
    if ckpt is Checkpointing.NONE:
        return 0.0, 0
    if ckpt is Checkpointing.SELECTIVE:
        return layer.fwd["attention"], _attention_fwd_flops(c)
    return layer.fwd_s, layer.flops // 3


def stage_pass(c: StepContext, stage: PipelineStage) -> StagePass:
    """One micro-batch through every layer the stage's rank holds (all its chunks)."""
    out = StagePass()
    for moe, count in ((False, stage.dense_layers), (True, stage.moe_layers)):
        if not count:
            continue
        layer = _layer(c, moe)
        rec_s, rec_flops = _recompute(c, layer)
        for side in ("fwd", "bwd"):
            for k, v in getattr(layer, side).items():
                getattr(out, side)[k] += count * v
        out.bwd["recompute"] += count * rec_s
        out.flops += count * (layer.flops + rec_flops)
    arch, lay, dev, x = c.arch, c.layout, c.device, c.workload.activation_dtype.bytes
    t, T, d = lay.tp, c.tokens, int(arch.d_model)
    act = T * d * x
    if stage.last:
        v = int(tp_shard(arch, t).vocab)
        f, b = gemm_fwd_bwd_s(dev, T, v, d)
        out.fwd["gemm"] += f
        out.bwd["gemm"] += b
        out.flops += 6 * T * v * d
        logits = T * v * 4  # fp32 logits of the vocabulary-parallel cross-entropy
        norm = T * 2 * (d // t if lay.sp else d) * x
        out.fwd["elementwise"] += dev.elementwise_s(2 * logits + norm, 3)
        out.bwd["elementwise"] += dev.elementwise_s(2 * logits + 2 * norm, 3)
    if t > 1:  # vocabulary-parallel embedding (first) and head input gradient (last)
        strategy = "sp" if lay.sp else "tp"
        ar = c.comm(Collective.ALL_REDUCE, act, t, ("tp",))
        out.fwd[strategy] += ar if stage.first else 0.0
        out.bwd[strategy] += ar if stage.last else 0.0
    if lay.pp > 1:
        v = lay.virtual_stages
        split = t if (t > 1 and (lay.sp or c.options.pp_scatter_gather)) else 1
        send = c.comm(Collective.P2P, act / split, 2, ("pp",))
        if split > 1 and not lay.sp:
            send += c.comm(Collective.ALL_GATHER, act, t, ("tp",))
        out.fwd["pp"] += v * send
        out.bwd["pp"] += v * send
    if not c.options.fused_grad_accumulation:
        dense, expert = _params(arch, lay, stage)
        out.bwd["elementwise"] += dev.elementwise_s((dense + expert) * (2 + 4 + 4))
    return out


def _attention_fwd_flops(c: StepContext) -> int:
    sh = tp_shard(c.arch, c.layout.tp)
    b, s = c.micro_batch, c.seq
    if c.options.attention is AttentionKernel.FLASH:
        pairs = b * s * (s + 1) // 2 // c.layout.cp
    else:
        pairs = b * c.positions * s
    return 4 * int(sh.n_heads) * int(c.arch.head_dim) * pairs


# --------------------------------------------------------------------------------------------
# The step
# --------------------------------------------------------------------------------------------


def _params(arch: Arch, layout: Layout, stage: PipelineStage) -> tuple[int, int]:
    """(dense, routed-expert) parameter elements on one rank of ``stage``."""
    n = stage.n_stages
    role = 0 if stage.first else (n - 1 if stage.last else min(1, n - 1))
    return _params_of(arch, layout, PipelineStage(role, n, stage.dense_layers, stage.moe_layers))


@cache
def _params_of(arch: Arch, layout: Layout, stage: PipelineStage) -> tuple[int, int]:
    p = stage_params(arch, layout, stage, Head.LM)
    return p.dense, p.expert


def _dp_groups(layout: Layout) -> list[tuple[str, tuple[str, ...], int]]:
    """(name, dims, ranks) of the groups that replicate dense and expert parameters."""
    out: list[tuple[str, tuple[str, ...], int]] = [
        ("dense", ("dp", "cp", "ep"), layout.dp * layout.cp * layout.ep)
    ]
    if layout.ep > 1:
        out.append(("expert", ("dp", "cp"), layout.dp * layout.cp))
    return out


def zero_per_micro_batch(c: StepContext, stage: PipelineStage, p: StagePass) -> None:
    """ZeRO-2 / ZeRO-3 collectives of one micro-batch, exposed beyond the pass they hide in."""
    lay, w = c.layout, c.workload.weight_dtype.bytes
    if lay.zero not in (ZeroStage.OS_G, ZeroStage.OS_G_P):
        return
    dense, expert = _params(c.arch, lay, stage)
    ag = rs = 0.0
    for name, dims, ranks in _dp_groups(lay):
        n = dense if name == "dense" else expert
        ag += c.comm(Collective.ALL_GATHER, n * w, ranks, dims)
        rs += c.comm(Collective.REDUCE_SCATTER, n * w, ranks, dims)
    comp_f, comp_b = p.compute("fwd"), p.compute("bwd")
    if lay.zero is ZeroStage.OS_G_P:
        p.fwd["dp"] += max(0.0, ag - comp_f)
        p.bwd["dp"] += max(0.0, ag + rs - comp_b)
    else:
        p.bwd["dp"] += max(0.0, rs - comp_b)


def _dp_after_flush(c: StepContext, stage: PipelineStage, p: StagePass) -> float:
    """Exposed gradient reduction and parameter gather of ZeRO-0/1/2 after the last backward."""
    lay, opt, w = c.layout, c.options, c.workload.weight_dtype.bytes
    if lay.zero is ZeroStage.OS_G_P:
        return 0.0
    dense, expert = _params(c.arch, lay, stage)
    reduce = gather = 0.0
    for name, dims, ranks in _dp_groups(lay):
        n = (dense if name == "dense" else expert) * w
        if lay.zero is ZeroStage.NONE:
            reduce += c.comm(Collective.ALL_REDUCE, n, ranks, dims)
        else:
            if lay.zero is ZeroStage.OS:
                reduce += c.comm(Collective.REDUCE_SCATTER, n, ranks, dims)
            gather += c.comm(Collective.ALL_GATHER, n, ranks, dims)
    hide_b = p.compute("bwd") if opt.overlap_grad_reduce else 0.0
    hide_f = p.compute("fwd") if opt.overlap_param_gather else 0.0
    return max(0.0, reduce - hide_b) + max(0.0, gather - hide_f)


def _optimizer(c: StepContext, stage: PipelineStage) -> tuple[float, float]:
    """(GPU optimizer seconds, host offload seconds) of the rank's parameter shard."""
    lay, opt = c.layout, c.options
    dense, expert = _params(c.arch, lay, stage)
    shard = 0
    for name, _, ranks in _dp_groups(lay):
        n = dense if name == "dense" else expert
        shard += -(-n // ranks) if lay.zero is not ZeroStage.NONE else n
    w = c.workload.weight_dtype.bytes
    if opt.offload_optimizer:
        bw = host_link_bytes_per_s(c.device.hardware, opt.host_link_bytes_per_s)
        return 0.0, 2 * shard * w / bw
    g = opt.main_grad_bytes
    return c.device.elementwise_s(shard * (26 + 2 * g), 3), 0.0


def train_step_time(
    arch: Arch,
    layout: Layout,
    sequences: int,
    seq_len: int,
    hardware: HardwareSpec,
    workload: Workload | None = None,
    options: StepOptions | None = None,
    calibration: Efficiency | None = None,
    profile: AcceleratorProfile | None = None,
) -> StepTime:
    """Predicted seconds of one training step (module docstring) and its breakdown.

    ``sequences`` of ``seq_len`` tokens per step (the global batch); ``calibration`` a measured
    profile that replaces the default efficiencies of ``hardware`` where it has tables.
    """
    workload = workload or Workload()
    options = options or StepOptions()
    check_layout(arch, layout)
    if options.main_grad_bytes not in (2, 4):
        raise SpecError(f"main_grad_bytes={options.main_grad_bytes} must be 2 or 4")
    share = data_share(layout, sequences, seq_len)
    device = Device(hardware, workload.compute_dtype, profile, calibration)
    c = StepContext.of(arch, layout, seq_len, share, device, options, workload)
    n_mb = share.micro_batches
    per_stage = []
    for st in stages(arch, layout.pp):
        p = stage_pass(c, st)
        zero_per_micro_batch(c, st, p)
        after = _dp_after_flush(c, st, p)
        opt_s, off_s = _optimizer(c, st)
        per_stage.append((st, p, after, opt_s, off_s))
    slowest = max(range(len(per_stage)), key=lambda i: per_stage[i][1].total_s)
    _, p, _, _, _ = per_stage[slowest]
    bubble = float(bubble_fraction(layout.schedule, layout.pp, n_mb, layout.virtual_stages))
    busy = n_mb * p.total_s
    bubble_s = bubble * busy
    dp_s = max(x[2] for x in per_stage)
    optimizer_s = max(x[3] for x in per_stage)
    offload_s = max(x[4] for x in per_stage)
    compute = {k: n_mb * (p.fwd[k] + p.bwd[k]) for k in COMPUTE_PARTS}
    comm = {k: n_mb * (p.fwd[k] + p.bwd[k]) for k in COMM_PARTS}
    comm["dp"] += dp_s
    comm = {k: v for k, v in comm.items() if v > 0}
    step = busy + bubble_s + dp_s + optimizer_s + offload_s
    model = model_flops_train(arch, share.sequences * layout.dp * layout.ep, seq_len)
    busiest_flops = max(n_mb * x[1].flops for x in per_stage)
    recompute_global = _recompute_flops_global(c, share.sequences * layout.dp * layout.ep)
    peak = device.peak_flops_per_s
    notes = []
    if options.offload_optimizer:
        notes.append("offload: the host's Adam step is not included, only the transfers")
    return StepTime(
        step_s=step,
        compute_s=compute,
        exposed_comm_s=comm,
        bubble_s=bubble_s,
        optimizer_s=optimizer_s,
        offload_s=offload_s,
        model_flops=model,
        hardware_flops=model + recompute_global,
        gpus=layout.n_gpus,
        peak_flops_per_s=peak,
        roofline_bound_s=busiest_flops / peak,
        slowest_stage=slowest,
        micro_batches=n_mb,
        efficiency_source=(
            calibration.name if calibration is not None else f"default {device.defaults.name}"
        ),
        notes=tuple(notes),
    )


def _recompute_flops_global(c: StepContext, sequences: int) -> int:
    """Forward FLOPs recomputed in the whole step (attention full, as ``model_flops``)."""
    ckpt = c.layout.ckpt
    if ckpt is Checkpointing.NONE:
        return 0
    arch = c.arch
    attention = 4 * int(arch.n_layers) * int(arch.q_width) * c.seq * c.seq * sequences
    if ckpt is Checkpointing.SELECTIVE:
        return attention
    head = 2 * int(arch.d_model) * int(arch.vocab) * sequences * c.seq
    return model_flops_train(arch, sequences, c.seq) // 3 - head
