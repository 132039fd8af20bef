"""Compiled numeric engine: the symbolic core's expressions as plain Python, without sympy.

The symbolic core (``rlmcost.blocks``, ``rlmcost.parallel``) stays the source of truth;
``generate`` prints its building blocks into ``blocks_gen/`` (committed; a test regenerates
it) and the modules here compose them exactly as the symbolic modules do:

* :func:`arch_numbers`: an ``Arch`` / ``ModelSpec`` / mapping as ``ArchNumbers`` (ints, flags);
* ``blocks_gen``: parameters, work, depth, KV cache, buffers and saved activation bytes, exact
  with ints and elementwise with numpy arrays (one module per function, loaded on first use);
* :func:`memory_per_rank` / :func:`memory_per_stage`: the twin of ``parallel.memory``, same
  ``MemoryBreakdown``, exact ints;
* ``invocation.py``: work, depth and the work polynomial in T of one algorithm invocation (the
  twin of ``algorithms.cost.invocation_cost``), which the placement model (every RL query)
  evaluates;
* :func:`train_step` (``train_step.py``): memory, fit and roofline bound of one training step
  of one layout (exact memory, float seconds), and the per-rank work of ``parallel.cost``;
* :func:`sweep_train_steps` (``sweep.py``): the same for numpy arrays of layouts, micro-batches
  and lengths at once (float64), for planners; :func:`codes` turns enum members into the
  integer codes its array arguments take.

Importing this package loads neither sympy, numpy nor pandas (numpy only when a sweep runs).
Its names other than :func:`arch_numbers` load on first use (PEP 562): the numeric blocks
(``runtime``, ``blocks_gen``, ``arch``, ``blocks``) sit below :mod:`rlmcost.parallel`, which
reads them, while ``memory``, ``train_step``, ``sweep`` and ``invocation`` sit above it; and a
query does not load the sweep.
"""

from __future__ import annotations

import importlib
from typing import Any

from rlmcost.compiled.arch import arch_numbers

_LAZY = {
    "Dtypes": "memory",
    "MemoryBreakdown": "memory",
    "Mode": "memory",
    "memory_per_rank": "memory",
    "memory_per_stage": "memory",
    "TrainStep": "train_step",
    "train_step": "train_step",
    "TrainSweep": "sweep",
    "codes": "sweep",
    "sweep_train_steps": "sweep",
}

__all__ = [
    "Dtypes",
    "MemoryBreakdown",
    "Mode",
    "TrainStep",
    "TrainSweep",
    "arch_numbers",
    "codes",
    "memory_per_rank",
    "memory_per_stage",
    "sweep_train_steps",
    "train_step",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"rlmcost.compiled.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'rlmcost.compiled' has no attribute {name!r}")
