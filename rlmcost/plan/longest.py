"""`rlmcost plan ALGORITHM --max-response-len`: the longest response some deployment fits.

Doubling from one step (1,024 tokens) to the first length that does not fit (or the model's
trained context less the prompt, :func:`response_limit`), then bisection down to one step. Each
length is a ``--min-gpus``-style first-fit search of the plan's space on the budget's largest
GPU count (:func:`rlmcost.plan.rl._search_count`), so the row returned is a real fitting
deployment with its reproducing command. A Ctrl-C ends the search with what it has shown:
:class:`LongestInterrupted` (a ``KeyboardInterrupt``, so a caller that does not catch it stops
as before) carries the longest length found to fit, its row and the shortest found not to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from rlmcost.errors import SpecError
from rlmcost.plan.distributed import Progress, runner
from rlmcost.plan.rl_candidates import RLSpace, actor_spec

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

__all__ = ["Longest", "LongestInterrupted", "longest_response", "max_response_len",
           "response_limit"]

_LOCAL = runner()


class Longest(NamedTuple):
    """The search's answer: ``tokens`` fit (0: not even the first length), with ``row``;
    ``not_fitting`` is the shortest length tried that does not fit (None: every length tried
    fits, the search stopped at the limit)."""

    tokens: int
    row: dict[str, Any] | None
    not_fitting: int | None


class LongestInterrupted(KeyboardInterrupt):
    """A Ctrl-C during :func:`max_response_len`: ``tokens`` fit (0 when no length was
    settled yet), with ``row``; ``not_fitting`` is the shortest length found not to fit (None
    when none was tried yet), so the answer lies in [tokens, not_fitting)."""

    def __init__(self, tokens: int, row: dict[str, Any] | None, not_fitting: int | None) -> None:
        super().__init__(tokens, not_fitting)
        self.tokens, self.row, self.not_fitting = tokens, row, not_fitting


def response_limit(base: Run) -> int:
    """The longest response the actor's trained context leaves after the prompt (the
    :data:`~rlmcost.evaluation.advice.DEFAULT_CONTEXT_CAP` when the model states none); a
    prompt that fills it is a :class:`~rlmcost.errors.SpecError`."""
    from rlmcost.algorithms.options import DEFAULT_PROMPT_LEN
    from rlmcost.evaluation.advice import DEFAULT_CONTEXT_CAP

    spec = actor_spec(base)
    context = spec.max_context or DEFAULT_CONTEXT_CAP
    prompt = base.workload.prompt_len or DEFAULT_PROMPT_LEN
    if prompt >= context:
        raise SpecError(f"--max-response-len searches responses within {spec.name}'s "
                        f"trained context of {context:,} tokens, which --prompt-len {prompt:,} "
                        "fills; give a shorter prompt")  # fmt: skip
    return context - prompt


def max_response_len(base: Run, gpus: int, **options: Any) -> tuple[int, dict[str, Any] | None]:
    """The longest response (a multiple of ``step`` tokens, or ``limit`` itself; ``limit``
    defaults to :func:`response_limit`, the model's context less the prompt) for which some
    deployment of ``space`` fits on ``gpus`` devices, and that deployment's row; (0, None)
    when not even min(step, limit) tokens fit. ``options``: :func:`longest_response`'s
    (``space``, ``step``, ``limit``, ``progress``, ``bases``). Raises
    :class:`LongestInterrupted` on a Ctrl-C."""
    found = longest_response(base, gpus, **options)
    return found.tokens, found.row


def longest_response(
    base: Run,
    gpus: int,
    *,
    space: RLSpace | None = None,
    step: int = 1024,
    limit: int | None = None,
    progress: Progress | None = None,
    bases: Mapping[str, Run] | None = None,
) -> Longest:
    """The longest response (a multiple of ``step`` tokens, or ``limit`` itself; ``limit``
    defaults to :func:`response_limit`) for which some deployment of ``space`` fits on
    ``gpus`` devices, its row, and the shortest length tried that does not fit: doubling from
    min(step, limit), then bisection to one step. ``bases``: as
    :func:`rlmcost.plan.rl.plan_rl`'s. Raises :class:`LongestInterrupted` on a Ctrl-C."""
    from rlmcost.plan.rl import _parts, _search_count, check_base
    from rlmcost.plan.rl_rows import with_run

    space = space or RLSpace()
    limit = response_limit(base) if limit is None else limit
    parts = _parts(base, bases, space)
    for b, _ in parts:
        check_base(b)

    def fitting(t: int) -> dict[str, Any] | None:
        for b, sp in parts:
            one = b.replace(workload={"response_len": t})
            ph = _search_count(one, sp, gpus, _LOCAL, progress, first_fit=True)
            if ph.rows:
                return with_run(ph.rows[0])  # its command and Run: the row shown
        return None

    lo, best, hi = 0, None, None
    try:
        first = min(step, limit)
        best = fitting(first)
        if best is None:
            return Longest(0, None, first)
        lo = first
        while hi is None and lo < limit:
            t = min(2 * lo, limit)  # the limit itself is tried before stopping there
            row = fitting(t)
            if row is None:
                hi = t
            else:
                lo, best = t, row
        while hi is not None and hi - lo > step:
            mid = (lo + hi) // 2 // step * step
            if mid <= lo:
                break
            row = fitting(mid)
            if row is None:
                hi = mid
            else:
                lo, best = mid, row
    except KeyboardInterrupt:
        raise LongestInterrupted(lo, best, hi) from None
    return Longest(lo, best, hi)
