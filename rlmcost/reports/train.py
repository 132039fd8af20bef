"""One training iteration of a model under a parallel layout on real GPUs (`rlmcost train`).

Answers "will my actor fit on these GPUs with this layout, and what does the layout cost in
communication and bubbles?": memory per rank by component (:mod:`rlmcost.parallel.memory`),
work per rank and global (:mod:`rlmcost.parallel.cost`, exact FLOPs; both through their
compiled twins in :mod:`rlmcost.compiled`, no sympy), communication bytes and
time per strategy and collective on the cluster's links (:mod:`rlmcost.parallel.comm`), and
the pipeline bubble fraction (:mod:`rlmcost.parallel.pipeline`), and the predicted step time
(:mod:`rlmcost.perf.train_step`: kernels by shape, exposed communication, bubbles, optimizer,
offload) with TFLOP/s per GPU and MFU (model FLOPs: the exact matrix-product count of forward
and backward, attention over the full S x S, no recomputation).

The iteration is ``batch`` sequences of ``seq`` tokens (global batch), split into micro-batches
of ``layout.micro_batch`` sequences on each of the P_d P_e data shards.
"""

from __future__ import annotations

from dataclasses import field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from rlmcost.compiled.memory import memory_per_stage
from rlmcost.compiled.train_step import work_per_stage_rank
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.breakdown import MemoryBreakdown, Mode, data_share
from rlmcost.parallel.comm import Traffic, traffic_per_rank
from rlmcost.parallel.layout import Layout, PipelineSchedule
from rlmcost.parallel.pipeline import bubble_fraction
from rlmcost.parallel.validate import check_layout
from rlmcost.parallel.zero_groups import hybrid, hybrid_note
from rlmcost.perf.step_pass import StepOptions
from rlmcost.perf.train_step import StepTime, train_step_time
from rlmcost.specs import ClusterSpec, HardwareSpec, ModelSpec, Workload, get_hardware, get_model

if TYPE_CHECKING:
    from rlmcost.timing import Efficiency

HOST_ADAM_NOTE = ("--offload-optimizer: the fp32 master weights and Adam's m and v live in host "
                  "memory (the optimizer term 0 on the GPU); the gradient buffer stays on the GPU "
                  "and is copied to the host each step")  # fmt: skip
"""The memory side of ``StepOptions.offload_optimizer`` (:func:`host_adam`)."""


def host_adam(m: MemoryBreakdown) -> MemoryBreakdown:
    """``m`` with the optimizer on the host: Megatron-core's CPU optimizer offload
    (``--optimizer-cpu-offload --optimizer-offload-fraction 1.0``,
    megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py ``HybridDeviceOptimizer``) keeps
    the fp32 master parameters and Adam's states on the CPU and copies the GPU's main
    gradients to them each step (the time side: :func:`rlmcost.perf.data_parallel.
    optimizer_step_s`); ZeRO-Offload (Ren et al. 2021 §4) likewise, and frees the gradient
    partition as well, which this keeps (an upper bound for DeepSpeed)."""
    return replace(m, optimizer=0)


DEFAULT_MICRO_BATCHES_PER_STAGE = 4
"""Default micro-batches per iteration: 4 per pipeline stage (bubble (p-1)/(4p) < 25 %)."""


@dataclass(frozen=True)
class TrainReport:
    """Everything `rlmcost train` prints, exact where it is a count."""

    model: str
    hardware: str
    gpus: int
    nodes: int
    layout: Layout
    batch: int
    seq: int
    micro_batches: int
    memory: MemoryBreakdown  # the most loaded rank
    memory_stage: int  # its pipeline stage
    hbm_bytes: int
    work_per_rank_flops: int
    work_global_flops: int
    compute_time_s: float  # work per rank at the dense peak of the compute dtype
    bubble_fraction: Fraction
    traffic: list[Traffic]
    workload: Workload
    step: StepTime  # the predicted step time and its breakdown
    notes: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return self.memory.total <= self.hbm_bytes

    @property
    def communication_bytes_per_rank(self) -> int:
        return sum(t.bytes_per_rank for t in self.traffic)

    @property
    def communication_time_s(self) -> float:
        return sum(t.time_s or 0.0 for t in self.traffic)

    def to_json(self) -> dict[str, Any]:
        """What `rlmcost train --json` prints (schema: `rlmcost schema train`)."""
        from rlmcost.run.schema_envelope import versioned

        lay = self.layout
        return versioned("train", {
            "model": self.model,
            "hardware": self.hardware,
            "gpus": self.gpus,
            "nodes": self.nodes,
            "layout": {
                "dp": lay.dp,
                "tp": lay.tp,
                "pp": lay.pp,
                "cp": lay.cp,
                "ep": lay.ep,
                "sp": lay.sp,
                "zero": str(lay.zero),
                "zero_shard": lay.zero_group,
                "ckpt": str(lay.ckpt),
                "micro_batch": lay.micro_batch,
                "schedule": str(lay.schedule),
                "virtual_stages": lay.virtual_stages,
            },  # fmt: skip
            "batch_sequences": self.batch,
            "seq_tokens": self.seq,
            "micro_batches": self.micro_batches,
            "memory_per_rank_bytes": self.memory.to_json(),
            "memory_peak_stage": self.memory_stage,
            "hbm_bytes": self.hbm_bytes,
            "fits": self.fits,
            "work_per_rank_flops": self.work_per_rank_flops,
            "work_global_flops": self.work_global_flops,
            "compute_time_at_peak_s": self.compute_time_s,
            "bubble_fraction": float(self.bubble_fraction),
            "communication": [t.to_json() for t in self.traffic],
            "communication_bytes_per_rank": self.communication_bytes_per_rank,
            "communication_time_s": self.communication_time_s,
            "dtypes": {
                "weights": str(self.workload.weight_dtype),
                "gradients": str(self.workload.gradient_dtype),
                "optimizer": "fp32 (master, m, v)",
                "activations": str(self.workload.activation_dtype),
                "logits": str(self.workload.logits_dtype),
                "compute": str(self.workload.compute_dtype),
            },
            "step_time_s": self.step.step_s,
            "tflops_per_gpu": self.step.tflops_per_gpu,
            "mfu": self.step.mfu,
            "step_time": self.step.to_json(),
            "notes": self.notes,
        })  # fmt: skip


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural past one: '1 sequence', '4 micro-batches'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('h') else 's'}"


