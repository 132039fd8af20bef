"""Cold start of one CLI query, with and without bytecode caches, and its top imports.

Run: python benchmarks/bench_cli_startup.py [--repeat 10] [--top 10] [--against DIR]
[--instructions] [-- ppo --model 70b ...] (with the real interpreter, not a version manager's
shim, which adds its own start-up).

* without pyc: rlmcost's sources are compiled in every run, as after a fresh ``pip install -e .``
  where PYTHONDONTWRITEBYTECODE=1 (installed dependencies keep their pyc); a __pycache__ under
  rlmcost/ would hide that cost, so the script refuses to run while one exists.
* with pyc: every module reads its bytecode from a scratch PYTHONPYCACHEPREFIX, filled by one
  warm-up run (the source tree is left alone). ``--against DIR`` times another checkout (an
  older commit's worktree) the same way, its runs alternated with this tree's and with a bare
  ``python -c pass``, so that a shared machine's load weighs on all alike.
* ``--instructions``: each tree's instructions for one query with pyc (valgrind's callgrind,
  PYTHONHASHSEED=0): the same count run after run, whatever the machine's load or speed.

The import table is ``python -X importtime``: the self time of each module (its compile and
its module-level code), the least over the runs. Timings are printed, never asserted.

Figures, 2026-12-05 (CPython 3.11.7, 2 cores shared with other jobs at load 1-2; the tree
before, 150c6f8, and after alternated, two runs of ``--repeat 10`` each): with pyc, medians
0.304-0.305 s before -> 0.270-0.276 s after (least 0.296-0.299 -> 0.266-0.267 s); without pyc
0.452-0.460 -> 0.42 s. Where it went: the interpreter's collections at exit traced every
object the query had loaded; ``main`` freezes them first (``gc.freeze``; the time is the
walk's cache misses, 62 M instructions of ~1,400 M). shlex and statistics load where used.
Measured and not kept: having the command line's rlmcost dataclasses compile their generated
methods but ``__init__`` on first call (wrapping CPython 3.11's private
``dataclasses._create_fn``; 1,633 M -> 1,411 M instructions, about 0.03 s more: 0.239-0.244 s)
-- a patch of the standard library's internals for a query already under 0.3 s. Left,
measured: the exec of the generated dataclass methods at import (about a quarter of the
instructions); pydantic's model classes, ~28 ms; the collector during the imports, ~12 ms
(0.243 -> 0.230 s with it off for the whole run, which a planner's sweep cannot afford); the
interpreter with this machine's site hooks, 36 ms (``python -c pass``).

Round of 2026-12-06 (another VM: 2 vCPUs, shared, load 2-4; ``python -c pass`` 0.044 s quiet,
where the round above had 0.036 s), main at f9935cf against 06cf184 (the round above's
"after"); the tree's sources unchanged by this round. Instructions with pyc: 1,582 M (06cf184)
-> 1,617 M (main), +2.2 %: the one more dataclass on the path
(``perf.moe_permute.UnfusedPermute``: its six generated methods, ~10 M), the class statements
and bytecode of 16 more modules (MoE permutation and notes, linear mixers, the checkpoint's
early stop, the gradient buffer, length notes; ~10 M) and the rest (~15 M): the new terms' work
in the query and module-level code. Wall with pyc, alternated, n=20 at load ~2.8: 0.399 s
(06cf184) -> 0.407 s (main) medians, least 0.380 -> 0.390 s (CPU time 0.394 -> 0.400 s); at
load ~3.8 (``--repeat 10``): 0.898 -> 0.932 s, ``python -c pass`` 0.106 s. The 0.3 s target is
not met on this VM, by the code of 06cf184 either. Where main's 1,617 M instructions go, step
by step (callgrind): the interpreter and site, 146 M; + ``rlmcost.cli`` with typer, 284 M; +
pydantic (typer's option adapters), 592 M; + the command's and the evaluation's modules (~200
of rlmcost's, their pydantic models and dataclasses), 1,421 M; + the command (typer builds the
one command of ~100 options and parses, the Run is validated, one exact evaluation and the
modules it loads, the JSON), 1,617 M. Across them: the generated methods of 150 dataclasses (91
rlmcost's, all frozen: ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``,
``__delattr__``), compiled from their source text at every start, 587 M (36 %); class
statements (pydantic's model construction among them) 413 M; unmarshalling bytecode 103 M; the
collector 31 M (all of it with the collector off for the whole run). Measured and not kept: the
collector paused while the command's modules import (-3.7 M), a gen0 threshold of 10,000 or
50,000 (-14 M), pydantic's ``defer_build`` on every model (+33 M: the query validates every
model class it loads, so each is built anyway), the 26 modules the query loads but never calls
into or whose dataclasses it never makes, lazy: ~11 ms of 335 ms of import self time in all,
most of them imported for a constant or a function a called module needs (the newest,
placement.groups with deployment.group_brackets and perf.moe_permute: 6.4 M). CPython 3.13,
which makes a dataclass's methods in one ``exec``, builds a frozen dataclass of 8 fields no
faster than 3.11.7 (0.97 vs 0.95 ms beyond a plain class): the cost is compiling the methods'
text (per class of 8 fields: ``__init__`` 0.19 ms, ``__setattr__`` and ``__delattr__`` 0.26 ms,
``__eq__`` 0.13, ``__repr__`` 0.12, ``__hash__`` 0.09).

Round of 2026-12-06, later (same VM, shared, load 5-7: ``python -c pass`` 0.057 s median where a
quiet minute gives 0.037 s; no quiet minute came): rlmcost's frozen dataclasses are made by
``rlmcost.frozen.dataclass``, the same classes with less compiled at import (``__init__`` compiled
once per shape of class, 29 shapes for the query's 87 classes, and renamed to each class's fields;
``__eq__``/``__hash__`` compiled on first call, 4 and 16 classes of 87;
``__repr__``/``__setattr__``/``__delattr__`` shared closures; the module's docstring says how each
matches the standard library's). Instructions with pyc: 1,687 M (e43047c5) -> 1,391 M (-17.6 %); a
new query in a warm process 171.4 M -> 169.5 M. Wall with pyc, alternated with e43047c5, n=20:
medians 0.437 -> 0.379 s, least 0.400 -> 0.340 s (CPU time 0.412 -> 0.356 s) at load ~6; 0.749 ->
0.609 s, least 0.546 -> 0.469 s at load ~7 and 0.650 -> 0.554 s, least 0.459 -> 0.382 s at load ~4
(``--repeat 20``). Scaled to the quiet 0.318 s median of e43047c5: 0.26-0.28 s by the wall ratios
(0.81-0.87), 0.262 s by the instructions' (0.82); a quiet run's median at or under 0.27 s is likely,
not shown here. What the rest is: the interpreter and site 146 M; typer and ``rlmcost.cli`` 140 M;
pydantic (typer's adapters) 308 M; the rest is rlmcost's modules, its 17 pydantic models (built at
import, all validated by the query), the command and the evaluation. Across the run, 330 ``exec`` of
text take 238 M: the methods of pydantic's, annotated_types' and typer's 59 dataclasses, compiled
from their text at every start, of the few standard dataclasses rlmcost keeps (mutable ones, and
those of modules left to the standard decorator) and of named tuples. Tried and not kept: the spec
modules' annotations as objects rather than strings (pydantic compiles each string, ~229 of them, as
a ``ForwardRef``): their methods' return annotations name their own class, so each module would need
its annotations quoted; the 28 modules the query loads and never calls into, lazy: ~1 % of the
import time, most of them constants a called module needs.

Round of 2026-12-07 (same VM, shared, load 4-6: ``python -c pass`` 0.145 s median where a quiet
minute gives ~0.04 s): what a cold query compiled at every start is read from bytecode caches or
not made, and modules of paths the query does not take load where they are used. Instructions with
pyc, ``ppo --model 70b --tp 8 --json``: 1,397 M (326b1731) -> 1,282 M (-8.2 %); ``grpo --model 8b
--json`` 1,477 M -> 1,383 M (-6.4 %); without pyc 2,962 M -> 2,883 M. Where: ``rlmcost.frozen``'s
29 ``__init__`` shapes and the ``__eq__``/``__hash__`` the query calls (22, each compiled per class
on first call) are functions of the generated ``rlmcost/frozen_code.py`` (the same text, per shape
and per number of fields; the 50 that numeric queries use), ~71 M; the schedule's three cycle-means
functions, written out and compiled per graph though a query calls each once, are summed in a loop
until a function's third call (``rlmcost.placement.cycle_means``, the same additions in the same
order), 26 M; the spec modules' pydantic models annotated with objects rather than strings
(pydantic compiled each of ~230 as a ``ForwardRef``), 14 M; 13 modules the query never calls into
(MoE FFN terms, unfused RoPE, disk and packed refits, AReaL's hand-offs, Megatron's suspend,
SGLang's limits, deployment files, ``--groups`` parsing) imported where used: 240 -> 229 rlmcost
modules (2 new: ``frozen_code``, ``cycle_means``), ~4 M. Wall with pyc, alternated with 326b1731
(at 1,286 M): n=10 at load ~6, medians 1.180 -> 1.045 s, least 0.805 -> 0.724 s; n=20 at load ~3.5
(``python -c pass`` 0.109 s), 0.679 -> 0.609 s, least 0.552 -> 0.481 s. Not reached: the aims of
-20 % instructions and -25 % modules. Of the other rlmcost modules the query loads, all but 25 run
a function of it (traced; of the 25, 9 are packages and 4 the presets' data; the rest hold a
constant, an enum or a constant a dataclass's defaults name, or a function a called module imports
at its top), each one ~0.3-1 M; the rest is pydantic (~290 M to import; the 17 models' schemas and
validators ~120 M, rebuilt alone, all validated by the query), typer (~135 M), the interpreter and
site (146 M), the rlmcost classes and module bodies, and the evaluation.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = ["ppo", "--model", "70b", "--tp", "8", "--json"]
ROOT = Path(__file__).resolve().parents[1]


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = str(root)
    env.update(extra)
    return env


def _run(args: list[str], env: dict[str, str], root: Path) -> float:
    """Wall seconds of one fresh ``python -m rlmcost ARGS`` process (run in the checkout
    ``root``: -m puts the working directory first on the path)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rlmcost", *args], check=True, env=env,
                   capture_output=True, cwd=root)  # fmt: skip
    return time.perf_counter() - t0


