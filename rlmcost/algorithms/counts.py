"""Token-count formulas (``"B*K"``, ``"S + T"``, ``"rho*B*K"``) evaluated exactly, without sympy.

An invocation's counts are short formulas over the workload names of :data:`model.NAMES`
(validated by ``Invocation``: ``+ * / ( )``, integers and those names). The symbolic core
parses them with sympy (``algorithms.cost.count``); numeric queries evaluate them here with
Python's ``ast`` and ``Fraction``: the same value, an ``int`` when whole (test: every formula of
the catalog agrees with ``cost.count``).

>>> count("rho*B*K", {"rho": Fraction(3, 2), "B": 4, "K": 8})
48
>>> count("S + T", {"S": 512, "T": 1024})
1536
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import cache

from rlmcost.errors import SpecError

Number = int | Fraction

_BINARY: dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: lambda a, b: Fraction(a) / b,
}


@cache
def _tree(text: str) -> ast.expr:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        raise SpecError(f"token count {text!r} is not a formula of + - * / ( ) and names") from None


def _eval(node: ast.expr, values: Mapping[str, object], text: str) -> Number:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left, values, text), _eval(node.right, values, text)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise SpecError(f"token count {text!r} needs a value for {node.id}")
        value = values[node.id]
        if isinstance(value, bool) or not isinstance(value, int | Fraction):
            raise SpecError(f"{node.id}={value!r} must be an integer or a fraction")
        return value
    raise SpecError(f"token count {text!r} may use only + - * / ( ), integers and names")


def count(text: str, values: Mapping[str, object]) -> Number:
    """The formula ``text`` with ``values`` substituted: an ``int`` when whole, else a
    ``Fraction`` (e.g. ``N_mini`` steps over an odd token count)."""
    value = _eval(_tree(text), values, text)
    if isinstance(value, Fraction) and value.denominator == 1:
        return value.numerator
    return value
