"""Exact integer depth arithmetic: ceil(log2 x) and its sums, symbolic and vectorized.

The depth of a tree reduction over x terms is ceil(log2 x) (Table III caption: depths count
GEMM reduction chains). ``clog2`` stays symbolic for symbols, evaluates to an exact integer
for integers, and lambdifies to numpy. Big-O forms replace it by ``log``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

if TYPE_CHECKING:
    import numpy as np


class clog2(sp.Function):  # noqa: N801 - reads like the math
    """ceil(log2 x) for a positive integer x: depth of a binary reduction tree over x terms.

    >>> clog2(1), clog2(2), clog2(1000), clog2(1024), clog2(1025)
    (0, 1, 10, 10, 11)
    """

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, x: sp.Expr) -> sp.Integer | None:
        if x.is_Integer:
            if x < 1:
                raise ValueError(f"clog2 needs a positive integer, got {x}")
            return sp.Integer((int(x) - 1).bit_length())
        if x.is_Rational and x.is_positive:
            return sp.Integer(int(sp.ceiling(sp.log(x, 2))))
        return None

    def _latex(self, printer: sp.printing.latex.LatexPrinter) -> str:
        """``\\lceil \\log_2 x \\rceil``; a sum or product in parentheses, so that
        ceil(log2(S + T)) does not read as ceil(log2 S) + T."""
        arg = self.args[0]
        inner = printer._print(arg)
        if arg.is_Add or (arg.is_Mul and not inner.startswith(r"\frac")):
            inner = f"({inner})"
        return rf"\lceil \log_2 {inner} \rceil"

    def _sympystr(self, printer: sp.printing.str.StrPrinter) -> str:
        return f"clog2({printer._print(self.args[0])})"


def prefix_sum_clog2(x: sp.Expr) -> sp.Expr:
    """F(x) = sum_{i=1}^{x} ceil(log2 i) = x*ceil(log2 x) - 2**ceil(log2 x) + 1, exactly.

    Derivation: the values i in (2^(j-1), 2^j] number 2^(j-1) and each has ceil(log2 i) = j.

    >>> [prefix_sum_clog2(sp.Integer(i)) for i in (1, 2, 3, 4, 5)]
    [0, 1, 3, 5, 8]
    """
    q = clog2(x)
    return x * q - 2**q + 1


def sum_clog2(lo: sp.Expr, hi: sp.Expr) -> sp.Expr:
    """sum_{i=lo}^{hi} ceil(log2 i) in closed form (lo >= 1)."""
    return prefix_sum_clog2(hi) - prefix_sum_clog2(lo - 1) if lo != 1 else prefix_sum_clog2(hi)


def numpy_clog2(x: np.ndarray) -> np.ndarray:
    """Vectorized clog2 on integer arrays (exact: uses integer bit lengths, not floats)."""
    import numpy as np

    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        if np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            return np.ceil(np.log2(arr))
    arr = arr.astype(np.int64) - 1
    out = np.zeros_like(arr)
    nz = arr > 0
    out[nz] = np.floor(np.log2(arr[nz])).astype(np.int64) + 1
    # correct the rare float rounding at exact powers of two
    over = nz & ((1 << (out - 1).clip(0)) > arr)
    out[over] -= 1
    under = nz & ((1 << out.clip(0, 62)) <= arr)
    out[under] += 1
    return out


NUMPY_FUNCTIONS = {"clog2": numpy_clog2}
"""Extra lambdify namespace for expressions that contain ``clog2``."""


def to_log(expr: sp.Expr) -> sp.Expr:
    """Replace every ceil(log2 x) by log(x) (for Big-O forms)."""
    return expr.replace(clog2, lambda x: sp.log(x))
