"""The shell's integer arithmetic ``$((...))`` over numbers, as
:mod:`rlmcost.frameworks.shell_script` reads launch scripts (verl's compute batch sizes so):
+ - * / % ** and parentheses, ``/`` and ``%`` truncating toward zero as C (and bash) do. The
expression is parsed by :func:`ast.parse` and walked; nothing is evaluated by Python."""

from __future__ import annotations

_BITS = 1 << 64
"""bash's arithmetic is signed 64-bit: every result wraps (``$((2**64))`` is 0)."""


class Unresolved(Exception):
    """A value the script's text does not give: ``var`` names it (cut to 200 characters),
    ``why`` says why; ``start``: the value is the folder the script is started from
    (``$(pwd)``, ``$PWD``), which :mod:`rlmcost.frameworks.shell_checkout` may find."""

    def __init__(self, var: str, why: str, start: bool = False) -> None:
        var = var if len(var) <= 200 else var[:197] + "..."
        super().__init__(f"${var} {why}")
        self.var, self.why, self.start = var, why, start


def whole(name: str, value: str | list[str] | None, failures: dict[str, Unresolved]) -> str:
    """``name``'s value in ``$((...))``, in parentheses: an unset name is 0 as in the shell, an
    array its first element; :class:`Unresolved` for a value not known (``failures``: a
    placeholder mark's variable -> why) or not a whole number."""
    import re

    if isinstance(value, list):
        value = value[0] if value else None
    text = value or "0"
    if (mark := re.search("([\x00\x01])([^\x00\x01]*)\\1", text)) is not None:
        raise failures[mark.group(2)]
    if not re.fullmatch(r"\s*-?\d+\s*", text):
        raise Unresolved(name, f"is {text!r}, not a whole number, in $((...))")
    return f"({text.strip()})"


def _wrap(v: int) -> int:
    """``v`` as bash's signed 64-bit integer."""
    v %= _BITS
    return v - _BITS if v >= _BITS >> 1 else v


def integer(expr: str, text: str) -> int:
    """The value of ``expr`` (variables already replaced by numbers; ``text``: as written, for
    errors); :class:`Unresolved` for anything else."""
    import ast

    try:
        return _evaluate(ast.parse(expr.strip(), mode="eval").body, text)
    except (SyntaxError, RecursionError, MemoryError):  # RecursionError: nested thousands deep
        raise Unresolved(f"(({text.strip()}))", "is arithmetic rlmcost does not read") from None


def _evaluate(node: object, text: str) -> int:
    """An integer expression of + - * / % ** and parentheses (the shell's: ``/`` truncates)."""
    import ast

    if isinstance(node, ast.Constant) and type(node.value) is int:
        return _wrap(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _evaluate(node.operand, text)
        return _wrap(-v) if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left, text), _evaluate(node.right, text)
        op = node.op
        if isinstance(op, ast.Add | ast.Sub | ast.Mult):
            return _wrap(a + b if isinstance(op, ast.Add) else a - b if isinstance(op, ast.Sub)
                         else a * b)  # fmt: skip
        if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod) and b == 0:
            raise Unresolved(f"(({text.strip()}))", "divides by zero")
        if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod):
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C's truncation
            return _wrap(q if not isinstance(op, ast.Mod) else a - b * q)
        if isinstance(op, ast.Pow) and b >= 0:
            return _wrap(pow(a, b, _BITS))  # bounded: bash's wrapped power
    raise Unresolved(f"(({text.strip()}))", "is arithmetic rlmcost does not read")
