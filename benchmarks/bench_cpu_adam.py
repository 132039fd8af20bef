"""Seconds per parameter of one CPU AdamW step, DeepSpeedCPUAdam against torch's, measured here.

Run: DS_ACCELERATOR=cpu python benchmarks/bench_cpu_adam.py [--params 33554432] [--tensors 4]
[--threads 1,2,4,8,16]
(DeepSpeedCPUAdam where ``pip install deepspeed`` and a C++ compiler are there: DeepSpeed builds
its cpu_adam op on first use; not an rlmcost dependency; without it torch's two alone).

Three implementations step the same fp32 parameters with fp32 gradients (28 bytes a parameter
moved: parameter, gradient, m and v read, parameter, m and v written):

- ``deepspeed``: ``deepspeed.ops.adam.DeepSpeedCPUAdam(adamw_mode=True)``, ZeRO-Offload's CPU
  Adam (csrc/adam/cpu_adam_impl.cpp: SIMD, OpenMP);
- ``torch-fused``: ``torch.optim.AdamW`` with ``fused=True`` (torch >= 2.4's CPU kernel,
  pytorch/pytorch PR 123074), as Megatron-core's ``HybridDeviceOptimizer`` builds its CPU
  optimizers: ``from torch.optim import AdamW as CPUAdam`` with ``fused=True`` among the
  defaults (megatron/core/optimizer/__init__.py since NVIDIA/Megatron-LM 60007c93 "Optimizer CPU
  offload support"), one optimizer per parameter under ``--overlap-cpu-optimizer-d2h-h2d``
  (``--per-tensor`` times that too);
- ``torch-forloop``: ``torch.optim.AdamW`` with ``foreach=False``, what torch runs on CPU
  tensors when neither flag is given (its foreach default is CUDA-only): verl's FSDP2
  ``offload_policy`` and NeMo RL's DTensor ``cpu_offload`` step so.

On the 16-core Xeon host of an H100 device (torch 2.11, no DeepSpeed there, December 2026,
``--threads 1,2,4,8,16 --params 33554432``): torch-fused 1.02, 0.69, 0.41, 0.29, 0.21 ns a
parameter, the for-loop 5.6-6.8 x it; 8 single-thread processes at once 1.06-1.47 ns each, 16
at once 1.21-2.62 (``rlmcost.perf.data_parallel.CPU_ADAM_THREAD_S_PER_PARAM`` cites them).

It prints nanoseconds per parameter and each one's ratio to DeepSpeedCPUAdam: the figures
``rlmcost.perf.data_parallel.TORCH_CPU_ADAM_OVER_DEEPSPEED`` and
``TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED`` cite. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any


def _ns_per_param(make: Callable[[list[Any]], list[Any]], params: int, tensors: int,
                  reps: int) -> float:  # fmt: skip
    import torch

    ps = [torch.nn.Parameter(torch.randn(params // tensors)) for _ in range(tensors)]
    for p in ps:
        p.grad = torch.randn_like(p)
    opts = make(ps)
    for o in opts:  # the first step allocates m and v
        o.step()
    t = time.perf_counter()
    for _ in range(reps):
        for o in opts:
            o.step()
    return (time.perf_counter() - t) / reps / (tensors * (params // tensors)) * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", type=int, default=1 << 25)
    ap.add_argument("--tensors", type=int, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=str, default="0", help="torch.set_num_threads, or a "
                    "comma list to sweep (1,2,4,8,16) in one process (0: as started; run under "
                    "OMP_NUM_THREADS=N for the thread count a Ray actor gets)")
    ap.add_argument("--per-tensor", type=int, default=0, help="also time torch-fused with one "
                    "optimizer per tensor over this many tensors (Megatron-core's overlap)")
    a = ap.parse_args()
    import torch

    kw = {"lr": 1e-3, "weight_decay": 0.1, "betas": (0.9, 0.98)}
    makers: dict[str, Callable[[list[Any]], list[Any]]] = {}
    try:
        from deepspeed.ops.adam import DeepSpeedCPUAdam

        makers["deepspeed"] = lambda ps: [DeepSpeedCPUAdam(ps, adamw_mode=True, **kw)]
    except ImportError:  # a machine without DeepSpeed: torch's two, ratios to torch-fused
        print("deepspeed not installed: torch's optimizers only")
    makers["torch-fused"] = lambda ps: [torch.optim.AdamW(ps, fused=True, **kw)]
    makers["torch-forloop"] = lambda ps: [torch.optim.AdamW(ps, foreach=False, **kw)]
    ref = next(iter(makers))
    for threads in [int(t) for t in a.threads.split(",")]:
        if threads:
            torch.set_num_threads(threads)  # omp_set_num_threads: DeepSpeed's OpenMP loop too
        ns = {k: _ns_per_param(m, a.params, a.tensors, a.reps) for k, m in makers.items()}
        if a.per_tensor:
            ns["torch-fused per tensor"] = _ns_per_param(
                lambda ps: [torch.optim.AdamW([p], fused=True, **kw) for p in ps], a.params,
                a.per_tensor, a.reps)  # fmt: skip
        n = torch.get_num_threads()
        print(f"torch {torch.__version__}, {n} threads, {a.params:,} fp32 "
              f"parameters in {a.tensors} tensors")  # fmt: skip
        for k, v in ns.items():
            print(f"{k:>24}: {v:6.2f} ns/param, {v * n:6.2f} ns/param x threads, "
                  f"{v / ns[ref]:5.2f} x {ref}")  # fmt: skip


if __name__ == "__main__":
    main()
