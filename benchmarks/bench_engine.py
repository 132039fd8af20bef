"""Throughput and cold start of the compiled numeric engine (rlmcost.compiled).

Prints:

* candidates/s of ``sweep_train_steps`` (memory per device as the max over stages, fit, and
  the roofline bound of one training step) on one core, for a grid of layouts x micro-batches
  x sequence lengths (the shape a planner uses) and for the same candidates as flat arrays;
* warm per-call time of the scalar twin ``compiled.memory_per_rank`` against the symbolic
  ``parallel.memory.memory_per_rank``;
* the cold wall time of one memory query in a fresh interpreter: the engine with a built-in
  model from ``rlmcost.specs`` (pydantic), the engine with a models.json entry (no pydantic),
  the symbolic model, and an empty interpreter for reference.

Run: python benchmarks/bench_engine.py [--repeat 5]. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from itertools import product
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rlmcost.compiled import memory_per_rank  # noqa: E402
from rlmcost.compiled.sweep import sweep_train_steps  # noqa: E402
from rlmcost.parallel.layout import Layout  # noqa: E402
from rlmcost.specs import get_hardware, get_model  # noqa: E402

TP, PP, DP, CP, SP = (1, 2, 4, 8), (1, 2, 4, 8, 16), (1, 2, 4, 8, 16, 32), (1, 2), (0, 1)
ZERO, CKPT, SCHEDULE = (0, 1, 2, 3), (0, 1, 2), (0, 1, 2, 3)
MICRO_BATCH = (1, 2, 4, 8)
SEQ_LEN = (1024, 2048, 4096, 8192, 16384, 32768)


def layout_grid(moe: bool) -> dict[str, np.ndarray]:
    """Every combination of the degrees and options above (EP 1, 2, 4, 8 for a MoE model)."""
    ep = (1, 2, 4, 8) if moe else (1,)
    rows = np.array(list(product(TP, PP, DP, CP, ep, SP, ZERO, CKPT, SCHEDULE)), dtype=np.int64)
    names = ("tp", "pp", "dp", "cp", "ep", "sp", "zero", "ckpt", "schedule")
    return {n: rows[:, i] for i, n in enumerate(names)}


def throughput(model: str, repeat: int) -> None:
    spec, hw = get_model(model), get_hardware("h100")
    lay = layout_grid(spec.is_moe)
    n_layouts = len(lay["tp"])
    grid = {k: v[:, None, None] for k, v in lay.items()}
    mbs = np.array(MICRO_BATCH)[None, :, None]
    seq = np.array(SEQ_LEN)[None, None, :]
    n = n_layouts * len(MICRO_BATCH) * len(SEQ_LEN)
    flat = {k: np.broadcast_to(v, (n_layouts, len(MICRO_BATCH), len(SEQ_LEN))).ravel()
            for k, v in {**grid, "micro_batch": mbs, "seq_len": seq}.items()}  # fmt: skip
    runs = {
        "grid": lambda: sweep_train_steps(spec, hw, sequences=256, seq_len=seq,
                                          micro_batch=mbs, **grid),
        "flat": lambda: sweep_train_steps(spec, hw, sequences=256, **flat),
    }  # fmt: skip
    for kind, run in runs.items():
        best = best_cpu = float("inf")
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            out = run()
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        fits = int(np.count_nonzero(out.fits))
        print(f"sweep {model:14s} {kind}: {n:>9,d} candidates in {best * 1e3:7.1f} ms wall = "
              f"{n / best / 1e6:5.2f} M/s wall, {n / best_cpu / 1e6:5.2f} M/s of CPU time "
              f"({fits:,d} valid and fit)")  # fmt: skip


def scalar(repeat: int) -> None:
    from rlmcost.parallel import memory as symbolic

    spec = get_model("llama-3.1-70b")
    arch = spec.arch()
    layout = Layout(tp=8, pp=4, dp=2, micro_batch=2)
    for name, fn, n in (("compiled", memory_per_rank, 2000), ("symbolic", symbolic.memory_per_rank,
                                                                 20)):  # fmt: skip
        fn(arch, layout, "train", 64, 4096)
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(n):
                fn(arch, layout, "train", 64, 4096)
            best = min(best, (time.perf_counter() - t0) / n)
        print(f"warm memory_per_rank ({name}, 70b tp8 pp4): {best * 1e6:9.1f} us per call")


COLD = {
    "empty interpreter": "pass",
    "engine + rlmcost.specs model": (
        "from rlmcost.compiled import memory_per_rank\n"
        "from rlmcost.parallel.layout import Layout\n"
        "from rlmcost.specs import get_model\n"
        "print(memory_per_rank(get_model('70b'), Layout(tp=8), 'train', 64, 4096).total)"
    ),
    "engine + models.json entry": (
        "import json\nfrom pathlib import Path\nimport rlmcost\n"
        "from rlmcost.compiled import memory_per_rank\n"
        "from rlmcost.parallel.layout import Layout\n"
        "path = Path(rlmcost.__file__).parent / 'specs' / 'data' / 'models.json'\n"
        "d = json.loads(path.read_text())\n"
        "m = next(x for x in d['models'] if x['name'] == 'llama-3.1-70b')\n"
        "print(memory_per_rank(m, Layout(tp=8), 'train', 64, 4096).total)"
    ),
    "symbolic parallel.memory": (
        "from rlmcost.parallel.memory import memory_per_rank\n"
        "from rlmcost.parallel.layout import Layout\n"
        "from rlmcost.specs import get_model\n"
        "print(memory_per_rank(get_model('70b').arch(), Layout(tp=8), 'train', 64, 4096).total)"
    ),
}


def cold(repeat: int) -> None:
    """Fresh interpreters with the bytecode caches written (as after ``pip install``): one
    untimed run writes them, even where PYTHONDONTWRITEBYTECODE is set."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for name, code in COLD.items():
        subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT,
                           stdout=subprocess.DEVNULL)  # fmt: skip
            times.append(time.perf_counter() - t0)
        print(f"cold query, {name:30s} median {statistics.median(times):.3f} s "
              f"(min {min(times):.3f}, n={repeat})")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for model in ("llama-3.1-70b", "mixtral-8x7b"):
        throughput(model, args.repeat)
    scalar(args.repeat)
    cold(args.repeat)


if __name__ == "__main__":
    main()
