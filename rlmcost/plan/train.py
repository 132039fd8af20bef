"""`rlmcost plan train`: the intra-model layout search for pre-training or SFT.

Every valid layout of the space (:mod:`rlmcost.plan.space`: TP, PP, DP filling the GPUs, CP,
EP, SP, ZeRO stage, checkpointing, micro-batch, interleaving) for every GPU count of the
budget goes through the compiled training-step sweep (:func:`rlmcost.compiled.
sweep_train_steps`: memory per device of the peak stage, fit, roofline time bound) at once.
The fitting candidates are ordered by the objective on the roofline bound; the best ``refine``
of each GPU count are then evaluated exactly by `rlmcost train`'s own function
(:func:`rlmcost.reports.train.train_report`: exact memory, predicted step time with
communication, bubbles and the optimizer) and ranked by the objective on the prediction. Each
row carries the `rlmcost train` command that reproduces it. A Ctrl-C (KeyboardInterrupt)
during the exact evaluations ends the search with the rows evaluated so far, a note and
``PlanResult.interrupted`` set; one during the sweep ends it with nothing to show.
"""

from __future__ import annotations

import time
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, PipelineSchedule, ZeroStage
from rlmcost.plan.distributed import Compute, chunks
from rlmcost.plan.kinds import (
    Objective,
    parse_gpus,
    parse_objective,
    positive_int,
    require_train_space,
)
from rlmcost.plan.search import Counts, PlanResult, gpu_hours, pareto, rank
from rlmcost.plan.space import TrainCandidates, TrainSpace, train_candidates

SEQUENCES_PER_GPU = 8
"""Default global batch: 8 sequences per GPU of the largest count (stated in the notes)."""

_TERMS = ("weights", "gradients", "optimizer", "activations", "logits", "buffers")


