"""Specs -> numbers: exact substitution, compiled numpy sweeps, and human formatting.

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


# --------------------------------------------------------------------------------------------
# Formatting: one formatter per unit. FLOPs in base 1000, bytes in base 1024.
# --------------------------------------------------------------------------------------------

_FLOP_PREFIXES = ("", "k", "M", "G", "T", "P", "E", "Z", "Y")
_BYTE_PREFIXES = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def format_flops(value: float | int, unit: str = "FLOP") -> str:
    """1.23e15 -> '1.23 PFLOP' (base 1000).

    >>> format_flops(1_230_000_000_000_000)
    '1.23 PFLOP'
    >>> format_flops(989_400_000_000_000, "FLOP/s")
    '989 TFLOP/s'
    """
    v = float(value)
    i = 0
    while abs(v) >= 1000 and i < len(_FLOP_PREFIXES) - 1:
        v /= 1000
        i += 1
    return f"{_three(v)} {_FLOP_PREFIXES[i]}{unit}"


def format_bytes(value: float | int) -> str:
    """Bytes in base 1024: 41231686041 -> '38.4 GiB'.

    >>> format_bytes(41_231_686_041)
    '38.4 GiB'
    >>> format_bytes(512)
    '512 B'
    """
    v = float(value)
    i = 0
    while abs(v) >= 1024 and i < len(_BYTE_PREFIXES) - 1:
        v /= 1024
        i += 1
    return f"{_three(v)} {_BYTE_PREFIXES[i]}" if i else f"{int(v)} B"


def format_bandwidth(value: float | int) -> str:
    """Bytes per second in base 1000, as datasheets print links: 4.5e11 -> '450 GB/s'."""
    return format_flops(value, "B/s").replace("kB", "KB")


def format_seconds(value: float) -> str:
    """Seconds with a sensible unit: 0.0021 -> '2.10 ms', 5400 -> '1.50 h'.

    >>> format_seconds(0.0021), format_seconds(2.1), format_seconds(5400)
    ('2.10 ms', '2.10 s', '1.50 h')
    """
    v = float(value)
    if v == 0:
        return "0 s"
    for scale, unit in ((3600, "h"), (60, "min"), (1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if abs(v) >= scale:
            return f"{v / scale:.2f} {unit}"
    return f"{v * 1e9:.2f} ns"


def format_count(value: int) -> str:
    """Large counts with base-1000 suffixes: 70553706496 -> '70.6 B' (parameters)."""
    v = float(value)
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{_three(v / scale)} {unit}"
    return str(int(v))


def _three(v: float) -> str:
    """Three significant digits without scientific notation."""
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"
