"""Print the cold wall time of representative user queries (one fresh process each), and the CPU
seconds the process used (user + system: on a machine shared with other jobs the wall time
grows with the load, the CPU time much less).

Run: python benchmarks/bench_queries.py [--repeat 3] [--match TEXT] (rlmcost is byte-compiled
first; see bench_foundation.cli_cold_start); ``--match`` keeps the queries whose text holds it.
Timings are printed, never asserted (machines are noisy).

The text reports below the first rows print the advice after the table: the longest response
that still fits (a search over response lengths, each probe an evaluation) and, for a run that
does not fit, the single changes that make it fit (each an evaluation). Each probe used to be a
full evaluation, whose paged KV replay (``placement.paged``: every admission, preemption and
finish of one replica's sequences) grows with the batch and the response length; the probes now
evaluate memory and fit alone (``placement.untimed``), and a change is evaluated in full only
where it fits. CPU seconds on this 2-core machine (shared, 2026-12-07), before -> after, with
the printed text and JSON identical: ``grpo -m 8b --gpus 16 -B 10000`` 15.5 -> 1.5-2.0 (wall 22 s
-> 2.2 s); ``-B 100000`` ~300 (wall 306 s) -> 10.3; ``-T 32768`` 73.0 -> 5.7; ``--framework
verl`` ~370 (wall 373 s) -> 2.2; ``--framework openrlhf`` 27.8 -> 2.9; ``grpo -m 70b --gpus 64
-B 10000`` 27.4 -> 1.9. The ``--placement`` queries (12-17 s, 16-27 s before) size their
groups by evaluating splits in full (``plan.sizing``, ``placement.allocate``).

Each split's decode timelines (``placement.decode_runs``: a long timeline's runs summed with
numpy; ``placement.paged``: fewer Python calls per admission, eviction and finish) then
cost less, outputs byte-identical. CPU seconds, best of 3, before (46996f34) and after
alternated, 2026-12-07, load ~3 on the 2 cores: ``grpo -m 8b --gpus 16 -B 512 -K 16 -T 8192
--json --placement async`` 9.6 -> 5.6, ``combined`` 9.8 -> 6.6, ``disaggregated`` 11.7 -> 7.3;
``-B 10000 --placement async`` 14.3 -> 10.4; ``-B 100000`` unchanged within the noise (2.9-3.7
both: its one long timeline, 8,321 runs, stays in Python, numpy's import would cost as much).
What remains is mostly the paged replay's Python per admission, eviction and finish.

Then the replay itself (``placement.paged``: one loop turn per event step, its running set,
block histogram and group holders written out, heaps of plain ints; 382,775 admissions and
316,399 preemptions over the 23 replays of the ``async`` query: 2.4 -> 1.4 CPU s), the
segments read column by column (``Schedule.rows``; ``decode_runs.segment_bounds``; the prefill
phases and prefix hits with numpy, ``placement.prefills``, ``prefix_share.hits_numpy``) and the
runs kept as columns (``Timeline.runs`` made when read). CPU seconds, best of 3, the base
commit (2a130f1d) and this one alternated, 2026-12-07, load 4-7 on the 2 cores, JSON
byte-identical: ``grpo -m 8b --gpus 16 -B 512 -K 16 -T 8192 --json --placement async`` 5.40 ->
3.57, ``combined`` 6.91 -> 4.86, ``disaggregated`` 6.65 -> 3.98; ``-B 10000 --placement
async`` 10.8 -> 5.8; ``-B 512 -K 4 -T 2048 --placement async --json`` 1.03 -> 0.97; ``ppo -m
70b --gpus 32 --placement combined --json`` 1.33 -> 1.10. Left: the replay's Python per event
(about 1.4 us), the envelope sums (``envelope.sums_of_max``) and the engine's step pricing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

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
    # text reports with the advice (longest response, changes that fit): the shapes that were
    # slow, a large batch, a long response, a framework whose probes reach long lengths
    ["grpo", "-m", "8b", "--gpus", "16", "-B", "10000"],
    ["grpo", "-m", "8b", "--gpus", "16", "-B", "100000"],
    ["grpo", "-m", "8b", "--gpus", "16", "-B", "10000", "-T", "32768"],
    ["grpo", "-m", "8b", "--gpus", "16", "-B", "10000", "--framework", "verl"],
    ["grpo", "-m", "8b", "--gpus", "16", "-B", "10000", "--framework", "openrlhf"],
    ["grpo", "-m", "deepseek-v3", "--gpus", "256", "-B", "1000"],
    ["grpo", "-m", "405b", "--gpus", "256", "-B", "1000"],
    ["ppo", "-m", "70b", "--tp", "8"],
    ["grpo", "-m", "8b", "--gpus", "16", "-B", "10000", "--placement", "combined"],
    ["grpo", "-m", "8b", "--gpus", "16", "-B", "10000", "--placement", "async"],
    # a built-in split of an ordinary DAPO step (8,192 samples of up to 8,192 tokens): the
    # decode timelines of many candidate splits (placement.decode_runs, placement.paged)
    *(["grpo", "-m", "8b", "--gpus", "16", "-B", "512", "-K", "16", "-T", "8192", "--placement",
       p, "--json"] for p in ("async", "combined", "disaggregated")),
    # a smaller step (the KV pool holds more of it) and a PPO split on the 70B model
    ["grpo", "-m", "8b", "--gpus", "16", "-B", "512", "-K", "4", "-T", "2048", "--placement",
     "async", "--json"],
    ["ppo", "-m", "70b", "--gpus", "32", "--placement", "combined", "--json"],
]  # fmt: skip


def cold_runs(args: list[str], repeat: int) -> list[tuple[float, float]]:
    """(wall seconds, CPU seconds) of ``repeat`` fresh `python -m rlmcost ...` processes, after
    byte-compiling rlmcost (``bench_foundation.cli_cold_start``'s rule)."""
    import rlmcost

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    package = os.path.dirname(rlmcost.__file__)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True, env=env)
    out = []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), os.times()
        subprocess.run([sys.executable, "-m", "rlmcost", *args], check=True,
                       capture_output=True)  # fmt: skip
        c1 = os.times()
        cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
        out.append((time.perf_counter() - t0, cpu))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--match", default="", help="only the queries whose text holds this")
    a = ap.parse_args()
    for args in QUERIES:
        if a.match not in " ".join(args):
            continue
        runs = cold_runs(args, a.repeat)
        wall, cpu = [w for w, _ in runs], [c for _, c in runs]
        print(f"rlmcost {' '.join(args):75s} median {statistics.median(wall):.2f} s "
              f"(min {min(wall):.2f}, n={len(wall)}), "
              f"CPU {statistics.median(cpu):.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
