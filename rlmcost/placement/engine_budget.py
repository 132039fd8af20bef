"""An engine replica's reservation split into weights, workspace and KV-cache pool, per device.

vLLM (:mod:`rlmcost.deployment.vllm_profile`): the workspace is the peak of its start-up
profile run, a dummy forward of ``max_num_batched_tokens`` tokens (priced by the compiled
inference buffer, :func:`rlmcost.compiled.memory.memory_per_stage`, in the engine's layout)
or the dummy sampler's top-k/top-p over the logits beside the forward's output hidden states
(the sort of vLLM < 0.17 or its Triton kernel after, by the engine's ``vllm_version``, else
the framework's vLLM pin: :func:`~rlmcost.deployment.vllm_release.vllm_release`), whichever
is larger, plus the memory outside PyTorch
(communicators) when a replica spans GPUs. Under pipeline parallelism the sampler runs on the
last stage only; it is taken on every stage here (the most loaded stage's forward beside it),
an upper bound for the other stages. SGLang profiles nothing: its pool is
``mem_fraction_static`` x the memory free once its process group is set up, less the weights
(:mod:`rlmcost.deployment.sglang_pool`); its workspace lives in the rest of the device and
stays out of the pool. Other engines keep rlmcost's earlier workspace: one sequence's prefill
transients and sampler logits. Megatron-core
(:mod:`rlmcost.deployment.megatron_engine`) allocates a pool of ``buffer_size_gb`` whatever
else the device holds: its weights are the trainer's, its workspace beside the pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.compiled.memory import memory_per_stage
from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.megatron_engine import MEGATRON_MAX_TOKENS, kv_buffer_bytes, max_requests
from rlmcost.deployment.sglang_pool import sglang_pool_bytes, total_gpu_bytes
from rlmcost.deployment.terms import kv_pool_bytes, pool_tokens
from rlmcost.deployment.vllm_profile import (
    available_kv_bytes,
    llm_class_defaults,
    non_torch_bytes,
    profile_peak_bytes,
    sampler_rows,
    v1_sampler_bytes_per_logit,
)
from rlmcost.deployment.vllm_release import vllm_release
from rlmcost.parallel.breakdown import MemoryBreakdown, Mode
from rlmcost.placement.breakdown_ops import with_terms
from rlmcost.placement.megatron_pool import kv_terms, state_cap

__all__ = ["batched_tokens", "cap_source", "engine_budget", "kv_terms", "running_cap"]

RUNNING = "running"
""":func:`cap_source` of a cap given (``--max-num-seqs``) or fixed (vLLM's 256)."""

if TYPE_CHECKING:
    from rlmcost.placement.device_groups import Task
    from rlmcost.placement.group_memory import GroupMemory


def batched_tokens(g: GroupMemory) -> int:
    """The engine's ``max_num_batched_tokens``: given, else vLLM's offline default for the
    group's device (:func:`~rlmcost.deployment.vllm_profile.llm_class_defaults`)."""
    given = g.engine.max_num_batched_tokens
    if given is None and g.engine.kind is EngineKind.MEGATRON:
        return MEGATRON_MAX_TOKENS  # Megatron-core max_tokens (deployment.megatron_engine)
    return given if given is not None else llm_class_defaults(
        g.s.capacity_bytes, g.s.hardware.name
    )[1]


def engine_budget(g: GroupMemory, task: Task) -> tuple[MemoryBreakdown, int]:
    """``(one, pool)``: one replica's bytes per device without its KV cache (weights and the
    workspace the engine takes before the pool: ``activations``, ``logits``, ``buffers``) and
    the KV-cache pool left of the reservation (negative when it does not fit). For vLLM the
    workspace is the profile run's (module doc): ``activations`` the dummy forward,
    ``logits`` what the sampler's peak adds above it; the non-torch memory comes out of the
    pool but stays out of ``one``: the device's communicator buffers are already in its
    ``overhead`` (:func:`~rlmcost.deployment.terms.overhead_bytes`), counted once."""
    replicas = g.replicas(task)
    one = g.own(task, replicas)
    if g.engine.kind is EngineKind.MEGATRON:  # a pool of buffer_size_gb (megatron_engine)
        return one, kv_buffer_bytes(g.engine.kv_buffer_gib)
    if g.engine.kind is EngineKind.SGLANG:  # mem_fraction_static x free memory - weights
        # the process group's set-up: the device's communicators too (terms.communicator_bytes)
        total = total_gpu_bytes(g.s.capacity_bytes, g.s.deployment.overhead.cuda_context_bytes,
                                g.sglang_gpus)  # fmt: skip
        return one, sglang_pool_bytes(g.engine_fraction, total, one.weights)
    if g.engine.kind is not EngineKind.VLLM:
        workspace = one.activations + one.logits + one.buffers
        return one, kv_pool_bytes(g.reservation, one.weights, workspace)
    layout = g.layouts[task.index]
    workload = g.workload(task)
    tokens = batched_tokens(g)
    stages = memory_per_stage(g.s.arch(task.role), layout, Mode.GENERATE, layout.dp, tokens,
                              workload, task.invocation.model_head)  # fmt: skip
    forward = max(m.activations for m in stages)
    rows = sampler_rows(g.engine.max_seqs, tokens)
    arch = g.s.arch(task.role)
    act = workload.activation_dtype.bytes
    release = vllm_release(g.engine.vllm_version, g.s.deployment.framework)
    per = v1_sampler_bytes_per_logit(rows, release.triton_sampler, act)
    peak = profile_peak_bytes(forward, rows, int(arch.vocab), tokens * int(arch.d_model) * act,
                              per)  # fmt: skip
    other = non_torch_bytes(layout.tp * layout.pp)
    profiled = with_terms(one, activations=forward, logits=peak - forward)
    pool = available_kv_bytes(g.reservation, one.weights, peak, one.buffers + other)
    return profiled, pool


def running_cap(g: GroupMemory, task: Task) -> int:
    """Sequences one engine replica runs at once at most: ``max_num_seqs`` where given, else
    the engine's default. SGLang's (:func:`~rlmcost.deployment.sglang_limits.
    max_running_requests`) follows from its KV pool, in token slots x CP as
    :meth:`~rlmcost.placement.group_memory.GroupMemory.engine_pool` counts them, and its
    context length: ``engine.context_length``, else the checkpoint's ``max_context``, else
    (unknown) the task's sequence length; vLLM's is 256 (and so for the engine's other
    tasks). Under SGLang's data-parallel attention (``Layout.attention_dp`` N) each attention
    rank's scheduler takes that cap of its own pool (python/sglang/srt/managers/tp_worker.py:
    ``max_total_num_tokens // 2``, its request pool, or ``--max-running-requests // dp_size``),
    so the replica's is N times one rank's, a rank's pool 1 / N of the replica's tokens;
    vLLM's data-parallel ranks are engine cores of their own, each with ``max_num_seqs``
    (vLLM docs/serving/data_parallel_deployment.md), so N times it.
    Megatron-core's: its ``max_requests`` from the pool's blocks
    (:func:`~rlmcost.deployment.megatron_engine.max_requests`)."""
    eng = g.engine
    if cap_source(g, task) == RUNNING:  # vLLM's DP engine cores: max_num_seqs each
        return eng.max_seqs * (g.layouts[task.index].attention_dp if eng.kind is
                               EngineKind.VLLM else 1)  # fmt: skip
    one, pool = engine_budget(g, task)
    cp = g.layouts[task.index].cp
    if eng.kind is EngineKind.MEGATRON:
        block = eng.kv_block_tokens
        tokens = pool_tokens(*kv_terms(g, task, one, pool), -(-g.seq_len(task) // cp), block)
        return max_requests(tokens // block, g.layouts[task.index].tp, state_cap(g, task))
    tokens = pool_tokens(pool, one.kv_cache, -(-g.seq_len(task) // cp), 1) * cp
    context = eng.context_length or g.s.specs[task.role].max_context or g.seq_len(task)
    from rlmcost.deployment.sglang_limits import max_running_requests

    n = g.layouts[task.index].attention_dp  # SGLang's DP attention: N schedulers
    return n * max_running_requests(tokens // n, context)


def cap_source(g: GroupMemory, task: Task) -> str:
    """What :func:`running_cap` follows from, as the rollout note names it: :data:`RUNNING`
    where ``max_num_seqs`` is given or the engine's default is a number (vLLM's); else the
    engine's KV pool, ``"sglang-pool"`` (SGLang's ``max_running_requests`` from the pool's
    token slots and the context length: ``--mem-fraction-static``, here
    ``--gpu-memory-utilization``) or ``"megatron-pool"`` (Megatron-core's ``max_requests`` from
    the pool's blocks: ``--kv-buffer-gib``)."""
    eng = g.engine
    if eng.max_num_seqs is not None or eng.kind not in (EngineKind.SGLANG, EngineKind.MEGATRON) \
            or g.engine_task is not task:  # fmt: skip
        return RUNNING
    return "sglang-pool" if eng.kind is EngineKind.SGLANG else "megatron-pool"
