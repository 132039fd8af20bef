"""miles' model arguments read from its checkout as data (never run): what ``python3
.../miles/utils/external_utils/model_args_utils.py MODEL`` prints, which miles' launch scripts
read into ``MODEL_ARGS`` (``read -ra MODEL_ARGS <<< "$MODEL_ARGS_LINE"``).

That helper (radixark/miles @31f1ca96) imports ``scripts/models/MODEL.py`` of its checkout
(three folders above it) and prints ``" ".join(module.model_args(**kwargs).split())``. The
file is read with :mod:`ast` over the Python its 66 model files write: constants, ``def
model_args`` with defaults, assignments, one ``return``; literals, lists, dicts, f-strings,
``+ - *``, ``or``/``and``, ``if``-expressions, ``is (not) None``, ``==``, ``int()``/``str()``,
``os.environ.get(K[, default])`` (K from the command's ``K=V`` prefix, else the default: no
environment is read), ``moe_layer_freq(...)`` and ``load_sibling_model_args(__file__, NAME,
**kw)`` / ``load_model_args(NAME, **kw)`` (a model file of the same folder). Anything else is
one error asking for the helper's output with ``--env``."""

from __future__ import annotations

import ast
import os
from itertools import takewhile
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError

HELPER = ("miles", "utils", "external_utils", "model_args_utils.py")
"""The helper's path inside a miles checkout; the checkout is the folder above ``miles``."""

MAX_MODEL_FILE_BYTES = 1 << 18
"""Largest model file read (256 KiB; miles' are under 3 KiB)."""

MAX_SIBLING_DEPTH = 8
"""Deepest chain of ``load_sibling_model_args`` followed (a file naming itself never ends)."""


def helper_output(words: list[str], notes: list[str]) -> str | None:
    """The line the helper would print for the command ``words`` (``[K=V ...] python3
    HELPER MODEL``, expanded, HELPER absolute), or None where the command is not that or
    ``scripts/models/MODEL.py`` is not beside the helper; a note says which file was read."""
    lead = len(list(takewhile(lambda w: w.partition("=")[0].isidentifier() and "=" in w, words)))
    env, words = dict(w.split("=", 1) for w in words[:lead]), words[lead:]
    if len(words) != 3 or Path(words[0]).name not in ("python", "python3"):
        return None
    helper = Path(os.path.normpath(words[1]))
    file = helper.parents[3] / "scripts" / "models" / f"{words[2]}.py" if helper.is_absolute() \
        and helper.parts[-4:] == HELPER and words[2] and "/" not in words[2] else None  # fmt: skip
    if file is None or not file.is_file():
        return None
    model = _ModelFile(file, env, words, 0)
    try:
        line = model.args({})
    except RecursionError:  # parsed, but deeper than the interpreter walks
        raise model.fail(None, "an expression nested too deep") from None
    given = f" (with {', '.join(f'{k}={v}' for k, v in env.items())})" if env else ""
    notes.append(f"MODEL_ARGS: {file} read as data, never run, as {'/'.join(HELPER)} prints "
                 f"it{given}; os.environ.get takes its default")  # fmt: skip
    return line


