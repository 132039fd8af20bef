"""Where the llm-foundry H100 rows' over-prediction sits: the whole H100 and A100 tables.

``rlmcost validate`` carries 13 rows of llm-foundry's 'H100 80GB BF16' table and 7 of its
'A100 80GB' table (``published.json``, sources ``llm_foundry_h100`` / ``llm_foundry_a100``). This
script predicts every BF16 row of both tables (all 128, MPT-125M to MPT-70B) the same way (the
row template of ``llm-foundry-{h100,a100-80gb}-mpt-1b-s2048-8gpu``: Composer FSDP1 FULL_SHARD,
FlashAttention in Triton of 2022, eager MPT blocks, bf16 reduce, Composer's optimizer and train
metrics; only the model, sequence, GPUs, micro-batch, global batch and checkpointing change) and
prints, for each H100 configuration that the A100 table also ran on 8 GPUs, both errors and
their difference with the predicted step's attention share. A configuration the record ran
twice (the A100 125M and 350M rows at seq 2048, micro-batch 32) enters the comparison with the
mean of its two errors. Last, it splits the H100 - A100 excess by the predicted H100 step's time
shares (least squares without intercept, each coefficient with its standard error): GEMMs of the
forward and backward, the recomputed forward (checkpointed rows; mostly GEMMs), attention, and the
rest (memory-bound kernels, optimizer, exposed communication). A cause that slows only the
forward GEMMs (PyTorch's 1 MiB cuBLASLt workspace before PR 120925, nn.Linear's bias epilogue) would
weigh on the recompute share more than twice as on the GEMM share (a third of whose time is the
forward's).
It prints; it asserts nothing.

Data: ``benchmarks/data/llm_foundry_h100new_bf16.csv``: the amp_bf16 rows of
``scripts/train/benchmarking/h100new.csv`` in mosaicml/llm-foundry at 568e61d2f (the parent of
803e67182, which deleted the file): the record behind both README tables (same throughputs; every
row's image mosaicml/pytorch:2.1.0_cu121-nightly20230827).

Run: PYTHONPATH=$PWD python benchmarks/llm_foundry_h100_gap.py
"""

from __future__ import annotations

import copy
import csv
from pathlib import Path
from typing import Any

import numpy as np

from rlmcost.errors import SpecError
from rlmcost.perf.validate import load_table, predict_row

DATA = Path(__file__).resolve().parent / "data" / "llm_foundry_h100new_bf16.csv"
TEMPLATE = {
    "h100_80gb": "llm-foundry-h100-mpt-1b-s2048-8gpu",
    "a100_80gb": "llm-foundry-a100-80gb-mpt-1b-s2048-8gpu",
}
SHAPES = {  # scripts/train/yamls/pretrain/mpt-*.yaml: n_layers, d_model, n_heads
    "125m": (12, 768, 12), "350m": (24, 1024, 16),
    "760m": (24, 1536, 12), "1b": (24, 2048, 16), "3b": (32, 2560, 20), "7b": (32, 4096, 32),
    "13b": (40, 5120, 40), "30b": (48, 7168, 64), "70b": (80, 8192, 64),
}  # fmt: skip
KINDS = ("GEMM", "recompute", "attention", "rest")


