"""Planning: search deployments for the cheapest that fits (`rlmcost plan`).

* :func:`plan` (``rlmcost.plan(...)``): an RL algorithm's deployments (placements, partial
  colocations, trainer and engine layouts) on a GPU budget, or ``"train"``: the intra-model
  layout search for pre-training/SFT; returns a pandas DataFrame of the best rows;
* :mod:`.space` enumerates valid candidates, :mod:`.search` ranks them and keeps the Pareto
  front, :mod:`.train` and :mod:`.rl` run the two searches, :mod:`.distributed` runs them in
  this process or on Dask.

Light to import: numpy, pandas and the evaluation load inside the functions.
"""

from __future__ import annotations

import sys
import types

from rlmcost.plan.kinds import Objective

__all__ = ["Objective", "plan", "plan_rl", "plan_train"]


def __getattr__(name: str) -> object:
    if name == "plan_train":
        from rlmcost.plan.train import plan_train

        return plan_train
    if name == "plan_rl":
        from rlmcost.plan.rl import plan_rl

        return plan_rl
    if name == "plan":
        from rlmcost.plan.api import plan

        return plan
    raise AttributeError(f"module 'rlmcost.plan' has no attribute {name!r}")


class _CallablePackage(types.ModuleType):
    """``rlmcost.plan`` is both this package and the function: once the package is imported,
    Python binds the attribute ``rlmcost.plan`` to it, so calling it must run the search."""

    def __call__(self, *args: object, **kwargs: object) -> object:
        from rlmcost.plan.api import plan

        return plan(*args, **kwargs)  # type: ignore[arg-type]


sys.modules[__name__].__class__ = _CallablePackage
