"""Evaluating for memory and fit alone: the advice's probes that read only ``fits``.

The longest response that still fits (:func:`rlmcost.evaluation.advice.max_response_len`)
asks, length after length, whether the run fits; each probe evaluated in full replays the
rollout's paged KV admission sequence by sequence (:mod:`rlmcost.placement.paged`), which is
most of its cost and none of its fit. Inside :func:`untimed` every
:func:`~rlmcost.placement.rollout.timeline` admits its sequences by its slots (the engine's
running cap) alone, with no vLLM or SGLang KV pool to replay (its calls and gates kept, so a
longer stream still takes more steps): its seconds stand in for the rollout's and mean
nothing. A generation's memory is its engine's reservation or its slots' KV cache, set
before its timeline (``group_jobs._generate``: ``engine_memory``, ``slots``, ``own``), so no
byte and no fit changes (``tests/test_untimed.py`` checks fits and peaks equal to the full
evaluation's). The block runs inside :func:`rlmcost.memo.plain`, so that no value computed
so is kept for a later evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.memo import plain

UNTIMED = [0]
"""Depth of :func:`untimed` blocks (> 0: timelines stand in)."""


@contextmanager
def untimed() -> Iterator[None]:
    """Evaluate for memory and fit alone (module docstring): an evaluation made inside has
    every byte and ``fits`` of the full one, and no meaningful second."""
    with plain():
        UNTIMED[0] += 1
        try:
            yield
        finally:
            UNTIMED[0] -= 1


def fits_at(run: Callable[..., Any], **lengths: int) -> bool:
    """Whether ``run(**lengths)`` (the run at other prompt / response lengths) fits, evaluated
    :func:`untimed`; a length the run refuses does not fit."""
    try:
        with untimed():
            return bool(run(**lengths).fits)
    except SpecError:
        return False
