"""The cycle means of a schedule's graph as one function of the weights
(:func:`means_function`; :mod:`rlmcost.placement.schedule`, ``schedule_template``).

The function an iteration's schedule evaluates is written out as Python source once per graph
(one local per unit, one expression per cycle, running sums over shared prefixes computed once)
and compiled: the planner's sweeps call it many times. Its first calls sum the same numbers in
a loop instead (:data:`COMPILE_AT`), which a one-shot query, calling each once, takes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.placement.schedule import Cycle

COMPILE_AT = 3
"""The call of a means function (:func:`means_function`) at which its source is compiled; the
calls before it sum in a loop (:func:`_means_loop`): a one-shot query calls each of its three
once, and compiling them was ~7 ms of its start (the planner's sweeps call each many times)."""


def means_function(keys: Sequence[str], cycles: Sequence[Cycle], index: Mapping[str, str],
                    largest: bool = False, vectors: int = 1) -> Callable[..., Any]:  # fmt: skip
    """:func:`_means_compiled`'s function, its first calls answered by :func:`_means_loop`
    with the same numbers (the same additions and divisions in the same order)."""
    calls = 0
    compiled: Callable[..., Any] | None = None
    read: dict[str, Any] = {}  # each key's subscript in the weights (the index's text, read)

    def means(*w: Any) -> Any:
        nonlocal calls, compiled
        if compiled is not None:
            return compiled(*w)
        calls += 1
        if calls < COMPILE_AT:
            if not read:
                read.update((k, _subscript(index[k])) for k in dict.fromkeys(keys))
            return _means_loop(read, cycles, largest, vectors, w)
        compiled = _means_compiled(keys, cycles, index, largest, vectors)
        return compiled(*w)

    return means


def _subscript(text: str) -> Any:
    """The subscript whose source is ``text``: ``str(i)`` (a position) or ``repr(key)`` (a
    key), read back without compiling (``ast.literal_eval`` for anything else)."""
    if text.isdigit():
        return int(text)
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" and repr(text[1:-1]) == text:
        return text[1:-1]
    from ast import literal_eval

    return literal_eval(text)


def _means_loop(read: Mapping[str, Any], cycles: Sequence[Cycle], largest: bool, vectors: int,
                ws: tuple[Any, ...]) -> Any:  # fmt: skip
    """What :func:`_means_compiled`'s function returns for the weight vectors ``ws``: each
    key's weight read (``w[read[key]]``), each cycle's sum ``0 + w_a + w_b + ...`` left to
    right, the means or the largest per shift, then overall."""
    out = []
    for w in ws[:vectors]:
        got = {k: w[at] for k, at in read.items()}
        sums = []
        for c in cycles:
            total: Any = 0
            for k in c.keys:
                total = total + got[k]
            sums.append(total)
        if not largest:
            out.append([t / c.shift for t, c in zip(sums, cycles, strict=True)])
            continue
        by_shift: dict[int, list[Any]] = {}
        for t, c in zip(sums, cycles, strict=True):
            by_shift.setdefault(c.shift, []).append(t)
        out.append(max(tuple(max(tuple(v)) / k for k, v in by_shift.items())))
    return tuple(out) if vectors > 1 else out[0]


def _means_compiled(keys: Sequence[str], cycles: Sequence[Cycle], index: Mapping[str, str],
                    largest: bool = False, vectors: int = 1) -> Callable[..., Any]:  # fmt: skip
    """``def means(w)``: every cycle's mean from the weights ``w[index[key]]``, each
    ``(0 + w_a + w_b + ...) / shift`` left to right, which is ``sum((w_a, w_b, ...), 0) /
    shift`` as CPython 3.11 computes it (ints exactly, floats added in order). Cycles found
    from one root share their first units, so each running sum over a common prefix is
    computed once and reused (the same additions in the same order). ``largest``: the
    function returns the largest mean instead, as the largest sum of each shift divided by
    that shift, then the largest of those: a correctly rounded division by a positive shift
    is monotone (IEEE 754 for floats, Python's true division for ints), so the largest
    quotient is the quotient of the largest sum, the same number as ``max`` over every
    mean (finite weights, as schedule weights are: seconds and depths). ``vectors`` > 1 (with
    ``largest``): ``def means(w0, w1, ...)`` returns the tuple of each vector's largest mean,
    each computed by the same lines as the one-vector function."""
    if vectors > 1:
        params = [f"w{v}" for v in range(vectors)]
        lines = [f"def means({', '.join(params)}):"]
        tops = []
        for v, name in enumerate(params):
            body, top = _sum_lines(keys, cycles, index, True, name, f"v{v}_")
            lines += body
            tops.append(top)
        lines.append(f"    return ({''.join(t + ', ' for t in tops)})")
    else:
        lines = ["def means(w):"]
        body, top = _sum_lines(keys, cycles, index, largest, "w", "")
        lines += [*body, f"    return {top}"]
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<schedule.period>", "exec"), namespace)  # noqa: S102
    return namespace["means"]


def _sum_lines(keys: Sequence[str], cycles: Sequence[Cycle], index: Mapping[str, str],
               largest: bool, w: str, prefix: str) -> tuple[list[str], str]:  # fmt: skip
    """:func:`_means_compiled`'s lines reading the weights ``w`` into locals named with
    ``prefix`` and summing the cycles, and the expression it returns (the means' list, or
    the largest mean)."""
    local = {k: f"{prefix}w{i}" for i, k in enumerate(dict.fromkeys(keys))}
    lines = [f"    {local[k]} = {w}[{index[k]}]" for k in local]
    prefixes: dict[tuple[str, ...], str] = {}
    terms = []
    by_shift: dict[int, list[str]] = {}  # the cycles' sums per shift, in order
    for c in cycles:
        name = "0"
        for n in range(1, len(c.keys) + 1):
            part = c.keys[:n]
            if part not in prefixes:
                prefixes[part] = f"{prefix}p{len(prefixes)}"
                lines.append(f"    {prefixes[part]} = {name} + {local[part[-1]]}")
            name = prefixes[part]
        terms.append(f"{name} / {c.shift!r}")
        by_shift.setdefault(c.shift, []).append(name)
    if largest:  # max over a shift's sums, then one division: the same largest mean
        tops = [f"max(({', '.join(sums)},)) / {k!r}" for k, sums in by_shift.items()]
        return lines, f"max(({''.join(t + ', ' for t in tops)}))"  # none: ValueError
    return lines, f"[{', '.join(terms)}]"
