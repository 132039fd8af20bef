"""Response-length distributions, as exact quantiles: deterministic, no random sampling.

Generation lengths are long-tailed (seed paper §IV-C): short trajectories finish early while
the longest set the Generation stage's depth. A distribution turns into the lengths of ``n``
sequences by its midpoint quantiles q_i = (2 i + 1) / (2 n), i = 0 .. n - 1, so the same inputs
always give the same lengths and a larger batch refines the same shape.

``--length-dist`` spellings:

* ``fixed``: every response has T tokens (``--response-len``); the Table IX assumption.
* ``reasoning``: the long-tailed lengths rlmcost assumes for reasoning RL under the cap T
  (:func:`rlmcost.placement.length_defaults.reasoning`: a lognormal around an assumed mean,
  capped at T, with a share truncated at the cap under long caps), each constant sourced.
* ``uniform:LO,HI``: whole numbers LO..HI equally likely; the discrete quantiles
  LO + floor((2 i + 1)(HI - LO + 1) / (2 n)), exact integers.
* ``lognormal:MEAN,SIGMA[,MAX[,CLIP]]``: min(exp(N(mu, SIGMA^2)), MAX), MEAN the mean length in
  tokens *after* the cap (what a framework logs as the mean response length: truncated responses
  count at MAX). Without MAX, mu = ln(MEAN) - SIGMA^2 / 2; with it, mu solves
  E[min(X, MAX)] = MEAN, where for a lognormal X (the partial expectation of a lognormal)
  E[min(X, c)] = exp(mu + SIGMA^2 / 2) Phi((ln c - mu - SIGMA^2) / SIGMA)
  + c (1 - Phi((ln c - mu) / SIGMA)), increasing in mu, solved by bisection. So a mean near the
  cap puts many responses at the cap instead of silently lowering the mean (with mu from the
  uncapped formula, a published mean of 3,251 under a 3,988 cap at SIGMA 0.67 would realise
  2,628 tokens). Quantiles exp(mu + SIGMA z_i) with z_i the standard normal quantile
  (``statistics.NormalDist``), rounded to whole tokens, at least 1 and at most MAX (a
  max_new_tokens cap; none by default). MEAN must be below MAX (all responses at the cap is
  ``fixed``).

  CLIP (0 <= CLIP < 1, default 0) is a share of responses truncated at MAX on top of the
  lognormal's own tail (repetition loops and overlong answers that never emit EOS; verl logs it
  as ``response_length/clip_ratio``): the distribution is the mixture "MAX with probability
  CLIP, min(X, MAX) otherwise", MEAN still its mean, so mu solves
  CLIP x MAX + (1 - CLIP) E[min(X, MAX)] = MEAN, i.e. E[min(X, MAX)] = (MEAN - CLIP x MAX) /
  (1 - CLIP), which must be at least 1 token (else the spelling is an error). Quantiles of the
  mixture at the same midpoints: the k = floor(n CLIP + 1/2) midpoints q_i >= 1 - CLIP (n CLIP
  rounded half up) sit at MAX; the others are the capped lognormal's quantiles at
  q_i / (1 - CLIP).
* ``file:PATH``: the empirical distribution of the whole numbers in PATH (whitespace or comma
  separated): the sorted values at positions floor((2 i + 1) M / (2 n)) of M; with M = n this
  is exactly the file's lengths.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from itertools import chain, repeat
from pathlib import Path

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

SYNTAX = "fixed, reasoning, uniform:LO,HI, lognormal:MEAN,SIGMA[,MAX[,CLIP]] or file:PATH"


@dataclass(frozen=True)
class LengthDist:
    """A response-length distribution (module docstring); ``values`` are its parameters."""

    kind: str
    values: tuple[float, ...] = ()
    path: str = ""

    def lengths(self, n: int, fixed: int) -> tuple[int, ...]:
        """Lengths of ``n`` responses, ascending; ``fixed`` is T for the ``fixed`` kind.

        >>> LengthDist("uniform", (1, 4)).lengths(4, 0)
        (1, 2, 3, 4)
        >>> LengthDist("lognormal", (1000, 0.0)).lengths(3, 0)
        (1000, 1000, 1000)
        """
        if n < 1:
            raise SpecError(f"{n} sequences: need at least one")
        if self.kind == "fixed":
            return (fixed,) * n
        if self.kind == "reasoning":
            from rlmcost.placement.length_defaults import reasoning

            return reasoning(fixed).lengths(n, fixed)
        if self.kind == "uniform":
            lo, hi = int(self.values[0]), int(self.values[1])
            span = hi - lo + 1
            return tuple(lo + (2 * i + 1) * span // (2 * n) for i in range(n))
        if self.kind == "lognormal":
            mean, sigma = self.values[0], self.values[1]
            cap = int(self.values[2]) if len(self.values) > 2 else None
            clip = self.values[3] if len(self.values) > 3 else 0.0
            mu = lognormal_mu(mean, sigma, cap, clip)
            at_cap = math.floor(n * clip + 0.5) if cap else 0  # midpoints q_i >= 1 - CLIP
            from statistics import NormalDist  # lognormal only: a query loads it when used

            unit, below = NormalDist(), math.nextafter(1.0, 0.0)
            out = []
            for i in range(n - at_cap):
                q = min((2 * i + 1) / (2 * n) / (1 - clip), below)
                t = max(1, round(math.exp(mu + sigma * unit.inv_cdf(q))))
                out.append(min(t, cap) if cap else t)
            return tuple(out) + (cap,) * at_cap if cap else tuple(out)
        values = _read_lengths(self.path)
        m = len(values)
        return tuple(values[(2 * i + 1) * m // (2 * n)] for i in range(n))

    @property
    def is_fixed(self) -> bool:
        return self.kind == "fixed"

    def describe(self, fixed: int | None = None) -> str:
        """The distribution as ``--length-dist`` spells it (``fixed`` says T)."""
        if self.kind == "fixed":
            return f"fixed (T = {fixed})" if fixed is not None else "fixed"
        if self.kind == "file":
            return f"file:{self.path}"
        if self.kind == "reasoning":
            if fixed is None:
                return "reasoning"
            from rlmcost.placement.length_defaults import reasoning

            return f"reasoning ({reasoning(fixed).describe()})"
        return f"{self.kind}:" + ",".join(f"{v:g}" for v in self.values)


FIXED = LengthDist("fixed")


def runs(lengths: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """(length, how many) of ascending ``lengths`` (:meth:`LengthDist.lengths`' order), run
    by run: found by bisection, so the cost grows with the distinct lengths (at most the
    longest response), not with the sequences.

    >>> runs((2, 2, 3, 7, 7, 7))
    ((2, 2), (3, 1), (7, 3))
    """
    out, i, n = [], 0, len(lengths)
    while i < n:
        t = lengths[i]
        j = bisect_right(lengths, t, i)
        out.append((t, j - i))
        i = j
    return tuple(out)


def from_runs(pairs: tuple[tuple[int, int], ...], by: int = 0) -> tuple[int, ...]:
    """The lengths of :func:`runs`' ``pairs``, each ``by`` longer, in order: ``tuple(by + t
    for t in lengths)`` built run by run in C.

    >>> from_runs(((2, 2), (3, 1)), 10)
    (12, 12, 13)
    """
    return tuple(chain.from_iterable(repeat(by + t, m) for t, m in pairs))


def capped_lognormal_mean(mu: float, sigma: float, cap: float) -> float:
    """E[min(X, cap)] of X = exp(N(mu, sigma^2)) (module docstring's partial expectation).

    >>> round(capped_lognormal_mean(math.log(1000), 0.0, 500), 6)
    500.0
    """
    if sigma == 0:
        return float(min(math.exp(mu), cap))
    from statistics import NormalDist

    unit, lc = NormalDist(), math.log(cap)
    below = math.exp(mu + sigma * sigma / 2) * unit.cdf((lc - mu - sigma * sigma) / sigma)
    return below + cap * (1 - unit.cdf((lc - mu) / sigma))


def lognormal_mu(mean: float, sigma: float, cap: int | None, clip: float = 0.0) -> float:
    """mu of the lognormal whose mean after the cap is ``mean``, with a share ``clip`` of the
    responses at the cap besides (module docstring).

    >>> round(lognormal_mu(1000, 0.5, None), 6) == round(math.log(1000) - 0.125, 6)
    True
    >>> round(capped_lognormal_mean(lognormal_mu(3251, 0.67, 3988), 0.67, 3988))
    3251
    >>> mu = lognormal_mu(1000, 0.67, 28672, 0.02)
    >>> round(0.02 * 28672 + 0.98 * capped_lognormal_mean(mu, 0.67, 28672))
    1000
    """
    if clip and cap is not None:
        mean = rest_mean(mean, cap, clip)
    free = math.log(mean) - sigma * sigma / 2
    if cap is None:
        return free
    if mean >= cap:
        raise SpecError(
            f"--length-dist lognormal:{mean:g},{sigma:g},{cap}: the mean must be below the cap "
            f"MAX; every response at {cap} tokens is --length-dist fixed"
        )
    if sigma == 0:
        return math.log(mean)
    lo, hi = free - 1.0, free  # the cap only lowers the mean: mu >= the uncapped mu
    while capped_lognormal_mean(hi, sigma, cap) < mean:
        lo, hi = hi, hi + 1.0
    while capped_lognormal_mean(lo, sigma, cap) > mean:
        lo -= 1.0
    for _ in range(80):  # bisection to float precision
        mid = (lo + hi) / 2
        if capped_lognormal_mean(mid, sigma, cap) < mean:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def rest_mean(mean: float, cap: int, clip: float) -> float:
    """E[min(X, cap)] of the responses not among the ``clip`` share at the cap:
    (mean - clip x cap) / (1 - clip) (module docstring); SpecError below 1 token.

    >>> round(rest_mean(1000, 28672, 0.02), 2)
    435.27
    """
    rest = (mean - clip * cap) / (1 - clip)
    if rest < 1:
        raise SpecError(
            f"--length-dist lognormal MEAN {mean:g}, MAX {cap}, CLIP {clip:g}: CLIP x MAX = "
            f"{clip * cap:g} tokens leaves under 1 token per other response; lower CLIP below "
            f"{max_clip(mean, cap):.4g} or raise MEAN"
        )
    return rest


def max_clip(mean: float, cap: int) -> float:
    """The largest CLIP a mean after the cap allows: the others at 1 token, (mean - 1) /
    (cap - 1).

    >>> round(max_clip(1000, 28672), 5)
    0.03484
    """
    return (mean - 1) / (cap - 1) if cap > 1 else 0.0


def _numbers(text: str, spec: str, count: tuple[int, ...]) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(","))
    except ValueError:
        values = ()
    if len(values) not in count or not all(math.isfinite(v) for v in values):
        raise SpecError(f"--length-dist {spec!r}: expected {SYNTAX}")
    return values


def _read_lengths(path: str) -> tuple[int, ...]:
    """Sorted whole numbers from ``path``; SpecError for a missing file or bad entries."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise SpecError(
            f"--length-dist file:{path}: cannot read it ({exc.strerror}); give a readable file "
            "of response lengths"
        ) from None
    except UnicodeDecodeError:
        raise SpecError(f"--length-dist file:{path}: not UTF-8 text; write one length per "
                        "line") from None
    words = [w for w in re.split(r"[\s,]+", text) if w]
    if not words:
        raise SpecError(f"--length-dist file:{path}: no lengths in it; write one per line")
    out = []
    for w in words:
        if not w.isdigit() or int(w) < 1:
            raise SpecError(
                f"--length-dist file:{path}: {w!r} is not a positive whole number of tokens"
            )
        out.append(int(w))
    return tuple(sorted(out))