def plan_train(
    model: str,
    gpus: str | int | list[int] = 64,
    *,
    hardware: str = "h100-sxm",
    seq: int = 2048,
    batch: int | None = None,
    objective: str | Objective = Objective.TIME,
    top: int = 10,
    refine: int | None = None,
    space: dict[str, Any] | None = None,
    compute: Compute | None = None,
) -> PlanResult:
    """The best training layouts of ``model`` on ``gpus`` (module docstring).

    ``space``: overrides of :class:`~rlmcost.plan.space.TrainSpace` fields (``tp``, ``pp``,
    ``cp``, ``ep``, ``micro_batch``, ``ckpt``, ``zero``, ``sp``, ``virtual_stages``: tuples
    of values). ``refine``: candidates per GPU count evaluated exactly (default max(10 top, 100)).
    ``compute``: where the evaluations run (:class:`~rlmcost.plan.distributed.Compute`: this
    process by default, or Dask).
    """
    import numpy as np

    from rlmcost.compiled import arch_numbers
    from rlmcost.specs import get_hardware, get_model
    from rlmcost.specs.registry import is_path

    start = time.perf_counter()
    obj = parse_objective(objective)
    if obj is Objective.COST:
        raise SpecError("--objective cost: `plan train` prices no rows (one accelerator: "
                        "cost ranks as --objective gpu-hours); cost is for the RL plans")
    counts_gpus = parse_gpus(gpus)
    top, seq = positive_int(top, "top"), positive_int(seq, "seq")
    spec = get_model(model)
    hw = get_hardware(hardware)
    a = arch_numbers(spec)
    notes: list[str] = []
    if batch is None:
        batch = SEQUENCES_PER_GPU * max(counts_gpus)
        notes.append(f"batch defaulted to {batch} sequences ({SEQUENCES_PER_GPU} per GPU)")
    batch = positive_int(batch, "batch")
    sp = TrainSpace(gpus=counts_gpus, **require_train_space(space))
    cands = train_candidates(a, sp, batch, seq, hw.gpus_per_node)
    counts = Counts(enumerated=cands.enumerated, valid=cands.size)
    if cands.size == 0:
        raise SpecError(
            f"no valid layout of {spec.name} on {_budget(counts_gpus)} GPU(s) with batch "
            f"{batch}: tp*pp*cp must divide the GPUs and dp*micro_batch the batch; try "
            f"--gpus {hw.gpus_per_node}..{max(8 * hw.gpus_per_node, max(counts_gpus))} or a "
            f"--batch that is a multiple of {max(counts_gpus)}"
        )
    compute = compute or Compute()
    with compute.runner() as run:
        parts = chunks(cands.size, _parts(run, cands.size))
        jobs = [(a, hw, batch, seq, cands.take(s)) for s in parts]
        swept = run.map(sweep_chunk, jobs, compute.progress)
        fits = np.concatenate([s["fits"] for s in swept])
        bound = np.concatenate([s["bound"] for s in swept])
        memory = np.concatenate([s["memory"] for s in swept])
        terms = {k: np.concatenate([s[k] for s in swept]) for k in _TERMS}
        sweep_s = time.perf_counter() - start
        counts.pruned = int((~fits).sum())
        failures = _failures(cands, fits, memory, terms, hw.hbm_capacity_bytes)
        chosen = _preselect(cands, fits, bound, obj, batch * seq, refine or max(10 * top, 100))
        # a config.json keeps its path (its name resolves to no built-in model)
        label = model if isinstance(model, str) and is_path(model) else spec.name
        query = {"model": label, "hardware": hw.name, "batch": batch, "seq": seq}
        resolved = {**query, "spec": spec}  # the rows evaluate the spec, not the name again
        items = [(resolved, cands.layout(int(i)), int(cands.gpus[i]), float(bound[i]))
                 for i in chosen]  # fmt: skip
        rows, interrupted = run.map_until_interrupted(report_row, items, compute.progress)
        name = run.name
    if interrupted:
        notes.append(f"the search was interrupted (Ctrl-C) after {len(rows)} of {len(items)} "
                     "exact evaluations: the rows are the best found so far")  # fmt: skip
    counts.evaluated = len(rows)
    rows = [r for r in rows if r["fits"]]
    counts.fitting = int(fits.sum())
    ranked = rank(rows, obj)
    notes.append(
        f"{counts.valid} valid of {counts.enumerated} enumerated layouts swept in "
        f"{sweep_s:.3f} s ({counts.valid / max(sweep_s, 1e-9):,.0f} candidates/s); "
        f"{counts.fitting} fit; the best {refine or max(10 * top, 100)} per GPU count by the "
        f"roofline bound evaluated exactly ({counts.evaluated})"
    )
    return PlanResult(
        query={**query, "gpus": list(counts_gpus), "kind": "train"},
        objective=obj,
        rows=ranked[:top],
        front=pareto(ranked),
        counts=counts,
        seconds=time.perf_counter() - start,
        failures=failures,
        notes=notes,
        runner=name,
        interrupted=interrupted,
    )


def _budget(counts: tuple[int, ...]) -> str:
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}..{counts[-1]}"


