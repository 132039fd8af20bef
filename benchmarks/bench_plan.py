"""Planner throughput: the exhaustive GPT-3 175B training-layout search on 64 H100s
(tp, pp, dp, micro-batch, checkpointing, interleaving, SP, ZeRO), the RL screen's
candidates per second (:func:`rlmcost.plan.screen.screen` on 10^6 random candidates, one
core), RL searches over the topology families (co-located, engines apart, OpenRLHF role
groups, async) up to PPO 70B on 8..1024 A100s, Dask's speed-up at 2 workers, and the sizing
of the seven built-in configurations of `rlmcost placements`.

The RL searches, Dask's included, are what `rlmcost plan ...` runs: its command line parsed by
the command's own options and searched by the function the command calls
(:func:`rlmcost.cli.plan_query.rl_plan`), so each family is evaluated under the framework that
launches it (OpenRLHF's role groups under OpenRLHF's preset, slime's async split under
slime's, the rest under NeMo RL's: :data:`rlmcost.plan.families.LAUNCHED_BY`). Until
December 2026 they called ``plan_rl`` on one base Run, every family under NeMo RL's preset,
which is not what the command searches.

Figures, two runs (December 2026, a 2-core machine shared with other jobs, load average 5.9-7.2
throughout, so wall times are inflated and only the CPU times and counts compare; the earlier
one-base benchmark's run on the same machine in brackets):

* `plan ppo -m 70b -H a100-80gb --gpus 8..1024`: 26,368 valid, 13,800 pruned, 6,090 skipped
  by the time bound, 6,478 evaluated, 5,036 fit (the counts of README and of the command's
  --json), 13.8 / 12.5 s of CPU, 30.6 / 19.3 s wall; best 1024 GPUs async-split 22.6 s
  [one base: 4,286 skipped, 8,282 evaluated, 5,713 fit, 16.1 s of CPU; async-split 22.0 s].
* Since the engines' floor (rlmcost/plan/engine_floor.py), alternating with the tree before it
  in the same minutes (load average about 7, CPU of ``cli_plan``): the 70B 8..1024 search 8,149
  skipped, 3,889 evaluated, 3,072 fit, 12.7 s [6,058, 5,980, 4,749; 16.4-17.3 s], the same top
  rows and Pareto front (a candidate is skipped by its floor only where it is also no faster
  than the front at its GPU count); the 32B search 1,548 evaluated, 5.8 s [2,695; 6.2-6.3 s];
  the 70B on 32 GPUs 1,209
  evaluated, 2.7 s [1,272; 2.7 s]; `plan grpo -m qwen3-235b-a22b --framework nemo-rl -H h100
  --gpus 128` (not run here) 1,530 evaluated, 11.0-11.1 s [2,144; 23.3-23.7 s].
* `plan grpo -m qwen2.5-32b -H h100-sxm -T 8192 --gpus 8..64`: 2,852 evaluated, 1,776 fit,
  6.3 / 6.2 s of CPU; best slime async 32+32 GPUs 163.6 s [one base: 2,833 evaluated, 1,258
  fit; NeMo RL async 197.0 s].
* `plan ppo -m 70b -H a100-80gb --gpus 32`: 1,308 evaluated, 470 fit, best co-located 81.2 s
  [one base: 254 fit, async-split 67.2 s].
* Dask, the same 70B plan on 16..64 GPUs, 2 warm workers: one process 7.4 / 7.2 s of CPU
  (3,329 evaluated) [5.3 s], the workers' evaluations 9.9 / 9.1 s of CPU, 1.38 / 1.32x one
  process's [1.70x]; wall 0.73 / 0.62x one process (the workers got about a fifth of a core
  each beside the other jobs); same rows as one process; Amdahl on the CPU times bounds 4
  workers on 4 free cores at 2.70 / 2.83x [2.25x].
* Since the slot key by GPU count, family without the overlap and trainer TP and the rows'
  layouts from the workers (December 2026, load average 4.5-5.7): CPU times of the same tree's
  workers ranged 1.15-1.92x one process from run to run, too loose to compare trees; the
  counts do not move with the load (README, "Amdahl"): 2 workers evaluate 3,130-3,180
  candidates against one process's 2,562, and the 2,562 split over 4 fresh workers take 1.14x
  one process's Python calls (1.34x by GPU count and family). The worker processes' whole CPU
  runs 15-20 % above their tasks'.
* Since the engines' floor is checked on the workers too (``plan/floor_tasks.py``; counts, three
  runs each): 2 workers evaluate 2,687-2,702 candidates (3,148-3,162 before), 4 workers
  2,707-2,715 (3,155-3,161), one process 2,562; Amdahl on the counts bounds 4 workers at about
  2.9x on the tasks' CPU (2.6x before).
* Since the workers keep their own rows, floors and fastest times across a search's tasks
  (``floor_tasks.Own``: each skips by the k-th of its own rows too), take another's candidates
  only when idle, and the client screens the next search while the workers finish the last
  one's tasks (``plan/rl_screened.py``); 4 workers, three runs alternating with the tree
  before, load average 6-7: the client's CPU while no task is in flight (the serial part,
  printed below) 0.16 s each run [0.25-0.41 s]; 2,618-2,644 evaluated [2,637-2,654], one
  process 2,499 (6.0-6.2 s of CPU, 5.5-5.8 s evaluating); one process's rows split over 4
  fresh workers by slot take 1.10x its Python calls; Amdahl on these counts bounds 4 workers
  at 3.4x on the tasks' CPU [3.1x], 2.8x on the worker processes' (1.22-1.26x their tasks'
  CPU) [2.6x]. The workers' measured CPU on 2 shared cores, 1.3-1.9x one process's
  evaluations, bounds nothing: a group estimate takes 1.5-2.2 ms of CPU on them against
  1.1-1.3 ms in one process (contention), and whichever worker got a core takes others' items.
* GPT-3 175B training layouts on 64 H100: 24,192 enumerated, 7,344 valid, 0.36 / 0.62 s; best
  tp=4 pp=8 SP ZeRO-1 interleaved v=6, 92.50 s per step, MFU 57.8 %. The RL screen: 3.1-3.9 M
  random candidates/s on one core (under the load; README's 6-21 M on a quieter machine).

Run: PYTHONPATH=. python benchmarks/bench_plan.py
"""

