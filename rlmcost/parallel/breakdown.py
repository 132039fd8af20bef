"""The result types of the per-rank memory model, kept free of sympy.

:mod:`rlmcost.parallel.memory` (symbolic core) and :mod:`rlmcost.compiled.memory` (its numeric
twin) both return :class:`MemoryBreakdown`; numeric queries import it from here without
loading sympy.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum


class Mode(StrEnum):
    """What the invocation does with the model."""

    TRAIN = "train"  # forward + backward + optimizer step (actor/critic in Training)
    FORWARD = "forward"  # teacher-forced forward only (reward/reference/critic in Assessment)
    GENERATE = "generate"  # prefill + decode with a KV cache (actor in Generation)


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per rank (per device), exact ints. ``engine`` and ``overhead`` are deployment
    terms (:mod:`rlmcost.deployment`); the paper's model leaves them 0."""

    weights: int
    gradients: int
    optimizer: int
    activations: int
    kv_cache: int
    logits: int
    buffers: int
    engine: int = 0  # an awake inference engine's reservation while another model runs
    overhead: int = 0  # CUDA context, communicator buffers, allocator slack (deployment)

    @property
    def total(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self))

    def to_json(self) -> dict[str, int]:
        """Component -> bytes, plus ``total``."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["total"] = self.total
        return out
