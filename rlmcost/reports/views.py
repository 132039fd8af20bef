"""A saved Run evaluated by the command that printed it (`rlmcost run FILE`).

The view is the command's: an algorithm command's per-stage :class:`~rlmcost.evaluation.view.
Evaluation`, `compare`'s :class:`~rlmcost.reports.estimate.Comparison` (the algorithms in the
output's ``compared``), or `placements`' comparison or one placement's report. Each result has
``to_json()``: the JSON the command prints, so ``rlmcost run OUT.json --json`` reproduces OUT.
The output of `rlmcost import FRAMEWORK` shows as its algorithm command (its ``estimate``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.evaluation.query import evaluate
from rlmcost.frozen import dataclass
from rlmcost.placement.iteration import PlacementEstimate
from rlmcost.run.spec import Run

VIEWS = ("<algorithm>", "compare", "placements", "import <framework>")
"""The commands whose ``--json`` output `rlmcost run` re-evaluates."""


@dataclass(frozen=True)
class PlacementView:
    """`rlmcost placements --placement/--groups`: one placement's report and its Run."""

    run: Run
    estimate: PlacementEstimate

    def to_json(self) -> dict[str, Any]:
        from rlmcost.reports.placement import placement_json

        return placement_json(self.run, self.estimate)


def view_command(run: Run, meta: Mapping[str, Any] | None = None) -> str:
    """The command whose view shows ``run``: ``meta["command"]``, the algorithm's command
    for an import's output (its estimate is that command's) or when ``meta`` names none."""
    command = (meta or {}).get("command") or run.algorithm.name
    return run.algorithm.name if command.startswith("import ") else command


def evaluate_view(run: Run, meta: Mapping[str, Any] | None = None,
                  compare_placements: Callable[[Run], Any] | None = None,
                  evaluate_run: Callable[[Run], Any] | None = None) -> Any:  # fmt: skip
    """``run`` evaluated as the command in ``meta["command"]`` shows it (default: the
    algorithm's command; :func:`view_command`). ``compare_placements``: how `placements`
    builds its side-by-side comparison (the CLI sizes the groups by the planner's search;
    default :func:`rlmcost.reports.placement.compare_runs`); ``evaluate_run``: how an
    algorithm command evaluates its Run (the CLI sizes a built-in placement's groups; default
    :func:`rlmcost.evaluate`)."""
    meta = meta or {}
    command = view_command(run, meta)
    if command == "compare":
        from rlmcost.reports.estimate import compare_runs

        return compare_runs(run, list(meta.get("compared") or [run.algorithm.name]))
    if command == "placements":
        if run.deployment.placement is None and not run.deployment.groups:
            from rlmcost.reports.placement import compare_runs as side_by_side

            return (compare_placements or side_by_side)(run)
        e = evaluate(run).evaluation
        assert e is not None
        return PlacementView(run, e)
    if command != run.algorithm.name:
        raise SpecError(
            f"the output was printed by `rlmcost {command}`, which `rlmcost run` does not "
            f"re-evaluate; it re-evaluates {', '.join(VIEWS)}"
        )
    return (evaluate_run or evaluate)(run)
