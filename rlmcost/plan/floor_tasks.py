"""The engines' floor (:mod:`rlmcost.plan.engine_floor`) checked where a candidate is
evaluated: on a Dask worker, just before its evaluation, not only when the client draws it.

In one process branch and bound (:mod:`rlmcost.plan.rl_search`) draws a candidate only after
the last result was taken, so its floor check sees every result before it. On Dask a task's
candidates are drawn before the results of the tasks in flight are back; a candidate whose
engines' floor a result still on its way would have ruled out was evaluated all the same
(PPO Llama-3.1-70B on 16..64 A100s: 3,130-3,180 candidates on 2 workers against one
process's 2,562). So each item carries what the check needs (:class:`Check`: its engines'
key, refit seconds, GPUs and trained tokens), each task the client's state when it is sent
(:class:`Seen`: the k-th best key, the fastest fitting time per GPU count, the floors learned),
and the worker adds the floors and fastest times of its own results as it goes. Each of
those only tightens over time (the k-th key and the fastest times fall, a floor once learned
stays: the same engines give the same units), so a candidate the worker skips is one the
client would skip with its later, tighter state: the worker returns :data:`SKIPPED` in its
row's place and the client counts it among the skipped (the per-topology phase may still
try it, after every task in flight is back: :data:`~rlmcost.plan.tasks.BARRIER`).

A worker also keeps, from one task of a search to the next (:class:`Own`, by the search's
``token``), the rows it has evaluated: the k-th best of its own rows is a k-th best key as
good as the client's (k real rows of the search, counted once per :func:`collapse
<rlmcost.plan.rl_search.collapse>` signature), so a candidate whose bound (the screen's,
:attr:`Check.bound`) or engines' floor places it past it cannot be among the top k, whatever
the other workers found; with the floors and fastest times of its earlier tasks too. Before,
a worker knew only what the client knew when the task was sent and what the task itself
found: 4 workers evaluated 2,707-2,715 candidates of PPO Llama-3.1-70B on 16..64 A100s
against one process's 2,562.
Light to import (numpy only inside the check).
"""

from __future__ import annotations

import threading
from dataclasses import field
from typing import TYPE_CHECKING, Any

from rlmcost.frozen import dataclass
from rlmcost.plan.engine_floor import floor_of
from rlmcost.plan.search import sort_key

if TYPE_CHECKING:
    from rlmcost.plan.kinds import Objective
    from rlmcost.plan.rl_candidates import RLCandidate
    from rlmcost.run.spec import Run

SKIPPED = None
"""A worker's result in place of a row: the candidate's engines' floor ruled it out."""


KEPT_SEARCHES = 4
"""Searches whose :class:`Own` state a worker keeps (the latest ones; a plan runs one search
per launcher's base Run, one after another): older ones are dropped, so a long-lived worker
of ``--cluster`` does not grow."""


@dataclass(frozen=True)
class Check:
    """What a survivor's checks read (:meth:`EngineFloors.beyond`): its engines' key
    (:meth:`EngineFloors.key`, numbered by the client; -1 where the floor does not apply),
    the screen's refit seconds, its GPUs, trained tokens per iteration (the objective's bound
    key) and its objective bound key (:func:`~rlmcost.plan.rl_search.bound_keys`: the
    search's order)."""

    key: int
    refit_s: float
    gpus: int
    tokens: float
    bound: tuple[float, float] = (float("-inf"), float("-inf"))


@dataclass
class Seen:
    """The client's state when a task is sent (module docstring): the objective, the k-th
    best row's key, GPUs -> the fastest fitting row's time, engines' key -> (units,
    generation) seconds learned; the search's ``token`` and ``top`` (the k of its top k)
    name and size a worker's own state (:class:`Own`), none without a token."""

    obj: Objective
    kth: tuple[Any, ...]
    fastest: dict[int, float] = field(default_factory=dict)
    learned: dict[int, tuple[float, float]] = field(default_factory=dict)
    token: str | None = None
    top: int = 0

    def beyond(self, check: Check) -> bool:
        """Whether ``check``'s candidate cannot be among the top k: its bound is past the
        k-th row (the client's rule in :func:`~rlmcost.plan.rl_search.branch_and_bound`'s
        order); or its floor places it past the k-th row and no faster than the fastest
        fitting row on as many GPUs or fewer (the client's rule,
        :meth:`~rlmcost.plan.engine_floor.EngineFloors.beyond`)."""
        if check.bound > self.kth:
            return True
        busy = self.learned.get(check.key) if check.key >= 0 else None
        if busy is None:
            return False
        floor = floor_of(busy, check.refit_s)
        front_s = min((t for g, t in self.fastest.items() if g <= check.gpus),
                      default=float("inf"))  # fmt: skip
        if floor < front_s:
            return False
        import numpy as np

        from rlmcost.plan.rl_search import bound_keys

        p, q = bound_keys(self.obj, np.array([check.gpus]), np.array([floor]),
                          np.array([check.tokens]))  # fmt: skip
        return (float(p[0]), float(q[0])) > self.kth

    def learn(self, check: Check | None, c: RLCandidate, row: dict[str, Any]) -> None:
        """Keep what row ``row`` of candidate ``c`` says: its engines' units, its time."""
        busy = getattr(row, "engines_s", None)
        if check is not None and check.key >= 0 and busy is not None:
            self.learned.setdefault(check.key, busy)
        if row["fits"]:
            self.fastest[c.gpus] = min(self.fastest.get(c.gpus, float("inf")), row["time_s"])


