"""Answers, not just verdicts: knobs that make a deployment fit, and how far one that fits goes.

Every suggestion is checked by evaluating the changed deployment (never a flag that does not
exist: each carries the exact command-line flags that reproduce it), and the limits of a
fitting deployment (the longest response, the engine fractions) are found by evaluating too.
The caller passes ``run``: the same query as a function of changed keyword arguments (the
arguments of :func:`rlmcost.reports.estimate.estimate`), so this module knows nothing of the
CLI and the evaluation stays the one of :mod:`rlmcost.evaluation.deployment`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlmcost.deployment.spec import Deployment, Offload
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage

Run = Callable[..., Any]  # keyword changes -> an Estimate


@dataclass(frozen=True)
class Suggestion:
    """A change that makes the deployment fit: its flags and the peak memory it leaves."""

    flags: str
    peak_bytes_per_device: int
    time_lower_bound_s: float

    def to_json(self) -> dict[str, Any]:
        return {
            "flags": self.flags,
            "peak_bytes_per_device": self.peak_bytes_per_device,
            "time_lower_bound_s": self.time_lower_bound_s,
        }


def _candidates(layout: Layout, dep: Deployment, gpus_per_node: int, binding: str) -> list:
    """(flags, layout, deployment) changes worth trying, cheapest first."""
    out: list[tuple[str, Layout, Deployment]] = []
    train = dep.train

    def with_train(**changes: Any) -> Deployment:
        return dep.model_copy(update={"train": train.model_copy(update=changes)})

    if layout.zero is not ZeroStage.OS_G_P and layout.dp > 1:
        z3 = layout.with_(zero=ZeroStage.OS_G_P)
        out.append(("--zero 3", z3, with_train(zero=ZeroStage.OS_G_P)))
    if Offload.OPTIMIZER not in train.offload and not dep.ideal:
        off = (*train.offload, Offload.OPTIMIZER)
        out.append(("--offload " + ",".join(off), layout, with_train(offload=off)))
        if layout.zero is ZeroStage.OS_G_P and Offload.PARAMS not in off:
            both = (*off, Offload.PARAMS)
            out.append(("--offload " + ",".join(both), layout, with_train(offload=both)))
    if layout.ckpt is not Checkpointing.FULL:
        out.append(
            ("--ckpt full", layout.with_(ckpt=Checkpointing.FULL),
             with_train(ckpt=Checkpointing.FULL))
        )  # fmt: skip
    if layout.micro_batch > 1:
        out.append(("--micro-batch 1", layout.with_(micro_batch=1), with_train(micro_batch=1)))
    if not dep.ideal and dep.logits.value == "materialized" and binding == "logits":
        out.append(("--logits fused", layout, dep.model_copy(update={"logits": "fused"})))
    if not dep.offload_idle:
        out.append(("--offload-idle", layout, dep.model_copy(update={"offload_idle": True})))
    tp = layout.tp * 2
    if tp <= gpus_per_node and layout.dp % 2 == 0:
        out.append((f"--tp {tp}", layout.with_(tp=tp, dp=layout.dp // 2), with_train(tp=tp)))
    return out


def suggestions(run: Run, estimate: Any, limit: int = 4) -> list[Suggestion]:
    """Up to ``limit`` single changes (and the two-step combination of the first two) that
    make ``estimate`` fit, each evaluated with ``run``."""
    layout: Layout = estimate.layout
    dep: Deployment = estimate.deployment
    worst = max(estimate.stages.values(), key=lambda s: s.shortfall_bytes)
    found: list[Suggestion] = []
    tried: list[tuple[str, Layout, Deployment]] = []
    for flags, lay, d in _candidates(layout, dep, estimate.hardware.gpus_per_node,
                                     worst.binding_term):  # fmt: skip
        result = _try(run, lay, d)
        tried.append((flags, lay, d))
        if result is not None and result.fits:
            found.append(_suggestion(flags, result))
        if len(found) >= limit:
            return found
    if not found and len(tried) >= 2:  # everything at once: the strongest combination
        lay, d = layout, dep
        flags = []
        for f, candidate_layout, candidate in tried:
            if f.startswith("--tp"):
                continue
            lay = _merge_layout(lay, candidate_layout)
            d = _merge(d, candidate)
            flags.append(f)
        result = _try(run, lay, d)
        if result is not None and result.fits:
            found.append(_suggestion(" ".join(flags), result))
    return found


def _merge_layout(a: Layout, b: Layout) -> Layout:
    return a.with_(
        zero=max(a.zero, b.zero, key=lambda z: int(z.value)),
        ckpt=b.ckpt if b.ckpt is Checkpointing.FULL else a.ckpt,
        micro_batch=min(a.micro_batch, b.micro_batch),
    )


def _merge(a: Deployment, b: Deployment) -> Deployment:
    train = a.train.model_copy(
        update={
            "zero": max(a.train.zero, b.train.zero, key=lambda z: int(z.value)),
            "offload": tuple(dict.fromkeys((*a.train.offload, *b.train.offload))),
            "ckpt": b.train.ckpt if b.train.ckpt is Checkpointing.FULL else a.train.ckpt,
            "micro_batch": min(a.train.micro_batch, b.train.micro_batch),
        }
    )
    return a.model_copy(
        update={
            "train": train,
            "offload_idle": a.offload_idle or b.offload_idle,
            "logits": b.logits if b.logits.value == "fused" else a.logits,
        }
    )


def _try(run: Run, layout: Layout, deployment: Deployment) -> Any:
    try:
        return run(layout=layout, deployment=deployment)
    except SpecError:
        return None


def _suggestion(flags: str, result: Any) -> Suggestion:
    peak = max(s.memory_bytes_per_device for s in result.stages.values())
    return Suggestion(flags, peak, result.time_lower_bound_s)


DEFAULT_CONTEXT_CAP = 131_072
"""The longest context searched when a model states none (tokens)."""


def max_response_len(
    run: Run, estimate: Any, granularity: int = 256, cap: int | None = None
) -> int:
    """The longest response (a multiple of ``granularity`` tokens, at most ``cap``: by default
    what the actor's trained context leaves after the prompt) at which the deployment still
    fits, found by doubling then bisection over evaluations (about 2 log2(cap / T) of them);
    the current length when it does not fit."""
    current = estimate.workload.response_len
    if not estimate.fits:
        return current
    if cap is None:
        from rlmcost.specs import get_model

        context = get_model(estimate.model).max_context or DEFAULT_CONTEXT_CAP
        cap = max(current, context - estimate.workload.prompt_len)

    def fits(t: int) -> bool:
        try:
            return bool(run(response_len=t).fits)
        except SpecError:
            return False

    lo = current
    hi = max(granularity, current) * 2
    while hi <= cap and fits(hi):
        lo, hi = hi, hi * 2
    if hi > cap:
        return lo
    while hi - lo > granularity:
        mid = (lo + hi) // 2 // granularity * granularity
        if mid <= lo:
            break
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
