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
Light to import (numpy only inside the check).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

from rlmcost.frozen import dataclass
from rlmcost.plan.engine_floor import floor_of

if TYPE_CHECKING:
    from rlmcost.plan.kinds import Objective
    from rlmcost.plan.rl_candidates import RLCandidate
    from rlmcost.run.spec import Run

SKIPPED = None
"""A worker's result in place of a row: the candidate's engines' floor ruled it out."""


@dataclass(frozen=True)
class Check:
    """What a survivor's floor check reads (:meth:`EngineFloors.beyond`): its engines' key
    (:meth:`EngineFloors.key`, numbered by the client), the screen's refit seconds, its GPUs
    and trained tokens per iteration (the objective's bound key)."""

    key: int
    refit_s: float
    gpus: int
    tokens: float


@dataclass
class Seen:
    """The client's state when a task is sent (module docstring): the objective, the k-th
    best row's key, GPUs -> the fastest fitting row's time, engines' key -> (units,
    generation) seconds learned."""

    obj: Objective
    kth: tuple[Any, ...]
    fastest: dict[int, float] = field(default_factory=dict)
    learned: dict[int, tuple[float, float]] = field(default_factory=dict)

    def beyond(self, check: Check) -> bool:
        """Whether the floor of ``check``'s candidate places it past the k-th row and no
        faster than the fastest fitting row on as many GPUs or fewer (the client's rule,
        :meth:`~rlmcost.plan.engine_floor.EngineFloors.beyond`)."""
        busy = self.learned.get(check.key)
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
        if check is not None and busy is not None:
            self.learned.setdefault(check.key, busy)
        if row["fits"]:
            self.fastest[c.gpus] = min(self.fastest.get(c.gpus, float("inf")), row["time_s"])


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
        for _, c, check in batch:
            if check is not None and seen.beyond(check):
                out.append(SKIPPED)
                continue
            row = rl_candidates.evaluate_chunk((base, [c]))[0]
            seen.learn(check, c, row)
            out.append(row)
    return out