def _parts(run: Any, n: int) -> int:
    """Chunks of the sweep: one in this process; a few per Dask worker."""
    workers = len(run.client.scheduler_info()["workers"]) if hasattr(
        run, "client") else 0  # fmt: skip
    return 1 if not workers else min(4 * workers, max(1, n // 10_000))


def sweep_chunk(job: tuple[Any, Any, int, int, TrainCandidates]) -> dict[str, Any]:
    """The compiled sweep of one chunk of candidates: fit, roofline bound, memory and its
    terms per candidate (a module-level function, so Dask can ship it)."""
    from rlmcost.compiled import sweep_train_steps

    a, hw, batch, seq, c = job
    s = sweep_train_steps(
        a, hw, sequences=batch, seq_len=seq, dp=c.dp, tp=c.tp, pp=c.pp, cp=c.cp, ep=c.ep,
        sp=c.sp, zero=c.zero, ckpt=c.ckpt, micro_batch=c.micro_batch, schedule=c.schedule,
        virtual_stages=c.virtual_stages,
    )  # fmt: skip
    out = {"fits": s.fits, "bound": s.time_bound_s, "memory": s.memory_bytes}
    out.update({k: getattr(s, k) for k in _TERMS})
    return out


def _preselect(c: TrainCandidates, fits: Any, bound: Any, obj: Objective, tokens: int,
               per_count: int) -> list[int]:  # fmt: skip
    """Indices of the best ``per_count`` fitting candidates of each GPU count by the
    objective evaluated on the roofline bound."""
    import numpy as np

    score = {
        Objective.TIME: bound,
        Objective.GPUS: bound,  # within one count: fastest
        Objective.GPU_HOURS: bound * c.gpus,
        Objective.THROUGHPUT: -tokens / (bound * c.gpus),
    }[obj]
    chosen: list[int] = []
    for g in np.unique(c.gpus):
        idx = np.flatnonzero(fits & (c.gpus == g))
        order = idx[np.argsort(score[idx], kind="stable")]
        chosen.extend(int(i) for i in order[:per_count])
    return chosen


def report_row(item: tuple[dict[str, Any], Any, int, float]) -> dict[str, Any]:
    """One candidate evaluated exactly by :func:`rlmcost.reports.train.train_report` (what
    `rlmcost train` prints), as a plan row with its command line."""
    from rlmcost.reports.train import train_report

    query, layout, gpus, bound = item
    r = train_report(query.get("spec", query["model"]), layout, query["hardware"], gpus,
                     query["seq"], query["batch"])  # fmt: skip
    step_s = r.step.step_s
    tokens = query["batch"] * query["seq"]
    return {
        "gpus": gpus,
        "dp": layout.dp, "tp": layout.tp, "pp": layout.pp, "cp": layout.cp, "ep": layout.ep,
        "sp": layout.sp, "zero": str(layout.zero), "ckpt": str(layout.ckpt),
        "micro_batch": layout.micro_batch, "schedule": str(layout.schedule),
        "virtual_stages": layout.virtual_stages,
        "memory_bytes_per_device": r.memory.total,
        "fits": r.fits,
        "time_s": step_s,
        "time_lower_bound_s": bound,
        "tokens_per_s_per_gpu": tokens / (step_s * gpus),
        "mfu": r.step.mfu,
        "gpu_hours": gpu_hours(step_s, gpus),
        "command": train_command(query, layout, gpus),
    }  # fmt: skip


def train_command(query: dict[str, Any], layout: Any, gpus: int) -> str:
    """The `rlmcost train` command line of one layout."""
    parts = [
        "rlmcost train", f"--model {query['model']}", f"--hardware {query['hardware']}",
        f"--gpus {gpus}", f"--tp {layout.tp}", f"--pp {layout.pp}", f"--cp {layout.cp}",
        f"--ep {layout.ep}", f"--zero {layout.zero}", f"--ckpt {layout.ckpt}",
        f"--micro-batch {layout.micro_batch}", f"--batch {query['batch']}",
        f"--seq {query['seq']}",
    ]  # fmt: skip
    if layout.sp:
        parts.append("--sp")
    if layout.schedule is not PipelineSchedule.ONE_F_ONE_B or layout.virtual_stages > 1:
        parts += [f"--schedule {layout.schedule}", f"--virtual-stages {layout.virtual_stages}"]
    return " ".join(parts)


def _failures(c: TrainCandidates, fits: Any, memory: Any, terms: dict[str, Any],
              hbm: int) -> list[dict[str, Any]]:  # fmt: skip
    """For each (GPUs, tp, pp) family with no fitting candidate: its leanest candidate's peak
    memory and the largest term of it (the binding term)."""
    import numpy as np

    out = []
    fam = np.stack([c.gpus, c.tp, c.pp], axis=1)
    keys, inverse = np.unique(fam, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for k, key in enumerate(keys):
        idx = np.flatnonzero(inverse == k)
        if fits[idx].any():
            continue
        i = int(idx[np.argmin(memory[idx])])
        term = max(_TERMS, key=lambda t: terms[t][i])
        out.append({
            "family": f"gpus={key[0]} tp={key[1]} pp={key[2]}",
            "least_memory_bytes_per_device": float(memory[i]),
            "hbm_bytes": hbm,
            "binding_term": term,
            "binding_term_bytes": float(terms[term][i]),
            "leanest": (f"zero={list(ZeroStage)[int(c.zero[i])]} "
                        f"ckpt={list(Checkpointing)[int(c.ckpt[i])]} mb={int(c.micro_batch[i])}"),
        })  # fmt: skip
    return out
