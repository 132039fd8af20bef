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
from typing import Any

from rlmcost.deployment.given import forwards_given, layered
from rlmcost.deployment.kinds import EngineKind, LogitsMode, Offload
from rlmcost.deployment.spec import Deployment
from rlmcost.evaluation.advice_search import _fitting, combined, degree_changes
from rlmcost.frameworks.buffers import OVER_BUDGET_REFUSED
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage

Run = Callable[..., Any]  # keyword changes -> an Estimate


@dataclass(frozen=True)
class Suggestion:
    """A change that makes the deployment fit: its flags, the peak memory it leaves, and the
    framework's own switches for its engine changes (``framework_flags``, with their source:
    :func:`rlmcost.evaluation.engine_advice.framework_switches`; empty where none)."""

    flags: str
    peak_bytes_per_device: int
    time_lower_bound_s: float
    framework_flags: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "flags": self.flags,
            "peak_bytes_per_device": self.peak_bytes_per_device,
            "time_lower_bound_s": self.time_lower_bound_s,
            "framework_flags": self.framework_flags,
        }


def _candidates(layout: Layout, dep: Deployment, gpus_per_node: int, binding: str,
                widths: tuple[int, ...] = ()) -> list:  # fmt: skip
    """(flags, layout, deployment) changes worth trying, cheapest first. Each names a flag
    whose value differs from the one in effect (``--offload`` gives its whole new list: the
    kinds already offloaded plus the new one); the degrees last, each one the model's
    ``widths`` take (:func:`~rlmcost.evaluation.advice_search.degree_changes`)."""
    out: list[tuple[str, Layout, Deployment]] = []
    train = dep.train

    def with_train(**changes: Any) -> Deployment:
        return dep.model_copy(update={"train": train.model_copy(update=changes)})

    megatron = EngineKind.MEGATRON in (dep.engine.kind, *(g.engine.kind for g in dep.groups
                                                          if g.engine is not None))  # fmt: skip
    if layout.zero is not ZeroStage.OS_G_P and layout.dp > 1 and not megatron:
        # (a Megatron engine decodes on the Megatron policy: no ZeRO-3, megatron_engine)
        z3 = layout.with_(zero=ZeroStage.OS_G_P)
        out.append(("--zero 3", z3, with_train(zero=ZeroStage.OS_G_P)))
    if not dep.ideal:
        kinds = [Offload.OPTIMIZER]
        if layout.zero is ZeroStage.OS_G_P:  # parameters offload with sharded states (ZeRO-3)
            kinds.append(Offload.PARAMS)
        off = train.offload
        for kind in kinds:
            if kind in off:
                continue
            off = (*off, kind)
            out.append(("--offload " + ",".join(off), layout, with_train(offload=off)))
    if layout.ckpt is not Checkpointing.FULL:
        out.append(
            ("--ckpt full", layout.with_(ckpt=Checkpointing.FULL),
             with_train(ckpt=Checkpointing.FULL))
        )  # fmt: skip
    if layout.micro_batch > 1:
        out.append(("--micro-batch 1", layout.with_(micro_batch=1), with_train(micro_batch=1)))
    if not dep.ideal and dep.logits is LogitsMode.MATERIALIZED and binding == "logits":
        fused = dep.model_copy(update={"logits": LogitsMode.FUSED})
        out.append(("--logits fused", layout, fused))
    if not dep.offload_idle:
        out.append(("--offload-idle", layout, dep.model_copy(update={"offload_idle": True})))
    if not dep.ideal and dep.engine.kind in _RESERVING:
        out += _engine_tps(layout, dep, widths[:2])
    out += degree_changes(layout, dep, gpus_per_node, binding, widths)
    return out


_RESERVING = (EngineKind.VLLM, EngineKind.SGLANG)
"""Engines with a memory reservation of their own, laid out by --rollout-tp."""


