"""Running a search's evaluations in this process or on Dask (DESIGN.md §7: a search too large
for one process runs on an existing distributed engine, never a home-made one).

:class:`Compute` says where a search runs and whom it tells of its progress; :func:`runner`
gives a :class:`Runner` whose ``map(fn, items)`` returns ``[fn(x) for x in items]`` in order:
in this process by default, on a local Dask cluster of ``workers`` processes
(``dask.distributed.LocalCluster``), or on the scheduler at ``cluster`` (``tcp://host:8786``).
``fn`` must be a module-level function and the items picklable. Dask is an optional extra
(``pip install rlmcost[distributed]``); asking for it without it installed is a one-line error
naming the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rlmcost.errors import SpecError

Progress = Callable[[int, int], None]
"""A progress callback: (items done, items in all)."""


@dataclass(frozen=True)
class Compute:
    """Where a search's evaluations run: this process (default), a local Dask cluster of
    ``workers`` processes, or the scheduler at ``cluster`` (``tcp://host:8786``);
    ``progress`` is called with (items done, items in all)."""

    workers: int | None = None
    cluster: str | None = None
    progress: Progress | None = None

    def runner(self) -> Runner:
        """The :class:`Runner` of these settings (:func:`runner`); close it after use."""
        return runner(self.workers, self.cluster)


class Runner:
    """Evaluates ``fn`` over items in this process (the base class)."""

    name = "local process"
    workers = 1  # evaluations at once

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            progress: Progress | None = None) -> list[Any]:  # fmt: skip
        out = []
        for i, item in enumerate(items):
            out.append(fn(item))
            if progress is not None:
                progress(i + 1, len(items))
        return out

    def stream(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``fn`` of each item, as each finishes; the next item is drawn only after the
        last result was taken, so a consumer that updates what ``items`` yields (a branch
        and bound's incumbent) steers what runs next."""
        for item in items:
            yield fn(item)

    def close(self) -> None:
        """Release the workers (nothing to do in this process)."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DaskRunner(Runner):
    """Evaluates on a Dask cluster: a ``LocalCluster`` of ``workers`` single-threaded
    processes, or the scheduler at ``address``."""

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
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
            except OSError as exc:
                raise SpecError(
                    f"cannot reach the Dask scheduler at {address} ({exc}); check --cluster"
                ) from None
            self.name = f"Dask cluster {address}"
            self.workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        else:
            n = workers or 1
            self._cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
            )
            self.client = Client(self._cluster)
            self.name = f"local Dask cluster, {n} worker(s)"
            self.workers = n

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            progress: Progress | None = None) -> list[Any]:  # fmt: skip
        from dask.distributed import as_completed

        if not items:
            return []
        futures = self.client.map(fn, list(items), pure=False)
        done = 0
        for _ in as_completed(futures):
            done += 1
            if progress is not None:
                progress(done, len(items))
        return self.client.gather(futures)

    def stream(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """As :meth:`Runner.stream`, two tasks per worker in flight: a result is yielded as
        it arrives (in completion order), then the next item is drawn and submitted."""
        from dask.distributed import as_completed

        source = iter(items)
        running = as_completed()
        for _ in range(2 * self.workers):
            item = next(source, _END)
            if item is _END:
                break
            running.add(self.client.submit(fn, item, pure=False))
        for future in running:
            yield future.result()
            item = next(source, _END)
            if item is not _END:
                running.add(self.client.submit(fn, item, pure=False))

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


_END = object()


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
