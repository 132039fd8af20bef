"""What a plan row says of its exact evaluation beyond the numbers: the term that keeps one
that does not fit from fitting, the groups an evaluation sized (a Table IX configuration's
split), what each group of a row runs (:mod:`rlmcost.plan.rl_groups`), and the candidate's
Run and the command line that reproduces it.

A row's Run (``run.to_json()``) and command (``run.to_command()``) cost as much as its
evaluation's kept path (about a millisecond together), and a plan shows a few dozen of the
thousands of rows it evaluates (its top rows, the Pareto front, the best of each topology).
So the exact rows of a search hold the numbers alone (small and picklable: what a Dask worker
returns); the search keeps each fitting row's source (the base Run it was evaluated under and
its candidate, :class:`SourcedRow`), and :func:`with_runs` writes the Run and the command of
the rows a plan shows, from that source: ``candidate_run`` is deterministic, so the Run is the
one the evaluation saw."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.plan.rl_candidates import RLCandidate
    from rlmcost.run.spec import Run


def binding_term(e: Any) -> tuple[str, int]:
    """What keeps an estimate from fitting: the group's problem, else the largest memory term
    of the peak job of the group with the largest shortfall; with every group within its
    devices, the node furthest over its host's memory (its host bytes)."""
    g = max(e.groups, key=lambda g: (g.shortfall_bytes, bool(g.problems)))
    if g.problems and not g.shortfall_bytes:
        return g.problems[0], 0
    if not g.shortfall_bytes and e.host_check.binding is not None:
        return e.host_check.binding
    job = max(g.jobs, key=lambda j: j.memory.total)
    m = job.memory
    names = [f.name for f in fields(m) if isinstance(getattr(m, f.name), int)]
    name = max(names, key=lambda n: getattr(m, n))
    return f"{name} ({job.task.label()} on {g.name})", int(getattr(m, name))


def groups_of(e: Any) -> str:
    """The groups an evaluation sized (a Table IX configuration's split), as ``--groups``
    spells counts; "" for one group."""
    if len(e.groups) < 2:
        return ""
    return ",".join(f"{g.name}={g.gpus}" for g in e.groups)


def command(run: Run) -> str | None:
    """The `rlmcost <algorithm>` line that evaluates ``run`` alone (None when no command line
    can say it, e.g. a full model spec: ``rlmcost run`` on the row's Run reproduces it)."""
    try:
        return run.to_command()
    except SpecError:
        return None


class SourcedRow(dict[str, Any]):
    """A fitting row of a search (its numbers, as :func:`rl_candidates.evaluate_row` gives
    them) with its ``source``: the base Run it was evaluated under and its candidate; and
    ``layouts``, its groups' layouts where the evaluation gave them
    (:class:`~rlmcost.plan.engine_floor.ExactRow`), else None."""

    __slots__ = ("source", "layouts")

    def __init__(self, row: dict[str, Any], base: Run, candidate: RLCandidate) -> None:
        super().__init__(row)
        self.source = (base, candidate)
        self.layouts: list[dict[str, Any]] | None = getattr(row, "layouts", None)


def with_run(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` (a :class:`SourcedRow`) as a plan shows it: its numbers, what each of its
    device groups runs (``group_layouts``: the layouts its evaluation gave, ``row.layouts``,
    read where it was evaluated, on a Dask worker too; else
    :func:`rlmcost.plan.rl_groups.group_layouts` of its Run evaluated again, which costs a
    whole evaluation on caches that did not see the search), then the command line that
    reproduces it and its candidate's Run (the base Run's JSON read back, as the evaluation
    read it: ``rl_runs.row_run``); a row without a source as it is."""
    if not isinstance(row, SourcedRow):
        return row
    from rlmcost.plan.rl_runs import row_run

    run = row_run(*row.source)
    layouts = deepcopy(row.layouts)  # the kept row's own stay as evaluated
    if layouts is None:
        from rlmcost.evaluation.deployment import evaluate_deployment
        from rlmcost.plan.rl_groups import group_layouts

        layouts = group_layouts(evaluate_deployment(run))
    return {**row, "group_layouts": layouts, "command": command(run),
            "run": run.to_json()}  # fmt: skip


def with_runs(*lists: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each list of rows through :func:`with_run`, a row in several lists (a top row on the
    Pareto front) written once and shared."""
    done: dict[int, dict[str, Any]] = {}
    out = []
    for rows in lists:
        shown = []
        for r in rows:
            if id(r) not in done:  # the lists hold the rows: their ids stay theirs
                done[id(r)] = with_run(r)
            shown.append(done[id(r)])
        out.append(shown)
    return out