def _check_batch(layout: Layout, batch: int, seq: int) -> None:
    unit = layout.dp * layout.micro_batch
    if batch < 1 or batch % unit:
        lo = max(unit, batch - batch % unit)
        raise SpecError(
            f"batch={batch} must be a multiple of dp*micro_batch={layout.dp}*"
            f"{layout.micro_batch}={unit}; try --batch {lo} or {lo + unit}"
        )
    for name, degree in (("cp", layout.cp), ("tp (with --sp)", layout.tp if layout.sp else 1)):
        if seq % degree:
            raise SpecError(
                f"seq={seq} must be divisible by {name}={degree}; try --seq {seq - seq % degree}"
            )
    n_mb = batch // unit
    if layout.schedule is PipelineSchedule.INTERLEAVED and layout.pp > 1 and n_mb % layout.pp:
        raise SpecError(
            f"interleaved 1F1B needs the {n_mb} micro-batches per data shard to be a multiple "
            f"of pp={layout.pp}; try --batch {unit * layout.pp * max(1, n_mb // layout.pp)}"
        )


def train_report(
    model: str | ModelSpec,
    layout: Layout,
    hardware: str | HardwareSpec = "h100-sxm",
    gpus: int | None = None,
    seq: int = 4096,
    batch: int | None = None,
    workload: Workload | None = None,
    options: StepOptions | None = None,
    calibration: Efficiency | None = None,
) -> TrainReport:
    """Memory per rank, work, communication, bubbles and predicted time of one training
    iteration; ``calibration`` (a measured profile) replaces the default efficiencies."""
    spec = get_model(model)
    hw = hardware if isinstance(hardware, HardwareSpec) else get_hardware(hardware)
    workload = workload or Workload()
    arch = spec.arch()
    gpus = layout.n_gpus if gpus is None else gpus
    notes = check_layout(arch, layout, gpus)
    cluster = ClusterSpec.of(hw, gpus)
    if seq < 1:
        raise SpecError(f"seq={seq} must be a positive integer")
    if batch is None:
        per_stage = DEFAULT_MICRO_BATCHES_PER_STAGE if layout.pp > 1 else 1
        batch = layout.dp * layout.micro_batch * per_stage * layout.pp
        n_mb = per_stage * layout.pp
        notes.append(f"batch defaulted to {_count(batch, 'sequence')} "
                     f"({_count(n_mb, 'micro-batch')})")
    _check_batch(layout, batch, seq)
    if hybrid(layout):
        notes.append(hybrid_note(layout))
    share = data_share(layout, batch, seq)
    per_stage_memory = memory_per_stage(arch, layout, Mode.TRAIN, batch, seq, workload)
    if options is not None and options.mtp_layers:  # its modules on the last stage
        from rlmcost.placement.mtp import block_bytes, with_block

        add = block_bytes(arch, layout, options.mtp_layers, options.mtp_repeated, True, batch,
                          seq, workload)
        per_stage_memory = with_block(per_stage_memory, add)
        notes.append(f"multi-token prediction: {options.mtp_layers} depth(s) on the last "
                     "pipeline stage, each a [2d -> d] projection, one layer of the last "
                     "layer's shape and the output head with its loss, in every micro-batch "
                     "(rlmcost.perf.mtp_pass); their weights, gradients, Adam states and saved "
                     "activations on that stage (rlmcost.placement.mtp)")
    if options is not None and options.offload_optimizer:
        per_stage_memory = [host_adam(m) for m in per_stage_memory]
        notes.append(HOST_ADAM_NOTE)
    peak_stage = max(range(len(per_stage_memory)), key=lambda s: per_stage_memory[s].total)
    per_stage_work = work_per_stage_rank(arch, layout, batch, seq)  # parallel.cost, compiled
    replicas = layout.dp * layout.tp * layout.cp
    work_rank, work_global = int(max(per_stage_work)), int(sum(per_stage_work) * replicas)
    traffic = traffic_per_rank(arch, layout, batch, seq, workload, hw, cluster.gpus_per_node)
    step = train_step_time(arch, layout, batch, seq, hw, workload, options, calibration)
    notes.extend(step.notes)
    return TrainReport(
        model=spec.name,
        hardware=hw.name,
        gpus=gpus,
        nodes=cluster.nodes,
        layout=layout,
        batch=batch,
        seq=seq,
        micro_batches=share.micro_batches,
        memory=per_stage_memory[peak_stage],
        memory_stage=peak_stage,
        hbm_bytes=hw.hbm_capacity_bytes,
        work_per_rank_flops=work_rank,
        work_global_flops=work_global,
        compute_time_s=work_rank / hw.peak(workload.compute_dtype),
        bubble_fraction=bubble_fraction(
            layout.schedule, layout.pp, share.micro_batches, layout.virtual_stages
        ),
        traffic=traffic,
        workload=workload,
        step=step,
        notes=notes,
    )
