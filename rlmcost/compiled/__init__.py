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

Importing this package loads neither sympy, numpy nor pandas (numpy only when a sweep runs).
"""

from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import Dtypes, MemoryBreakdown, Mode, memory_per_rank, memory_per_stage
from rlmcost.compiled.sweep import TrainSweep, codes, sweep_train_steps
from rlmcost.compiled.train_step import TrainStep, train_step

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
