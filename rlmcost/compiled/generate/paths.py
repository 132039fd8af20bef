"""A block's values at every corner of its flags from one evaluation per execution path.

The symbolic core branches on an ``Arch``'s switches in Python. An evaluation at a corner reads
some switches (traced: :class:`~rlmcost.compiled.generate.compiler.Compiler`); a switch it never
read cannot have changed its course, so every corner that agrees with it on the switches it read
takes the same path and has the same value. :func:`explore` evaluates one corner per path (a
decision tree over the switches each path reads), for ``params_active_per_token`` 16,128 of
the 81,920 distinct corners of its 18 flags; :func:`cube` spreads the leaves' values over every
corner and :func:`moebius_support` screens the coefficients of the
multilinear form in exact Python numbers (ints and Fractions, not sympy's).

Everything here is exact: a value is whatever the evaluation returned, converted to a Python
``int`` or ``Fraction`` only where it is a sympy rational.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from itertools import product
from typing import Any

Option = frozenset[str]
"""The flags one group sets: none (its default) or one (a bool, or one member of an enum)."""

Assign = tuple[tuple[str, Option], ...]
"""A path: the option of each group it read, in the order it branched on them."""


def explore(
    run: Callable[[frozenset[str]], tuple[Any, set[str]]],
    bases: list[frozenset[str]],
    options: dict[str, tuple[Option, ...]],
) -> list[tuple[frozenset[str], Assign, Any]]:
    """One ``(base, path, value)`` per execution path of ``run`` over the corners ``base`` plus
    one option of each group of ``options`` (its first option the default).

    ``run(corner)`` is the value at ``corner`` and the groups its evaluation read; a read group
    not in ``options`` stays at its default. Each path's corner sets the options it lists and
    the defaults of every other group; the path's value holds at every corner that agrees with
    it on its groups, since the evaluation read no other."""
    leaves: list[tuple[frozenset[str], Assign, Any]] = []
    for base in bases:
        stack: list[tuple[Assign, Any, set[str]]] = [((), *run(base))]
        while stack:
            assign, value, read = stack.pop()
            done = {g for g, _ in assign}
            open_ = sorted(g for g in read if g in options and g not in done)
            if not open_:
                leaves.append((base, assign, value))
                continue
            group = open_[0]  # the default corner is this one: its value and reads carry over
            stack.append(((*assign, (group, options[group][0])), value, read))
            for option in options[group][1:]:
                branch = (*assign, (group, option))
                stack.append((branch, *run(base.union(*(o for _, o in branch)))))
    return leaves


def read_groups(leaves: list[tuple[frozenset[str], Assign, Any]]) -> set[str]:
    """The groups some path branched on: every group read on some path (and in ``options``)."""
    return {g for _, assign, _ in leaves for g, _ in assign}


def cube(
    leaves: list[tuple[frozenset[str], Assign, Any]],
    flags: tuple[str, ...],
    options: dict[str, tuple[Option, ...]],
    base_of: Callable[[frozenset[str]], frozenset[str]],
    bases: list[frozenset[str]],
) -> dict[int, Any]:
    """The value at every corner of ``flags`` by its bit mask (bit i: ``flags[i]``).

    A corner is a subset of ``bases``' union (its base ``base_of(subset)``) plus one option of
    each group of ``options`` whose flags are in ``flags``; the path whose base and options
    it matches gives its value."""
    bit = {f: 1 << i for i, f in enumerate(flags)}
    groups = [g for g in options if all(f in bit for o in options[g] for f in o)]

    def mask(on: frozenset[str]) -> int:
        return sum(bit[f] for f in on)

    by_base: dict[frozenset[str], list[tuple[int, list[str], Any]]] = {}
    for base, assign, value in leaves:
        set_ = dict(assign)
        free = [g for g in groups if g not in set_]
        by_base.setdefault(base, []).append((mask(frozenset().union(*set_.values())), free, value))
    out: dict[int, Any] = {}
    pool = sorted(frozenset().union(*bases))
    for picks in product((False, True), repeat=len(pool)):
        sub = frozenset(f for f, on in zip(pool, picks, strict=True) if on)
        low = mask(sub)
        for high, free, value in by_base[base_of(sub)]:
            for rest in product(*([mask(o) for o in options[g]] for g in free)):
                out[low | high | sum(rest)] = value
    return out


def exact(value: Any) -> Any:
    """``value`` as a Python ``int`` or ``Fraction`` where it is a sympy rational, else as is."""
    if getattr(value, "is_Rational", False):
        return int(value.p) if value.q == 1 else Fraction(int(value.p), int(value.q))
    return value


def moebius_support(values: dict[int, Any], n: int) -> set[int]:
    """The masks of ``values`` (corners, closed under subsets) whose Moebius coefficient
    a_S = sum over T subset S of (-1)^{|S| - |T|} f(T) is not 0, by the subset transform over
    ``n`` bits in exact Python numbers (masks of no corner held at 0 change no corner's
    coefficient: the transform at a mask reads only its submasks, so only corners are kept)."""
    a = {m: exact(v) for m, v in values.items()}
    scale = math.lcm(*(v.denominator for v in a.values() if isinstance(v, Fraction)))
    if scale > 1:  # a common denominator: integers, zero where the fractions are
        a = {m: v * scale for m, v in a.items()}
        a = {m: int(v) if isinstance(v, Fraction) and v.denominator == 1 else v
             for m, v in a.items()}  # fmt: skip
    for i in range(n):
        b = 1 << i
        for m in [m for m in a if m & b]:
            a[m] = a[m] - a[m ^ b]
    return {m for m in values if a[m] != 0}


@contextmanager
def numeric_min_max() -> Iterator[None]:
    """``sympy.Min`` / ``sympy.Max`` of exact numbers as the number itself (what sympy returns,
    ~100x faster than its argument collapsing); anything else goes to sympy. For evaluations at
    the numeric points only: the symbolic core reaches them as ``sp.Min`` / ``sp.Max``."""
    import sympy as sp

    originals = sp.Min, sp.Max

    def key(x: Any) -> Any:
        return x if type(x) is int else Fraction(int(x.p), int(x.q))

    def fast(original: Any, pick: Callable[..., Any]) -> Callable[..., Any]:
        def choose(*args: Any, **kwargs: Any) -> Any:
            if args and not kwargs and all(
                type(x) is int or isinstance(x, sp.Rational) for x in args
            ):
                return sp.sympify(pick(args, key=key))
            return original(*args, **kwargs)

        return choose

    sp.Min, sp.Max = fast(sp.Min, min), fast(sp.Max, max)
    try:
        yield
    finally:
        sp.Min, sp.Max = originals