def _engine_tps(layout: Layout, dep: Deployment, heads: tuple[int, ...] = ()
                ) -> list[tuple[str, Layout, Deployment]]:  # fmt: skip
    """``--rollout-tp`` at each power of two above the engine's TP up to the GPUs it runs on
    (the trainer's, co-located): a replica over more GPUs holds less of the weights per GPU,
    which leaves its reservation room for the KV cache (fewer replicas; the trainer keeps its
    GPUs). vLLM and SGLang run TP across nodes (NeMo RL's recipes: vLLM TP 16 and 32 over
    8-GPU nodes, examples/configs/recipes/llm/performance/grpo-qwen3-235b-16n8g.yaml and
    grpo-deepseek-v3-32n8g.yaml @7ea279abf), so the degrees go past one node;
    :func:`suggestions` keeps the smallest that fits. Each degree divides the query heads
    and divides or is a multiple of the KV heads (``heads``: vLLM replicates KV heads past
    their count, ``parallel.validate.check_layout``)."""
    out = []
    engine_tp = (dep.engine.tp or layout.tp) * 2
    h, kv = (*heads, 0, 0)[:2]
    while engine_tp <= layout.n_gpus:
        engine = dep.engine.model_copy(update={"tp": engine_tp})
        if not h or (h % engine_tp == 0 and (kv % engine_tp == 0 or engine_tp % kv == 0)):
            out.append((f"--rollout-tp {engine_tp}", layout,
                        dep.model_copy(update={"engine": engine})))  # fmt: skip
        engine_tp *= 2
    return out


def suggestions(run: Run, estimate: Any, limit: int = 4) -> list[Suggestion]:
    """Up to ``limit`` single changes that make ``estimate`` fit, each evaluated with ``run``
    (first a vLLM or SGLang engine's ``--sleep`` or smaller ``--gpu-memory-utilization``:
    :func:`rlmcost.evaluation.engine_advice.engine_changes`; a Megatron engine's smaller KV
    pool or ``--sleep``: :func:`rlmcost.evaluation.pool_advice.pool_changes`; of a degree
    ladder, ``--rollout-tp``, ``--cp``, ``--tp``, the smallest that fits); when none does,
    the combinations that fit
    (:func:`~rlmcost.evaluation.advice_search.combined`). A deployment whose devices hold it
    but whose hosts do not is offered less offload (:func:`host_changes`). No change names a
    flag at the value already in effect."""
    found: list[Suggestion] = []
    tried: list[tuple[str, Layout, Deployment]] = []
    for flags, lay, d in _all_candidates(estimate):
        name = flags.partition(" ")[0]
        if name in _LADDERS and any(f.flags.startswith(name + " ") for f in found):
            continue  # the smallest that fits
        result = _fitting(run, lay, d)  # in full where it fits
        if result is not None:  # a change the framework refuses is left out of combinations
            tried.append((flags, lay, d))
        if result is not None and result.fits:
            found.append(_suggestion(flags, result, estimate.deployment))
        if len(found) >= limit:
            return found
    if not found and not host_bound(estimate):
        from rlmcost.evaluation.engine_advice import reserving, sleep_offered

        sleep = sleep_offered(estimate) if reserving(estimate) else None
        found = [_suggestion(f, r, estimate.deployment) for f, r in combined(run, estimate.layout,
                                                        estimate.deployment, tried, limit, sleep)]
    return found


_LADDERS = ("--rollout-tp", "--cp", "--tp")
"""Changes tried at rising degrees, of which the advice keeps the smallest that fits."""


def _all_candidates(estimate: Any) -> list[tuple[str, Layout, Deployment]]:
    """Every change :func:`suggestions` tries on ``estimate``, in order: on a deployment over
    its hosts' memory alone, :func:`host_changes`; else the pool's and :func:`_candidates`."""
    from rlmcost.evaluation.engine_advice import engine_changes
    from rlmcost.evaluation.pool_advice import pool_changes

    if host_bound(estimate):
        return host_changes(estimate)
    worst = max(estimate.stages.values(), key=lambda s: s.shortfall_bytes)
    return [*engine_changes(estimate), *pool_changes(estimate), *_candidates(
        estimate.layout, estimate.deployment, estimate.hardware.gpus_per_node,
        worst.binding_term, _widths(estimate))]  # fmt: skip