from __future__ import annotations

import time
from typing import Any

from rlmcost.cli.plan_query import parsed, rl_plan
from rlmcost.plan.train import plan_train
from rlmcost.reports.estimate import run_of

PPO_70B = ["ppo", "-m", "llama-3.1-70b", "-H", "a100-80gb"]
"""`rlmcost plan ppo -m 70b -H a100-80gb`: the query of README's planner figures."""


def cli_plan(argv: list[str], compute: Any = None) -> Any:
    """What `rlmcost plan ARGV` searches (:func:`rlmcost.cli.plan_query.rl_plan` of the
    options the command parses: each family under the framework that launches it, as the
    command evaluates it), on ``compute`` (default this process), without the printing."""
    target, opts = parsed(argv)
    return rl_plan(target, opts, compute)


def main() -> None:
    # first, while no other query has warmed this process's caches (the workers' are cold)
    dask_speedup(PPO_70B)
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
    t0, cpu0 = time.perf_counter(), time.process_time()
    rl = cli_plan(["grpo", "-m", "qwen2.5-32b", "-H", "h100-sxm", "-T", "8192", "--gpus",
                   "8..64"])  # fmt: skip
    t, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    c = rl.counts
    print(f"RL search, plan grpo -m qwen2.5-32b -H h100-sxm -T 8192 --gpus 8..64: "
          f"{c.enumerated} enumerated, {c.valid} valid, {c.pruned} pruned, {c.evaluated} "
          f"evaluated, {c.fitting} fit; {t:.1f} s ({cpu:.1f} s of CPU; "
          f"{c.evaluated / t:.0f} evaluations/s)")
    print(f"  best: {rl.best['time_s']:.1f} s/iteration: {rl.best['command']}")
    print("  Pareto front: " + ", ".join(f"{x['gpus']} GPUs {x['time_s']:.0f} s"
                                         for x in rl.front))
    t0 = time.perf_counter()
    rl = cli_plan([*PPO_70B, "--gpus", "32"])
    t = time.perf_counter() - t0
    c = rl.counts
    print(f"RL search, plan ppo -m 70b -H a100-80gb --gpus 32: {c.valid} valid, {c.pruned} "
          f"pruned, {c.evaluated} evaluated, {c.fitting} fit; {t:.1f} s; best "
          f"{rl.best['family']} {rl.best['groups'] or 'all'} {rl.best['time_s']:.1f} s")

    t0, cpu0 = time.perf_counter(), time.process_time()
    rl = cli_plan([*PPO_70B, "--gpus", "8..1024"])
    t, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    c = rl.counts
    print(f"RL search, plan ppo -m 70b -H a100-80gb --gpus 8..1024 (every default family, "
          f"each under its launcher's preset): {c.valid} valid, {c.pruned} pruned, "
          f"{c.bounded} skipped by the time bound, {c.evaluated} evaluated, {c.fitting} fit; "
          f"{t:.1f} s ({cpu:.1f} s of CPU); best {rl.best['gpus']} GPUs {rl.best['family']} "
          f"{rl.best['time_s']:.1f} s")

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


