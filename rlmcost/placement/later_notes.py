"""An evaluation's notes written when first read (:func:`notes_later`).

An evaluation's notes (``PlacementEstimate.notes``) are strings that no number of its result
reads: a planner's search reads a deployment's numbers and shows a few rows. So the evaluation
(``placement.iteration.combine``, ``evaluation.deployment.evaluate_in``) runs whatever can
refuse a deployment, then leaves the notes to a function that writes them at their first read,
each the same string in the same order. Split from :mod:`rlmcost.placement.estimate` by size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.placement.estimate import PlacementEstimate


class NotesLater:
    """An estimate's notes still to write: ``make(estimate, *args)`` on their first read
    (:func:`notes_later`). The arguments are what the notes read beyond the estimate's fields,
    none of them the estimate itself (no reference cycle for the cyclic collector)."""

    __slots__ = ("make", "args")

    def __init__(self, make: Callable[..., tuple[str, ...]], args: tuple[Any, ...]) -> None:
        self.make, self.args = make, args

    def __call__(self, est: PlacementEstimate) -> tuple[str, ...]:
        return self.make(est, *self.args)


def notes_later(est: PlacementEstimate, make: Callable[..., tuple[str, ...]],
                *args: Any) -> None:  # fmt: skip
    """Leave ``est``'s notes to ``make(est, *args)`` at their first read (``est.notes``,
    equality, ``repr``, ``to_json``, ``dataclasses.replace``, a pickle or copy), for a
    just-built estimate: an evaluation's notes are strings that no number of its result reads
    (a planner's search reads its numbers and shows a few rows), so they are written when
    read, each the same string in the same order. ``make`` must not raise: whatever can
    refuse an evaluation runs before its result is returned."""
    d = est.__dict__
    d.pop("notes", None)
    d["_notes_later"] = NotesLater(make, args)


def notes_of(est: PlacementEstimate) -> tuple[str, ...] | NotesLater:
    """``est``'s notes as written, or still to write (:func:`notes_later`), without writing
    them: for an estimate built from ``est`` whose notes extend its notes."""
    d = est.__dict__
    later = d.get("_notes_later")
    return d["notes"] if later is None else later
