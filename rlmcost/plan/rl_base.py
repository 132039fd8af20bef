"""The planner's base Run as its rows key and read it (``rl_candidates.evaluate_row``): its
JSON written once per base Run object, read back once per JSON (a Run is frozen, so the
candidates of one base share it), instead of once per candidate."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

_LAST: list[Any] = [(None, "")]  # (the base Run last written out, its JSON), one pair


def text_of(base: Run) -> str:
    """``base.to_json_text()``, kept for the base Run last asked about (the pair is read and
    written whole, so threads with different bases never mix them)."""
    last = _LAST[0]
    if last[0] is not base:
        last = (base, base.to_json_text())
        _LAST[0] = last
    return last[1]


@lru_cache(maxsize=16)
def run_of_text(text: str) -> Run:
    """``Run.from_json(text)``, once per JSON text."""
    from rlmcost.run.spec import Run

    return Run.from_json(text)