def instructions(args: list[str], env: dict[str, str], root: Path) -> int | None:
    """The instructions one process executes (valgrind's callgrind, ``Collected``; string
    hashing seeded so two runs count alike), or None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg",
                            sys.executable, "-m", "rlmcost", *args],
                           env={**env, "PYTHONHASHSEED": "0"}, capture_output=True,
                           text=True, check=True, cwd=root)  # fmt: skip
    m = re.search(r"Collected : (\d+)", r.stderr)
    return int(m[1]) if m else None


def import_self_us(args: list[str], repeat: int, env: dict[str, str]) -> dict[str, int]:
    """Each imported module's least self time (microseconds) over ``repeat`` runs."""
    best: dict[str, int] = {}
    for _ in range(repeat):
        r = subprocess.run([sys.executable, "-X", "importtime", "-m", "rlmcost", *args],
                           env=env, capture_output=True, text=True, check=True,
                           cwd=ROOT)  # fmt: skip
        for line in r.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+\d+ \| \s*(\S+)", line)
            if m:
                best[m[2]] = min(best.get(m[2], 1 << 62), int(m[1]))
    return best


def _line(label: str, t: list[float]) -> str:
    return f"{label:24s} median {statistics.median(t):.3f} s, min {min(t):.3f} s (n={len(t)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="another checkout, timed with pyc alternately with this one",
    )
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="also count each tree's instructions with pyc (valgrind)",
    )
    ap.add_argument("query", nargs="*", default=QUERY)
    a = ap.parse_args()
    if any((ROOT / "rlmcost").rglob("__pycache__")):
        sys.exit("rlmcost/ has __pycache__ folders: remove them to time a start without pyc")
    trees = [ROOT, *([a.against.resolve()] if a.against else [])]
    no_pyc = _env(ROOT, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory() as prefix:
        pyc = {}
        for i, root in enumerate(trees):
            pyc[root] = _env(root, PYTHONPYCACHEPREFIX=f"{prefix}/{i}")
            pyc[root].pop("PYTHONDONTWRITEBYTECODE", None)
            _run(a.query, pyc[root], root)  # fills the cache
        print(_line("without pyc", [_run(a.query, no_pyc, ROOT) for _ in range(a.repeat)]))
        times: dict[Path, list[float]] = {root: [] for root in trees}
        bare = []
        for _ in range(a.repeat):  # alternated: the trees and the bare interpreter
            for root in trees:
                times[root].append(_run(a.query, pyc[root], root))
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - t0)
        for root in trees:
            name = "with pyc" + (f" ({root.name})" if a.against else "")
            count = instructions(a.query, pyc[root], root) if a.instructions else None
            print(_line(name, times[root]) + (f", {count / 1e6:,.0f} M instructions"
                                              if count else ""))  # fmt: skip
        print(_line("python -c pass", bare))
    best = import_self_us(a.query, max(3, a.repeat // 2), no_pyc)
    print(f"imports without pyc: {sum(best.values()) / 1000:.1f} ms self in all; top {a.top}:")
    for name, us in sorted(best.items(), key=lambda kv: -kv[1])[: a.top]:
        print(f"  {us / 1000:6.1f} ms  {name}")


if __name__ == "__main__":
    main()
