"""Running a search's evaluations in this process or on Dask (DESIGN.md §7: a search too large
for one process runs on an existing distributed engine, never a home-made one).

:class:`Compute` says where a search runs and whom it tells of its progress; :func:`runner`
gives a :class:`Runner`: in this process by default, on a local Dask cluster of ``workers``
processes (``dask.distributed.LocalCluster``), or on the scheduler at ``cluster``
(``tcp://host:8786``). ``Runner.map(fn, items)`` returns ``[fn(x) for x in items]`` in order;
``Runner.stream(fn, items, shared=...)`` yields ``(batch, fn(shared, batch))`` as each batch
of items is done, drawing the items only as it sends them (a branch and bound steers what
it draws next). ``fn`` must be a module-level function and the items picklable. Dask is an
optional extra (``pip install rlmcost[distributed]``); asking for it without it installed is
a one-line error naming the fix.

On Dask (:class:`DaskRunner`): ``shared`` (a plan's base Run) is scattered to every worker
once (``client.scatter(broadcast=True)``) instead of pickled into every task; items are
grouped into tasks of :class:`~rlmcost.plan.tasks.TaskSizer`'s size (about
:data:`~rlmcost.plan.tasks.TARGET_TASK_S` of measured work each); and an item's ``key`` (a
GPU count and family) sends it to the worker that took that key first
(:class:`~rlmcost.plan.tasks.Slots`), whose caches its earlier items warmed. A worker with no
items of its own keys takes the oldest items waiting, so none idles while items wait.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Hashable, Iterable, Sequence
from contextlib import closing
from dataclasses import field
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

Progress = Callable[[int, int], None]
"""A progress callback: (items done, items in all)."""

Batch = tuple[list[Any], list[Any]]
"""What :meth:`Runner.stream` yields: the items of one task and their results, in order."""

IN_FLIGHT = 2
"""Tasks sent ahead per worker on Dask: one runs while the next is on its way, so a worker
does not wait for the client between two tasks."""

LOCAL_WORKERS = {"distributed.worker.profile.enabled": False,
                 "distributed.admin.tick.interval": "1s",
                 "distributed.admin.system-monitor.interval": "5s"}
"""Dask settings of the local cluster (``--workers N``; a ``--cluster`` keeps its own): its
diagnostics for a dashboard, which is not started here (``dashboard_address=None``), less
often. By default (distributed 2026.8.0, ``distributed/distributed.yaml``) each worker
samples the stacks of its running tasks every 10 ms (``worker.profile``: ``enabled: True``,
``interval: 10ms``; ``Worker.trigger_profile`` walks their frames, taking the evaluating
thread's GIL), checks its event loop every 20 ms (``admin.tick.interval``; a loop blocked
for ``tick.limit``, 3 s, is still logged) and reads its CPU, memory and network counters
every 500 ms (``admin.system-monitor.interval``). Measured here, 4 idle workers of this
cluster for 20 s: 20 ms of CPU per worker-second by default, 14-17 without the stack
samples, 6 with these settings: CPU that grows with the wall time, not with the work, which
the workers of a slow search on a shared machine spend on nothing."""

_PENDING = object()
"""An item of :meth:`Runner.map_until_interrupted` whose result has not come back."""


@dataclass(frozen=True)
class Compute:
    """Where a search's evaluations run: this process (default), a local Dask cluster of
    ``workers`` processes, or the scheduler at ``cluster`` (``tcp://host:8786``);
    ``progress`` is called with (items done, items in all)."""

    workers: int | None = None
    cluster: str | None = None
    progress: Progress | None = None
    use: Runner | None = None  # an open Runner to search on (its owner closes it)

    def runner(self) -> Runner:
        """The :class:`Runner` of these settings (:func:`runner`), or ``use`` (then closing
        it, as a search does when done, leaves it open); close it after use."""
        if self.use is not None:
            return _Lent(self.use)
        return runner(self.workers, self.cluster)


@dataclass
class WorkerTime:
    """What one worker did: seconds inside the evaluations (its busy time), tasks, items."""

    busy_s: float = 0.0
    cpu_s: float = 0.0  # CPU time of the evaluating thread (busy_s less waits for a core)
    tasks: int = 0
    items: int = 0


@dataclass
class Runner:
    """Evaluates in this process (the base class); ``stats``: per worker, what it did."""

    name: str = "local process"
    workers: int = 1  # evaluations at once
    stats: dict[str, WorkerTime] = field(default_factory=dict)

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            progress: Progress | None = None) -> list[Any]:  # fmt: skip
        """``[fn(x) for x in items]``, ``progress`` told after each batch."""
        out: list[Any] = [None] * len(items)
        self._fill(out, fn, items, progress)
        return out

    def map_until_interrupted(self, fn: Callable[[Any], Any], items: Sequence[Any],
                              progress: Progress | None = None) -> tuple[list[Any], bool]:
        """:meth:`map`, but a KeyboardInterrupt (Ctrl-C) ends it: the results of the items
        done by then, in the order of ``items``, and whether it was interrupted."""
        out: list[Any] = [_PENDING] * len(items)
        try:
            self._fill(out, fn, items, progress)
        except KeyboardInterrupt:
            return [r for r in out if r is not _PENDING], True
        return out, False

    def _fill(self, out: list[Any], fn: Callable[[Any], Any], items: Sequence[Any],
              progress: Progress | None) -> None:  # fmt: skip
        """``out[i] = fn(items[i])`` as each batch is done, ``progress`` told after each."""
        done = 0
        with closing(self.stream(_each, list(enumerate(items)), shared=fn,
                                 total=len(items))) as batches:  # fmt: skip
            for batch, results in batches:
                for (i, _), r in zip(batch, results, strict=True):
                    out[i] = r
                done += len(batch)
                if progress is not None:
                    progress(done, len(items))

    def stream(self, fn: Callable[..., list[Any]], items: Iterable[Any], *,
               shared: Any = None, key: Callable[[Any], Hashable] | None = None,
               total: int | None = None, context: Callable[[], Any] | None = None,
               meanwhile: Callable[[], None] | None = None) -> Generator[Batch, None, None]:
        """``(batch, fn(shared, batch))`` for batches of ``items`` as each is done. In this
        process one item at a time: the next item is drawn only after the last result was
        taken, so a consumer that updates what ``items`` yields (a branch and bound's
        incumbent) steers what runs next; :data:`~rlmcost.plan.tasks.BARRIER` is passed
        over. ``key`` (an item's affinity), ``total`` (items at most, a hint) and
        ``context`` (the consumer's state when a task is sent, ``fn``'s third argument)
        serve :class:`DaskRunner`, and ``meanwhile`` (work for the consumer while the
        workers finish their last tasks), which this process never calls."""
        from rlmcost.plan.tasks import BARRIER

        w = self.stats.setdefault("local", WorkerTime())
        for item in items:
            if item is BARRIER:
                continue
            t0, c0 = time.perf_counter(), time.thread_time()
            results = fn(shared, [item])
            w.busy_s += time.perf_counter() - t0
            w.cpu_s += time.thread_time() - c0
            w.tasks += 1
            w.items += 1
            yield [item], results

    def close(self) -> None:
        """Release the workers (nothing to do in this process)."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Lent(Runner):
    """A Runner lent to a search: the search's ``with`` gives the Runner itself and closes
    nothing (its owner does, e.g. a benchmark reusing one warm cluster)."""

    def __init__(self, run: Runner) -> None:
        super().__init__(name=run.name, workers=run.workers)
        self._run = run

    def __enter__(self) -> Runner:
        return self._run


def _each(fn: Callable[[Any], Any], batch: list[tuple[int, Any]]) -> list[Any]:
    """``fn`` of each (index, item) of a batch (:meth:`Runner.map`'s task)."""
    return [fn(x) for _, x in batch]


def _task(fn: Callable[..., list[Any]], shared: Any, batch: list[Any],
          context: Any = None) -> tuple[list[Any], float, float, str]:  # fmt: skip
    """One Dask task: ``fn(shared, batch)`` (``fn(shared, batch, context)`` where the
    stream has a context), the seconds it took, the CPU seconds of its thread and the
    worker's address."""
    from dask.distributed import get_worker

    t0, c0 = time.perf_counter(), time.thread_time()
    out = fn(shared, batch) if context is None else fn(shared, batch, context)
    return out, time.perf_counter() - t0, time.thread_time() - c0, get_worker().address


class DaskRunner(Runner):
    """Evaluates on a Dask cluster: a ``LocalCluster`` of ``workers`` single-threaded
    processes, or the scheduler at ``address`` (module docstring: the base scattered once,
    tasks sized by measured cost, items sent by key to the same worker)."""

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        super().__init__()
        self.moved = 0  # tasks that ran on another worker than their slot's
        self.overlapped_s = 0.0  # the client thread's CPU seconds while tasks were in flight
        self.taken = 0  # items an idle worker took from another's slot (tasks.Waiting)
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise SpecError(
                "--workers/--cluster need Dask; pip install 'rlmcost[distributed]' (or "
                "'dask[distributed]')"
            ) from None
        self._cluster = None
        if address is not None:
            try:
                self.client = Client(address, timeout="10s")
            except (OSError, ValueError, TypeError) as exc:  # unreachable or malformed
                raise SpecError(
                    f"cannot reach the Dask scheduler at {address!r} ({exc}); give --cluster "
                    "its address, e.g. tcp://host:8786"
                ) from None
            self.name = f"Dask cluster {address}"
            self.workers = max(1, len(self._addresses()))
        else:
            n = workers or 1
            most = max(os.cpu_count() or 1, 4)  # one process each: more only queue
            if n > most:
                raise SpecError(f"--workers {n}: a local cluster runs one process per worker "
                                f"and this machine has {os.cpu_count()} CPUs; give at most "
                                f"{most}, or --cluster ADDRESS for a larger one")  # fmt: skip
            import dask

            with dask.config.set(LOCAL_WORKERS):  # the nannies pass it on to their workers
                self._cluster = LocalCluster(  # workers ignore Ctrl-C (plan.dask_worker)
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                    preload=["rlmcost.plan.dask_worker"],
                )
            # the in-process scheduler's GC diagnosis runs Python in a gc callback, where a
            # KeyboardInterrupt is "ignored": a Ctrl-C during a full collection would be lost
            from distributed.gc import disable_gc_diagnosis

            disable_gc_diagnosis(force=True)
            self.client = Client(self._cluster)
            self.name = f"local Dask cluster, {n} worker(s)"
            self.workers = n

    def _addresses(self) -> list[str]:
        """The workers' addresses, sorted (the slots' order)."""
        return sorted(self.client.scheduler_info().get("workers", {}))

    def stream(self, fn: Callable[..., list[Any]], items: Iterable[Any], *,
               shared: Any = None, key: Callable[[Any], Hashable] | None = None,
               total: int | None = None, context: Callable[[], Any] | None = None,
               meanwhile: Callable[[], None] | None = None) -> Generator[Batch, None, None]:
        """As :meth:`Runner.stream`, on the workers (module docstring); batches are yielded
        in the order they finish; a :data:`~rlmcost.plan.tasks.BARRIER` drawn stops the
        drawing until every task in flight is back and taken; ``context()`` is called as
        each task is sent and travels with it; ``meanwhile()`` is called once, the first
        time the client has nothing left to send and waits for the tasks in flight (a
        BARRIER drawn or the items done); futures still running when the consumer stops
        (Ctrl-C) are cancelled."""
        from dask.distributed import as_completed

        from rlmcost.plan.tasks import TaskSizer, Waiting

        addresses: list[str | None] = [*self._addresses()] or [None]
        n = len(addresses)
        base = self.client.scatter([shared], broadcast=True, hash=False)[0]
        sizer, waiting = TaskSizer(), Waiting(iter(items), n, key)
        busy = [0] * n  # tasks in flight per worker
        running = as_completed()
        meta: dict[Any, tuple[int, list[Any]]] = {}
        since = 0.0  # the client thread's CPU time when the tasks in flight were last none

        try:
            while True:
                for w in range(n):
                    while busy[w] < IN_FLIGHT:
                        left = None if total is None else max(total - waiting.drawn, 1)
                        batch = waiting.batch(w, sizer.size(n, left), idle=not busy[w])
                        if not batch:
                            break
                        where = {} if addresses[w] is None else {
                            "workers": [addresses[w]], "allow_other_workers": True}
                        ctx = None if context is None else context()
                        future = self.client.submit(_task, fn, base, batch, ctx,
                                                    pure=False, **where)  # fmt: skip
                        if not meta:  # the workers have work again: the client overlaps
                            since = time.thread_time()
                        meta[future] = (w, batch)
                        busy[w] += 1
                        running.add(future)
                if not meta:
                    if not waiting.paused:
                        return
                    waiting.resume()  # every task in flight is back: draw on
                    continue
                if meanwhile is not None and (waiting.paused or waiting.ended):
                    meanwhile()  # while the workers run what is in flight
                    meanwhile = None
                future = next(running)
                w, batch = meta.pop(future)
                if not meta:
                    self.overlapped_s += time.thread_time() - since
                busy[w] -= 1
                results, seconds, cpu, address = future.result()
                self.moved += addresses[w] is not None and address != addresses[w]
                sizer.record(len(batch), seconds)
                stat = self.stats.setdefault(address, WorkerTime())
                stat.busy_s += seconds
                stat.cpu_s += cpu
                stat.tasks += 1
                stat.items += len(batch)
                yield batch, results
        finally:
            self.taken += waiting.taken
            if meta:
                self.overlapped_s += time.thread_time() - since
                self.client.cancel(list(meta))
            del base

    def close(self) -> None:
        """Close the client, and the local cluster with its logs silenced (a worker asked
        to stop mid-task, after Ctrl-C, logs its lost heartbeat as an error with a
        traceback; the search's own errors have already reached the client)."""
        import logging

        if self._cluster is None:
            self.client.close()
            return
        quiet = logging.getLogger("distributed")
        level = quiet.level
        quiet.setLevel(logging.CRITICAL)  # the scheduler and nannies run in this process
        try:
            self.client.run(logging.disable, logging.CRITICAL)  # and in each worker
        except Exception:  # noqa: BLE001 - a worker already gone: nothing left to silence
            pass
        try:
            self.client.close()
            self._cluster.close()
        finally:
            quiet.setLevel(level)


def runner(workers: int | None = None, cluster: str | None = None) -> Runner:
    """This process (neither given), a local Dask cluster (``workers``) or a remote one
    (``cluster``: the scheduler's address)."""
    if workers is not None and workers < 1:
        raise SpecError(f"--workers {workers} must be a positive integer")
    if workers is None and cluster is None:
        return Runner()
    return DaskRunner(workers=workers, address=cluster)


def chunks(n: int, parts: int) -> list[slice]:
    """``parts`` contiguous slices covering range(n) (fewer when n is small)."""
    parts = max(1, min(parts, n))
    step = -(-n // parts) if n else 1
    return [slice(i, min(i + step, n)) for i in range(0, n, step)] or [slice(0, 0)]