def parse_length_dist(text: str | None) -> LengthDist:
    """A :class:`LengthDist` from its ``--length-dist`` spelling (module docstring).

    >>> parse_length_dist("lognormal:1024,0.8,4096")
    LengthDist(kind='lognormal', values=(1024.0, 0.8, 4096.0), path='')
    >>> parse_length_dist("lognormal:1000,0.67,28672,0.02").describe()
    'lognormal:1000,0.67,28672,0.02'
    """
    if text is None or text.strip().lower() == "fixed":
        return FIXED
    if text.strip().lower() == "reasoning":
        return LengthDist("reasoning")
    spec = text.strip()
    kind, _, rest = spec.partition(":")
    kind = kind.lower()
    if kind == "uniform":
        lo, hi = _numbers(rest, spec, (2,))
        if lo != int(lo) or hi != int(hi) or not 1 <= lo <= hi:
            raise SpecError(
                f"--length-dist {spec!r}: uniform needs whole numbers 1 <= LO <= HI, "
                "e.g. uniform:256,4096"
            )
        return LengthDist("uniform", (int(lo), int(hi)))
    if kind == "lognormal":
        values = _numbers(rest, spec, (2, 3, 4))
        if values[0] < 1 or values[1] < 0 or (len(values) >= 3 and values[2] < 1):
            raise SpecError(
                f"--length-dist {spec!r}: lognormal needs MEAN >= 1 token, SIGMA >= 0 and "
                "MAX >= 1, e.g. lognormal:1024,0.8"
            )
        if len(values) >= 3 and values[0] >= values[2]:
            raise SpecError(
                f"--length-dist {spec!r}: MEAN (the mean after the cap) must be below MAX; "
                "every response at the cap is --length-dist fixed"
            )
        if len(values) == 4:
            if not 0 <= values[3] < 1:
                raise SpecError(
                    f"--length-dist {spec!r}: CLIP is the share of responses at MAX, "
                    "0 <= CLIP < 1, e.g. lognormal:1000,0.67,28672,0.02"
                )
            rest_mean(values[0], int(values[2]), values[3])
        return LengthDist("lognormal", values)
    if kind == "file":
        if not rest:
            raise SpecError(f"--length-dist {spec!r}: give a path, e.g. file:lengths.txt")
        _read_lengths(rest)
        return LengthDist("file", (), rest)
    raise SpecError(f"--length-dist {spec!r}: unknown distribution; use {SYNTAX}")
