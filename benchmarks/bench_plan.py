"""Planner throughput: the exhaustive GPT-3 175B training-layout search on 64 H100s
(tp, pp, dp, micro-batch, checkpointing, interleaving, SP, ZeRO), the RL screen's
candidates per second (:func:`rlmcost.plan.screen.screen` on 10^6 random candidates, one
core), RL searches over the topology families (co-located, engines apart, OpenRLHF role
groups, async) up to PPO 70B on 8..1024 A100s, Dask's speed-up at 2 workers, and the sizing
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

    screen_rate()
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

    t0, cpu0 = time.perf_counter(), time.process_time()
    rl = plan_rl(base, "8..1024")
    t, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    c = rl.counts
    print(f"RL search, ppo llama-3.1-70b on 8..1024 x a100-80gb, every default family: "
          f"{c.valid} valid, {c.pruned} pruned, {c.bounded} skipped by the time bound, "
          f"{c.evaluated} evaluated, {c.fitting} fit; {t:.1f} s ({cpu:.1f} s of CPU); best "
          f"{rl.best['gpus']} GPUs {rl.best['family']} {rl.best['time_s']:.1f} s")
    dask_speedup(base)

    from rlmcost.plan.sizing import compare_sized
    from rlmcost.reports.placement import placement_run

    for gpus in (8, 32):
        t0 = time.perf_counter()
        cmp = compare_sized(placement_run("ppo", "llama-3.1-70b", gpus=gpus))
        t = time.perf_counter() - t0
        fits = sum(e.fits for e in cmp.estimates)
        print(f"placements sized by search, ppo llama-3.1-70b on {gpus} x h100-sxm: "
              f"{fits}/{len(cmp.estimates)} configurations fit; {t:.1f} s")


def screen_rate(n: int = 1_000_000) -> None:
    """The screen's candidates per second on ``n`` random candidates of PPO 70B on A100s
    (one core: numpy without threads for these elementwise kernels)."""
    import numpy as np

    from rlmcost.plan.screen import FIELDS, query, screen

    base = run_of("ppo", "llama-3.1-70b", hardware="a100-80gb")
    q = query(base)
    rng = np.random.default_rng(0)
    gpus = 2 ** rng.integers(3, 11, n)
    tp = 2 ** rng.integers(0, 4, n)
    c = {name: np.zeros(n, dtype=np.int64) for name in FIELDS}
    c.update(gpus=gpus, train_gpus=gpus // 2, rollout_gpus=gpus // 2, kind=rng.integers(0, 4, n),
             tp=tp, pp=np.ones(n, dtype=np.int64), cp=np.ones(n, dtype=np.int64),
             sp=rng.integers(0, 2, n) * (tp > 1), zero=rng.integers(0, 4, n),
             ckpt=rng.choice([0, 2], n), micro_batch=rng.integers(1, 3, n),
             offload=rng.integers(0, 2, n), rollout_tp=2 ** rng.integers(0, 4, n))
    screen(q, {k: v[:1000] for k, v in c.items()})  # warm
    seconds = []
    for _ in range(3):
        t0 = time.perf_counter()
        s = screen(q, c)
        seconds.append(time.perf_counter() - t0)
    t = min(seconds)
    print(f"RL screen (memory and time lower bounds), ppo llama-3.1-70b on a100-80gb: {n:,} "
          f"random candidates in {t:.2f} s (best of 3) = {n / t / 1e6:.2f} M candidates/s; "
          f"{int((s.memory <= 80 * 2**30).sum()):,} within HBM")
    from rlmcost.plan.rl_candidates import RLSpace, candidates
    from rlmcost.plan.screen import candidate_arrays

    t0 = time.perf_counter()
    cands = [x for g in (8, 16, 32, 64, 128, 256, 512, 1024)
             for x in candidates(base, RLSpace(), g)]
    t1 = time.perf_counter()
    arrays = candidate_arrays(cands)
    t2 = time.perf_counter()
    screen(q, arrays)
    t3 = time.perf_counter()
    print(f"  the query's own {len(cands):,} candidates on 8..1024 GPUs: enumerated in "
          f"{t1 - t0:.2f} s, as arrays in {t2 - t1:.2f} s, screened in {t3 - t2:.4f} s "
          f"({len(cands) / (t3 - t2) / 1e6:.2f} M candidates/s)")


def dask_speedup(base: object, workers: int = 2, budget: str = "16..64") -> None:
    """The same plan in this process and on a local Dask cluster of ``workers``
    single-threaded processes (started apart; each side warmed by the same 8-GPU plan, the
    memoized caches of this process emptied first): the speed-up, the
    efficiency (speed-up / workers) and each worker's busy time (seconds inside its tasks,
    from Dask's own task stream), and what 4 workers would need for the 3x of issue 20.

    Measured on a 2-core machine: the client and the scheduler share the cores with the
    workers, so 4 workers cannot be shown here; the line on 4 workers is Amdahl's law on
    the measured times (the part outside the workers stays, the workers' busy time is
    divided), a projection, not a measurement."""
    import os

    try:
        from dask.distributed import Client, LocalCluster, get_task_stream
    except ImportError:
        print("Dask speed-up: dask[distributed] not installed")
        return
    from rlmcost import memo
    from rlmcost.plan.distributed import Compute
    from rlmcost.plan.rl_candidates import _row

    memo.clear_all()  # as warm as the workers will be: the same 8-GPU plan first
    _row.cache_clear()
    plan_rl(base, 8)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    local = plan_rl(base, budget)  # type: ignore[arg-type]
    t_local = time.perf_counter() - t0
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)  # fmt: skip
    client = Client(cluster)
    t_start = time.perf_counter() - t0
    try:
        where = Compute(cluster=cluster.scheduler_address)
        plan_rl(base, 8, compute=where)  # type: ignore[arg-type]  # warm the workers
        with get_task_stream(client) as ts:
            t0 = time.perf_counter()
            dist = plan_rl(base, budget, compute=where)  # type: ignore[arg-type]
            t_dist = time.perf_counter() - t0
        busy: dict[str, float] = {}
        tasks: dict[str, int] = {}
        for task in ts.data:
            w = task["worker"]
            compute = sum(s["stop"] - s["start"] for s in task["startstops"]
                          if s["action"] == "compute")  # fmt: skip
            busy[w] = busy.get(w, 0.0) + compute
            tasks[w] = tasks.get(w, 0) + 1
    finally:
        client.close()
        cluster.close()
    same = [r["run"] for r in dist.rows] == [r["run"] for r in local.rows]
    speedup = t_local / t_dist
    print(f"Dask, ppo llama-3.1-70b on {budget} x a100-80gb: one process {t_local:.2f} s "
          f"({local.counts.evaluated} evaluated); {workers} warm workers {t_dist:.2f} s "
          f"({dist.counts.evaluated} evaluated); speed-up {speedup:.2f}x, efficiency "
          f"{100 * speedup / workers:.0f} % (speed-up / workers); cluster start-up "
          f"{t_start:.1f} s apart; same rows: {same}")
    for i, w in enumerate(sorted(busy)):
        print(f"  worker {i}: busy {busy[w]:.2f} s of {t_dist:.2f} s "
              f"({100 * busy[w] / t_dist:.0f} %), {tasks[w]} tasks")
    work = sum(busy.values())
    serial = max(t_dist - work / workers, 0.0)  # outside the workers: screen, client
    at4 = serial + work / 4
    print(f"  {os.cpu_count()} cores here: 4 workers cannot be shown (>= 3x at 4 workers "
          f"needs 75 % efficiency on 4 free cores). Amdahl on these times: {serial:.2f} s "
          f"outside the workers + {work:.2f} s of work / 4 = {at4:.2f} s, "
          f"{t_local / at4:.2f}x; 3x needs the part outside the workers under "
          f"{max(t_local / 3 - work / 4, 0.0):.2f} s")


if __name__ == "__main__":
    main()
