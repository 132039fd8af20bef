"""Big-O forms of explicit cost expressions, derived rather than written by hand."""

from __future__ import annotations

import sympy as sp


def big_o(expr: sp.Expr, regime: dict[sp.Symbol, sp.Expr] | None = None) -> sp.Expr:
    """Asymptotic form of an explicit expression, derived rather than written by hand.

    Steps: apply the regime (e.g. d_ff -> d for d_ff = O(d); d_h -> d), replace
    ceil(log2 x) by log x, expand, drop numeric coefficients, then drop every term that another
    term dominates (all symbols >= 1: a term divides the other, with logs as factors >= 1).
    The result is the sum inside O(.).

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.blocks import work_forward_per_token
    >>> from rlmcost.symbols import m, d_ff, d
    >>> big_o(work_forward_per_token(CANONICAL, m), {d_ff: d})
    L*d**2 + L*d*m + V*d
    """
    from rlmcost.logs import to_log

    e = sp.sympify(expr)
    if regime:
        e = e.xreplace(regime)
    e = to_log(e)
    e = e.xreplace({lg: _log_upper(lg.args[0]) for lg in e.atoms(sp.log)})
    e = sp.expand(e)
    terms = []
    for term in sp.Add.make_args(e):
        coeff, rest = term.as_coeff_Mul()
        if coeff > 0:
            terms.append(rest)
    terms = list(dict.fromkeys(terms))
    kept = [t for t in terms if not any(o != t and _dominates(o, t) for o in terms)]
    return sp.Add(*kept)


def _upper(term: sp.Expr) -> sp.Expr:
    """Replace h_kv by its bound h, then h by d when no head width d_h pairs with it (outside
    logs): the counts are bounded by the widths they split (h_kv <= h <= d)."""
    from rlmcost import symbols as sy

    bounds = {sy.h_kv: sy.h}
    term = term.xreplace(bounds)
    if sy.d_h not in term.free_symbols:
        bounds = {sy.h: sy.d}
    factors = []
    for f, p in term.as_powers_dict().items():
        factors.append(bounds.get(f, f) ** p if f in bounds and p.is_positive else f**p)
    return sp.Mul(*factors)


def _log_upper(arg: sp.Expr) -> sp.Expr:
    """log of a product as a sum of logs of its symbolic numerator factors: log(d/h) -> log d,
    log(3 d) -> log d, log(B m) -> log B + log m (an upper bound up to a constant)."""
    num, _ = sp.fraction(sp.factor(arg))
    logs = [sp.log(f) for f in num.as_powers_dict() if not f.is_number]
    return sp.Add(*logs) if logs else sp.Integer(1)


def _dominates(big: sp.Expr, small: sp.Expr) -> bool:
    """True when big >= small for all symbols >= 1: upper(small) divides big, with the ratio a
    product of non-negative powers; on a tie the term that needed no bound wins."""
    ratio = sp.powsimp(big / _upper(small))
    if ratio == 1:
        return _upper(small) != small and _upper(big) == big
    for factor, power in ratio.as_powers_dict().items():
        if factor.is_number:
            return False
        if not (power.is_number and power >= 0):
            return False
    return True
