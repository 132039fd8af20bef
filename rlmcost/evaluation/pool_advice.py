"""Advice on a Megatron engine's KV pool (``--engine megatron --kv-buffer-gib``), as
:mod:`rlmcost.evaluation.advice` gives it on vLLM's reservation: the largest pool that still
fits, the changes of the pool that make a deployment fit, and the longest response one
sequence's KV cache finds room for in the pool.

Megatron-core allocates ``buffer_size_gb`` whatever the device holds
(:mod:`rlmcost.deployment.megatron_engine`); under ``--no-sleep`` (NeMo RL's
``kv_cache_management_mode: persist``) the pool stays on the GPU while the trainer runs, so a
trainer that no longer fits beside it fits beside a smaller pool, or with the pool in host
memory while it trains (``--sleep``, the ``offload`` mode). A phase that holds the pool ``P``
beside the rest of its device view ``R`` (the other terms and their overhead: the pool, like
vLLM's reservation, takes no allocator slack, :func:`rlmcost.deployment.terms.overhead_bytes`
of the rest) fits when R + P <= capacity, so P <= capacity - R; each answer is then checked by
evaluating it. The pool admits one sequence while it holds the
sequence's KV blocks (:func:`rlmcost.deployment.terms.engine_slots`): whole blocks of
``block_size_tokens`` per device, the sequence split over the engine layout's CP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlmcost.deployment.kinds import EngineKind

POOL_STEP_GIB = 0.25
"""The grain of a suggested ``--kv-buffer-gib`` (GiB): what the advice rounds down to."""


def _pool_gib(dep: Any) -> float:
    from rlmcost.deployment.megatron_engine import MEGATRON_KV_BUFFER_GIB

    given = dep.engine.kv_buffer_gib
    return MEGATRON_KV_BUFFER_GIB if given is None else float(given)


def megatron(estimate: Any) -> bool:
    """Whether ``estimate`` generates on a Megatron engine it evaluated (not the ideal run)."""
    dep = estimate.deployment
    return (dep.engine.kind is EngineKind.MEGATRON and not dep.ideal
            and getattr(estimate, "evaluation", None) is not None)  # fmt: skip


def pool_limit_bytes(estimate: Any) -> int | None:
    """The largest KV pool per GPU every phase that holds it still fits beside (module
    docstring), from ``estimate``'s jobs; None when no phase holds it."""
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.deployment.megatron_engine import kv_buffer_bytes

    pool = kv_buffer_bytes(estimate.deployment.engine.kv_buffer_gib)
    limits = []
    for g in estimate.evaluation.groups:
        if not any(j.task.kind is Kind.GENERATE for j in g.jobs):
            continue
        for j in g.jobs:
            m = j.memory
            held = m.kv_cache if j.task.kind is Kind.GENERATE else m.engine
            if held == pool:  # else the pool is not on the GPU in this phase (--sleep)
                limits.append(g.hbm_bytes - (m.total - pool))
    return min(limits) if limits else None


def _grain(nbytes: int) -> float:
    """``nbytes`` in GiB, down to :data:`POOL_STEP_GIB`."""
    return int(nbytes / 2**30 / POOL_STEP_GIB) * POOL_STEP_GIB


def largest_pool_gib(run: Callable[..., Any], estimate: Any, tries: int = 4) -> float | None:
    """The largest ``--kv-buffer-gib`` (down to :data:`POOL_STEP_GIB`) at which ``estimate``
    still fits, at least its own pool: :func:`pool_limit_bytes`, checked by evaluating it
    with ``run`` (a step lower on each of ``tries`` failures); None where ``estimate`` does
    not fit, runs no Megatron engine, or no phase holds its pool beside another."""
    if not megatron(estimate) or not estimate.fits:
        return None
    limit = pool_limit_bytes(estimate)
    if limit is None:
        return None
    own = _pool_gib(estimate.deployment)
    gib = max(own, _grain(limit))
    for _ in range(tries):
        if gib <= own or _fits(run, estimate, gib):
            return max(gib, own)
        gib -= POOL_STEP_GIB
    return own


