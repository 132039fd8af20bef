"""The README's Python examples run as written and print what their comments say.

The ```python blocks of README.md are executed in turn (one namespace: the second block uses
the first's ``import rlmcost``); a line ``EXPR  # LITERAL`` whose comment starts with a Python
tuple, string or integer literal is evaluated and compared with it, ``...`` in the literal
standing for any value (a tuple's element) or any rest (a string's tail); a tuple that is no
literal (an enum member inside) is compared with the value's repr. The source of each
expected value is the README line itself."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"),
                    re.S)  # fmt: skip


def _expected(comment: str) -> object | None:
    """The literal a comment states: a tuple ``(a, ..., c)``, a string ``'...'`` or a leading
    integer (``70553706496, = ...``), else None."""
    text = comment.strip()
    if number := re.match(r"(\d+)(,|$)", text):
        return int(number.group(1))
    if text.startswith("("):
        text = text[: text.index(")") + 1]
    elif not text.startswith("'"):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _matches(value: object, expected: object) -> bool:
    if isinstance(expected, tuple):
        if not isinstance(value, tuple) or len(value) != len(expected):
            return False
        return all(e is Ellipsis or v == e for v, e in zip(value, expected, strict=True))
    if isinstance(expected, int):
        return value == expected
    assert isinstance(expected, str)
    return (str(value).startswith(expected[:-3]) if expected.endswith("...")
            else value == expected)  # fmt: skip


def test_readme_python_blocks_print_what_they_say():
    checked, names = 0, dict[str, object]()
    for block in BLOCKS:
        statement = ""
        for line in block.splitlines():
            code, _, comment = line.partition("  # ")
            statement += code + "\n"
            try:
                tree = ast.parse(statement)
            except SyntaxError:
                continue  # a statement over several lines: read on
            expected = _expected(comment) if comment else None
            if expected is None and comment.startswith("(") and isinstance(tree.body[-1],
                                                                            ast.Expr):
                # a tuple holding an enum member, written as Python prints it (its repr)
                value = eval(compile(ast.Expression(tree.body[-1].value), "README", "eval"), names)
                assert repr(value) == comment.strip(), f"README: {code.strip()} gives {value!r}"
                checked += 1
            elif expected is not None and isinstance(tree.body[-1], ast.Expr):
                value = eval(compile(ast.Expression(tree.body[-1].value), "README", "eval"), names)
                assert _matches(value, expected), f"README: {code.strip()} gives {value!r}"
                checked += 1
            else:
                exec(compile(tree, "README", "exec"), names)
            statement = ""
    assert checked >= 4  # fits/shortfall/stage, to_command, fits/utilization, the 70B count
