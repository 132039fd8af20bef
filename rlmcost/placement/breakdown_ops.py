"""Sums and selections of memory breakdowns (bytes per device, exact ints), term by term over
the fields of :class:`~rlmcost.parallel.breakdown.MemoryBreakdown`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from rlmcost.parallel.breakdown import MemoryBreakdown

STATES = ("weights", "gradients", "optimizer")
"""The model states a model keeps between its invocations."""

EMPTY = MemoryBreakdown(0, 0, 0, 0, 0, 0, 0)
TERMS = tuple(f.name for f in fields(MemoryBreakdown))  # its fields, in order


def add(*parts: MemoryBreakdown) -> MemoryBreakdown:
    """Term by term sum of ``parts``."""
    return MemoryBreakdown(*[sum(getattr(p, n) for p in parts) for n in TERMS])


def only(m: MemoryBreakdown, names: Sequence[str]) -> MemoryBreakdown:
    """``m`` with every term but ``names`` set to 0."""
    return MemoryBreakdown(*[getattr(m, n) if n in names else 0 for n in TERMS])
