"""Many deployments of one query, evaluated exactly: :func:`evaluate_many`.

Each result is :func:`~rlmcost.evaluation.deployment.evaluate_deployment`'s for that Run, the
same numbers (``tests/test_fast_equal.py`` compares their JSON with the evaluation that keeps
nothing, :func:`rlmcost.memo.plain`). The Runs share one resolved query
(:func:`~rlmcost.placement.query.query_of`) and its group estimates
(:mod:`rlmcost.placement.group_key`), and the memoized passes and memory of
:mod:`rlmcost.memo`, so a deployment costs what its own groups and schedule add.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rlmcost import memo
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_in
from rlmcost.placement.estimate import PlacementEstimate
from rlmcost.placement.query import Query, query_key, query_of

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
    from rlmcost.run.spec import require_run

    if isinstance(runs, (str, bytes)) or not hasattr(runs, "__iter__"):
        raise SpecError(f"evaluate_many takes an iterable of rlmcost.Run, got "
                        f"{type(runs).__name__}")  # fmt: skip
    if not isinstance(same_query, bool):  # "no" had been taken as True
        raise SpecError(f"evaluate_many: same_query={same_query!r:.40} must be True or False")
    runs = [require_run(run, f"evaluate_many (item {i})") for i, run in enumerate(runs)]
    keys = [query_key(run) for run in runs]
    if same_query:
        for i, key in enumerate(keys[1:], start=1):
            if key != keys[0]:
                raise SpecError(
                    f"evaluate_many: Run {i} is not a deployment of Run 0's query (algorithm, "
                    "models, workload, hardware differ); give same_query=False or split the Runs"
                )
    out: list[PlacementEstimate | SpecError] = []
    queries: dict[Any, Query | SpecError] = {}
    with memo.collector_paused():
        _each(runs, keys, queries, out)
    return out


def _each(runs: list[Run], keys: list[Any], queries: dict[Any, Query | SpecError],
          out: list[PlacementEstimate | SpecError]) -> None:  # fmt: skip
    """Append each Run's evaluation (or its SpecError) to ``out``, resolving each query once
    into ``queries``."""
    for run, key in zip(runs, keys, strict=True):
        if key not in queries:
            try:
                queries[key] = query_of(run)
            except SpecError as exc:  # a bad query: its Runs all give its error
                queries[key] = exc
        q = queries[key]
        if isinstance(q, SpecError):
            out.append(q)
            continue
        try:
            out.append(evaluate_in(q, run))
        except SpecError as exc:
            out.append(exc)
