"""Planner throughput: the exhaustive GPT-3 175B training-layout search on 64 H100s
(tp, pp, dp, micro-batch, checkpointing, interleaving, SP, ZeRO), RL searches over the
topology families (co-located, engines apart, OpenRLHF role groups, async), and the sizing
of the seven built-in configurations of `rlmcost placements`.

Run: PYTHONPATH=. python benchmarks/bench_plan.py
"""

from __future__ import annotations

import time

from rlmcost.plan.rl import plan_rl
from rlmcost.plan.train import plan_train
from rlmcost.reports.estimate import run_of


def main() -> None:
    t0 = time.perf_counter()
    r = plan_train("gpt-3-175b", 64, seq=2048, batch=1536)
    t = time.perf_counter() - t0
    c = r.counts
    print(f"train search, gpt-3-175b on 64 x h100-sxm, batch 1536 x 2048: {c.enumerated} "
          f"enumerated, {c.valid} valid, {c.fitting} fit, {c.evaluated} evaluated exactly; "
          f"{t:.2f} s in all")
    print(f"  {r.notes[-1]}")
    b = r.best
    print(f"  best: {b['time_s']:.2f} s/step, MFU {100 * b['mfu']:.1f} %, "
          f"{b['memory_bytes_per_device'] / 2**30:.1f} GiB/GPU")
    print(f"  {b['command']}")
    big = plan_train("gpt-3-175b", "8..512", seq=2048, batch=1536, top=1)
    print(f"  wider: 8..512 GPUs: {big.notes[-1]}")

    base = run_of("grpo", "qwen2.5-32b", hardware="h100-sxm", response_len=8192)
    t0 = time.perf_counter()
    rl = plan_rl(base, "8..64")
    t = time.perf_counter() - t0
    c = rl.counts
    print(f"RL search, grpo qwen2.5-32b on 8..64 x h100-sxm, T=8192: {c.enumerated} enumerated,"
          f" {c.valid} valid, {c.pruned} pruned, {c.evaluated} evaluated, {c.fitting} fit; "
          f"{t:.1f} s ({c.evaluated / t:.0f} evaluations/s)")
    print(f"  best: {rl.best['time_s']:.1f} s/iteration: {rl.best['command']}")
    print("  Pareto front: " + ", ".join(f"{x['gpus']} GPUs {x['time_s']:.0f} s"
                                         for x in rl.front))
    base = run_of("ppo", "llama-3.1-70b", hardware="a100-80gb")
    t0 = time.perf_counter()
    rl = plan_rl(base, 32)
    t = time.perf_counter() - t0
    c = rl.counts
    print(f"RL search, ppo llama-3.1-70b on 32 x a100-80gb: {c.valid} valid, {c.pruned} pruned, "
          f"{c.evaluated} evaluated, {c.fitting} fit; {t:.1f} s; best {rl.best['family']} "
          f"{rl.best['groups'] or 'all'} {rl.best['time_s']:.1f} s")

    from rlmcost.plan.sizing import compare_sized
    from rlmcost.reports.placement import placement_run

    for gpus in (8, 32):
        t0 = time.perf_counter()
        cmp = compare_sized(placement_run("ppo", "llama-3.1-70b", gpus=gpus))
        t = time.perf_counter() - t0
        fits = sum(e.fits for e in cmp.estimates)
        print(f"placements sized by search, ppo llama-3.1-70b on {gpus} x h100-sxm: "
              f"{fits}/{len(cmp.estimates)} configurations fit; {t:.1f} s")


if __name__ == "__main__":
    main()