def _fits(run: Callable[..., Any], estimate: Any, gib: float) -> bool:
    from rlmcost.errors import SpecError

    dep = estimate.deployment
    engine = dep.engine.model_copy(update={"kv_buffer_gib": gib})
    try:
        return bool(run(layout=estimate.layout,
                        deployment=dep.model_copy(update={"engine": engine})).fits)
    except SpecError:
        return False


def pool_changes(estimate: Any) -> list[tuple[str, Any, Any]]:
    """The (flags, layout, deployment) changes of a Megatron engine's pool that may make
    ``estimate`` fit, for :func:`rlmcost.evaluation.advice.suggestions` to evaluate: the pool
    shrunk to what the phases beside it leave (:func:`pool_limit_bytes`), and, where it stays
    on the GPU while the trainer runs, ``--sleep`` (to host memory and back)."""
    if not megatron(estimate):
        return []
    dep, out = estimate.deployment, []
    limit = pool_limit_bytes(estimate)
    if limit is not None and 0 < _grain(limit) < _pool_gib(dep):
        gib = _grain(limit)
        engine = dep.engine.model_copy(update={"kv_buffer_gib": gib})
        out.append((f"--kv-buffer-gib {gib:g}", estimate.layout,
                    dep.model_copy(update={"engine": engine})))  # fmt: skip
    from rlmcost.evaluation.engine_advice import beside_others

    if not dep.engine.sleep and beside_others(estimate):
        engine = dep.engine.model_copy(update={"sleep": True})
        out.append(("--sleep", estimate.layout, dep.model_copy(update={"engine": engine})))
    return out


def pool_response_len(estimate: Any) -> tuple[int, float] | None:
    """The longest response whose sequence (prompt + response) the Megatron engine's pool
    admits, and the pool in GiB: whole KV blocks of one sequence per device in the pool
    (:func:`~rlmcost.deployment.terms.engine_slots` >= 1), the KV bytes per token of the
    actor's generation layout at the current length; None without a Megatron engine."""
    from rlmcost.algorithms.kinds import Kind, Role
    from rlmcost.deployment.megatron_engine import kv_buffer_bytes
    from rlmcost.deployment.terms import engine_slots, pool_tokens

    if not megatron(estimate):
        return None
    dep, w = estimate.deployment, estimate.workload
    job = next((j for g in estimate.evaluation.groups for j in g.jobs
                if j.task.kind is Kind.GENERATE and j.task.role is Role.ACTOR), None)  # fmt: skip
    if job is None:
        return None
    pool, block, cp = kv_buffer_bytes(dep.engine.kv_buffer_gib), dep.engine.kv_block_tokens, \
        job.layout.cp  # fmt: skip

    def kv(tokens: int) -> int:  # one sequence's KV bytes per device at ``tokens`` (all CP)
        return _kv_one(estimate, job, tokens)

    seq = w.prompt_len + w.response_len
    per = -(-seq // cp)
    admitted = pool_tokens(pool, kv(seq), per, block) * cp
    while admitted > w.prompt_len and not engine_slots(pool, kv(admitted), -(-admitted // cp),
                                                       block, 1, 1):  # fmt: skip
        admitted -= block * cp  # a sliding window or a fixed state: not linear in tokens
    return max(0, admitted - w.prompt_len), pool / 2**30


def _kv_one(estimate: Any, job: Any, tokens: int) -> int:
    """One sequence's KV cache of ``tokens`` (its CP share) per device in ``job``'s layout, as
    the evaluation sizes it (``placement/group_jobs.py``: ``memory_per_rank`` of the
    generation layout at PP 1, one sequence per replica, the engine's cache dtypes)."""
    from rlmcost.algorithms.kinds import Role
    from rlmcost.compiled.memory import memory_per_rank
    from rlmcost.deployment.engine_kv import read_workload
    from rlmcost.parallel.breakdown import Mode

    arch = estimate.evaluation.specs[Role.ACTOR].arch()
    wl = read_workload(estimate.deployment.engine.kind, arch, estimate.workload, False)
    layout = job.layout.one_stage()
    return int(memory_per_rank(arch, layout, Mode.GENERATE, layout.dp, tokens, wl).kv_cache)
