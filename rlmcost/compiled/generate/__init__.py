"""Write ``blocks_gen/``: the Table III building blocks as plain Python functions.

Run ``python -m rlmcost.compiled.generate`` after changing ``rlmcost/blocks/``,
``rlmcost/arch.py`` or ``rlmcost/parallel/{activations,shard}.py``; ``--check`` exits 1 when the
committed package is stale (``tests/test_compiled_blocks.py`` does the same).

How: every block of :func:`~rlmcost.compiled.generate.catalog.blocks` is evaluated by the
symbolic core on an ``Arch`` whose integer fields are sympy symbols. An ``Arch`` also has
switches (bool fields, enum fields and whether it has routed or shared experts, latent
attention or a sliding window) that the core branches on in Python, so a switch cannot be a
symbol. Each switch becomes a 0/1 flag x_i instead, and the block is written in its exact
multilinear form over the flags it reads,

    f(x) = sum_S a_S prod_{i in S} x_i,   a_S = sum_{T subset S} (-1)^{|S| - |T|} f(T)

(Moebius inversion over the corners T, exact for 0/1 flags). Which flags a block reads is
traced on the ``Arch``; which coefficients a_S are non-zero is screened on exact rational
evaluations at two fixed random points (a non-zero polynomial vanishes at both with
probability ~1e-20), and only those a_S are built symbolically. Each function is printed as
one exact quotient num / den with integer coefficients (``runtime.div``), collected by the
size arguments so that numpy arrays pass through a few array operations.

Speed: the screening evaluations were the cost (``params_active_per_token`` reads 18 flags,
81,920 distinct ``Arch`` corners, each evaluated at both points). A switch an evaluation never
read cannot have changed its course, so :func:`~rlmcost.compiled.generate.paths.explore`
evaluates one corner per execution path (16,128 for that block) and every corner takes its
path's value; ``Compiler.spot_check`` evaluates 8 corners per block and point afresh as a
guard. The screening transform runs in Python integers, ``sympy.Min``/``Max`` of numbers are
short-cut at the points, and the blocks compile in forked workers, one per CPU, in catalog
order. Measured (``--check``, 2 shared cores, December 2026, runs interleaved): before,
315 / 327 s CPU and 344 / 333 s wall; after, 59 / 65 s CPU and 40 / 34 s wall.

Modules: :mod:`~rlmcost.compiled.generate.fields` (the ``Arch``'s fields and flags),
:mod:`~rlmcost.compiled.generate.catalog` (the blocks), :mod:`~rlmcost.compiled.generate.compiler`
(corners and the multilinear form), :mod:`~rlmcost.compiled.generate.paths` (execution paths,
the screening transform), :mod:`~rlmcost.compiled.generate.printer` (Python source).

The output is a package: ``__init__.py`` (the ``Arch`` fields, ``ArchNumbers``, ``NAMES``,
``FUNCTIONS``) and one module ``_<name>.py`` per function, which the package imports on first
use, so that a query compiles only the functions it calls.

Conventions of the generated functions: ``a`` is an ``ArchNumbers`` (``rlmcost.compiled.arch``);
token counts and degrees are ints or numpy arrays; a TP shard's vocabulary is padded to
ceil(V / P_t) as ``rlmcost.parallel.shard.split_up`` pads it.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
from pathlib import Path
from typing import Any

from rlmcost.compiled.generate.catalog import Block, blocks
from rlmcost.compiled.generate.compiler import Compiler
from rlmcost.compiled.generate.fields import STRUCTURAL
from rlmcost.compiled.generate.printer import function_source, make_printer, package_files

__all__ = ["COMMAND", "OUTPUT", "Block", "blocks", "jobs", "main", "read", "render"]

OUTPUT = Path(__file__).parent.with_name("blocks_gen")
COMMAND = "python -m rlmcost.compiled.generate"


_STATE: list[Any] = []
"""The compiler, printer and blocks of a :func:`render` (inherited by forked workers)."""


def _source(i: int) -> str:
    comp, printer, todo = _STATE
    return function_source(todo[i], comp.compile(todo[i]), printer)


MAX_PROCESSES = 8
"""At most this many workers: ``params_lm``, ``params_value`` and ``params_active_per_token``
take ~11, ~6 and ~11 s of the ~60 s CPU (measured here) one worker each, so more workers
shorten no run; each holds ~200 MB."""


def jobs() -> int:
    """Processes for :func:`render`: the CPUs this process may run on, at most
    :data:`MAX_PROCESSES`."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cpus or 1, MAX_PROCESSES))


def render(processes: int | None = None) -> dict[str, str]:
    """The files of the ``blocks_gen`` package by name (``__init__.py``, ``_<name>.py``).

    The blocks are compiled in ``processes`` forked workers (default :func:`jobs`) where the
    platform forks, each block on its own; the files are the same in any case, in the
    catalog's order."""
    comp = Compiler()
    printer = make_printer(comp.fields)
    todo = blocks()
    n = min(processes or jobs(), len(todo))
    _STATE[:] = [comp, printer, todo]
    try:
        if n > 1 and "fork" in mp.get_all_start_methods():
            with mp.get_context("fork").Pool(n) as pool:
                sources = pool.map(_source, range(len(todo)), chunksize=1)
        else:
            sources = [_source(i) for i in range(len(todo))]
    finally:
        _STATE.clear()
    functions = [(b.name, src) for b, src in zip(todo, sources, strict=True)]
    return package_files(comp.fields, STRUCTURAL, COMMAND, functions)


def read(folder: Path) -> dict[str, str]:
    """The package's files as they are in ``folder`` (its ``*.py``) by name."""
    return {f.name: f.read_text() for f in sorted(folder.glob("*.py"))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--output", type=Path, default=OUTPUT, help="package folder to write")
    ap.add_argument("--check", action="store_true", help="exit 1 when the package is stale")
    args = ap.parse_args(argv)
    files = render()
    current = read(args.output) if args.output.is_dir() else {}
    if args.check:
        if current != files:
            print(f"{args.output} is stale; run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    args.output.mkdir(exist_ok=True)
    for name in current.keys() - files.keys():  # a function no longer generated
        (args.output / name).unlink()
    for name, text in files.items():
        (args.output / name).write_text(text)
    print(f"wrote {args.output} ({len(files)} files)")
    return 0

