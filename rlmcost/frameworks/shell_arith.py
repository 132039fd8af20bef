"""The shell's integer arithmetic ``$((...))`` over numbers, as
:mod:`rlmcost.frameworks.shell_script` reads launch scripts (verl's compute batch sizes so):
+ - * / % ** and parentheses, ``/`` and ``%`` truncating toward zero as C (and bash) do. The
expression is parsed by :func:`ast.parse` and walked; nothing is evaluated by Python."""

from __future__ import annotations


class Unresolved(Exception):
    """A value the script's text does not give: ``var`` names it, ``why`` says why."""

    def __init__(self, var: str, why: str) -> None:
        super().__init__(f"${var} {why}")
        self.var, self.why = var, why


def integer(expr: str, text: str) -> int:
    """The value of ``expr`` (variables already replaced by numbers; ``text``: as written, for
    errors); :class:`Unresolved` for anything else."""
    import ast

    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        raise Unresolved(f"(({text.strip()}))", "is arithmetic rlmcost does not read") from None
    return _evaluate(tree.body, text)


def _evaluate(node: object, text: str) -> int:
    """An integer expression of + - * / % ** and parentheses (the shell's: ``/`` truncates)."""
    import ast

    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _evaluate(node.operand, text)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left, text), _evaluate(node.right, text)
        op = node.op
        if isinstance(op, ast.Add | ast.Sub | ast.Mult):
            return a + b if isinstance(op, ast.Add) else a - b if isinstance(op, ast.Sub) \
                else a * b  # fmt: skip
        if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod) and b == 0:
            raise Unresolved(f"(({text.strip()}))", "divides by zero")
        if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod):
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C's truncation
            return q if not isinstance(op, ast.Mod) else a - b * q
        if isinstance(op, ast.Pow) and 0 <= b <= 64:
            return int(a**b)
    raise Unresolved(f"(({text.strip()}))", "is arithmetic rlmcost does not read")
