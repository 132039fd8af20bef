"""How a search's items become Dask tasks (:mod:`rlmcost.plan.distributed`): how many items
one task takes, from the measured seconds per item (:class:`TaskSizer`), which worker each
item goes to, by its key (:class:`Slots`: the same key, the same worker, so the group
estimates and passes that worker has kept are found again), and the items drawn but not yet
sent (:class:`Waiting`).

Pure arithmetic, no Dask: the tests check it without the optional extra.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

TARGET_TASK_S = 0.3
"""Seconds of evaluation one task aims at (0.2-0.5 s). Dask's scheduler adds "somewhere
between 200us and 1ms" per task (docs.dask.org/en/stable/best-practices.html, "Avoid very
large graphs") and its array guide sizes chunks for "100ms or so" of work each. On a machine
whose cores the client and the scheduler share with the workers, that overhead is CPU the
workers lose: measured here (PPO 70B on 16..64 A100s, 2 workers), tasks of 16 candidates
(a few ms each) cost the client and scheduler 1.2-1.5 s of CPU, tasks sized to 0.3 s
0.6-0.9 s. At 0.3 s a search of a few seconds still gives every worker several tasks
(:data:`TASKS_PER_WORKER`)."""

TASKS_PER_WORKER = 4
"""Least tasks per worker when the items are counted ahead (``left``): the last task to
finish then holds at most a quarter of a worker's share, so the wait for it stays short."""

FIRST_TASK_ITEMS = 4
"""Items of a task sent before any task has been measured: small, so the first measured
cost per item arrives early."""

MOST_TASK_ITEMS = 2048
"""Most items of one task, whatever the measured cost (a cache hit can cost microseconds)."""

DECAY = 0.7
"""Weight of the older tasks in the cost per item, per task measured since: a worker's
first tasks meet cold caches (an evaluation then costs 3x a warm one; measured, PPO 70B
on 16..64 A100s: 200 random candidates 1.6 s cold, the next 200 0.53 s), so recent
tasks count more."""


