"""Many deployments of one query, evaluated exactly: :func:`evaluate_many`.

Each result is :func:`~rlmcost.evaluation.deployment.evaluate_deployment`'s for that Run, the
same numbers (``tests/test_fast_equal.py`` compares their JSON with the evaluation that keeps
nothing, :func:`rlmcost.memo.plain`). The Runs share one resolved query
(:func:`~rlmcost.evaluation.deployment.query_of`) and its group estimates
(:mod:`rlmcost.placement.group_key`), and the memoized passes and memory of
:mod:`rlmcost.memo`, so a deployment costs what its own groups and schedule add.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment, query_key
from rlmcost.placement.estimate import PlacementEstimate

if TYPE_CHECKING:
    from rlmcost.run.spec import Run


def evaluate_many(
    runs: Iterable[Run], *, same_query: bool = True
) -> list[PlacementEstimate | SpecError]:
    """The evaluation of every Run of ``runs``, in order; a Run the evaluation rejects gives
    its SpecError in its place (the others go on). ``same_query``: every Run must be a
    deployment of the first one's query (algorithm, models, workload, hardware, calibration,
    host link, attention counting), else a SpecError says which differs; False evaluates Runs
    of several queries (each query's resolution and group estimates shared among its Runs).

    >>> from rlmcost.run import Run
    >>> base = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "8b"},
    ...                       "cluster": {"gpus": 8}})
    >>> runs = [base.replace(deployment={"train": {"tp": tp}}) for tp in (1, 2, 4)]
    >>> [e.groups[0].jobs[-1].layout.tp for e in evaluate_many(runs)]
    [1, 2, 4]
    """
    runs = list(runs)
    if same_query and runs:
        first = query_key(runs[0])
        for i, run in enumerate(runs[1:], start=1):
            if query_key(run) != first:
                raise SpecError(
                    f"evaluate_many: Run {i} is not a deployment of Run 0's query (algorithm, "
                    "models, workload, hardware differ); give same_query=False or split the Runs"
                )
    out: list[PlacementEstimate | SpecError] = []
    for run in runs:
        try:
            out.append(evaluate_deployment(run))
        except SpecError as exc:
            out.append(exc)
    return out
