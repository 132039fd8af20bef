"""Prediction intervals: how far a predicted time may stray, from the uncertainty of its inputs.

Every predicted job and transfer of an iteration carries a relative :class:`Spread`
(``low <= 1 <= high``) chosen by what dominates its time:

* **teacher-forced passes** (forwards and training steps): the spread of kernel efficiency.
  ``low``: the device runs at its burst rather than its sustained matmul rate; S. Bekman,
  *Machine Learning Engineering*, compute/accelerator/benchmarks: sustained / burst MAMF is
  0.849 on H200 and 0.840 on B200, so a step may take 0.85 of the sustained-rate prediction.
  ``high``: the largest |error| of the step-time model on published training runs beyond the
  tables it was built on (``rlmcost validate``, FSDP-style and large-cluster rows), rounded up.
* **generation**: the engine's decode efficiency (scheduler and sampling overhead per step,
  batch composition) and the response-length tail, whose longest sample sets the rollout's
  end; the tail dominates the upper side. ``high`` covers a tail one lognormal sigma step
  heavier (sigma + 0.25) than assumed; ``low`` the engine at its roofline decode rate.
* **transfers and fixed overheads** (weight sync, engine sleep/wake, offload switches,
  resharding, controller): the spread of the per-GB and per-call constants of
  :mod:`rlmcost.perf.rl_constants` (their documented low and high values).

The iteration's interval is the same schedule evaluated with every unit at its low and at its
high end (:func:`rlmcost.placement.iteration.combine`). The period of the schedule is monotone
in the units' weights, so ``low <= predicted <= high`` always holds.
"""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind
from rlmcost.frozen import dataclass


@dataclass(frozen=True)
class Spread:
    """Relative range of a prediction: the time lies in ``[low x t, high x t]``."""

    low: float
    high: float
    source: str

    def __post_init__(self) -> None:
        if not 0 < self.low <= 1 <= self.high:
            raise ValueError(f"a spread needs 0 < low <= 1 <= high, got {self.low}, {self.high}")

    def of(self, seconds: float) -> tuple[float, float]:
        """(low, high) seconds around a predicted ``seconds``."""
        return seconds * self.low, seconds * self.high


TEACHER_FORCED = Spread(
    0.85,
    1.35,
    "kernel efficiency: burst vs sustained matmul rate (Bekman, ML Engineering: 0.84-0.85); "
    "high: largest |error| of the step-time model on published training runs (rlmcost validate)",
)
GENERATION = Spread(
    0.80,
    1.60,
    "engine decode efficiency (roofline rate as the low end) and the response-length tail "
    "(a lognormal sigma heavier by 0.25 as the high end)",
)
OVERHEAD = Spread(
    0.50,
    2.00,
    "per-GB and per-call constants of weight sync, sleep/wake, offload and the controller "
    "(their documented low and high values)",
)


def job_spread(kind: Kind) -> Spread:
    """The spread of a job of ``kind`` (module docstring)."""
    return GENERATION if kind is Kind.GENERATE else TEACHER_FORCED


def transfer_spread() -> Spread:
    """The spread of a transfer or a fixed overhead (module docstring)."""
    return OVERHEAD


SPREADS = {"teacher-forced": TEACHER_FORCED, "generation": GENERATION, "overhead": OVERHEAD}
"""Every spread by name (printed with an interval)."""
