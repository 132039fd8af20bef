"""Print the cold wall time of representative user queries (one fresh process each).

Run: python benchmarks/bench_queries.py [--repeat 3] (rlmcost is byte-compiled first; see
bench_foundation.cli_cold_start)
Timings are printed, never asserted (machines are noisy).
"""

from __future__ import annotations

import argparse
import statistics

from bench_foundation import cli_cold_start

QUERIES = [
    ["--help"],
    ["ppo", "--help"],
    ["models"],
    ["blocks", "--model", "llama-3.1-70b", "--json"],
    ["ppo", "--model", "70b", "--tp", "8", "--json"],
    ["compare", "ppo", "grpo", "dpo", "--model", "70b", "--tp", "8", "--json"],
    ["train", "--model", "405b", "--gpus", "1024", "--tp", "8", "--pp", "16", "--zero", "1",
     "--json"],
    ["ppo", "--model", "70b", "--gpus", "64", "--tp", "8", "--placement", "async", "--json"],
    ["placements", "--model", "8b", "--gpus", "16", "--json"],
]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    for args in QUERIES:
        t = cli_cold_start(args, a.repeat)
        print(f"rlmcost {' '.join(args):75s} median {statistics.median(t):.2f} s "
              f"(min {min(t):.2f}, n={len(t)})")  # fmt: skip


if __name__ == "__main__":
    main()
