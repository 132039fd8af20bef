"""Exact arithmetic helpers that the generated functions call (``blocks_gen/``).

Each works on Python ints (and ``Fraction``), exactly, and elementwise on numpy arrays, in the
arrays' own dtype. Nothing here imports numpy: an array brings its own operators.

* ``div(n, d)``: n / d. Ints: the exact quotient, an ``int`` when ``d`` divides ``n`` and a
  ``Fraction`` otherwise. Arrays: true division (float64), exact while the quotient is an
  integer below 2^53.
* ``ceil_div(n, d)``: ceil(n / d) by floor division, for ints and integral float or int arrays.
* ``maximum(*xs)``: the largest, exactly for ints and Fractions, elementwise for arrays (the
  MLA depth terms take the wider of two projections).
* ``minimum(*xs)``: the smallest, likewise (a sliding window's min(context, W) keys).
* ``clog2(x)``: ceil(log2 x) of a positive integer (``rlmcost.logs.clog2``): ``(x - 1)``'s bit
  length; arrays through ``frexp``, exact below 2^53, returned as float64 so that
  ``2 ** clog2(x)`` cannot overflow a small integer dtype. ``clog2(0)`` is 0: the generated
  forms multiply a structural flag (``a.moe``) into terms such as ``clog2(a.d_expert)``, whose
  field is 0 exactly when the flag is.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil
from typing import Any

_EXACT = (int, Fraction)


def div(n: Any, d: Any) -> Any:
    """n / d: exact for ints and Fractions (int when whole), true division for arrays."""
    if type(n) is int and type(d) is int:
        q, r = divmod(n, d)
        return q if not r else Fraction(n, d)
    if isinstance(n, _EXACT) and isinstance(d, _EXACT):
        f = Fraction(n, d)
        return f.numerator if f.denominator == 1 else f
    return n / d


def ceil_div(n: Any, d: Any) -> Any:
    """ceil(n / d) by floor division (ints, Fractions and arrays alike)."""
    return -(-n // d)


def clog2(x: Any) -> Any:
    """ceil(log2 x) for x >= 1: the depth of a binary reduction tree over x terms."""
    if isinstance(x, _EXACT):
        if x < 0:
            raise ValueError(f"clog2 needs a positive integer, got {x}")
        if 0 < x < 1:  # a ratio below 1: ceil(log2 x) = -floor(log2(1 / x))
            return 1 - int(1 / x).bit_length()
        return (ceil(x) - 1).bit_length() if x else 0
    import numpy as np

    x = np.maximum(np.asarray(x, dtype=np.float64) - 1, 0)
    return np.frexp(x)[1].astype(np.float64)


def maximum(*xs: Any) -> Any:
    """The largest of ``xs``: ``max`` for exact numbers, elementwise for arrays."""
    if all(isinstance(x, _EXACT) for x in xs):
        return max(xs)
    import numpy as np

    out = np.asarray(xs[0])
    for x in xs[1:]:
        out = np.maximum(out, x)
    return out


def minimum(*xs: Any) -> Any:
    """The smallest of ``xs``: ``min`` for exact numbers, elementwise for arrays."""
    if all(isinstance(x, _EXACT) for x in xs):
        return min(xs)
    import numpy as np

    out = np.asarray(xs[0])
    for x in xs[1:]:
        out = np.minimum(out, x)
    return out
