"""Frozen dataclasses of an evaluation built without their ``__init__``.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (about 0.15 us
a field on Python 3.11): the iteration's result (:class:`~rlmcost.placement.estimate.
PlacementEstimate`, 25 fields), its stages (``StageResult``, 7) and the evaluation's inputs
(:class:`~rlmcost.placement.inputs.Setup`, 17) are built once per deployment. :func:`built`
sets the same fields in the same order into the instance's ``__dict__`` at once, for a class
with no ``__post_init__`` and every field given (what ``__init__`` does for such a class;
defaults and ``default_factory`` are the caller's to give).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")

_NAMES: dict[type, tuple[str, ...]] = {}


def built(cls: type[T], *values: Any) -> T:
    """``cls(*values)`` for a frozen dataclass ``cls`` without ``__post_init__``, every field
    given in order (TypeError otherwise: a field left out, or a class this does not build)."""
    names = _NAMES.get(cls)
    if names is None:
        if not is_dataclass(cls) or hasattr(cls, "__post_init__"):
            raise TypeError(f"built: {cls.__name__} is not a dataclass without __post_init__")
        names = _NAMES[cls] = tuple(f.name for f in fields(cls) if f.init)
    if len(values) != len(names):
        raise TypeError(f"built: {cls.__name__} takes {len(names)} fields, got {len(values)}")
    out = object.__new__(cls)
    out.__dict__.update(zip(names, values, strict=True))
    return out
