"""Scoring, ranking and the Pareto front of a plan, and the result every search returns.

A row is one evaluated candidate that fits: its GPUs, predicted time, roofline bound, memory
per device, tokens per second per GPU, GPU-hours per iteration, its layout fields and the
command line that reproduces it as a single query. Objectives (:class:`Objective`): ``time``
(fastest predicted iteration), ``gpus`` (fewest GPUs, then fastest), ``gpu-hours`` (least
time x GPUs), ``throughput`` (most trained tokens/s/GPU), ``cost`` (fewest USD per iteration:
predicted time x the sum over the groups of GPUs x their accelerator's USD per GPU-hour,
:mod:`rlmcost.specs.prices`). The Pareto front is over (GPUs,
predicted time): the rows no other row beats on both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlmcost.plan.kinds import Objective

if TYPE_CHECKING:
    import pandas as pd

    from rlmcost.run.spec import Run


def gpu_hours(time_s: float, gpus: int) -> float:
    """GPU-hours of one iteration: time x GPUs / 3600."""
    return time_s * gpus / 3600.0


def sort_key(objective: Objective) -> Callable[[dict[str, Any]], tuple]:
    """The ascending sort key of ``objective`` over rows (ties: fewer GPUs, then faster)."""
    if objective is Objective.TIME:
        return lambda r: (r["time_s"], r["gpus"])
    if objective is Objective.GPUS:
        return lambda r: (r["gpus"], r["time_s"])
    if objective is Objective.GPU_HOURS:
        return lambda r: (r["gpu_hours"], r["gpus"])
    if objective is Objective.COST:  # rows without a price last (plan_rl asks for them first)
        return lambda r: (r.get("cost_per_iteration_usd") is None,
                          r.get("cost_per_iteration_usd") or 0.0, r["gpus"])  # fmt: skip
    return lambda r: (-r["tokens_per_s_per_gpu"], r["gpus"])


def rank(rows: Sequence[dict[str, Any]], objective: Objective) -> list[dict[str, Any]]:
    """``rows`` best first under ``objective`` (a stable sort: equal rows keep their order)."""
    return sorted(rows, key=sort_key(objective))


def pareto(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Pareto front over (GPUs, predicted time), fewest GPUs first: for each GPU count
    its fastest row, kept when it is faster than every row on fewer GPUs."""
    front: list[dict[str, Any]] = []
    for r in sorted(rows, key=lambda r: (r["gpus"], r["time_s"])):
        if front and r["gpus"] == front[-1]["gpus"]:
            continue
        if not front or r["time_s"] < front[-1]["time_s"]:
            front.append(r)
    return front


@dataclass
class Counts:
    """How many candidates each phase saw."""

    enumerated: int = 0  # the product of the space's value lists
    valid: int = 0  # after the divisibility rules
    pruned: int = 0  # discarded by the cheap necessary condition
    bounded: int = 0  # skipped by branch and bound: their time bound cannot place them
    evaluated: int = 0  # evaluated exactly (predicted time, exact memory)
    fitting: int = 0  # of those, fitting

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class PlanResult:
    """A plan: the top rows, the Pareto front, the candidate counts, what never fit and why."""

    query: dict[str, Any]
    objective: Objective
    rows: list[dict[str, Any]]  # the top k, best first
    front: list[dict[str, Any]]
    counts: Counts
    seconds: float
    failures: list[dict[str, Any]] = field(default_factory=list)  # family, binding term
    notes: list[str] = field(default_factory=list)
    runner: str = "local process"
    base: Run | None = None  # an RL plan's fixed part; each row's Run is this with its deployment
    per_topology: list[dict[str, Any]] = field(default_factory=list)  # RL: best of each topology
    interrupted: bool = False  # Ctrl-C ended the search early: the rows are the best found so far

    @property
    def best(self) -> dict[str, Any] | None:
        return self.rows[0] if self.rows else None

    @property
    def candidates_per_s(self) -> float:
        return self.counts.valid / self.seconds if self.seconds else 0.0

    def frame(self) -> pd.DataFrame:
        """The top rows as a pandas DataFrame (one row per deployment, best first)."""
        import pandas as pd

        return pd.DataFrame(self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "objective": str(self.objective),
            "rows": self.rows,
            "pareto": self.front,
            "counts": self.counts.to_json(),
            "seconds": self.seconds,
            "candidates_per_s": self.candidates_per_s,
            "never_fit": [{**f, "invalid": bool(f.get("invalid"))} for f in self.failures],
            "best_per_topology": self.per_topology,
            "runner": self.runner,
            "interrupted": self.interrupted,
            "notes": self.notes,
        }
