"""Specs -> numbers: exact substitution and compiled numpy sweeps (formatting: ``units``).

Exact path: build an expression from a numeric :class:`~rlmcost.arch.Arch` and integer token
counts (the result is a ``sympy.Integer``) or substitute into a symbolic one with
:func:`exact`; either way :func:`to_int` hands back a Python ``int``.

Sweep path: :func:`compile_expr` lambdifies an expression once (``cse=True``, cached) and
:func:`sweep` evaluates it over numpy arrays of configurations; integer inputs stay int64
where the values fit (|x| < 2**63), else float64 with a note in the docstring of the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import sympy as sp

    from rlmcost.arch import Arch


def arch_substitutions(symbolic: Arch, numeric: Arch) -> dict[sp.Symbol, int]:
    """Map each symbol field of ``symbolic`` (e.g. CANONICAL) to ``numeric``'s value."""
    import dataclasses

    import sympy as sp

    subs: dict[sp.Symbol, int] = {}
    for f in dataclasses.fields(symbolic):
        sym = getattr(symbolic, f.name)
        if isinstance(sym, sp.Symbol):
            subs[sym] = getattr(numeric, f.name)
    return subs


def exact(expr: sp.Expr, subs: Mapping[sp.Symbol, Any]) -> sp.Expr:
    """Substitute numbers into ``expr`` exactly (rational arithmetic, no floats)."""
    import sympy as sp

    return sp.sympify(expr).xreplace({k: sp.sympify(v) for k, v in subs.items()})


def to_int(value: Any) -> int:
    """An exact integer from a sympy Integer / int; ValueError if it is not integral."""
    import sympy as sp

    v = sp.sympify(value)
    if not v.is_Integer:
        v = sp.nsimplify(v) if v.is_number else v
        if not getattr(v, "is_Integer", False):
            raise SpecError(f"expected an exact integer, got {value}; give whole numbers")
    return int(v)


@lru_cache(maxsize=512)
def _compiled(expr: sp.Expr, args: tuple[sp.Symbol, ...]) -> Callable[..., Any]:
    import sympy as sp

    from rlmcost.logs import NUMPY_FUNCTIONS

    return sp.lambdify(args, expr, modules=[NUMPY_FUNCTIONS, "numpy"], cse=True)


def compile_expr(expr: sp.Expr, args: Sequence[sp.Symbol]) -> Callable[..., Any]:
    """A numpy function of ``args`` computing ``expr``; compiled once per (expr, args)."""
    return _compiled(expr, tuple(args))


def sweep(
    exprs: Mapping[str, sp.Expr], grid: Mapping[sp.Symbol, Sequence[Any] | np.ndarray]
) -> pd.DataFrame:
    """Evaluate named expressions over every row of ``grid`` (equal-length columns).

    One compiled call per expression over whole arrays; the DataFrame is built at the end.
    Integer columns stay int64, so FLOP and byte counts below 2**63 are exact.
    """
    import numpy as np
    import pandas as pd

    args = tuple(grid)
    cols = [np.asarray(grid[a]) for a in args]
    n = len(cols[0]) if cols else 1
    out: dict[str, Any] = {str(a): c for a, c in zip(args, cols, strict=True)}
    for name, expr in exprs.items():
        free = tuple(a for a in args if a in expr.free_symbols)
        missing = expr.free_symbols - set(args)
        if missing:
            raise SpecError(f"{name}: no values for {sorted(map(str, missing))}; give them")
        vals = compile_expr(expr, free)(*[grid[a] for a in free])
        out[name] = np.broadcast_to(np.asarray(vals), (n,)).copy()
    return pd.DataFrame(out)


def grid_product(axes: Mapping[sp.Symbol, Sequence[Any]]) -> dict[sp.Symbol, np.ndarray]:
    """The Cartesian product of ``axes`` as equal-length int64 columns for :func:`sweep`."""
    import numpy as np

    mesh = np.meshgrid(*[np.asarray(v) for v in axes.values()], indexing="ij")
    return {k: m.ravel() for k, m in zip(axes, mesh, strict=True)}
