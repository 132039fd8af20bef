"""`rlmcost placements` on 1,024 and more GPUs: wall seconds of fresh processes, and where
the search spends them.

Run: python benchmarks/bench_placements_scale.py [--gpus 1024 4096] [--model 8b] [--repeat 2]
[--profile]

Each figure is the least wall time, and the least CPU time, of ``--repeat`` fresh ``python -m
rlmcost placements --model M --gpus N --json`` processes in this checkout (start-up
included). ``--profile`` also prints the cProfile lines of the split search and the planner's
sizing for one run in this process. Targets of the issue: 1,024 GPUs <= 3 s, 4,096 <= 10 s.
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def seconds(model: str, gpus: int, repeat: int) -> tuple[float, float]:
    """The least wall and CPU (user + system) seconds of ``repeat`` fresh processes; on a
    shared machine the CPU seconds are the steadier figure."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "rlmcost", "placements", "--model", model, "--gpus",
            str(gpus), "--json"]  # fmt: skip
    wall = cpu = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(args, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        wall = min(wall, time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def profile(model: str, gpus: int) -> None:
    sys.path.insert(0, str(ROOT))
    from rlmcost.cli import app

    prof = cProfile.Profile()
    argv, sys.argv = sys.argv, ["rlmcost", "placements", "--model", model, "--gpus", str(gpus),
                                "--json"]  # fmt: skip
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            prof.runcall(app)
    finally:
        sys.argv = argv
    pstats.Stats(prof).sort_stats("cumulative").print_stats(
        r"rlmcost/(placement/allocate|plan/(sizing|rl_search|rl\.py))", 12)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, nargs="+", default=[1024, 4096])
    ap.add_argument("--model", default="8b")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for g in a.gpus:
        wall, cpu = seconds(a.model, g, a.repeat)
        print(f"placements --model {a.model} --gpus {g}: {wall:.2f} s wall, {cpu:.2f} s CPU")
    if a.profile:
        for g in a.gpus:
            profile(a.model, g)


if __name__ == "__main__":
    main()