@dataclass
class TaskSizer:
    """Items per task: :data:`TARGET_TASK_S` divided by the measured seconds per item (a
    decayed average over the tasks done, :data:`DECAY`), at most ``left / (workers x
    TASKS_PER_WORKER)`` when ``left`` items are known to remain, within [1,
    :data:`MOST_TASK_ITEMS`]; :data:`FIRST_TASK_ITEMS` before the first measurement.

    >>> s = TaskSizer()
    >>> s.size(workers=2)
    4
    >>> s.record(items=10, seconds=0.01)  # 1 ms per item
    >>> s.size(workers=2), s.size(workers=2, left=800)
    (300, 100)
    """

    target_s: float = TARGET_TASK_S
    seconds: float = 0.0  # decayed sums over the tasks measured
    items: float = 0.0

    def record(self, items: int, seconds: float) -> None:
        """One task done: ``items`` evaluated in ``seconds`` on its worker."""
        if items <= 0:
            return
        self.seconds = DECAY * self.seconds + max(seconds, 0.0)
        self.items = DECAY * self.items + items

    def per_item_s(self) -> float | None:
        """The measured seconds per item, None before any task."""
        return self.seconds / self.items if self.items else None

    def size(self, workers: int, left: int | None = None) -> int:
        """Items for the next task (class docstring)."""
        cost = self.per_item_s()
        if cost is None:
            n = FIRST_TASK_ITEMS
        elif cost <= 0.0:
            n = MOST_TASK_ITEMS
        else:
            n = round(self.target_s / cost)
        if left is not None:
            n = min(n, -(-left // (max(workers, 1) * TASKS_PER_WORKER)))
        return max(1, min(n, MOST_TASK_ITEMS))


@dataclass
class Slots:
    """Each key's worker (its slot): a key seen before keeps its worker; a new key goes to
    the worker with the fewest items so far (ties: the lowest index). Items of one key
    (one GPU count and family of a plan) then meet the caches their first item warmed.

    >>> s = Slots(2)
    >>> [s.take(k) for k in ("a", "a", "b", "c", "b", "d")]
    [0, 0, 1, 1, 1, 0]
    """

    workers: int
    load: list[int] = field(default_factory=list)  # items sent to each worker
    where: dict[Hashable, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"Slots needs at least one worker, not {self.workers}")
        self.load = [0] * self.workers

    def take(self, key: Hashable) -> int:
        """The worker of ``key``'s next item (assigned on first sight), counted in its load."""
        w = self.where.get(key)
        if w is None:
            w = min(range(self.workers), key=lambda i: (self.load[i], i))
            self.where[key] = w
        self.load[w] += 1
        return w


class _Barrier:
    """The type of :data:`BARRIER`."""

    def __repr__(self) -> str:
        return "BARRIER"


BARRIER = _Barrier()
"""An item a search yields to wait for every task in flight: nothing more is drawn until
their results have all been taken (on Dask, so a branch and bound's per-topology phase sees
every candidate the workers skipped, :mod:`rlmcost.plan.floor_tasks`); in one process, where
each result is taken before the next draw, it is passed over."""


class Waiting:
    """Items drawn from ``source`` and not yet sent, by the worker their key's slot names
    (every item to the asking worker without ``key``). :meth:`batch` gives worker ``w`` up
    to ``size`` items of its own, drawing more while fewer than ``size`` per worker wait in
    all (so a search steering ``source`` sees little drawn ahead); a worker with none of its
    own takes the oldest waiting items of the fullest slot, so no worker idles while items
    wait.

    >>> w = Waiting(iter("aabbbcd"), 2, key=str)
    >>> w.batch(0, 2), w.batch(1, 2), w.batch(1, 2), w.batch(0, 2), w.batch(0, 2)
    (['a', 'a'], ['b', 'b'], ['b'], ['c', 'd'], [])
    >>> Waiting(iter("aaaaaa"), 2, key=str).batch(1, 2)  # none of its own: the oldest
    ['a', 'a']

    :data:`BARRIER` pauses the drawing (``paused``) until :meth:`resume`:

    >>> w = Waiting(iter(["a", BARRIER, "b"]), 1)
    >>> w.batch(0, 2), w.paused, w.batch(0, 2), w.resume(), w.batch(0, 2)
    (['a'], True, [], None, ['b'])
    """

    def __init__(self, source: Iterator[Any], workers: int,
                 key: Callable[[Any], Hashable] | None = None) -> None:  # fmt: skip
        self.source, self.key, self.slots = source, key, Slots(workers)
        self.lists: list[list[Any]] = [[] for _ in range(workers)]
        self.drawn = 0  # items drawn from source so far
        self.ended = False  # source exhausted
        self.paused = False  # a BARRIER was drawn: nothing more until resume()
        self.taken = 0  # items sent to another worker than their key's slot (none of its own)

    def held(self) -> int:
        """Items drawn and not yet sent."""
        return sum(map(len, self.lists))

    def batch(self, w: int, size: int, idle: bool = True) -> list[Any]:
        """Up to ``size`` items for worker ``w`` (class docstring), others' only where it is
        ``idle`` (nothing in flight); [] when none is left for it."""
        n = len(self.lists)
        while (not self.ended and not self.paused and len(self.lists[w]) < size
               and self.held() < size * n):  # fmt: skip
            item = next(self.source, _END)
            if item is _END:
                self.ended = True
                break
            if item is BARRIER:
                self.paused = True
                break
            self.drawn += 1
            slot = w if self.key is None else self.slots.take(self.key(item))
            self.lists[slot].append(item)
        if not self.lists[w] and not idle:  # others' items only to keep it from idling
            return []
        mine = w if self.lists[w] else max(range(n), key=lambda i: len(self.lists[i]))
        out, self.lists[mine] = self.lists[mine][:size], self.lists[mine][size:]
        self.taken += len(out) if mine != w else 0
        return out

    def resume(self) -> None:
        """Draw again after a :data:`BARRIER` (every task in flight is back)."""
        self.paused = False


_END = object()
