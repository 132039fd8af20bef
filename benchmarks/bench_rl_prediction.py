"""Print predicted versus bound RL iteration times, the published RL step times they are
checked against, and how long the prediction takes to compute.

Run: python benchmarks/bench_rl_prediction.py
Timings are printed, never asserted (machines are noisy).
"""

from __future__ import annotations

import time


def main() -> None:
    from rlmcost.perf.validate import validate
    from rlmcost.reports.placement import placement_estimate

    cases = [
        ("ppo", "llama-3.1-8b", dict(gpus=8)),
        ("grpo", "llama-3.1-8b", dict(gpus=8, group=8, length_dist="lognormal:600,0.6,1024")),
        ("grpo", "llama-3.1-8b", dict(gpus=16, group=8, placement="async")),
        ("ppo", "llama-3.1-70b", dict(gpus=32, placement="disaggregated")),
    ]
    print(f"{'case':58s} {'bound':>9s} {'predicted':>10s} {'ratio':>6s} {'tok/s/GPU':>10s} "
          f"{'MFU':>6s} {'eval s':>7s}")  # fmt: skip
    for alg, model, kw in cases:
        t0 = time.perf_counter()
        e = placement_estimate(alg, model, **kw)
        dt = time.perf_counter() - t0
        name = f"{alg} {model} " + " ".join(f"{k}={v}" for k, v in kw.items())
        print(
            f"{name[:58]:58s} {e.iteration_time_lower_bound_s:8.2f}s {e.iteration_time_s:9.2f}s "
            f"{e.iteration_time_s / e.iteration_time_lower_bound_s:6.2f} "
            f"{e.tokens_per_s_per_gpu:10.0f} {e.mfu:6.1%} {dt:7.2f}"
        )
        for p in e.phases:
            print(f"    {p.name:20s} {p.time_lower_bound_s:8.2f}s {p.time_s:9.2f}s")
    t0 = time.perf_counter()
    v = validate("nemo_rl_v0.4")
    dt = time.perf_counter() - t0
    print("\npublished RL step times (NeMo RL v0.4 performance table)")
    print(f"{'row':36s} {'published':>10s} {'predicted':>10s} {'error':>8s} {'bound':>9s}")
    for r in v.rl_rows:
        print(f"{r.id:36s} {r.published_s:9.1f}s {r.predicted_s:9.1f}s {r.error:+8.1%} "
              f"{r.lower_bound_s:8.1f}s")  # fmt: skip
        print("    " + ", ".join(f"{k} {s:.1f}s" for k, s in r.phases.items()))
    print(f"({len(v.rl_rows)} rows in {dt:.2f} s)")


if __name__ == "__main__":
    main()
