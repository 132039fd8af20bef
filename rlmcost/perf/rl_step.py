"""Predicted time of an RL iteration's teacher-forced jobs: forwards (log-probs, reference,
values, rewards) and training steps, and of the transfers between layouts and groups.

* **Training** (actor, critic updates): :func:`~rlmcost.perf.train_step.train_step_time` per
  optimizer step (micro-batches, pipeline bubbles, exposed TP/SP/CP/EP/PP/DP communication,
  the optimizer), times the optimizer steps of the invocation (epochs x mini-batches). A model
  with a d x 1 value head (critic, reward model) has no LM head: its LM-head GEMMs (forward,
  data- and weight-gradient) and the fp32 cross-entropy kernels are taken off each micro-batch
  when the layout has no pipeline (with a pipeline the head sits on the last stage and may not
  set the step; it is left in, an overestimate of 2 V d per token on that stage).
* **Forward** (assessment): the forward half of the same per-stage model (the same GEMMs,
  FlashAttention forward, memory-bound kernels, forward TP/SP/EP/CP communication, pipeline
  sends and ZeRO-3 parameter gathers exposed beyond the compute they hide behind), per
  micro-batch, times the micro-batches, plus the pipeline's fill and drain (the bubble
  fraction of its schedule). The LM head ends in the log-softmax over fp32 logits, whose
  kernels the framework sets (``StepOptions.logprob_head``, :mod:`rlmcost.perf.logprob_head`;
  by default two passes of 4 V bytes per token); a value head is a d x 1 GEMM.
* **Packing** (verl ``use_remove_padding``, OpenRLHF ``packing_samples``, NeMo RL sequence
  packing): sequences of lengths x_j = S + t_j are modelled as ``n' = ceil(sum x / L)``
  sequences of ``L = ceil(sum x^2 / sum x)`` tokens, so that both the token count (n' L >= sum
  x) and the causal attention pairs (n' L^2 >= sum x^2) are at least the real ones.
* **Transfers**: a weight sync or a reshard moves its bytes per device at the link's achieved
  bus bandwidth (NVLink inside a node, the NIC across nodes; :func:`~rlmcost.perf.collectives.
  link`) plus one latency.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.choices import Head
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.memo import memoized
from rlmcost.parallel.breakdown import DataShare, data_share
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.parallel.shard import stages, tp_shard
from rlmcost.parallel.validate import check_layout
from rlmcost.perf.collectives import link
from rlmcost.perf.data_parallel import zero_per_micro_batch
from rlmcost.perf.efficiency import Device
from rlmcost.perf.policy_worker import worker_kernels
from rlmcost.perf.step_pass import (
    COMPUTE_PARTS,
    StepContext,
    StepOptions,
    gemm_fwd_bwd_s,
    stage_pass,
)
from rlmcost.perf.train_step import StepTime, train_step_time
from rlmcost.specs.workload import Workload

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rlmcost.specs import HardwareSpec


@dataclass(frozen=True)
class Packed:
    """Sequences as a packing trainer feeds them: ``sequences`` of ``seq_len`` tokens."""

    sequences: int
    seq_len: int


def length_counts(lengths: Sequence[int]) -> list[tuple[int, int]]:
    """(length, how many) of ``lengths``' distinct values, for exact power sums over a batch
    at the cost of its distinct lengths (one when every sequence has the same: a count in C).

    >>> length_counts([5, 5, 5]), length_counts((2, 3, 2))
    ([(5, 3)], [(2, 2), (3, 1)])
    """
    if lengths and lengths.count(lengths[0]) == len(lengths):
        return [(lengths[0], len(lengths))]
    return list(Counter(lengths).items())


def packed(lengths: Sequence[int]) -> Packed:
    """The packed equivalent of sequences of ``lengths`` tokens (module docstring).

    >>> packed([100, 100, 100])
    Packed(sequences=3, seq_len=100)
    >>> packed([100, 300])  # L = ceil(100000 / 400) = 250, n' = ceil(400 / 250) = 2
    Packed(sequences=2, seq_len=250)
    """
    return packed_counts(length_counts(lengths))


def packed_counts(counts: Sequence[tuple[int, int]]) -> Packed:
    """:func:`packed` of the sequences whose (length, how many) are ``counts`` (exact ints:
    the same sums).

    >>> packed_counts([(100, 1), (300, 1)])
    Packed(sequences=2, seq_len=250)
    """
    if not counts or min(x for x, _ in counts) < 1:
        raise SpecError("packing needs at least one sequence of at least one token")
    s1 = sum(m * x for x, m in counts)
    s2 = sum(m * x * x for x, m in counts)
    seq = -(-s2 // s1)
    return Packed(-(-s1 // seq), seq)


@dataclass(frozen=True)
class ForwardTime:
    """Predicted seconds of a teacher-forced forward over a batch, and its breakdown."""

    time_s: float
    compute_s: float  # GEMMs, attention, memory-bound kernels (slowest stage, all micro-batches)
    exposed_comm_s: float  # TP/SP/EP/CP/PP and ZeRO-3 gathers beyond the compute
    bubble_s: float
    micro_batches: int
    logprob_head_s: float = 0.0  # of compute_s: the log-softmax over fp32 logits (last stage)

    def to_json(self) -> dict[str, float]:
        return {
            "time_s": self.time_s,
            "compute_s": self.compute_s,
            "exposed_communication_s": self.exposed_comm_s,
            "bubble_s": self.bubble_s,
            "logprob_head_s": self.logprob_head_s,
        }


def _head_fix(c: StepContext, head: Head, backward: bool) -> float:
    """Seconds to add to one micro-batch of the last stage for ``head`` in place of the LM
    head train_step prices: minus the LM head's GEMMs and fp32 cross-entropy kernels, plus a
    d x 1 GEMM (0 for the LM head)."""
    if head is Head.LM:
        return 0.0
    dev, lay = c.device, c.layout
    T, d = c.tokens, int(c.arch.d_model)
    v = int(tp_shard(c.arch, lay.tp).vocab)
    x, h = c.workload.activation_dtype.bytes, c.options.logprob_head
    f, b = gemm_fwd_bwd_s(dev, T, v, d)
    norm = T * 2 * (d // lay.tp if lay.sp else d) * x
    lm = f + dev.elementwise_s(T * v * h.fwd_bytes + norm, h.fwd_kernels)
    if backward:
        lm += b + dev.elementwise_s(T * v * h.bwd_bytes + 2 * norm, h.bwd_kernels)
    vf, vb = gemm_fwd_bwd_s(dev, T, 1, d)
    return (vf + (vb if backward else 0.0)) - lm


@memoized()
def forward_time(
    arch: Arch,
    layout: Layout,
    sequences: int,
    seq_len: int,
    hardware: HardwareSpec,
    workload: Workload | None = None,
    head: Head = Head.LM,
    options: StepOptions | None = None,
) -> ForwardTime:
    """Predicted seconds of a forward of ``sequences`` x ``seq_len`` tokens (module docstring)."""
    check_layout(arch, layout)
    c, share = _context(arch, layout, sequences, seq_len, hardware, workload, options)
    per_stage = []
    for st in stages(arch, layout):
        p = stage_pass(c, st)
        worker_kernels(c, st, p)
        zero_per_micro_batch(c, st, p)
        compute = p.compute("fwd") - p.fwd["recompute"]
        comm = sum(v for k, v in p.fwd.items() if k not in COMPUTE_PARTS)
        if st.last:
            compute += _head_fix(c, head, backward=False)
        per_stage.append((max(0.0, compute), comm, p.fp8_weights_fwd_s))  # once a call: fp8_train
    compute, comm, cast = max(per_stage, key=lambda x: x[0] + x[1])
    n = share.micro_batches
    busy = n * (compute + comm)
    bubble = float(bubble_fraction(layout.schedule, layout.pp, n, layout.virtual_stages)) * busy
    return ForwardTime(busy + bubble + cast, n * compute + cast, n * comm, bubble, n,
                       n * logprob_head_s(c, head, backward=False))  # fmt: skip


def logprob_head_s(c: StepContext, head: Head, backward: bool) -> float:
    """Seconds of one micro-batch's log-softmax over the last stage's fp32 logits
    (``StepOptions.logprob_head``), forward or forward and backward; 0 for a value head."""
    if head is not Head.LM:
        return 0.0
    h, dev = c.options.logprob_head, c.device
    vocab = c.tokens * int(tp_shard(c.arch, c.layout.tp).vocab)
    out = dev.elementwise_s(vocab * h.fwd_bytes, h.fwd_kernels)
    return out + (dev.elementwise_s(vocab * h.bwd_bytes, h.bwd_kernels) if backward else 0.0)


@memoized()
def train_time(
    arch: Arch,
    layout: Layout,
    sequences: int,
    seq_len: int,
    hardware: HardwareSpec,
    workload: Workload | None = None,
    head: Head = Head.LM,
    options: StepOptions | None = None,
) -> StepTime:
    """:func:`~rlmcost.perf.train_step.train_step_time` of one optimizer step, with a value
    head in place of the LM head when there is no pipeline (module docstring)."""
    workload = workload or Workload()
    step = train_step_time(arch, layout, sequences, seq_len, hardware, workload, options)
    if head is Head.LM or layout.pp > 1:
        return step
    c, _ = _context(arch, layout, sequences, seq_len, hardware, workload, options)
    fix = step.micro_batches * _head_fix(c, head, backward=True)
    compute = dict(step.compute_s)
    compute["gemm"] = max(0.0, compute["gemm"] + fix)
    return replace(step, step_s=max(step.step_s + fix, 0.0), compute_s=compute)


def train_logprob_head_s(
    arch: Arch,
    layout: Layout,
    sequences: int,
    seq_len: int,
    hardware: HardwareSpec,
    workload: Workload | None = None,
    head: Head = Head.LM,
    options: StepOptions | None = None,
) -> float:
    """Seconds of one optimizer step's log-softmax over fp32 logits, forward and backward,
    on the last stage (of :func:`train_time`'s compute; :func:`logprob_head_s`)."""
    c, share = _context(arch, layout, sequences, seq_len, hardware, workload, options)
    return share.micro_batches * logprob_head_s(c, head, backward=True)


def _context(arch: Arch, layout: Layout, sequences: int, seq_len: int, hardware: HardwareSpec,
             workload: Workload | None, options: StepOptions | None
             ) -> tuple[StepContext, DataShare]:  # fmt: skip
    """The pass context of ``sequences`` x ``seq_len`` tokens in ``layout`` (defaults: the
    default workload and step options) and the rank's data share."""
    workload = workload or Workload()
    share = data_share(layout, sequences, seq_len)
    device = Device(hardware, workload.compute_dtype)
    return StepContext.of(arch, layout, seq_len, share, device, options or StepOptions(),
                          workload), share  # fmt: skip


def link_transfer_s(
    bytes_per_device: float, hardware: HardwareSpec, gpus: int, collective: bool = False
) -> float:
    """Seconds for every device of a ``gpus``-device span to receive ``bytes_per_device`` at
    the achieved bus bandwidth of its link (NVLink within a node, else the NIC), plus one
    latency. A ``collective`` over the span's whole nodes (the all-gather of a reshard) spreads
    its node-crossing bytes over the NICs of every GPU of a node
    (:func:`~rlmcost.perf.collectives.inter_node_bytes_per_s`, the link its bound reads:
    :func:`~rlmcost.placement.transfer.group_link_bytes_per_s`); a copy keeps to its own NIC."""
    if bytes_per_device <= 0:
        return 0.0
    per_node = min(gpus, hardware.gpus_per_node) if collective else 1
    lk = link(hardware, intra_node=gpus <= hardware.gpus_per_node, ranks_per_node=per_node)
    return lk.latency_s + bytes_per_device / lk.bus_bytes_per_s
