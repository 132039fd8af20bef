"""Compiled numeric engine: the symbolic core's expressions as plain Python, without sympy.

The symbolic core (``rlmcost.blocks``, ``rlmcost.parallel``) stays the source of truth;
``generate.py`` prints its building blocks into ``blocks_gen.py`` (committed; a test regenerates
it) and the modules here compose them exactly as the symbolic modules do:

* :func:`arch_numbers`: an ``Arch`` / ``ModelSpec`` / mapping as ``ArchNumbers`` (ints, flags);
* ``blocks_gen``: parameters, work, depth, KV cache, buffers and saved activation bytes, exact
  with ints and elementwise with numpy arrays;
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

Importing this package loads neither sympy, numpy nor pandas (numpy only when a sweep runs),
and the sweep's names load on first use (PEP 562): a query does not load the sweep.
"""

from __future__ import annotations

from typing import Any

from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import Dtypes, MemoryBreakdown, Mode, memory_per_rank, memory_per_stage
from rlmcost.compiled.train_step import TrainStep, train_step

_SWEEP = ("TrainSweep", "codes", "sweep_train_steps")

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
    if name in _SWEEP:
        from rlmcost.compiled import sweep

        return getattr(sweep, name)
    raise AttributeError(f"module 'rlmcost.compiled' has no attribute {name!r}")