def _widths(estimate: Any) -> tuple[int, ...]:
    """The widths the actor's training TP must divide (``parallel.validate.tp_widths``)."""
    from rlmcost.parallel.validate import tp_widths

    return tp_widths(_actor_spec(estimate).arch())


def _actor_spec(estimate: Any) -> Any:
    """The actor's resolved spec (a config.json has no registry name)."""
    from rlmcost.algorithms.kinds import Role

    ev = getattr(estimate, "evaluation", None)
    if ev is not None and Role.ACTOR in ev.specs:
        return ev.specs[Role.ACTOR]
    from rlmcost.specs import get_model

    return get_model(estimate.model)


def host_bound(estimate: Any) -> bool:
    """Whether ``estimate``'s devices hold it but a node's host does not hold its offloaded
    states (:mod:`rlmcost.placement.host_memory`): more TP or checkpointing does not help."""
    ev = getattr(estimate, "evaluation", None)
    return (ev is not None and all(s.fits for s in estimate.stages.values())
            and bool(ev.host_check.over))  # fmt: skip


def host_changes(estimate: Any) -> list[tuple[str, Layout, Deployment]]:
    """What lowers a node's host memory: each offloaded trainer state kept on the GPU instead
    (``--offload`` without it), the idle models kept on the GPU (``--no-offload-idle``), and,
    where there are two or more, all of them at once; for :func:`suggestions` to evaluate
    (the devices must then hold them). More GPUs (nodes share the states) are the planner's
    (``plan --min-gpus``, :func:`rlmcost.cli.fit_hints.host_hint`)."""
    dep: Deployment = estimate.deployment
    off = dep.train.offload

    def kept(rest: tuple[Offload, ...], idle: bool) -> Deployment:
        train = dep.train.model_copy(update={"offload": rest})
        return dep.model_copy(update={"train": train, "offload_idle": idle})

    out = [(f"--offload {','.join(rest) or repr('')}", estimate.layout,
            kept(rest, dep.offload_idle)) for rest in
           (tuple(k for k in off if k is not kind) for kind in reversed(off))]  # fmt: skip
    if dep.offload_idle:
        out.append(("--no-offload-idle", estimate.layout, kept(off, False)))
    if len(out) >= 2:
        flags = ("--offload '' " if off else "") + ("--no-offload-idle" if dep.offload_idle
                                                    else "")  # fmt: skip
        out.append((flags.strip(), estimate.layout, kept((), False)))
    return out


def tried_flags(estimate: Any) -> list[str]:
    """The flags :func:`suggestions` tries on ``estimate`` (for saying what did not help)."""
    return list(dict.fromkeys(f.partition(" ")[0] for f, _, _ in _all_candidates(estimate)))


def _suggestion(flags: str, result: Any, before: Deployment) -> Suggestion:
    from rlmcost.evaluation.engine_advice import framework_switches

    peak = max(s.memory_bytes_per_device for s in result.stages.values())
    return Suggestion(flags, peak, result.time_lower_bound_s,
                      framework_switches(flags, result.deployment, before))


DEFAULT_CONTEXT_CAP = 131_072
"""The longest context searched when a model states none (tokens)."""


@dataclass(frozen=True)
class Longest:
    """The longest response that still fits and what stopped the search there: ``memory``
    (a longer one does not fit), ``context`` (prompt + response reach the actor's trained
    context, or :data:`DEFAULT_CONTEXT_CAP` when it states none), ``past context`` (the run's
    own prompt + response, ``sequence_tokens``, are already past that context: no longer
    response is searched, the run's is the answer) or ``token budget`` (prompt + response
    reach ``--max-tokens-per-gpu`` x CP, the longest sequence a micro-batch holds)."""

    response_len: int
    stopped_by: str
    limit_tokens: int  # the sequence limit (prompt + response) of ``stopped_by``; 0 = memory
    sequence_tokens: int = 0  # the run's prompt + response (``past context``)

    def describe(self) -> str:
        """The stop in words, for the CLI."""
        if self.stopped_by == "past context":
            return (f"its prompt + response, {self.sequence_tokens:,} tokens, are already past "
                    f"the model's trained context of {self.limit_tokens:,} tokens (RoPE runs "
                    "past it, quality is not guaranteed)")  # fmt: skip
        if self.stopped_by == "context":
            return f"stopped by the model's trained context, {self.limit_tokens:,} tokens"
        if self.stopped_by == "token budget":
            return (f"stopped by the token budget: prompt + response <= {self.limit_tokens:,} "
                    "(--max-tokens-per-gpu x --cp)")  # fmt: skip
        return "stopped by memory: a longer response does not fit"


