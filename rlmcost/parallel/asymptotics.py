"""Big-O and explicit leading-order forms of parallel costs (Tables V-VIII).

Both build on ``blocks.big_o`` and add what the degrees need:

* reduction lengths split by a degree stay visible: ceil(log2(d/P_t)) becomes log(d/P_t)
  rather than log d (§III-G: TP "replaces hidden-dimension depth terms by log(d/P_t)");
* the degrees are bounded by what they split, P_t <= d (heads), P_p <= L, P_c <= m,
  P_e <= E, P_d <= B, so a replicated norm vector (L d on every TP rank) is dominated by the
  sharded weights (L d^2 / P_t >= L d) and drops out, as it would for fixed degrees.

The explicit leading order keeps, with their exact coefficients, the terms of the explicit
expression whose Big-O shape survives, and also the terms smaller than another only by a
parallel degree: ZeRO-1 keeps 2|M| + 2|M|/P_z (§III-G1), not 2|M| alone, since the sharded
term is a share of the same state, as large as the replicated one at P_z = 1.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import sympy as sp

from rlmcost import symbols as sy
from rlmcost.blocks import _dominates as _shape_dominates
from rlmcost.blocks import big_o
from rlmcost.logs import clog2

DEGREE_BOUNDS: dict[sp.Symbol, sp.Symbol] = {
    sy.P_t: sy.d,
    sy.P_p: sy.L,
    sy.P_c: sy.m,
    sy.P_e: sy.E,
    sy.P_d: sy.B,
}
"""Upper bound of each degree: the size of the dimension it splits."""

_DEGREES = frozenset(sy.PARALLEL)


def _protect(expr: sp.Expr) -> tuple[sp.Expr, dict[sp.Symbol, sp.Expr]]:
    """Replace each clog2(c x / P) argument with a degree by a stand-in symbol for x / P."""
    reps, back = {}, {}
    for f in sp.sympify(expr).atoms(clog2):
        arg = f.args[0]
        if arg.free_symbols & _DEGREES:
            core = arg.as_coeff_Mul()[1]
            stand_in = sp.Symbol(f"<{core}>", positive=True)
            reps[f] = clog2(stand_in)
            back[stand_in] = core
    return sp.sympify(expr).xreplace(reps), back


def _bound(term: sp.Expr, upper: bool) -> sp.Expr:
    """Degrees in ``term`` at the end of their range that makes it largest (``upper``) or
    smallest: a degree in a numerator at its bound or 1, in a denominator the other way."""
    out = []
    for base, power in term.as_powers_dict().items():
        if base in DEGREE_BOUNDS:
            at_bound = (power > 0) == upper
            out.append((DEGREE_BOUNDS[base] if at_bound else sp.Integer(1)) ** power)
        else:
            out.append(base**power)
    return sp.Mul(*out)


def _at_least(big: sp.Expr, small: sp.Expr) -> bool:
    """big >= small for all symbols >= 1: their ratio is a product of non-negative powers."""
    ratio = sp.powsimp(big / small)
    if ratio == 1:
        return True
    return all(
        not f.is_number and power.is_number and power >= 0
        for f, power in ratio.as_powers_dict().items()
    )


def _dominates(big: sp.Expr, small: sp.Expr) -> bool:
    """big >= small over the whole range of the degrees (the smallest their ratio can be)."""
    return _at_least(_bound(sp.powsimp(big / small), upper=False), sp.Integer(1))


@cache
def _dominates_by_size(big: sp.Expr, small: sp.Expr) -> bool:
    """big >= small (over the degrees' range, or as ``blocks.big_o`` orders shapes) with a ratio
    that involves a size, not only parallel degrees."""
    if not ((big / small).free_symbols - _DEGREES):
        return False
    return _dominates(big, small) or _shape_dominates(big, small)


def _shapes(expr: sp.Expr, regime: dict | None, explicit: bool = False) -> list[sp.Expr]:
    """The non-dominated Big-O shapes of ``expr``; ``explicit``: a shape dominated only by a
    degree factor (a shard beside its replica) is kept too."""
    protected, back = _protect(sp.expand(sp.sympify(expr).xreplace(regime or {})))
    beats: Callable[[sp.Expr, sp.Expr], bool]
    if explicit:
        each = (sp.Add.make_args(big_o(t)) for t in sp.Add.make_args(protected))
        terms = list(dict.fromkeys(s for shapes in each for s in shapes))
        beats = _dominates_by_size
    else:
        terms = list(sp.Add.make_args(big_o(protected)))
        beats = _dominates
    kept = [a for a in terms if not any(b != a and beats(b, a) for b in terms)]
    return [t.xreplace(back) for t in kept]


def big_o_parallel(expr: sp.Expr, regime: dict | None = None) -> sp.Expr:
    """The sum inside O(.) of a per-rank or global cost.

    >>> big_o_parallel(sy.L * sy.d**2 / sy.P_t + 4 * sy.L * sy.d + sy.L * clog2(3 * sy.d / sy.P_t))
    L*log(d/P_t) + L*d**2/P_t
    """
    return sp.Add(*_shapes(expr, regime))


def leading_order(expr: sp.Expr) -> sp.Expr:
    """The terms of ``expr`` (coefficients kept) whose Big-O shape is not dominated by a
    larger size; a term smaller than another only by a degree stays (a ZeRO shard).

    >>> leading_order(16 * sy.L * sy.d**2 + 16 * sy.L * sy.d + 8 * sy.V * sy.d + 8 * sy.d)
    16*L*d**2 + 8*V*d
    >>> leading_order(8 * sy.L * sy.d**2 + 8 * sy.L * sy.d**2 / sy.P_z + 4 * sy.L * sy.d)
    8*L*d**2 + 8*L*d**2/P_z
    """
    expanded = sp.expand(expr)
    kept = set(_shapes(expanded, None, explicit=True))
    out = []
    for term in sp.Add.make_args(expanded):
        if set(_shapes(term, None, explicit=True)) & kept:
            out.append(term)
    return sp.Add(*out)
