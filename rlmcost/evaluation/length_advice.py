"""How short a run's sequences must be for it to fit, found by evaluating it.

rlmcost sizes memory at the maximum lengths unless given their spread (every prompt at
``--prompt-len``, every response at ``--response-len``: ``--length-dist fixed``). A framework
that removes padding (verl ``use_remove_padding``, NeMo RL's unpadded micro-batches, packing)
holds a micro-batch's real tokens, so a run whose real sequences are shorter than the maxima
peaks lower: the framework examples that name their maxima and ran (verl's
``examples/grpo_trainer/run_qwen2-7b.sh`` @b178a3cd5: GSM8K, 512 + 1,024 tokens at most) are
over the device at the maxima and under it at their data's lengths. :func:`fitting_lengths`
answers with a number instead of "may fit": the longest sequence, prompt and response scaled
together from the maxima (a multi-turn response kept at least its observations and a token a
turn), at which the run fits, each candidate evaluated with ``run`` for
memory alone (:func:`rlmcost.placement.untimed.untimed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlmcost.frozen import dataclass

STEPS = 64
"""The search's resolution: the answer is within ``(S + T) / STEPS`` tokens of the longest
fitting sequence (bisection, about log2(STEPS) + 1 evaluations)."""


@dataclass(frozen=True)
class FittingLengths:
    """The longest prompt and response, in the run's proportion, at which it fits."""

    prompt_len: int
    response_len: int
    max_prompt_len: int
    max_response_len: int

    @property
    def tokens(self) -> int:
        return self.prompt_len + self.response_len

    @property
    def share(self) -> float:
        """The fitting sequence over the maximal one (a ratio)."""
        return self.tokens / (self.max_prompt_len + self.max_response_len)

    def flags(self) -> str:
        return f"--prompt-len {self.prompt_len} --response-len {self.response_len}"


def split(total: int, prompt: int, response: int, floor: int = 1) -> tuple[int, int]:
    """``total`` tokens as a prompt and a response in the proportion ``prompt : response``,
    the prompt at least 1 and the response at least ``floor`` (a multi-turn sample's
    observations and one token a turn, which its response holds) (exact ints).

    >>> split(768, 512, 1024), split(2, 512, 1024), split(1200, 1024, 1024, 1029)
    ((256, 512), (1, 1), (171, 1029))
    """
    p = max(1, min(total - 1, prompt * total // (prompt + response)))
    r = max(floor, total - p)
    return max(1, min(p, total - r)), r


def fitting_lengths(run: Callable[..., Any], estimate: Any) -> FittingLengths | None:
    """The longest sequence at which ``estimate`` (one that does not fit at its lengths) fits,
    prompt and response scaled together (:func:`split`), to within ``(S + T) / STEPS``
    tokens; None where it fits at no length (its states alone exceed the device, or an engine
    reservation leaves no KV cache, which lengths do not cause) or already fits."""
    from rlmcost.placement.untimed import fits_at

    w = estimate.workload
    s, t = w.prompt_len, w.response_len
    floor = (w.turns - 1) * w.observation_tokens + w.turns  # a multi-turn response's least
    if estimate.fits or s + t < floor + 2:
        return None

    def fits(total: int) -> bool:
        p, r = split(total, s, t, floor)
        return fits_at(run, prompt_len=p, response_len=r)

    step = max(1, (s + t) // STEPS)
    lo, hi = max(floor + 1, min(step, s + t - 1)), s + t  # hi does not fit (the estimate)
    if not fits(lo):
        return None
    while hi - lo > step:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    p, r = split(lo, s, t, floor)
    return FittingLengths(p, r, s, t)
