"""Sums and selections of memory breakdowns (bytes per device, exact ints), term by term over
the fields of :class:`~rlmcost.parallel.breakdown.MemoryBreakdown`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields

from rlmcost.parallel.breakdown import MemoryBreakdown

STATES = ("weights", "gradients", "optimizer")
"""The model states a model keeps between its invocations."""

EMPTY = MemoryBreakdown(0, 0, 0, 0, 0, 0, 0)
TERMS = tuple(f.name for f in fields(MemoryBreakdown))  # its fields, in order
_NAMES = frozenset(TERMS)


def breakdown(terms: Iterable[int]) -> MemoryBreakdown:
    """``MemoryBreakdown(*terms)`` (every term, in :data:`TERMS` order), without the frozen
    ``__init__``'s ``object.__setattr__`` per field (it has no ``__post_init__``)."""
    new = object.__new__(MemoryBreakdown)
    new.__dict__.update(zip(TERMS, terms, strict=True))
    return new


def add(*parts: MemoryBreakdown) -> MemoryBreakdown:
    """Term by term sum of ``parts`` (each term ``0 + p1 + p2 + ...`` in the parts' order; a
    frozen dataclass's ``__dict__`` holds its fields in their order)."""
    return breakdown(map(sum, zip(*[p.__dict__.values() for p in parts], strict=True)))


def with_terms(m: MemoryBreakdown, **changes: int) -> MemoryBreakdown:
    """``dataclasses.replace(m, **changes)`` without its walk over the fields."""
    if not changes.keys() <= _NAMES:
        raise TypeError(f"MemoryBreakdown has no term {sorted(changes.keys() - _NAMES)}")
    new = object.__new__(MemoryBreakdown)
    new.__dict__.update(m.__dict__, **changes)
    return new


def only(m: MemoryBreakdown, names: Sequence[str]) -> MemoryBreakdown:
    """``m`` with every term but ``names`` set to 0."""
    return breakdown([getattr(m, n) if n in names else 0 for n in TERMS])
