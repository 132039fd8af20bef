"""Count a kernel's FLOPs with ``FlopCounterMode`` and time it with warm-up and synchronization.

Counting: the kernel runs once on the real device under ``FlopCounterMode`` and an op census
(a dispatch mode that records every aten op). ``FlopCounterMode`` has formulas for
``mm``/``addmm``/``bmm``/``baddbmm`` and CUDA's fused SDPA kernels, but none for CPU's fused
attention (``aten._scaled_dot_product_flash_attention_for_cpu`` and its backward) nor for
``aten._grouped_mm`` (``tests/FLOP_CONVENTIONS.md`` §2, §5). When the census sees such an op,
the kernel is rebuilt on the ``meta`` device, where SDPA takes its math decomposition
(``bmm``, softmax, ``bmm``), and counted there; the result says so.

Timing: warm-up (a number of calls and a minimum time), one probe call that sizes the
repetitions to a time budget, then the median of the per-call times. CPU:
``time.perf_counter`` around each call (the call returns when the work is done). CUDA: a
``torch.cuda.Event`` pair around each call on the current stream, ``torch.cuda.synchronize()``
before the first and after the last, so device time is measured, not host launch time.

This module imports torch; import it only after :func:`~rlmcost.calibrate.device.require_torch`.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode, flop_registry

from rlmcost.frozen import dataclass

_FUSED_WORDS = ("attention", "scaled_dot_product", "grouped_mm")


class OpCensus(TorchDispatchMode):
    """Records the name of every aten op that runs inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


def uncounted_fused_ops(ops: set[str]) -> list[str]:
    """The ops among ``ops`` that fuse matrix products but have no FlopCounterMode formula."""
    counted = {str(p) for p in flop_registry}
    return sorted(op for op in ops if any(w in op for w in _FUSED_WORDS) and op not in counted)


@dataclass(frozen=True)
class FlopCount:
    """What ``FlopCounterMode`` counted, where, and why there."""

    flops: int
    counted_on: str  # "cpu", "cuda" or "meta"
    note: str = ""


def count_flops(
    build: Callable[[Any], Callable[[], Any]], device: Any, sync: Callable[[], None] | None = None
) -> FlopCount:
    """Run ``build(device)()`` once under FlopCounterMode; recount on meta if a fused op
    the counter cannot see ran. ``build`` maps a device to a ready kernel."""
    kernel = build(device)
    census = OpCensus()
    with FlopCounterMode(display=False) as counter, census:
        kernel()
    if sync is not None:
        sync()
    hidden = uncounted_fused_ops(census.ops)
    where = torch.device(device).type
    if not hidden:
        return FlopCount(int(counter.get_total_flops()), where)
    kernel = build("meta")  # built (and its device probed) outside the counter
    with FlopCounterMode(display=False) as counter:
        kernel()
    note = (
        f"{', '.join(hidden)} has no FlopCounterMode formula (counts 0); "
        "counted through its math decomposition on meta"
    )
    return FlopCount(int(counter.get_total_flops()), "meta", note)


@dataclass(frozen=True)
class Timing:
    """Median seconds of one call over ``reps`` timed calls after ``warmup`` untimed ones."""

    seconds: float
    reps: int
    warmup: int
    min_seconds: float


@dataclass(frozen=True)
class Budget:
    """How long to measure one kernel."""

    warmup: int = 2
    warmup_time_s: float = 0.05  # and at least this long (first touches, caches, clocks)
    min_time_s: float = 0.1
    min_reps: int = 3
    max_reps: int = 1000


def time_calls(kernel: Callable[[], Any], device: Any, reps: int, cuda: Any = None) -> list[float]:
    """Seconds of each of ``reps`` back-to-back calls.

    CPU: ``time.perf_counter`` around each call. CUDA: an event pair per call recorded on
    the current stream, one ``synchronize()`` before the first and after the last call, so
    the times are device times without host launch gaps. ``cuda`` is the ``torch.cuda``
    namespace (a stand-in in tests: ``Event(enable_timing=True)`` with ``record()`` and
    ``elapsed_time(end)`` in ms, and ``synchronize()``).
    """
    if torch.device(device).type != "cuda":
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            kernel()
            times.append(time.perf_counter() - start)
        return times
    cuda = torch.cuda if cuda is None else cuda
    starts = [cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [cuda.Event(enable_timing=True) for _ in range(reps)]
    cuda.synchronize()
    for start, end in zip(starts, ends, strict=True):
        start.record()
        kernel()
        end.record()
    cuda.synchronize()
    return [start.elapsed_time(end) * 1e-3 for start, end in zip(starts, ends, strict=True)]


def warm_up(kernel: Callable[[], Any], device: Any, budget: Budget, cuda: Any = None) -> None:
    """At least ``budget.warmup`` calls and ``budget.warmup_time_s`` seconds (first touches,
    allocator, caches, clocks), synchronizing after each call on CUDA."""
    is_cuda = torch.device(device).type == "cuda"
    cuda = torch.cuda if cuda is None and is_cuda else cuda
    start, calls = time.perf_counter(), 0
    while calls < budget.warmup or time.perf_counter() - start < budget.warmup_time_s:
        kernel()
        if is_cuda:
            cuda.synchronize()
        calls += 1


def reps_for(probe_s: float, budget: Budget) -> int:
    """Timed calls that fill ``budget.min_time_s`` at ``probe_s`` per call, within bounds."""
    if probe_s <= 0:
        return budget.min_reps
    return max(budget.min_reps, min(budget.max_reps, math.ceil(budget.min_time_s / probe_s)))


def time_kernel(kernel: Callable[[], Any], device: Any, budget: Budget, cuda: Any = None) -> Timing:
    """Warm up, size the repetitions from one probe call, time them; the median call."""
    warm_up(kernel, device, budget, cuda)
    probe = time_calls(kernel, device, 1, cuda)[0]
    times = time_calls(kernel, device, reps_for(probe, budget), cuda)
    return Timing(statistics.median(times), len(times), budget.warmup, min(times))
