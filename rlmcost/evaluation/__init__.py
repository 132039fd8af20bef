"""The evaluation of a query, above placement/ (DESIGN.md, "One Run").

* ``query``       :func:`evaluate` (``rlmcost.evaluate``): a :class:`~rlmcost.run.Run` ->
                  :class:`~rlmcost.evaluation.view.Evaluation`
* ``deployment``  the deployment's evaluation over device groups (memory model, time model)
* ``view``        :class:`Evaluation`: per-stage work, depth, memory, fit and time, and JSON
* ``stages``      one invocation's and one stage's figures
* ``advice``      answers beside the verdict: the changes that make a deployment fit, and how
                  far one that fits goes (each found by evaluating the changed query)

Light to import: the modules load on first use.
"""

from typing import Any

__all__ = ["Evaluation", "evaluate"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from rlmcost.evaluation.query import evaluate

        return evaluate
    if name == "Evaluation":
        from rlmcost.evaluation.view import Evaluation

        return Evaluation
    raise AttributeError(f"module 'rlmcost.evaluation' has no attribute {name!r}")
