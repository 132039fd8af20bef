"""Print the CLI's cold-start time and the vectorized evaluation throughput.

Run: python benchmarks/bench_foundation.py [--repeat 5] [--configs 1000000]
Timings are printed, never asserted (machines are noisy).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def cli_cold_start(args: list[str], repeat: int) -> list[float]:
    """Wall seconds of fresh `python -m rlmcost ...` processes (interpreter start + imports +
    query), with this interpreter (run the benchmark with the real interpreter, not a version
    manager's shim, which adds its own start-up).

    The rlmcost package is byte-compiled first (``compileall``, bytecode writing allowed even
    where PYTHONDONTWRITEBYTECODE is set), so that no run pays for compiling a module: cold
    means a fresh process, as a user's second run is.
    """
    import rlmcost

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    package = os.path.dirname(rlmcost.__file__)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True, env=env)
    cmd = [sys.executable, "-m", "rlmcost", *args]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return times


def sweep_throughput(n_configs: int) -> tuple[float, int]:
    """Configurations per second of a compiled (lambdified) sweep of Table III work."""
    import numpy as np
    import sympy as sp

    from rlmcost import blocks as bl
    from rlmcost.arch import CANONICAL
    from rlmcost.substitute import sweep
    from rlmcost.symbols import B, L, V, d, d_ff, h, m

    exprs = {
        "train_flops": bl.work_train(CANONICAL, B, m),
        "kv_bytes": bl.memory_kv_cache_bytes(CANONICAL, B * m),
        "depth_forward": bl.depth_forward(CANONICAL, m),
    }
    rng = np.random.default_rng(0)
    grid = {
        B: rng.integers(1, 512, n_configs),
        m: rng.integers(128, 32768, n_configs),
        L: rng.integers(8, 128, n_configs),
        d: rng.integers(8, 128, n_configs) * 128,
        d_ff: rng.integers(16, 512, n_configs) * 128,
        h: np.full(n_configs, 64),
        V: np.full(n_configs, 128256),
    }
    sweep(exprs, {k: v[:10] for k, v in grid.items()})  # compile once
    t0 = time.perf_counter()
    frame = sweep(exprs, grid)
    elapsed = time.perf_counter() - t0
    assert sp.Integer(int(frame["train_flops"][0])) > 0
    return n_configs / elapsed, len(frame)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--configs", type=int, default=1_000_000)
    a = ap.parse_args()
    for args in (["--help"], ["blocks", "--model", "llama-3.1-70b", "--json"]):
        t = cli_cold_start(args, a.repeat)
        print(f"rlmcost {' '.join(args):40s} median {statistics.median(t):.3f} s "
              f"(min {min(t):.3f}, max {max(t):.3f}, n={len(t)})")
    rate, n = sweep_throughput(a.configs)
    print(f"sweep: {n} configurations x 3 expressions at {rate:,.0f} configurations/s")


if __name__ == "__main__":
    main()
