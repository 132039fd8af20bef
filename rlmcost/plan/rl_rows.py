"""What a plan row says of its exact evaluation beyond the numbers: the term that keeps one
that does not fit from fitting, and the groups an evaluation sized (a Table IX
configuration's split)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any


def binding_term(e: Any) -> tuple[str, int]:
    """What keeps an estimate from fitting: the group's problem, else the largest memory term
    of the peak job of the group with the largest shortfall."""
    g = max(e.groups, key=lambda g: (g.shortfall_bytes, bool(g.problems)))
    if g.problems and not g.shortfall_bytes:
        return g.problems[0], 0
    job = max(g.jobs, key=lambda j: j.memory.total)
    m = job.memory
    names = [f.name for f in fields(m) if isinstance(getattr(m, f.name), int)]
    name = max(names, key=lambda n: getattr(m, n))
    return f"{name} ({job.task.label()} on {g.name})", int(getattr(m, name))


def groups_of(e: Any) -> str:
    """The groups an evaluation sized (a Table IX configuration's split), as ``--groups``
    spells counts; "" for one group."""
    if len(e.groups) < 2:
        return ""
    return ",".join(f"{g.name}={g.gpus}" for g in e.groups)