def dask_speedup(query: list[str], workers: int = 2, budget: str = "16..64") -> None:
    """The same plan, `rlmcost plan QUERY --gpus BUDGET` as the command searches it
    (:func:`cli_plan`), in this process and on a local Dask cluster of ``workers``
    single-threaded processes (started apart; each side warmed by the same 8-GPU plan, the
    memoized caches of this process emptied first): the speed-up, the efficiency (speed-up
    / workers), each worker's busy time (wall seconds inside its tasks) and CPU time (of its
    evaluating thread: busy less the waits for a core), and what 4 workers would need for
    the 3x of issue 20.

    On a 2-core machine the client and the scheduler share the cores with the workers, so
    4 workers cannot be shown here; the line on 4 workers is Amdahl's law on the measured
    CPU times (the part of one process outside the evaluations stays, the workers' CPU time
    is divided by 4), a projection, not a measurement, and a lower bound on the time: four
    workers split the caches four ways, which adds work."""
    import os

    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        print("Dask speed-up: dask[distributed] not installed")
        return
    from rlmcost import memo
    from rlmcost.plan.distributed import Compute, DaskRunner, Runner
    from rlmcost.plan.rl_candidates import _row

    memo.clear_all()  # as warm as the workers will be: the same 8-GPU plan first
    _row.cache_clear()
    here = Runner()
    cli_plan([*query, "--gpus", "8"], Compute(use=here))
    here.stats.clear()
    t0, cpu0 = time.perf_counter(), time.process_time()
    local = cli_plan([*query, "--gpus", budget], Compute(use=here))
    t_local, cpu_local = time.perf_counter() - t0, time.process_time() - cpu0
    evaluating, evaluating_cpu = here.stats["local"].busy_s, here.stats["local"].cpu_s
    t0 = time.perf_counter()
    run = DaskRunner(workers=workers)
    t_start = time.perf_counter() - t0
    try:
        cli_plan([*query, "--gpus", "8"], Compute(use=run))  # warm
        run.stats.clear()
        before = run.client.run(time.process_time)  # each worker process's CPU
        t0, cpu0 = time.perf_counter(), time.thread_time()
        dist = cli_plan([*query, "--gpus", budget], Compute(use=run))
        t_dist, client_cpu = time.perf_counter() - t0, time.thread_time() - cpu0
        after = run.client.run(time.process_time)
    finally:
        run.close()
    same = [r["run"] for r in dist.rows] == [r["run"] for r in local.rows]
    speedup = t_local / t_dist
    print(f"Dask, plan {' '.join(query)} --gpus {budget}: one process {t_local:.2f} s "
          f"({local.counts.evaluated} evaluated, {evaluating:.2f} s of it evaluating); "
          f"{workers} warm workers {t_dist:.2f} s ({dist.counts.evaluated} evaluated); "
          f"speed-up {speedup:.2f}x, efficiency {100 * speedup / workers:.0f} % (speed-up / "
          f"workers); cluster start-up {t_start:.1f} s apart; same rows: {same}")
    for i, (_, w) in enumerate(sorted(run.stats.items())):
        print(f"  worker {i}: busy {w.busy_s:.2f} s of {t_dist:.2f} s "
              f"({100 * w.busy_s / t_dist:.0f} %), CPU {w.cpu_s:.2f} s, {w.tasks} tasks, "
              f"{w.items} candidates")
    cpu = sum(w.cpu_s for w in run.stats.values())
    whole = sum(after[a] - before[a] for a in after if a in before)
    outside = max(cpu_local - evaluating_cpu, 0.0)  # enumeration, screen, ranking
    at4 = outside + cpu / 4
    print(f"  CPU: one process {cpu_local:.2f} s, {evaluating_cpu:.2f} s of it evaluating; "
          f"the workers' evaluations {cpu:.2f} s ({cpu / evaluating_cpu:.2f}x: each "
          f"worker warms its own caches, and evaluates what one process skips by bounds "
          f"learned from results not yet back); the worker processes in all {whole:.2f} s "
          f"({whole / evaluating_cpu:.2f}x: with their tasks' and results' (de)serialization "
          f"and heartbeats); the client's search thread {client_cpu:.2f} s against "
          f"{outside:.2f} s outside the evaluations in one process")
    print(f"  Amdahl on the worker processes' CPU: {outside:.2f} s + {whole:.2f} s / 4 = "
          f"{outside + whole / 4:.2f} s, at most {cpu_local / (outside + whole / 4):.2f}x")
    serial = max(client_cpu - run.overlapped_s, 0.0)  # while no task was in flight
    print(f"  the client's search thread: {run.overlapped_s:.2f} s of CPU while tasks were in "
          f"flight, {serial:.2f} s while none was (the serial part: the screens of the first "
          f"search, the rows shown); {run.taken} items taken by an idle worker off another's "
          f"slot, {run.moved} tasks run off their slot; Amdahl with that serial part: "
          f"{cpu_local / (serial + cpu / 4):.2f}x on the tasks' CPU, "
          f"{cpu_local / (serial + whole / 4):.2f}x on the worker processes'")
    print(f"  {os.cpu_count()} cores here, shared with the client and the scheduler: 4 "
          f"workers cannot be shown (>= 3x at 4 workers is 75 % efficiency on 4 free "
          f"cores). Amdahl on the CPU times (a core each, no waits): {outside:.2f} s outside"
          f" the evaluations + {cpu:.2f} s / 4 = {at4:.2f} s against {cpu_local:.2f} s, at "
          f"most {cpu_local / at4:.2f}x; 3x needs the part outside under "
          f"{max(cpu_local / 3 - cpu / 4, 0.0):.2f} s")


if __name__ == "__main__":
    main()
