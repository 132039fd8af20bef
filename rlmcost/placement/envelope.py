"""Sums over consecutive decode steps of the maximum of linear functions, in closed form.

Within a run of decode steps with the same sequences in flight, every per-step quantity of the
roofline (compute seconds, memory seconds, the link time, the engine's predicted step) is a
linear function of the step's index k = 0 .. n-1: the contexts grow by the number in flight at
every step. A step's bound is the largest of them, so the run's total is a sum of the upper
envelope of lines. The envelope changes line only where two lines cross; between crossings one
line is the largest at every integer k, and its sum over those k is an arithmetic series.

A line is ``(value at k = 0, slope per step)``. :func:`sums_of_max` takes many runs at once
(numpy arrays, one entry per run) with the same operations in the same order, so its sums equal
:func:`sum_of_max`'s to the last bit (tests/test_decode_runs.py).

>>> lines = [(10.0, 0.0), (0.0, 1.0)]  # max(10, k) over k = 0 .. 19: 10 x 10 + (10 + ... + 19)
>>> sum_of_max(lines, 20)
(245.0, [(0, 10, 0), (10, 20, 1)])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

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


def sums_of_max(lines: Sequence[tuple[Any, Any]], n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sum_of_max` of many runs at once: ``lines`` hold numpy arrays (or floats), one
    entry per run, ``n`` the runs' step counts (int64, each >= 1). Returns per run the sum of
    the upper envelope and the sum over the pieces where ``lines[0]`` is the largest (the
    compute-bound steps of a roofline).

    The same floating-point operations in the same order as :func:`pieces` and
    :func:`sum_of_max` run by run, so the results are equal to the last bit: the crossings
    (a_j - a_i) / (b_i - b_j) strictly inside (0, n), rounded up, are the cut points, sorted
    per run (an absent crossing is n, an empty piece); each piece's largest line at its
    midpoint (the first on a tie, ``argmax``); an empty piece takes the line before it, so
    adjacent pieces of one line merge as there; each merged piece's arithmetic series
    (:func:`line_sum`), added left to right."""
    import numpy as np

    runs = len(n)
    a = np.stack([np.broadcast_to(np.asarray(x, dtype=np.float64), runs) for x, _ in lines], 1)
    b = np.stack([np.broadcast_to(np.asarray(y, dtype=np.float64), runs) for _, y in lines], 1)
    cuts = [np.zeros(runs, dtype=np.int64), n]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in range(len(lines)):
            for j in range(i + 1, len(lines)):
                x = (a[:, j] - a[:, i]) / (b[:, i] - b[:, j])  # where the two lines meet
                inside = (b[:, i] != b[:, j]) & (x > 0) & (x < n)
                cuts.append(np.where(inside, np.ceil(np.where(inside, x, 0.0)), n).astype(np.int64))
    k = np.sort(np.stack(cuts, 1), 1)
    k0, k1 = k[:, :-1], k[:, 1:]
    mid = (k0 + k1 - 1) / 2
    top = np.argmax(a[:, :, None] + b[:, :, None] * mid[:, None, :], 1)  # the first on a tie
    pieces = k0.shape[1]
    for p in range(1, pieces):  # an empty piece continues the one before it
        top[:, p] = np.where(k1[:, p] == k0[:, p], top[:, p - 1], top[:, p])
    total = np.zeros(runs)
    first = np.zeros(runs)
    start = k0[:, 0]
    for p in range(pieces):
        if p:
            start = np.where(top[:, p] != top[:, p - 1], k0[:, p], start)
        ends = top[:, p] != top[:, p + 1] if p + 1 < pieces else np.ones(runs, dtype=bool)
        ta = np.take_along_axis(a, top[:, p : p + 1], 1)[:, 0]
        tb = np.take_along_axis(b, top[:, p : p + 1], 1)[:, 0]
        m = k1[:, p] - start
        term = np.where(ends, m * ta + tb * (start + k1[:, p] - 1) * m / 2, 0.0)
        total = total + term if p else term
        term0 = np.where(top[:, p] == 0, term, 0.0)
        first = first + term0 if p else term0
    return total, first
