"""Data parallelism and the optimizer step of one rank of a training step.

  - DP / ZeRO-0/1/2 gradient reduction (all-reduce, or reduce-scatter): **overlapped** with
    the backward of the last micro-batch when ``overlap_grad_reduce`` (PyTorch DDP, Megatron
    ``overlap_grad_reduce``; Li et al. 2020, arXiv 2006.15704), only the excess exposed;
    else fully exposed after the flush (a TP-replicated Gated DeltaNet, ``StepOptions.
    linear_mixer_replicated``, reduced whole by every TP rank's data-parallel group:
    :mod:`~rlmcost.perf.linear_mixer`). The reduce moves ``grad_reduce_bytes`` per parameter
    (0: the weight dtype's): Megatron-core reduces its gradient buffer, fp32 where
    ``accumulate_allreduce_grads_in_fp32`` (forced on for bf16 by Megatron-LM's
    megatron/training/arguments.py @f2e5db402: "bfloat16 requires gradient accumulation and
    all-reduce to be done in fp32"; ``--grad-reduce-in-bf16`` came later; NeMo RL's recipes set
    ``grad_reduce_in_fp32: false``). ZeRO-1/2 parameter all-gather after the optimizer:
    overlapped with the first forward when ``overlap_param_gather``. ZeRO-2 reduce-scatters
    every micro-batch behind its backward. ZeRO-3 / FSDP: per micro-batch an all-gather
    behind the forward and an all-gather plus a reduce-scatter behind the backward
    (prefetching), exposed beyond the compute they hide behind; FSDP1's ``backward_prefetch``
    (``StepOptions.fsdp_backward_prefetch``: ``pre``, ``post`` hidden alike, ``none`` serial
    and exposed) and its post-backward hook's gradient cast and pre-divide
    (``StepOptions.fsdp1_post_backward``, priced serial in the backward) in
    :mod:`~rlmcost.perf.fsdp_prefetch`.
  - Every overlapped collective above also slows the compute beside it (NCCL's CTAs and HBM
    traffic; Lee et al. 2025, :mod:`~rlmcost.perf.overlap_contention`): a hidden collective
    costs ``s / (1 + s)`` of its time (``StepOptions.overlap_slowdown`` s = 0.189), counted
    with the exposed ``dp`` communication.
  - PyTorch FSDP2 (``fully_shard``, per-parameter sharding; ``fsdp2_reduce_bytes`` r > 0): the
    reduce-scatter moves r bytes per parameter (its ``MixedPrecisionPolicy.reduce_dtype``), and
    the compute stream copies the gathered flat buffer out into the parameters after each
    all-gather and the gradients into the reduce-scatter input before each reduce-scatter
    (:func:`~rlmcost.perf.policy_worker.fsdp2_copy_bytes`; pytorch/pytorch
    torch/distributed/_composable/fsdp/_fsdp_collectives.py @01d66d21f), one copy kernel per
    layer (its ``fully_shard`` unit), for the parameters sharded over more than one rank. NeMo
    AutoModel reduces in bf16 (``FSDP2Manager`` ``mp_policy``, nemo_automodel/components/
    distributed/fsdp2.py @05656796c), NeMo RL's DTensor worker in fp32 (``parallelize.py``).
    FSDP1's flat parameter gathers into its own storage: no copy-out.
  - Hybrid sharding (``Layout.zero_shard``: FSDP HYBRID_SHARD / FSDP2 HSDP, verl's
    ``fsdp_size``): the gathers and reduce-scatters above run within the P_z ranks of a shard
    group, and each reduce-scatter is followed by an all-reduce of the 1 / P_z gradient shard
    across the P_d P_c / P_z replicas (:mod:`rlmcost.parallel.zero_groups`), hidden or
    exposed with the reduce it follows.
* **Optimizer step**: memory-bound over the rank's shard of parameters (1 / P_z of them under
  ZeRO >= 1): mixed-precision Adam reads the gradient (``main_grad_bytes``, fp32 in
  Megatron-LM), reads and writes fp32 master weights, m and v (24 B), writes the 16-bit
  weights (2 B), and reads the gradient again for the global norm: 26 + 2 g bytes per
  parameter. ``offload_optimizer`` (ZeRO-Offload, Ren et al. 2021) instead moves the
  reduced gradients to the host (in the reduce's dtype, ``grad_reduce_bytes``: a Megatron-core
  fp32 buffer's 4 B) and the updated 16-bit weights back at host-link bandwidth, exposed,
  then the host's Adam step (:func:`cpu_adam_s`).
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.parallel.comm import Collective
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.shard import PipelineStage
from rlmcost.parallel.zero_groups import ZeroGroup, zero_groups
from rlmcost.perf.collectives import host_link_bytes_per_s
from rlmcost.perf.fsdp_prefetch import (
    BackwardPrefetch,
    fsdp1_post_backward_bytes,
    zero3_backward_extra_s,
)
from rlmcost.perf.linear_mixer import rank_param_counts
from rlmcost.perf.megatron_loop import embedding_bucket_params
from rlmcost.perf.overlap_contention import overlapped_extra_s
from rlmcost.perf.policy_worker import fsdp2_copy_bytes
from rlmcost.perf.rl_constants import Constant
from rlmcost.perf.step_pass import StagePass, StepContext, stage_param_counts


def _grouped_params(layout: Layout, dense: int, expert: int) -> list[tuple[ZeroGroup, int]]:
    """Each group of :func:`~rlmcost.parallel.zero_groups.zero_groups` with the parameter
    elements reduced over it: the dense parameters over P_d P_c (or a hybrid shard's P_z),
    the routed experts over Megatron-core's expert data parallel group (``parallel_state``
    expert grid); without EP or a separate expert TP the experts share the dense group."""
    groups = zero_groups(layout)
    if len(groups) == 1:
        return [(groups[0], dense + expert)]
    return [(g, dense if g.name == "dense" else expert) for g in groups]


def _shard_all_reduce_s(c: StepContext, g: ZeroGroup, params: int, nbytes: int) -> float:
    """Hybrid sharding's all-reduce of a rank's 1 / P_z gradient shard across the shard
    groups (:mod:`rlmcost.parallel.zero_groups`); 0 without replicas."""
    if g.replicas == 1 or not params:
        return 0.0
    shard = -(-params // g.ranks) * nbytes
    return c.comm(Collective.ALL_REDUCE, shard, g.replicas, g.replica_dims)


def zero_per_micro_batch(c: StepContext, stage: PipelineStage, p: StagePass) -> None:
    """ZeRO-2 / ZeRO-3 collectives of one micro-batch, exposed beyond the pass they hide in."""
    lay, w = c.layout, c.workload.weight_dtype.bytes
    if lay.zero not in (ZeroStage.OS_G, ZeroStage.OS_G_P):
        return
    dense, expert = rank_param_counts(c, stage)
    fsdp2 = c.options.fsdp2_reduce_bytes if lay.zero is ZeroStage.OS_G_P else 0
    r = fsdp2 or c.options.grad_reduce_bytes or w
    ag = rs = 0.0
    for g, n in _grouped_params(lay, dense, expert):
        ag += c.comm(Collective.ALL_GATHER, n * w, g.ranks, g.dims)
        rs += c.comm(Collective.REDUCE_SCATTER, n * r, g.ranks, g.dims)
        rs += _shard_all_reduce_s(c, g, n, r)
    comp_f, comp_b, s = p.compute("fwd"), p.compute("bwd"), c.options.overlap_slowdown
    if lay.zero is ZeroStage.OS_G_P:
        p.fwd["dp"] += overlapped_extra_s(ag, comp_f, s)
        prefetch = c.options.fsdp_backward_prefetch
        if fsdp2 and prefetch is BackwardPrefetch.NONE:
            raise SpecError("fsdp_backward_prefetch 'none' is FSDP1's option; FSDP2 always "
                            "prefetches the next layer: use 'pre'")  # fmt: skip
        p.bwd["dp"] += zero3_backward_extra_s(ag, rs, comp_b, prefetch, s)
    else:
        p.bwd["dp"] += overlapped_extra_s(rs, comp_b, s)
    sharded = sum(n for g, n in _grouped_params(lay, dense, expert) if g.ranks > 1)
    if c.options.fsdp1_post_backward and lay.zero is ZeroStage.OS_G_P and not fsdp2:
        hook = sum(fsdp1_post_backward_bytes(n, w, r, g.ranks)
                   for g, n in _grouped_params(lay, dense, expert) if g.ranks > 1)  # fmt: skip
        p.bwd["elementwise"] += c.device.elementwise_s(hook, 2 * stage.layers)
    if fsdp2 and sharded:
        layers = stage.layers  # one copy kernel per layer (its fully_shard unit)
        fwd_b, bwd_b = fsdp2_copy_bytes(sharded, w, fsdp2)
        p.fwd["elementwise"] += c.device.elementwise_s(fwd_b, layers)
        p.bwd["elementwise"] += c.device.elementwise_s(bwd_b, 2 * layers)


def dp_after_flush(
    c: StepContext, stage: PipelineStage, p: StagePass, last_bwd_extra_s: float = 0.0
) -> float:
    """Exposed gradient reduction and parameter gather of ZeRO-0/1/2 after the last backward;
    ``last_bwd_extra_s``: compute the last backward alone runs beside the reduction (Megatron-core
    DDP's bucket kernels, :mod:`~rlmcost.perf.megatron_loop`)."""
    lay, opt, w = c.layout, c.options, c.workload.weight_dtype.bytes
    if lay.zero is ZeroStage.OS_G_P:
        return 0.0
    g = opt.grad_reduce_bytes or w
    dense, expert = rank_param_counts(c, stage)
    edge = embedding_bucket_params(c, stage)  # a bucket that cannot hide (perf.megatron_loop)
    reduce = gather = reduce_edge = gather_edge = 0.0
    for grp, params in _grouped_params(lay, dense, expert):
        dims, ranks = grp.dims, grp.ranks
        n_edge, edge = min(edge, params), 0  # the dense group's (listed first)
        if lay.zero is ZeroStage.NONE:
            reduce += c.comm(Collective.ALL_REDUCE, params * g, ranks, dims)
            reduce_edge += c.comm(Collective.ALL_REDUCE, n_edge * g, ranks, dims)
        else:
            if lay.zero is ZeroStage.OS:
                reduce += c.comm(Collective.REDUCE_SCATTER, params * g, ranks, dims)
                reduce_edge += c.comm(Collective.REDUCE_SCATTER, n_edge * g, ranks, dims)
                reduce += _shard_all_reduce_s(c, grp, params, g)  # hybrid: across replicas
                reduce_edge += _shard_all_reduce_s(c, grp, n_edge, g)
            gather += c.comm(Collective.ALL_GATHER, params * w, ranks, dims)
            gather_edge += c.comm(Collective.ALL_GATHER, n_edge * w, ranks, dims)
    s = opt.overlap_slowdown
    last_bwd = p.compute("bwd") + last_bwd_extra_s
    out = (_bucketed_extra_s(reduce, reduce_edge, last_bwd, s) if opt.overlap_grad_reduce
           else reduce)  # fmt: skip
    return out + (_bucketed_extra_s(gather, gather_edge, p.compute("fwd"), s)
                  if opt.overlap_param_gather else gather)  # fmt: skip


def _bucketed_extra_s(comm_s: float, edge_s: float, compute_s: float, slowdown: float) -> float:
    """Seconds beyond the compute of a bucketed collective of ``comm_s`` whose edge bucket
    (``edge_s``: the reduce's last, the gather's first) cannot overlap it; the rest hides with
    contention (:func:`~rlmcost.perf.overlap_contention.overlapped_extra_s`)."""
    edge_s = min(edge_s, comm_s)
    return edge_s + overlapped_extra_s(comm_s - edge_s, compute_s, slowdown)


TORCH_CPU_ADAM_OVER_DEEPSPEED = Constant(6.0, 5.0, 7.0, "deepspeed.ai/tutorials/zero-offload")
"""How many times as long PyTorch's for-loop CPU AdamW takes as DeepSpeedCPUAdam for one step.

DeepSpeed's ZeRO-Offload tutorial (deepspeed.ai/tutorials/zero-offload, 'ZeRO-Offload
Overview'): "DeepSpeedCPUAdam is 5X-7X faster than the standard PyTorch implementation";
value the middle, low and high the ends. Measured here: benchmarks/bench_cpu_adam.py (torch
2.13 ``foreach=False`` against DeepSpeed 0.19.8, 2-core Xeon VM, 33.5 M fp32 parameters in 4
tensors) 5.5-7.0 x in five of six runs (9.3 x in a noisy one). The for-loop runs where torch
steps CPU tensors with neither ``foreach`` nor ``fused`` set (its foreach default is CUDA-only:
``torch.optim.optimizer._default_to_fused_or_foreach``): verl's FSDP2 ``offload_policy``
(verl/workers/config/optimizer.py ``build_optimizer`` @b178a3cd: ``AdamW(params, lr,
weight_decay, betas)``), NeMo RL's DTensor ``cpu_offload`` (examples/configs/grpo_math_1B.yaml
@7ea279abf: ``torch.optim.AdamW`` without either flag; distillation_math.yaml sets both False).
"""

TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED = Constant(1.0, 0.6, 1.5,
                                               "benchmarks/bench_cpu_adam.py; pytorch PR 123074")
"""How many times as long torch's fused CPU AdamW (``fused=True``) takes as DeepSpeedCPUAdam.

Both are one vectorized, multi-threaded pass over the same 28 bytes a parameter (fp32
parameter, gradient, m, v read; parameter, m, v written), memory-bound alike. Measured here:
benchmarks/bench_cpu_adam.py (torch 2.13 against DeepSpeed 0.19.8, 2-core Xeon VM) 0.98-1.07 x
in four of six runs of 33.5 M parameters in 4 tensors, 1.5-1.8 x in two noisy ones, 0.6-0.7 x
at 64-1,024 tensors: value 1, low and high the spread. pytorch/pytorch PR 123074 (the CPU
kernel, torch 2.4) reports fused 5.1 x faster than the for-loop on a 56-core Sapphire Rapids,
against DeepSpeed's 5-7 x (:data:`TORCH_CPU_ADAM_OVER_DEEPSPEED`): 1.0-1.4 x. Megatron-core's
optimizer offload (``--optimizer-cpu-offload``, ``HybridDeviceOptimizer``) runs it:
megatron/core/optimizer/__init__.py imports ``from torch.optim import AdamW as CPUAdam`` and
passes ``fused=True`` among the defaults ("used to improve the performance of the cpu
optimizer") since NVIDIA/Megatron-LM 60007c93 (2025-02, the feature's first commit), as at
slime's pin 1dcf0daf (docker/Dockerfile MEGATRON_COMMIT), in radixark/Megatron-LM (miles),
core_v0.12.2 and core_v0.13.0 (verl's images) and 14346b65 (NeMo RL 7ea279abf's
Megatron-Bridge 8c46dc42 submodule); hybrid_optimizer.py copies the group (``fused``
included) into each CPU optimizer, whose ``step`` reads ``group["fused"]``. One optimizer per
parameter (``--overlap-cpu-optimizer-d2h-h2d``) costs no more at 8 M parameters a tensor
(the benchmark's ``--per-tensor 4``: 0.95 x DeepSpeed beside 1.05 x for one optimizer).
"""

CPU_ADAM_THREAD_S_PER_PARAM = Constant(1.9e-9, 1.87e-9, 3.4e-9,
                                       "benchmarks/bench_cpu_adam.py --threads 1")
"""Seconds per parameter of one DeepSpeedCPUAdam step on one thread (one core).

A rank whose process runs a few OpenMP threads cannot reach the host's memory bandwidth
(:data:`~rlmcost.perf.rl_constants.CPU_ADAM_HOST_S_PER_PARAM`): csrc/adam/cpu_adam_impl.cpp
splits the step with ``#pragma omp parallel for`` over ``omp_get_max_threads()`` threads,
which follow ``OMP_NUM_THREADS`` (torch's ``set_num_threads`` sets the same count). Measured
here: benchmarks/bench_cpu_adam.py ``--threads 1`` under ``OMP_NUM_THREADS=1`` (DeepSpeed
0.19.8, torch 2.13, 33.5 M fp32 parameters in 4 tensors, one vCPU of a 2-vCPU KVM Xeon with
AVX-512) 1.87 and 1.92 ns a parameter at load average 1.4-1.7 (value; torch's fused AdamW
1.88 beside it), 2.18-3.39 in four runs at load 3-7 (the other vCPU's work sharing the
core's memory path: high); 134 M parameters 2.62. Threads scale it linearly (the loop splits
its tiles evenly) until the host's bandwidth bounds it: an assumption, not measured here (2
threads on this loaded 2-vCPU VM ran 2.6-5.7 ns, slower than one). This VM's core, not the
runs' hosts' (Xeons of the same AVX-512 class; no published per-core figure found): 28 B a
parameter at 1.9 ns is 15 GB/s, one core's streaming rate. A server core is faster: on the
16-core Xeon host of an H100 device (Intel family 6 model 207, 300 MB L3, KVM; torch 2.11
fused AdamW, DeepSpeed not installed there; the benchmark's ``--threads 1,2,4,8,16``,
December 2026) one thread alone took 1.02 ns, and 8 ranks of one thread each at once (Ray's
case on an 8-GPU host) 1.06-1.47 ns (mean 1.30), 16 at once 1.21-2.62 (mean 1.9); one process
on 2, 4, 8, 16 threads 0.69, 0.41, 0.29, 0.21 ns (sublinear: the host bound below takes over;
8 and 16 processes at once streamed 0.163 and 0.119 ns a parameter for the whole slice, either
side of CPU_ADAM_HOST_S_PER_PARAM's 0.14, which was not fitted to them).
The value stays this VM's for hosts of no known class (the A800/A100 runs' hosts are of an
older one); a DGX H100/H200 host's Xeon takes the device's figure
(:data:`CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU`).
"""

CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU = {
    "intel-sapphire-rapids": Constant(1.02e-9, 1.02e-9, 1.47e-9,
                                      "benchmarks/bench_cpu_adam.py on an H100 device's Xeon"),
}
"""One thread's CPU Adam seconds per parameter on a host CPU class
(``HardwareSpec.host_cpu``; others take :data:`CPU_ADAM_THREAD_S_PER_PARAM`).
``intel-sapphire-rapids``: the DGX H100/H200's Xeon Platinum 8480C, measured on the 16-core
Xeon host of an H100 device (family 6 model 207, Emerald Rapids: the same Golden Cove core,
more L3; an assumption that it streams as the 8480C does): torch's fused AdamW (DeepSpeed's
time, :data:`TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED`) 1.02 ns a parameter on one thread alone
(value, low), 1.06-1.47 ns for each of 8 single-thread processes at once (high: Ray's 8 ranks
of an 8-GPU host; the host bound, :func:`cpu_adam_s`, prices their sharing)."""

HOST_ADAM_OVER_DEEPSPEED = {"deepspeed": None, "torch": TORCH_CPU_ADAM_OVER_DEEPSPEED,
                            "torch-fused": TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED}  # fmt: skip
"""Each host Adam implementation's time over DeepSpeedCPUAdam's (None: itself)."""


def cpu_adam_s(params_per_device: int, devices_per_host: int, end: str = "value",
               impl: str = "deepspeed", threads: int = 0,
               host_cpu: str | None = None) -> float:  # fmt: skip
    """Seconds of one CPU Adam step (DeepSpeedCPUAdam, ZeRO-Offload) on a host that updates
    ``params_per_device`` for each of its ``devices_per_host`` GPUs: memory-bound on the
    host's DRAM (``CPU_ADAM_HOST_S_PER_PARAM``, :mod:`rlmcost.perf.rl_constants`), or, where
    each rank's process runs ``threads`` OpenMP threads (a Ray actor's ``OMP_NUM_THREADS``:
    ``Behaviour.host_adam_threads``; 0: not limited), bound by those threads
    (:data:`CPU_ADAM_THREAD_S_PER_PARAM` / ``threads``, or the rate of the ``host_cpu`` class
    in :data:`CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU`), whichever is slower;
    ``impl``: ``torch`` for torch's for-loop AdamW (:data:`TORCH_CPU_ADAM_OVER_DEEPSPEED` as
    long), ``torch-fused`` for its fused CPU kernel (Megatron-core's optimizer offload,
    :data:`TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED`).

    >>> round(cpu_adam_s(1_000_000_000, 8), 2)  # 8 B parameters on one host
    1.12
    >>> round(cpu_adam_s(1_000_000_000, 8, impl="torch"), 2)
    6.72
    """
    from rlmcost.perf.rl_constants import CPU_ADAM_HOST_S_PER_PARAM

    if impl not in HOST_ADAM_OVER_DEEPSPEED:
        raise SpecError(f"host Adam {impl!r}: use one of {', '.join(HOST_ADAM_OVER_DEEPSPEED)}")
    if threads < 0:
        raise SpecError(f"host Adam threads {threads}: give a count >= 1, or 0 for unlimited")
    s = params_per_device * devices_per_host * CPU_ADAM_HOST_S_PER_PARAM.at(end)
    if threads:
        rate = CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU.get(host_cpu or "", CPU_ADAM_THREAD_S_PER_PARAM)
        s = max(s, params_per_device * rate.at(end) / threads)
    ratio = HOST_ADAM_OVER_DEEPSPEED[impl]
    return s if ratio is None else s * ratio.at(end)


def optimizer_step_s(c: StepContext, stage: PipelineStage) -> tuple[float, float]:
    """(GPU optimizer seconds, host offload seconds) of the rank's parameter shard."""
    lay, opt = c.layout, c.options
    dense, expert = stage_param_counts(c.arch, lay, stage)
    shard = 0
    for grp, n in _grouped_params(lay, dense, expert):
        shard += -(-n // grp.ranks) if lay.zero is not ZeroStage.NONE else n
    w = c.workload.weight_dtype.bytes
    if opt.offload_optimizer:  # the shard's traffic, then its CPU Adam step
        bw = host_link_bytes_per_s(c.device.hardware, opt.host_link_bytes_per_s)
        per_host = min(lay.n_gpus, c.device.hardware.gpus_per_node)
        moved = shard * ((opt.grad_reduce_bytes or w) + w)  # gradients out, weights back
        return 0.0, moved / bw + cpu_adam_s(shard, per_host)
    g = opt.main_grad_bytes
    return c.device.elementwise_s(shard * (26 + 2 * g), 3), 0.0
