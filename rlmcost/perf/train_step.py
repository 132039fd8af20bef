"""Predicted time of one training step of a model under a parallel layout.

Every rank of a pipeline stage runs its micro-batches through the stage's layers
(:mod:`~rlmcost.perf.step_pass`: kernels by shape, recomputation, TP, SP, CP, EP and PP
communication; the embedding's dense gradient, :mod:`~rlmcost.perf.embedding_grad`), then
reduces gradients and steps the optimizer
(:mod:`~rlmcost.perf.data_parallel`: DP and ZeRO collectives with their overlap rules, Adam,
offload).

Step time = slowest stage's micro-batch time x micro-batches x (1 + bubble fraction) +
DeepSpeed's serial blocking p2p where set (:mod:`~rlmcost.perf.deepspeed_pipe`) + exposed
DP / ZeRO communication + optimizer + offload. Under Megatron's interleaved ``overlap_p2p_comm``
the micro-batch time leaves its PP transfers out and the step adds what the schedule exposes
(:mod:`~rlmcost.perf.megatron_pipe`).

FLOP conventions. ``model_flops``: the project's exact matrix-product count of forward +
backward (3 x forward), attention counted over the full S x S (as FlopCounterMode and as
PaLM's and Megatron-LM's MFU formulas do), no recomputation; ``MFU = model_flops / (step x
GPUs x dense peak)``. ``hardware_flops`` adds the recomputed forward. The roofline bound
(:attr:`StepTime.roofline_bound_s`) divides the busiest rank's FLOPs with causal attention
pairs and recomputation by the dense peak (an FP8 trainer's: the FP8 peak, its Linear layers'
GEMMs' own, :mod:`~rlmcost.perf.fp8_train`): no kernel can beat it, so a prediction is never
below it. MFU stays over the compute dtype's peak.

Overlapped DP / ZeRO collectives slow the compute beside them (NCCL's CTAs and HBM traffic;
:mod:`~rlmcost.perf.overlap_contention`, Lee et al. 2025's measured mean), counted in ``dp``.

Suppressed: the tied-embedding gradient all-reduce between the first and last stage, the
scalar all-reduces (loss, grad norm; Megatron-LM's loss report and data loading where
``megatron_loop``, :mod:`~rlmcost.perf.megatron_loop`), data loading otherwise, stragglers, and
the gradient-accumulation add when it is not fused into the GEMM. The SMs TransformerEngine's
userbuffers take from the GEMMs under ``tp_comm_overlap``: :mod:`~rlmcost.perf.tp_overlap`.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.parallel.shard import stages
from rlmcost.parallel.validate import check_layout
from rlmcost.perf.attention_shapes import indexer_flops, mla_up_weights, pair_flops
from rlmcost.perf.ckpt_early_stop import (
    early_stop_note,
    skipped_flops_per_token,
    skips_down_projection,
)
from rlmcost.perf.composer_optimizer import COMPOSER_OPTIMIZER_NOTE, composer_optimizer_s
from rlmcost.perf.data_parallel import dp_after_flush, optimizer_step_s, zero_per_micro_batch
from rlmcost.perf.deepspeed_pipe import serial_p2p_s
from rlmcost.perf.efficiency import AcceleratorProfile, Device
from rlmcost.perf.embedding_grad import embedding_backward
from rlmcost.perf.fp8_train import fp8_peak
from rlmcost.perf.fsdp_prefetch import PREFETCH_NOTES
from rlmcost.perf.full_layers import full_extra_flops
from rlmcost.perf.interval import TEACHER_FORCED
from rlmcost.perf.megatron_loop import bucket_kernels_s, grad_zero_s, loop_per_micro_batch
from rlmcost.perf.megatron_pipe import overlapped_p2p_s, overlaps_p2p
from rlmcost.perf.module_ckpt import module_note, module_skipped_flops_per_token, per_module
from rlmcost.perf.moe_host import MOE_HOST_NOTE
from rlmcost.perf.moe_notes import moe_notes
from rlmcost.perf.policy_worker import worker_kernels
from rlmcost.perf.selective_ac import SelectiveRecompute, recomputed_mms
from rlmcost.perf.step_pass import (
    COMM_PARTS,
    COMPUTE_PARTS,
    StepContext,
    StepOptions,
    stage_pass,
)
from rlmcost.perf.step_pass import AttentionKernel as AttentionKernel  # the train command's import
from rlmcost.perf.tp_overlap import overlap_tp_comm
from rlmcost.perf.train_metrics import TRAIN_METRICS_NOTE, train_metric_kernels
from rlmcost.specs.workload import Workload

if TYPE_CHECKING:
    from rlmcost.specs import HardwareSpec
    from rlmcost.timing import Efficiency


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

    @property
    def interval_s(self) -> tuple[float, float]:
        """(low, high) seconds of the step: the teacher-forced passes' spread of kernel
        efficiency (:data:`rlmcost.perf.interval.TEACHER_FORCED`, the RL iteration's forwards'
        and updates' too), the low end never below the roofline bound."""
        low, high = TEACHER_FORCED.of(self.step_s)
        return max(low, min(self.roofline_bound_s, self.step_s)), high

    def to_json(self) -> dict[str, object]:
        return {
            "step_time_s": self.step_s,
            "step_time_interval_s": list(self.interval_s),
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
    w = d * int(arch.n_experts) + int(arch.top_k) * p * int(arch.expert_width) * int(arch.d_expert)
    w += 2 * d * int(arch.moe_latent)  # a latent MoE's d -> l and l -> d
    if arch.n_shared_experts:
        w += int(arch.n_shared_experts) * p * d * int(arch.d_shared_expert)
        w += d if arch.shared_expert_gate else 0
    return w


def _attn_weights(arch: Arch) -> int:
    if arch.is_mla:  # the latent projections (rlmcost.blocks, _mla_matmul_weights_per_token)
        from rlmcost.blocks.attention import _attention_weights_per_token

        return int(_attention_weights_per_token(arch))
    d, q, kv = int(arch.d_model), int(arch.q_width), int(arch.kv_width)
    return d * (q + 2 * kv) + q * d


def model_flops_train(arch: Arch, sequences: int, seq_len: int) -> int:
    """Forward + backward matrix-product FLOPs of ``sequences`` x ``seq_len`` tokens, attention
    over the full S x S (= ``blocks.work_train`` with full counting and the LM head; DSA: each
    query's min(S, k) keys and the indexers' S x S scores, forward only)."""
    dense, moe = int(arch.n_dense_layers), int(arch.n_moe_layers) if arch.is_moe else 0
    per_token = 2 * (int(arch.n_layers) * _attn_weights(arch) + dense * _ffn_weights(arch, False))
    per_token += 2 * moe * _ffn_weights(arch, True) if moe else 0
    per_token += 2 * int(arch.d_model) * int(arch.vocab)
    keys = seq_len if arch.index_topk is None else min(seq_len, int(arch.index_topk))
    attention = int(arch.n_layers) * pair_flops(arch, int(arch.n_heads)) * seq_len * keys
    attention += full_extra_flops(arch, seq_len, seq_len * keys)  # Gemma 4 (perf.full_layers)
    indexer = indexer_flops(arch, seq_len, seq_len * seq_len)  # DSA: no backward
    return 3 * sequences * (seq_len * per_token + attention) + sequences * indexer


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
    if options.grad_reduce_bytes not in (0, 2, 4):
        raise SpecError(
            f"grad_reduce_bytes={options.grad_reduce_bytes} must be 2 or 4 (0: weight dtype)"
        )
    if options.pp_serial_p2p and layout.virtual_stages > 1:
        raise SpecError(
            f"pp_serial_p2p (DeepSpeed's TrainSchedule) has no interleaving; "
            f"virtual_stages={layout.virtual_stages} must be 1"
        )
    share = data_share(layout, sequences, seq_len)
    device = Device(hardware, workload.compute_dtype, profile, calibration)
    c = StepContext.of(arch, layout, seq_len, share, device, options, workload)
    n_mb = share.micro_batches
    per_stage = []
    for st in stages(arch, layout):
        p = stage_pass(c, st)
        embedding_backward(c, st, p)
        worker_kernels(c, st, p)
        train_metric_kernels(c, st, p)  # Composer's training metrics (perf.train_metrics)
        overlap_tp_comm(c, st, p)
        loop_per_micro_batch(c, st, p)  # Megatron-LM's batch copy and loss report
        zero_per_micro_batch(c, st, p)
        buckets = bucket_kernels_s(c, st)  # Megatron-core DDP's once-a-step kernels
        after = dp_after_flush(c, st, p, buckets)
        opt_s, off_s = optimizer_step_s(c, st)
        opt_s += composer_optimizer_s(c, st)  # Composer's optimizer step (perf.composer_optimizer)
        once = buckets + grad_zero_s(c, st) + p.fp8_weights_s  # + FP8 weights' casts
        per_stage.append((st, p, after, opt_s, off_s, once))
    slowest = max(range(len(per_stage)), key=lambda i: per_stage[i][1].total_s)
    p = per_stage[slowest][1]
    bubble = float(bubble_fraction(layout.schedule, layout.pp, n_mb, layout.virtual_stages))
    overlap = overlaps_p2p(c)  # Megatron's interleaved overlap_p2p_comm (perf.megatron_pipe)
    busy = n_mb * (p.total_s - (p.fwd["pp"] + p.bwd["pp"] if overlap else 0.0))
    bubble_s = bubble * busy
    dp_s = max(x[2] for x in per_stage)
    optimizer_s = max(x[3] for x in per_stage)
    offload_s = max(x[4] for x in per_stage)
    compute = {k: n_mb * (p.fwd[k] + p.bwd[k]) for k in COMPUTE_PARTS}
    loop_s = max(x[5] for x in per_stage)  # Megatron-core's once-a-step kernels
    compute["elementwise"] += loop_s
    comm = {k: n_mb * (p.fwd[k] + p.bwd[k]) for k in COMM_PARTS}
    comm["dp"] += dp_s
    serial_s = serial_p2p_s(c, n_mb)  # DeepSpeed's blocking p2p (perf.deepspeed_pipe)
    serial_s += overlapped_p2p_s(c, p, n_mb) if overlap else 0.0
    comm["pp"] = serial_s + (0.0 if overlap else comm["pp"])
    comm = {k: v for k, v in comm.items() if v > 0}
    step = busy + bubble_s + serial_s + dp_s + loop_s + optimizer_s + offload_s
    model = model_flops_train(arch, share.sequences * layout.dp, seq_len)
    busiest_flops = max(n_mb * x[1].flops for x in per_stage)
    recompute_global = _recompute_flops_global(c, share.sequences * layout.dp)
    peak = device.peak_flops_per_s
    bound_peak = fp8_peak(hardware, None) if options.fp8 else peak  # FP8 GEMMs (fp8_train)
    notes = []
    if options.offload_optimizer:
        notes.append("offload: the states' transfers over the host link, then the host's Adam "
                     "step at its memory bandwidth (rlmcost.perf.data_parallel.cpu_adam_s)")
    if compute.get("host", 0.0) > 0:
        notes.append(MOE_HOST_NOTE)
    if options.train_metrics:
        notes.append(TRAIN_METRICS_NOTE)
    if options.composer_optimizer:
        notes.append(COMPOSER_OPTIMIZER_NOTE)
    if options.module_ckpt and layout.ckpt is Checkpointing.FULL and per_module(arch):
        notes.append(module_note(options))  # NeMo RL's modules apart (perf.module_ckpt)
    elif options.recompute_early_stop and layout.ckpt is Checkpointing.FULL:
        notes.append(early_stop_note(arch, options))
    notes += moe_notes((layout,), options, arch)  # capacity, unfused permutation (MoE only)
    if layout.zero is ZeroStage.OS_G_P and options.fsdp_backward_prefetch in PREFETCH_NOTES:
        notes.append(PREFETCH_NOTES[options.fsdp_backward_prefetch])
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
        roofline_bound_s=busiest_flops / bound_peak,
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
    keys = c.seq if arch.index_topk is None else min(c.seq, int(arch.index_topk))  # DSA: top k
    attention = int(arch.n_layers) * pair_flops(arch, int(arch.n_heads)) * c.seq * keys * sequences
    attention += sequences * full_extra_flops(arch, 0, c.seq * keys)  # Gemma 4's full layers
    if ckpt is Checkpointing.SELECTIVE and c.options.selective is SelectiveRecompute.ATTENTION_CORE:
        return attention
    if ckpt is Checkpointing.SELECTIVE and c.options.selective is SelectiveRecompute.MODULES:
        mods, tokens = c.options.recompute_modules, sequences * c.seq  # Megatron's modules
        moe, dense = int(arch.n_moe_layers) if arch.is_moe else 0, int(arch.n_dense_layers)
        ffn = moe * _ffn_weights(arch, True) * ("moe" in mods)
        ffn += dense * _ffn_weights(arch, False) * ("mlp" in mods)
        up = mla_up_weights(arch) * int(arch.n_layers) * ("mla_up_proj" in mods and arch.is_mla)
        return attention * ("core_attn" in mods) + 2 * tokens * (ffn + up)
    if ckpt is Checkpointing.SELECTIVE:  # every second mm of each dense block (perf.selective_ac)
        mms = recomputed_mms(arch, 1, sequences * c.seq)
        return int(arch.n_layers) * sum(2 * m * n * k for m, n, k in mms)
    head = 2 * int(arch.d_model) * int(arch.vocab) * sequences * c.seq
    rerun_head = c.options.checkpoint_embeddings  # perf.deepspeed_pipe: the head runs again
    skip = (int(arch.n_dense_layers) * skipped_flops_per_token(arch, 1) * sequences * c.seq
            if skips_down_projection(arch, c.options) else 0)  # torch's early stop
    if c.options.module_ckpt and per_module(arch):  # NeMo RL's modules apart (perf.module_ckpt)
        skip = module_skipped_flops_per_token(arch, c.options) * sequences * c.seq
    indexer = sequences * indexer_flops(arch, c.seq, c.seq * c.seq)  # DSA: forward only
    forward = (model_flops_train(arch, sequences, c.seq) - indexer) // 3 + indexer
    return forward - (0 if rerun_head else head) - skip