class _ModelFile:
    """One model file's ``model_args`` evaluated over literals (``command``: for errors)."""

    def __init__(self, file: Path, env: dict[str, str], command: list[str], depth: int) -> None:
        self.file, self.env, self.command, self.depth = file, env, command, depth
        self.scope: dict[str, Any] = {"__file__": str(file)}  # the module's and model_args'

    def fail(self, node: ast.AST | None, what: str) -> SpecError:
        where = f"{self.file} line {getattr(node, 'lineno', '?')}"
        return SpecError(f"{where}: {what}, which rlmcost does not read statically; give the "
                         f"model's arguments with --env MODEL_ARGS=\"$(python3 {self.command[-2]}"
                         f" {self.command[-1]})\"")  # fmt: skip

    def args(self, kwargs: dict[str, Any]) -> str:
        try:
            with self.file.open("rb") as fh:
                text = fh.read(MAX_MODEL_FILE_BYTES + 1).decode()
            if len(text) > MAX_MODEL_FILE_BYTES:
                raise ValueError(f"over {MAX_MODEL_FILE_BYTES:,} bytes")
            tree = ast.parse(text, str(self.file))
        except (SyntaxError, ValueError, RecursionError, MemoryError, OSError) as exc:
            raise self.fail(None, f"a file not parsed ({type(exc).__name__}: {exc})"[:160]) \
                from None  # fmt: skip
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "model_args"]
        self.run([n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom |
                                                          ast.FunctionDef)], "the module")
        if not funcs:
            raise self.fail(None, "no def model_args()")
        a = funcs[-1].args
        if a.vararg or a.kwarg or a.posonlyargs:
            raise self.fail(funcs[-1], "model_args() taking *args, **kwargs or positional-only")
        params = [*a.args, *a.kwonlyargs]
        defaults = [None] * (len(a.args) - len(a.defaults)) + [*a.defaults, *a.kw_defaults]
        if set(kwargs) - {p.arg for p in params}:
            raise self.fail(funcs[-1], f"model_args() given {sorted(kwargs)} it does not take")
        for p, d in zip(params, defaults, strict=True):
            if p.arg not in kwargs and d is None:
                raise self.fail(funcs[-1], f"model_args()'s parameter {p.arg} with no default")
            self.scope[p.arg] = kwargs[p.arg] if p.arg in kwargs else self.eval(d)  # type: ignore[arg-type]
        value = self.run(funcs[-1].body, "model_args()")
        if not isinstance(value, str) or not value.split():
            raise self.fail(funcs[-1], "model_args() returning no words")
        return " ".join(value.split())

    def run(self, body: list[ast.stmt], where: str) -> Any:
        """The statements ``body`` (assignments to names, docstrings, a return) run in order."""
        for node in body:
            if isinstance(node, ast.Return) and node.value is not None:
                return self.eval(node.value)
            targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None \
                    and all(isinstance(t, ast.Name) for t in targets):  # fmt: skip
                value = self.eval(node.value)
                self.scope.update((t.id, value) for t in targets)
            elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                raise self.fail(node, f"a statement {ast.unparse(node)[:60]!r} in {where}")
        return None

    def eval(self, node: ast.expr) -> Any:
        ev = self.eval
        try:
            if isinstance(node, ast.Constant):
                return node.value
            if isinstance(node, ast.Name) and node.id in self.scope:
                return self.scope[node.id]
            if isinstance(node, ast.List | ast.Tuple):
                return [ev(e) for e in node.elts]
            if isinstance(node, ast.Dict) and None not in node.keys:
                return {ev(k): ev(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
            if isinstance(node, ast.JoinedStr):
                return "".join(ev(v) for v in node.values)
            if isinstance(node, ast.FormattedValue) and node.conversion == -1 \
                    and node.format_spec is None:  # fmt: skip
                return str(ev(node.value))  # format(x, '') is str(x) for literals
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
                return _binop(node.op, ev(node.left), ev(node.right))
            if isinstance(node, ast.BoolOp):
                value = ev(node.values[0])
                for v in node.values[1:]:  # the first value that decides, the rest not read
                    value = value if bool(value) == isinstance(node.op, ast.Or) else ev(v)
                return value
            if isinstance(node, ast.IfExp):
                return ev(node.body) if ev(node.test) else ev(node.orelse)
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                return _compare(node.ops[0], ev(node.left), ev(node.comparators[0]))
            if isinstance(node, ast.Call):
                return self.call(node)
        except SpecError:
            raise
        except (TypeError, ValueError, OverflowError, MemoryError) as exc:
            raise self.fail(node, f"{ast.unparse(node)[:60]!r} failing ({exc})") from None
        raise self.fail(node, f"{ast.unparse(node)[:60]!r}")

    def call(self, node: ast.Call) -> Any:
        name = ast.unparse(node.func)[:60]
        args = [self.eval(a) for a in node.args]  # *x: not read (no Starred in eval)
        kw: dict[str, Any] = {}
        for k in node.keywords:  # **d: a dict's items (TypeError else, caught by eval)
            kw.update(self.eval(k.value) if k.arg is None else {k.arg: self.eval(k.value)})
        if name == "os.environ.get" and not kw and len(args) in (1, 2) and type(args[0]) is str:
            return self.env.get(args[0], args[1] if len(args) == 2 else None)
        if name in ("int", "str") and not kw and len(args) == 1:
            return int(args[0]) if name == "int" else str(args[0])
        if name == "moe_layer_freq" and not args:
            return moe_layer_freq(**kw)  # other keywords: TypeError, caught by eval
        if {"load_sibling_model_args": 2, "load_model_args": 1}.get(name) == len(args) \
                and type(args[-1]) is str and "/" not in args[-1]:  # fmt: skip
            file = self.file.parent / f"{args[-1]}.py"  # the helper's own folder, as here
            if file.is_file() and self.depth < MAX_SIBLING_DEPTH:
                return _ModelFile(file, self.env, self.command, self.depth + 1).args(kw)
            raise self.fail(node, f"{file.name}, not in {self.file.parent} or past "
                            f"{MAX_SIBLING_DEPTH} files deep")  # fmt: skip
        raise self.fail(node, f"a call of {name}()")


def moe_layer_freq(nlayers: int, first_k_dense_replace: int) -> str:
    """Megatron's ``--moe-layer-freq`` pattern, the first K layers dense, as the helper's
    ``moe_layer_freq`` writes it (model_args_utils.py @31f1ca96)."""
    if not isinstance(nlayers, int) or not isinstance(first_k_dense_replace, int) \
            or nlayers > 1 << 20:  # fmt: skip
        raise ValueError(f"moe_layer_freq of {nlayers!r}, {first_k_dense_replace!r}")
    dense = min(first_k_dense_replace, nlayers)
    return "[" + ",".join(["0"] * dense + ["1"] * (nlayers - dense)) + "]"


def _binop(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Add) and type(left) is type(right) is str:
        return left + right
    if {type(left), type(right)} <= {int, float}:
        return left + right if isinstance(op, ast.Add) else left - right \
            if isinstance(op, ast.Sub) else left * right  # fmt: skip
    raise TypeError("operands rlmcost does not combine")


def _compare(op: ast.cmpop, left: Any, right: Any) -> bool:
    if isinstance(op, ast.Is | ast.IsNot) and right is None:
        return (left is None) == isinstance(op, ast.Is)
    if isinstance(op, ast.Eq | ast.NotEq):
        return (left == right) == isinstance(op, ast.Eq)
    raise TypeError(f"the comparison {type(op).__name__}")
