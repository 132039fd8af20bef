"""All-reduce, all-gather and reduce-scatter through ``torch.distributed``, one process per rank.

:func:`run_collectives` spawns ``ranks`` processes (``torch.multiprocessing``, start method
"spawn") that join a process group over TCP on 127.0.0.1: gloo on CPU tensors, NCCL on one
GPU per rank. Each rank runs every collective at every size, all ranks making the same
number of calls; rank 0 reports the median of its timed calls (CUDA events on GPUs via
:mod:`~rlmcost.calibrate.measure`),
counts it under ``FlopCounterMode`` (0: collectives are not matrix products) and reports the
bus bytes per rank of a ring algorithm (:func:`~rlmcost.calibrate.analytic.collective_bus_bytes`)
and the bus bandwidth, the NCCL-tests figure that is comparable across rank counts.

Sizes follow NCCL-tests: the all-reduce buffer, the all-gather output, the reduce-scatter
input, all ``size_bytes`` long.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import socket
import statistics
import sys
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from rlmcost.calibrate.analytic import COLLECTIVES, collective_bus_bytes
from rlmcost.calibrate.device import require_torch
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

_TIMEOUT_S = 300


@dataclass(frozen=True)
class CollectiveResult:
    """One collective at one size, as rank 0 measured it."""

    op: str
    ranks: int
    backend: str
    size_bytes: int
    bus_bytes: int  # per rank, analytic
    counted_flops: int
    seconds: float
    min_seconds: float
    reps: int


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _worker(
    rank: int,
    ranks: int,
    port: int,
    device_type: str,
    sizes: list[int],
    dtype_name: str,
    budget: dict[str, Any],
    queue: Any,
) -> None:
    """One rank: join the group, run every collective, rank 0 reports rows to ``queue``."""
    import torch
    import torch.distributed as dist
    from torch.utils.flop_counter import FlopCounterMode

    from rlmcost.calibrate.measure import Budget

    if device_type == "cpu":
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // ranks))
        device, backend = torch.device("cpu"), "gloo"
    else:
        torch.cuda.set_device(rank)
        device, backend = torch.device("cuda", rank), "nccl"
    dist.init_process_group(  # a timeout, so a lost rank fails the run instead of hanging it
        backend,
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=ranks,
        timeout=datetime.timedelta(seconds=_TIMEOUT_S),
    )
    try:
        dtype = getattr(torch, dtype_name)
        itemsize = torch.empty((), dtype=dtype).element_size()
        rows = []
        for op in COLLECTIVES:
            for size in sizes:
                n = size // itemsize
                kernel = _collective(op, n, ranks, device, dtype)
                with FlopCounterMode(display=False) as counter:
                    kernel()
                times = _time_in_lockstep(kernel, device, Budget(**budget))
                rows.append(
                    CollectiveResult(
                        op,
                        ranks,
                        backend,
                        size,
                        collective_bus_bytes(op, size, ranks),
                        int(counter.get_total_flops()),
                        statistics.median(times),
                        min(times),
                        len(times),
                    )
                )
        if rank == 0:
            queue.put([asdict(r) for r in rows])
    finally:
        dist.destroy_process_group()


def _time_in_lockstep(kernel: Any, device: Any, budget: Any) -> list[float]:
    """Seconds of each timed call of a collective, every rank making the same number of calls.

    A collective blocks until all ranks join it, so the ranks must agree on the counts:
    fixed warm-up calls, one probe call whose slowest time (all-reduce MAX) sizes the
    repetitions, a barrier before the timed calls.
    """
    import torch
    import torch.distributed as dist

    from rlmcost.calibrate.measure import reps_for, time_calls

    for _ in range(budget.warmup):
        kernel()
    dist.barrier()
    probe = torch.tensor([time_calls(kernel, device, 1)[0]], device=device)
    dist.all_reduce(probe, op=dist.ReduceOp.MAX)
    reps = reps_for(float(probe.item()), budget)
    dist.barrier()
    return time_calls(kernel, device, reps)


def _collective(op: str, n: int, ranks: int, device: Any, dtype: Any) -> Any:
    """A closure running ``op`` on an n-element buffer (NCCL-tests' size convention)."""
    import torch
    import torch.distributed as dist

    if op == "all_reduce":
        buf = torch.ones(n, device=device, dtype=dtype)
        return lambda: dist.all_reduce(buf)
    if op == "all_gather":
        out = torch.empty(n, device=device, dtype=dtype)
        inp = torch.ones(n // ranks, device=device, dtype=dtype)
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return lambda: gather(out, inp)
    inp = torch.ones(n, device=device, dtype=dtype)
    out = torch.empty(n // ranks, device=device, dtype=dtype)
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    return lambda: scatter(out, inp)


@contextlib.contextmanager
def _main_hidden_from_children() -> Iterator[None]:
    """Keep "spawn" children from re-running the parent's ``__main__``.

    multiprocessing re-imports the parent's main module (by ``__spec__`` name or
    ``__file__``) in every child. The rank function lives in this module, so the children
    never need it, and re-running it breaks under ``python -`` ('<stdin>' is no file) and
    in scripts without an ``if __name__ == "__main__"`` guard (each child would start the
    calibration again). Both attributes are restored afterwards.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved: dict[str, Any] = {
        k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__
    }
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def run_collectives(
    ranks: int,
    device_type: str,
    sizes_bytes: list[int],
    dtype_name: str = "float32",
    budget: dict[str, Any] | None = None,
) -> list[CollectiveResult]:
    """Spawn ``ranks`` processes and measure every collective at every size.

    A failure in a rank (no loopback networking, too few GPUs) becomes a one-line SpecError
    that says how to skip the collectives.
    """
    torch = require_torch()
    import torch.multiprocessing as mp

    if ranks < 2:
        raise SpecError(f"collectives need at least 2 ranks, got {ranks}")
    if device_type == "cuda" and torch.cuda.device_count() < ranks:
        raise SpecError(
            f"--ranks {ranks} needs {ranks} GPUs, {torch.cuda.device_count()} visible; "
            "use --ranks 1 to skip the collectives"
        )
    itemsize = torch.empty((), dtype=getattr(torch, dtype_name)).element_size()
    for size in sizes_bytes:
        if size % (ranks * itemsize):
            raise SpecError(f"collective size {size} B must be a multiple of ranks x {itemsize} B")
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    args = (ranks, _free_port(), device_type, sizes_bytes, dtype_name, budget or {}, queue)
    try:
        with _main_hidden_from_children():
            mp.start_processes(_worker, args=args, nprocs=ranks, start_method="spawn")
    except Exception as exc:  # a rank died: report its last line, not the traceback
        last = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        backend = "gloo" if device_type == "cpu" else "nccl"
        raise SpecError(
            f"collectives failed ({backend}, {ranks} ranks): {last}; use --ranks 1 to skip them"
        ) from None
    return [CollectiveResult(**row) for row in queue.get()]
