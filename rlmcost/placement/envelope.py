"""Sums over consecutive decode steps of the maximum of linear functions, in closed form.

Within a run of decode steps with the same sequences in flight, every per-step quantity of the
roofline (compute seconds, memory seconds, the link time, the engine's predicted step) is a
linear function of the step's index k = 0 .. n-1: the contexts grow by the number in flight at
every step. A step's bound is the largest of them, so the run's total is a sum of the upper
envelope of lines. The envelope changes line only where two lines cross; between crossings one
line is the largest at every integer k, and its sum over those k is an arithmetic series.

A line is ``(value at k = 0, slope per step)``.

>>> lines = [(10.0, 0.0), (0.0, 1.0)]  # max(10, k) over k = 0 .. 19: 10 x 10 + (10 + ... + 19)
>>> sum_of_max(lines, 20)
(245.0, [(0, 10, 0), (10, 20, 1)])
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Line = tuple[float, float]


def line_sum(line: Line, k0: int, k1: int) -> float:
    """sum of a + b k over the integers k0 <= k < k1."""
    a, b = line
    n = k1 - k0
    return n * a + b * (k0 + k1 - 1) * n / 2


def pieces(lines: Sequence[Line], n: int) -> list[tuple[int, int, int]]:
    """The upper envelope over k = 0 .. n-1 as (k0, k1, index of the largest line) for
    consecutive half-open ranges [k0, k1); where two lines tie at an integer k the range
    starts a new piece (either line gives the same value there)."""
    cuts = {0, n}
    for i, (ai, bi) in enumerate(lines):
        for aj, bj in lines[i + 1 :]:
            if bi != bj:
                x = (aj - ai) / (bi - bj)  # where the two lines meet
                if 0 < x < n:
                    cuts.add(math.ceil(x))
    bounds = sorted(cuts)
    out: list[tuple[int, int, int]] = []
    first, rest = lines[0], tuple(enumerate(lines))[1:]
    for k0, k1 in zip(bounds, bounds[1:], strict=False):
        mid = (k0 + k1 - 1) / 2
        best, top = 0, first[0] + first[1] * mid  # the largest at mid, the first on a tie
        for i, (a, b) in rest:
            if a + b * mid > top:
                best, top = i, a + b * mid
        if out and out[-1][2] == best:
            out[-1] = (out[-1][0], k1, best)
        else:
            out.append((k0, k1, best))
    return out


def sum_of_max(lines: Sequence[Line], n: int) -> tuple[float, list[tuple[int, int, int]]]:
    """sum_{k=0}^{n-1} max_i (a_i + b_i k), and the envelope's pieces (:func:`pieces`)."""
    parts = pieces(lines, n)
    return sum(line_sum(lines[i], k0, k1) for k0, k1, i in parts), parts