def _limits(estimate: Any) -> dict[str, int]:
    """The sequence limits (prompt + response tokens) besides memory: the actor's trained
    context, and the per-GPU token budget of dynamic batching under a framework that
    refuses a sequence longer than it per CP rank (verl ``ppo_max_token_len_per_gpu``:
    :data:`~rlmcost.frameworks.buffers.OVER_BUDGET_REFUSED`); the others run such a
    sequence alone in its micro-batch, so memory stops it."""
    from rlmcost.algorithms.kinds import Role

    ev = estimate.evaluation
    if ev is not None and Role.ACTOR in ev.specs:
        spec = ev.specs[Role.ACTOR]  # the resolved spec: a config.json has no registry name
    else:
        from rlmcost.specs import get_model

        spec = get_model(estimate.model)
    out = {"context": spec.max_context or DEFAULT_CONTEXT_CAP}
    dep: Deployment = estimate.deployment
    if not dep.ideal and (dep.framework or "") in OVER_BUDGET_REFUSED:
        # each layout's budget per CP rank: a sequence of budget x cp tokens at most
        budgets = [t.max_tokens_per_gpu * t.cp for t in _job_layouts(dep)
                   if t.max_tokens_per_gpu is not None]  # fmt: skip
        if budgets:
            out["token budget"] = min(budgets)
    return out


def _job_layouts(dep: Deployment) -> list[Any]:
    """The trainer and forward layouts ``dep``'s jobs run by: the run's, and each group's own
    over them (``deployment.given.layered``: a field a group does not give is the run's, so a
    group giving ``train: {padded: true}`` keeps the run's CP degree and budget; its forwards
    its trainer layout's where it gives no forward layout, ``given.forwards_given``)."""
    out = [dep.train, dep.forward_layout()]
    for g in dep.groups:
        forward = g.forward or (g.train and forwards_given(g.train))
        out += [layered(own, run) for own, run in ((g.train, dep.train),
                                                   (forward, dep.forward_layout())) if own]
    return out


def max_response_len(run: Run, estimate: Any, granularity: int = 256) -> Longest:
    """The longest response at which the deployment still fits, at most what the sequence
    limits (:func:`_limits`) leave after the prompt, and which limit stopped it. The limit
    itself is tried first; below it, a multiple of ``granularity`` tokens found by doubling
    then bisection over evaluations (about 2 log2(limit / T) of them). When the deployment
    does not fit, the current length, stopped by memory."""
    current = estimate.workload.response_len
    if not estimate.fits:
        return Longest(current, "memory", 0)
    prompt = estimate.workload.prompt_len
    limits = _limits(estimate)
    reason = min(limits, key=lambda k: limits[k])
    cap = limits[reason] - prompt

    def fits(t: int) -> bool:  # memory alone decides (placement.untimed)
        from rlmcost.placement.untimed import fits_at

        return fits_at(run, response_len=t)

    if cap < current and reason == "context":  # already past it: a longest beyond it is none
        return Longest(current, "past context", limits[reason], prompt + current)
    if cap <= current or fits(cap):
        return Longest(max(current, cap), reason, limits[reason])
    lo, hi = current, cap
    t = max(granularity, current) * 2
    while t < hi and fits(t):
        lo, t = t, t * 2
    hi = min(hi, t)
    while hi - lo > granularity:
        mid = (lo + hi) // 2 // granularity * granularity
        if mid <= lo:
            break
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return Longest(lo, "memory", 0)