class Own:
    """What one worker has learned of one search over its tasks (module docstring): the
    fitting rows it evaluated, ranked as the client ranks them
    (:class:`~rlmcost.plan.rl_search.Ranking`), and the client's latest state merged with
    its own (:meth:`merged`: each only tightens); a lock keeps the tasks of a worker with
    several threads (a ``--cluster``'s) from reading it half updated."""

    def __init__(self, seen: Seen) -> None:
        from rlmcost.plan.rl_search import Ranking

        self.ranking = Ranking(sort_key(seen.obj), seen.top)
        self.rows = 0
        self.seen = Seen(seen.obj, seen.kth, token=seen.token, top=seen.top)
        self.lock = threading.Lock()

    def merged(self, sent: Seen) -> Seen:
        """The state a task's checks read: the latest of the client's (``sent``) and this
        worker's, the smaller k-th key, every floor, the faster time per GPU count."""
        with self.lock:
            mine = self.seen
            mine.kth = min(mine.kth, sent.kth)
            for k, busy in sent.learned.items():
                mine.learned.setdefault(k, busy)
            for g, t in sent.fastest.items():
                mine.fastest[g] = min(mine.fastest.get(g, float("inf")), t)
            return mine

    def beyond(self, check: Check) -> bool:
        """:meth:`Seen.beyond` on this worker's state."""
        with self.lock:
            return self.seen.beyond(check)

    def learn(self, check: Check | None, c: RLCandidate, row: dict[str, Any]) -> None:
        """Keep row ``row`` of candidate ``c``: its floor and time (:meth:`Seen.learn`), and a
        fitting row among the ranked ones, the k-th key tightened by it."""
        with self.lock:
            self.seen.learn(check, c, row)
            if not row["fits"]:
                return
            self.ranking.add(self.rows, row)
            self.rows += 1
            kth = self.ranking.kth()
            if kth is not None:
                self.seen.kth = min(self.seen.kth, kth)


_OWN: dict[str, Own] = {}
"""This process's :class:`Own` state by search token, the latest :data:`KEPT_SEARCHES`."""

_MAKING = threading.Lock()
"""Held while :func:`own` looks a search's state up or makes it."""


def search_token() -> str:
    """A new search's name for its workers' :class:`Own` state (unique across processes)."""
    import uuid

    return uuid.uuid4().hex


def own(seen: Seen) -> Own:
    """This process's state of ``seen``'s search (made on its first task here)."""
    assert seen.token is not None
    with _MAKING:
        mine = _OWN.get(seen.token)
        if mine is None:
            while len(_OWN) >= KEPT_SEARCHES:
                del _OWN[next(iter(_OWN))]
            mine = _OWN[seen.token] = Own(seen)
        return mine


Item = tuple[int, "RLCandidate", Check | None]
"""An item of the search: (position in the order, candidate, its floor check or None)."""


def evaluate_checked(base: Run, batch: list[Item], seen: Seen | None = None) -> list[Any]:
    """The rows of a batch of items under the base Run (a module-level function for Dask;
    the base is scattered to the workers once), :data:`SKIPPED` for each candidate whose
    floor ``seen`` (updated by each row) rules out; the cyclic garbage collector paused
    meanwhile (:func:`rlmcost.memo.collector_paused`). Without ``seen`` (in one process, where
    the client checked just before) every candidate is evaluated."""
    from rlmcost.memo import collector_paused
    from rlmcost.plan import rl_candidates

    out: list[Any] = []
    with collector_paused():
        if seen is None:
            return rl_candidates.evaluate_chunk((base, [c for _, c, _ in batch]))
        now: Seen | Own = seen
        if seen.token is not None:
            now = own(seen)
            now.merged(seen)
        for _, c, check in batch:
            if check is not None and now.beyond(check):
                out.append(SKIPPED)
                continue
            row = rl_candidates.evaluate_chunk((base, [c]))[0]
            now.learn(check, c, row)
            out.append(row)
    return out