def _row(r: dict[str, str], templates: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The table row as a ``published.json`` row on its GPU's template (None: not priced)."""
    if r["Model"] not in SHAPES or r["GPU"] not in TEMPLATE:
        return None
    row = copy.deepcopy(templates[TEMPLATE[r["GPU"]]])
    layers, hidden, heads = SHAPES[r["Model"]]
    seq, gpus, mb = int(r["SeqLen (T)"]), int(r["# GPUs"]), int(r["MicroBatchSize"])
    ckpt = r["Activation Checkpointing"].lower() == "true"
    row["model"] = {"layers": layers, "hidden": hidden, "heads": heads, "vocab": 50368,
                    "seq": seq}  # fmt: skip
    row["layout"].update(dp=gpus, micro_batch=mb, ckpt="full" if ckpt else "none")
    row["batch"] = int(r["GlobalBatchSize"])
    row["published"] = float(r["Throughput (T/s/GPU)"])
    row["id"] = f"{r['Model']} s{seq} {gpus}g mb{mb} {'ckpt' if ckpt else 'no-ckpt'}"
    return row


def main() -> None:
    templates = {r["id"]: r for r in load_table()["rows"]}
    runs: dict[tuple[str, str], list[tuple[float, tuple[float, ...]]]] = {}  # -> (error, shares)
    with DATA.open() as f:
        for r in csv.DictReader(f):
            row = _row(r, templates)
            if row is None:
                print(f"{r['GPU']} {r['Model']}: not priced (no shape or template)")
                continue
            try:
                p = predict_row(row)
            except SpecError as e:  # a configuration rlmcost calls out of memory or invalid
                print(f"{r['GPU']} {row['id']}: not predicted ({e})")
                continue
            runs.setdefault((r["GPU"], row["id"]), []).append((p.error, _shares(p.step)))
    errors = {k: (sum(e for e, _ in v) / len(v), v[0][1]) for k, v in runs.items()}
    print(f"{'configuration':28s} {'H100':>7s} {'A100':>7s} {'excess':>7s} {'attn':>5s}")
    pairs, shares = [], []
    for (gpu, key), (err, share) in sorted(errors.items()):
        if gpu != "h100_80gb":
            continue
        a100 = errors.get(("a100_80gb", key))
        attn = share[KINDS.index("attention")]
        if a100 is None:
            print(f"{key:28s} {err:+7.1%} {'':>7s} {'':>7s} {attn:5.0%}")
            continue
        pairs.append((attn, err - a100[0]))
        shares.append(share)
        print(f"{key:28s} {err:+7.1%} {a100[0]:+7.1%} {err - a100[0]:+7.1%} {attn:5.0%}")
    for gpu in TEMPLATE:
        e = [err for (g, _), v in runs.items() if g == gpu for err, _ in v]
        print(f"{gpu}: {len(e)} rows, mean error {sum(e) / len(e):+.1%}, "
              f"mean |error| {sum(map(abs, e)) / len(e):.1%}")  # fmt: skip
    if len(pairs) > 1:  # least squares: excess = a + b x attention share
        n = len(pairs)
        mx, my = sum(x for x, _ in pairs) / n, sum(y for _, y in pairs) / n
        b = sum((x - mx) * (y - my) for x, y in pairs) / sum((x - mx) ** 2 for x, _ in pairs)
        print(
            f"H100 - A100 error over {n} configurations: {my:+.1%} mean; {my - b * mx:+.1%} "
            f"at no attention, {my + b * (1 - mx):+.1%} at all attention (least squares)"
        )
    if len(pairs) > len(KINDS):
        coef, se, rms = by_share(np.array(shares), np.array([y for _, y in pairs]))
        terms = ", ".join(
            f"{k} {c:+.1%} +- {e:.1%}" for k, c, e in zip(KINDS, coef, se, strict=True)
        )
        print(f"H100 - A100 error per unit of the H100 step's time share: {terms} (rms {rms:.1%})")


def _shares(step: Any) -> tuple[float, ...]:
    """The predicted step's time shares of :data:`KINDS` (the rest: 1 - the others)."""
    c = step.compute_s
    parts = [c.get(k, 0.0) / step.step_s for k in ("gemm", "recompute", "attention")]
    return (*parts, 1.0 - sum(parts))


def by_share(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Least squares ``y = x c`` (no intercept): the coefficients, their standard errors and the
    rms residual."""
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    dof = len(y) - x.shape[1]
    se = np.sqrt(np.diag(resid @ resid / dof * np.linalg.inv(x.T @ x)))
    return coef, se, float(np.sqrt(resid @ resid / len(y)))


if __name__ == "__main__":
    main()
