"""Speed of the step-time model: `rlmcost validate` and a layout sweep (prints figures).

Run: PYTHONPATH=$PWD python benchmarks/bench_perf.py
"""

from __future__ import annotations

import time


def main() -> None:
    t0 = time.perf_counter()
    from rlmcost.parallel.layout import Layout
    from rlmcost.perf.train_step import train_step_time
    from rlmcost.perf.validate import validate
    from rlmcost.specs import get_hardware, get_model

    t1 = time.perf_counter()
    result = validate()
    t2 = time.perf_counter()
    print(f"import: {t1 - t0:.2f} s; validate ({len(result.rows)} rows): {t2 - t1:.2f} s")

    arch, hw = get_model("llama-3.1-70b").arch(), get_hardware("h100-sxm")
    layouts = [
        Layout(dp=512 // (tp * pp), tp=tp, pp=pp, sp=tp > 1, micro_batch=mb)
        for tp in (1, 2, 4, 8)
        for pp in (1, 2, 4, 8, 16)
        for mb in (1, 2, 4)
    ]
    t3 = time.perf_counter()
    steps = [(train_step_time(arch, lay, 1024, 4096, hw).step_s, lay) for lay in layouts]
    t4 = time.perf_counter()
    best = min(steps, key=lambda x: x[0])
    print(
        f"sweep: {len(layouts)} layouts of llama-3.1-70b on 512 x h100 in {t4 - t3:.2f} s "
        f"({1e3 * (t4 - t3) / len(layouts):.1f} ms each); fastest {best[0]:.2f} s/step: "
        f"tp={best[1].tp} pp={best[1].pp} dp={best[1].dp} mb={best[1].micro_batch}"
    )


if __name__ == "__main__":
    main()
