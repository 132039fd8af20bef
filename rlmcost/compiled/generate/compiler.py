"""Evaluation of a block at the corners of its flags, and its exact multilinear form.

See the package docstring (:mod:`rlmcost.compiled.generate`) for the Moebius inversion and the
screening of coefficients at two fixed random points.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import combinations
from types import SimpleNamespace
from typing import Any

from rlmcost.compiled.generate.catalog import Block
from rlmcost.compiled.generate.fields import (
    NONE_WHEN_OFF,
    SIZES,
    STRUCTURAL,
    TRIGGERS,
    arch_fields,
    int_symbols,
)
from rlmcost.compiled.generate.paths import (
    cube,
    explore,
    moebius_support,
    numeric_min_max,
    read_groups,
)


class _Reads:
    """Bool and enum fields read on a traced ``Arch`` (see :func:`_traced_class`)."""

    fields: set[str] = set()
    copying = 0


class _Watched:
    """A switch of a traced ``Arch``: reading it records its name (a data descriptor, so that
    every other attribute reads at the interpreter's speed)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        if not _Reads.copying:
            _Reads.fields.add(self.name)
        return obj.__dict__[self.name]

    def __set__(self, obj: Any, value: Any) -> None:  # the frozen ``__init__`` sets fields
        obj.__dict__[self.name] = value


def _traced_class(watched: Iterable[str]) -> type:
    from rlmcost.arch import Arch

    def with_(self: Any, **changes: object) -> Any:
        _Reads.copying += 1  # a copy reads every field; that is no use of a switch
        try:
            return Arch.with_(self, **changes)
        finally:
            _Reads.copying -= 1

    space: dict[str, Any] = {name: _Watched(name) for name in watched}
    space["with_"] = with_
    space["__doc__"] = "An ``Arch`` that records reads of its switches (copies by ``with_`` too)."
    return type("TracedArch", (Arch,), space)


class Compiler:
    """Evaluates blocks on symbolic or exact-number ``Arch`` corners."""

    N_POINTS = 2
    CHECKS = 8
    """Corners per block and point that :meth:`spot_check` evaluates afresh."""

    def __init__(self) -> None:
        import sympy as sp

        from rlmcost.arch import Arch

        self.fields = arch_fields()
        self.int_syms = int_symbols(self.fields.ints, positive=True)
        self.flag_syms = int_symbols(self.fields.flags, nonnegative=True)
        self.size_syms = int_symbols((*SIZES, "vocab_tp", "ple_vocab_tp"), positive=True)
        rng = random.Random(20240611)
        names = (*self.fields.ints, *SIZES, "vocab_tp", "ple_vocab_tp")
        self.points = [
            {n: sp.Integer(rng.randint(2, 2 ** rng.randint(2, 40))) for n in names}
            for _ in range(self.N_POINTS)
        ]
        for point, window in zip(self.points, (1, 2**30), strict=True):
            # a window below every size (min(x, W) = W) and one above most, and some sliding
            # layers: where min(x, W) = x or no layer slides, the window's terms vanish
            point["sliding_window"] = sp.Integer(window)
            point["full_attention_layers"] = point["n_layers"] // 2
            point["index_topk"] = sp.Integer(window)  # min(x, k) likewise (blocks.sparse)
        self.traced = _traced_class((*self.fields.bools, *(f for _, f, _ in self.fields.enums)))
        self.sym_values = {**self.int_syms, **self.size_syms}
        self._cache: dict[tuple[str, int, frozenset[str]], Any] = {}
        defaults: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(Arch)}
        self.members = {flag: type(defaults[field])(member)
                        for flag, field, member in self.fields.enums}  # fmt: skip

    def arch(self, values: dict[str, Any], on: frozenset[str], traced: bool = False) -> Any:
        """The ``Arch`` at corner ``on`` (the flags set) with integer fields ``values``."""
        from rlmcost.arch import Arch

        kw: dict[str, Any] = {"name": "generated"}
        kw.update({n: values[n] for n in self.fields.ints})
        for flag, parent in (("moe", None), ("shared", "moe"), ("latent", "moe"), ("mla", None),
                             ("qlora", "mla"), ("swa", None), ("dsa", None),
                             ("fullshape", None)):  # fmt: skip
            if flag not in on and (parent is None or parent in on):
                kw.update(
                    {f: None if f in NONE_WHEN_OFF else 0 for f in STRUCTURAL[flag]}
                )
        kw.update({b: b in on for b in self.fields.bools})
        for flag, field, _ in self.fields.enums:
            if flag in on:
                kw[field] = self.members[flag]
        return (self.traced if traced else Arch)(**kw)

    def evaluate(self, block: Block, values: dict[str, Any], on: frozenset[str],
                 traced: bool = False) -> Any:  # fmt: skip
        import sympy as sp

        on = self.reduced(on)
        key = (block.name, id(values), on)
        if not traced and key in self._cache:
            return self._cache[key]
        sizes = SimpleNamespace(**{n: values[n] for n in (*SIZES, "vocab_tp", "ple_vocab_tp")})
        value = block.build(self.arch(values, on, traced), sizes)
        if not isinstance(value, sp.Rational):  # a number at the points: expand keeps it
            value = sp.expand(value)
        self._cache[key] = value
        return value

    @staticmethod
    def reduced(on: frozenset[str]) -> frozenset[str]:
        """The corner ``on`` evaluates as: a flag whose parent is off is off (shared experts
        and a latent MoE need experts, a query latent needs MLA, the indexer reads the query
        latent), so corners that differ only there are one ``Arch``."""
        if "shared" in on and "moe" not in on:  # shared experts need experts
            on = on - {"shared"}
        if "latent" in on and "moe" not in on:  # a latent MoE needs experts
            on = on - {"latent"}
        if "qlora" in on and "mla" not in on:  # a query latent needs MLA
            on = on - {"qlora"}
        if "dsa" in on and "qlora" not in on:  # the indexer reads the query latent
            on = on - {"dsa"}
        return on

    def _valid(self, subset: Iterable[str]) -> bool:
        groups = [self.fields.group(f) for f in subset]
        return len(groups) == len(set(groups))

    def corners(self, flags: tuple[str, ...]) -> list[frozenset[str]]:
        """Every valid subset of ``flags`` (at most one member of each enum)."""
        out = []
        for r in range(len(flags) + 1):
            out += [frozenset(c) for c in combinations(flags, r) if self._valid(c)]
        return out

    def options(self) -> dict[str, tuple[frozenset[str], ...]]:
        """The switches by field (a bool, or an enum's members): each field's flag options,
        its default (no flag) first."""
        out: dict[str, tuple[frozenset[str], ...]] = {
            b: (frozenset(), frozenset({b})) for b in self.fields.bools
        }
        for flag, field, _ in self.fields.enums:
            out[field] = (*out.get(field, (frozenset(),)), frozenset({flag}))
        return out

    def bases(self) -> list[frozenset[str]]:
        """The distinct structural corners (``reduced``)."""
        return list(dict.fromkeys(map(self.reduced, self.corners(tuple(STRUCTURAL)))))

    def paths(self, block: Block, point: dict[str, Any],
              options: dict[str, tuple[frozenset[str], ...]]) -> list[Any]:  # fmt: skip
        """``paths.explore`` of ``block`` at ``point``: one traced evaluation per path."""

        def run(on: frozenset[str]) -> tuple[Any, set[str]]:
            _Reads.fields = set()
            value = self.evaluate(block, point, on, traced=True)
            return value, set(_Reads.fields)

        with numeric_min_max():
            return explore(run, self.bases(), options)

    def screen(self, block: Block) -> tuple[tuple[str, ...], set[frozenset[str]]]:
        """The flags ``block`` depends on (the structural ones and every switch some path of
        its evaluation reads) and the corners S whose coefficient a_S is not 0 at some point."""
        options = self.options()
        with _zero_tests() as tested:
            leaves = self.paths(block, self.points[0], options)
        fields = {n for n in self.fields.ints if self.points[0][n] in tested}
        if fields - set(TRIGGERS.values()):
            raise RuntimeError(
                f"{block.name} zero-tests {sorted(fields - set(TRIGGERS.values()))}; add "
                "a structural flag for it to STRUCTURAL and TRIGGERS in " + __name__
            )
        read = read_groups(leaves)
        flags = tuple(f for f in self.fields.flags
                      if f in STRUCTURAL or self.fields.group(f) in read)  # fmt: skip
        kept = {g: o for g, o in options.items() if g in read}
        support: set[frozenset[str]] = {frozenset()}
        for point in self.points:
            if point is not self.points[0]:  # a switch no path read at the first point stays off
                leaves = self.paths(block, point, kept)
            values = cube(leaves, flags, kept, self.reduced, self.bases())
            self.spot_check(block, point, flags, values)
            for m in moebius_support(values, len(flags)):
                support.add(frozenset(f for i, f in enumerate(flags) if m >> i & 1))
        return flags, support

    def spot_check(self, block: Block, point: dict[str, Any], flags: tuple[str, ...],
                   values: dict[int, Any]) -> None:  # fmt: skip
        """Some corners (``CHECKS``, drawn by the block's name) evaluated afresh on a plain
        ``Arch`` equal the value of their path: a guard on the premise of ``paths`` that a
        switch no trace recorded was not read (one read other than by attribute, e.g. through
        ``vars``, would break it)."""
        import sympy as sp

        rng = random.Random(block.name)
        masks = sorted(values)
        sizes = SimpleNamespace(**{n: point[n] for n in (*SIZES, "vocab_tp", "ple_vocab_tp")})
        with numeric_min_max():
            for m in rng.sample(masks, min(self.CHECKS, len(masks))):
                on = self.reduced(frozenset(f for i, f in enumerate(flags) if m >> i & 1))
                if sp.expand(block.build(self.arch(point, on), sizes)) != values[m]:
                    raise RuntimeError(
                        f"{block.name} at {sorted(on)} is not the value of its path: it reads "
                        f"a switch that {__name__} does not trace"
                    )

    def read_flags(self, block: Block) -> tuple[str, ...]:
        """Flags ``block`` depends on (:meth:`screen`)."""
        return self.screen(block)[0]

    def compile(self, block: Block) -> Any:
        """The block as an exact multilinear expression in its flags."""
        import sympy as sp

        flags, support = self.screen(block)
        sym_values = self.sym_values
        cache: dict[frozenset[str], Any] = {}

        def f_sym(c: frozenset[str]) -> Any:
            if c not in cache:
                cache[c] = self.evaluate(block, sym_values, c)
            return cache[c]

        total = sp.Integer(0)
        for s in sorted(support, key=lambda s: (len(s), sorted(s))):
            coeff = sp.expand(_moebius(s, {t: f_sym(t) for t in _subsets(s)}))
            if coeff != 0:
                total += coeff * sp.Mul(*(self.flag_syms[x] for x in sorted(s)))
        return total


@contextmanager
def _zero_tests() -> Iterator[set[Any]]:
    """Record the arguments of ``rlmcost.arch.is_zero`` wherever the symbolic core calls it."""
    import rlmcost.arch

    original = rlmcost.arch.is_zero
    tested: set[Any] = set()

    def traced(x: Any) -> bool:
        tested.add(x)
        return original(x)

    patched = [m for m in list(sys.modules.values())
               if getattr(m, "is_zero", None) is original]  # fmt: skip
    for m in patched:
        m.is_zero = traced  # type: ignore[attr-defined]
    try:
        yield tested
    finally:
        for m in patched:
            m.is_zero = original  # type: ignore[attr-defined]


def _subsets(s: frozenset[str]) -> list[frozenset[str]]:
    items = sorted(s)
    return [frozenset(c) for r in range(len(items) + 1) for c in combinations(items, r)]


def _moebius(s: frozenset[str], f: dict[frozenset[str], Any]) -> Any:
    """a_S = sum over T subset S of (-1)^{|S| - |T|} f(T)."""
    return sum((f[t] if (len(s) - len(t)) % 2 == 0 else -f[t]) for t in _subsets(s))
