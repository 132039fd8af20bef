"""The response-length distribution rlmcost assumes for reasoning RL when only the cap is known:
``--length-dist reasoning``, and the rule ``rlmcost validate --rl`` applies to runs that publish
no mean length.

With the maximum response T (``max_new_tokens``), the lengths are ``lognormal:MEAN,SIGMA,T[,CLIP]``
(:mod:`rlmcost.placement.lengths`) with

* MEAN = min(RESPONSE_MEAN_OVER_MAX_FRACTION x T, RESPONSE_MEAN_CEILING_TOKENS): published GRPO
  math runs average 0.47-0.80 of short caps (NeMo RL's performance summary), while long caps
  stop mattering past a few thousand tokens (the ceiling: the median run-average of published
  runs with caps of 16K-41K tokens);
* SIGMA = RESPONSE_LENGTH_LOG_SIGMA (a long chain-of-thought spread);
* CLIP = RESPONSE_CLIP_FRACTION for caps of at least :data:`LONG_CAP_TOKENS` (responses that run
  to the cap: AReaL v0.2's "truncation rate below 5 %"), none below (a capped-mean lognormal
  under a short cap already ends many responses at it).

Each constant, its source and its low/high ends are in :mod:`rlmcost.perf.rl_constants`.
"""

from __future__ import annotations

import math

from rlmcost.perf.rl_constants import (
    RESPONSE_CLIP_FRACTION,
    RESPONSE_LENGTH_LOG_SIGMA,
    RESPONSE_MEAN_CEILING_TOKENS,
    RESPONSE_MEAN_OVER_MAX_FRACTION,
)
from rlmcost.placement.lengths import LengthDist, max_clip

LONG_CAP_TOKENS = 16_000
"""Caps from which the lengths get the truncated share RESPONSE_CLIP_FRACTION: the 16K bound of
RESPONSE_MEAN_CEILING_TOKENS's runs, as runs set it, on the response (verl max_response_length
16,384) or on prompt + response (NeMo RL max_total_sequence_length 16,384: a response cap of 16,384
less the prompt, 16,254 in the v0.3 blog's long-context row). Under shorter caps the capped-mean
lognormal already puts a large share at the cap: NeMo RL v0.5 Qwen3-32B, mean 3,251 under 3,988 at
sigma 0.67, puts 50% there; Qwen3-235B 5,700 under 8,084, 32% (Skywork-OR1 3.2.3 saw ~40% at 8K); at
>= 16K it puts under 0.5% there (AReaL v0.1 1.5B, 6,700 under 31,744: 0.4%), below the 0 .. 5% long-
cap runs report.
"""


def default_mean_response(t_max: int, end: str = "value") -> int:
    """The assumed mean response length under the cap ``t_max``: the ``end`` of
    RESPONSE_MEAN_OVER_MAX_FRACTION x ``t_max``, capped at the same end of
    RESPONSE_MEAN_CEILING_TOKENS (module docstring).

    >>> default_mean_response(1024), default_mean_response(28672)
    (717, 5350)
    """
    frac = RESPONSE_MEAN_OVER_MAX_FRACTION.at(end) * t_max
    return round(min(frac, RESPONSE_MEAN_CEILING_TOKENS.at(end)))


def default_clip(t_max: int, end: str = "value") -> float | None:
    """The assumed share of responses at the cap ``t_max``: the ``end`` of
    RESPONSE_CLIP_FRACTION from :data:`LONG_CAP_TOKENS` up, else None."""
    return RESPONSE_CLIP_FRACTION.at(end) if t_max >= LONG_CAP_TOKENS else None


def clip_used(mean: int, t_max: int, clip: float) -> float:
    """``clip``, or where the mean cannot hold it, :func:`~rlmcost.placement.lengths.max_clip`
    rounded down to 1e-4."""
    room = max_clip(mean, t_max)
    return clip if clip <= room else math.floor(room * 1e4) / 1e4


def lognormal_spelling(mean: int, t_max: int, clip: float | None) -> str:
    """``lognormal:MEAN,SIGMA,MAX[,CLIP]`` with the global SIGMA and the CLIP the mean can hold."""
    text = f"lognormal:{mean},{RESPONSE_LENGTH_LOG_SIGMA.value:g},{t_max}"
    return text if clip is None else f"{text},{clip_used(mean, t_max, clip):g}"


def reasoning(t_max: int) -> LengthDist:
    """``--length-dist reasoning`` under the cap ``t_max`` (module docstring).

    >>> reasoning(4096).describe()
    'lognormal:2867,0.67,4096'
    >>> reasoning(28672).describe()
    'lognormal:5350,0.67,28672,0.025'
    """
    if t_max < 2:
        return LengthDist("fixed")
    mean = default_mean_response(t_max)
    values = [float(mean), RESPONSE_LENGTH_LOG_SIGMA.value, float(t_max)]
    clip = default_clip(t_max)
    if clip is not None:
        values.append(clip_used(mean, t_max, clip))
    return LengthDist("lognormal", tuple(values))
