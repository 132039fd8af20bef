"""An inference engine's host time per decode step that the GPU does not hide: the fixed CPU
overhead of a step (:data:`STEP_OVERHEAD_S`) and vLLM's per-sequence work
(:data:`VLLM_HOST_S_PER_SEQUENCE`). Split from :mod:`rlmcost.perf.generation`, which prices
the step, by purpose."""

from __future__ import annotations

from typing import NamedTuple

from rlmcost.perf.rl_constants import Constant

STEP_OVERHEAD_S = 1e-3
"""Engine CPU overhead per decode step not hidden behind the GPU (the
:mod:`rlmcost.perf.generation` docstring)."""

VLLM_HOST_S_PER_SEQUENCE = Constant(73e-6, 50.5e-6, 127e-6, "ML.ENERGY v3 ITL at batch 8 and 64")
"""vLLM host seconds per sequence in flight per decode step, on the step's critical path.

Measured figure: the ML.ENERGY Leaderboard v3.0 (source ``mlenergy_v3`` of
``rlmcost/perf/data/engine_runs.json``, a vLLM server) publishes the median inter-token latency
of the same model, GPU and TP degree at batch 8 and at 64 (32 for Qwen3-14B); from 8 to 64 it
grows by 4-8 ms on H100 and B200 alike, where the kernels (this module without this term)
grow by 0.6-2 ms. The excess per added sequence, ((published - kernels) at the larger batch -
(published - kernels) at 8) / (added sequences), over the twelve such pairs (chat: Llama-3.1-8B,
Llama-3.1-70B, Qwen3-8B, Qwen3-30B-A3B on H100 and B200, Qwen3-32B on B200; GPQA on H100:
Qwen3-8B, Qwen3-14B, Qwen3-32B): median 73 us (value), lowest 50.5 us (Llama-3.1-8B chat, H100:
low; the Qwen3-30B-A3B chat pair on H100 gave 20 us while vLLM's fused-MoE GEMMs were priced at
the dense rate, 69 us at their measured one, ``perf/fused_moe.py``), highest 127 us (Qwen3-8B
chat, B200: high). Left out: H100 Qwen3-32B chat (batch 8 at TP 1,
64 at TP 2) and GPQA Qwen3-30B-A3B (8 and 16 sequences, too close to show it). Of the same
order: vLLM issue 6913 (2024-07, V0) profiles ``_process_model_outputs`` at 3.4 ms for 32
sequences of Llama-3-70B on 4 x H100 (106 us each); vLLM PR 57442 (2026-09, V1 0.29, one L20, a
0.5B model at concurrency 64) serves 18,645 output tokens/s, 3.4 ms per step of 64 sequences
where the weights stream in about 1.2 ms (about 35 us per sequence). Which process spends it
(engine core or serving front end) the sources do not separate; an RL framework's offline
``LLM.generate`` runs both in one process (NeMo RL sets ``VLLM_ENABLE_V1_MULTIPROCESSING=0``,
``nemo_rl/models/generation/vllm.py``), so none of it overlaps the GPU there. Streamed
generation (``partial_rollout``: NeMo RL's ``async_engine``, verl's fully-async rollouter)
runs ``AsyncLLM``, whose engine core is a process apart from the output processing: there it
is a host stage beside the GPU, a floor under the step rather than a term added to it
(:func:`host_options`). Added to the step there instead, the x86 asynchronous RL runs' errors
would move by up to +45 points (NeMo RL v0.6 Qwen3-30B-A3B 8-step off-policy from +11 % to
+55 % of its published step).
"""


MEGATRON_HOST_S_PER_SEQUENCE = 372.4e-6 / 256
"""Megatron-core's dynamic engine: host seconds per sequence in flight per decode step, on the
step's critical path as NeMo RL runs it.

Measured figure: NVIDIA/Megatron-LM PR 6467 (2026-08, a Qwen3-30B-A3B decode campaign, split
from PR 6064) times the host phases of one steady-state decode step at batch 256 in the real
engine methods: the post-sampling chain (``update_requests``, ``post_process_requests`` and the
bookkeeping after sampling) takes 372.4 us per step, 1.45 us per sequence; taken as growing
with the sequences (its largest item, ``post_process_requests``, 211 us, is a loop over the
requests; the one batch measured does not separate a fixed part). It is on the step's path
because NeMo RL leaves ``InferenceConfig.async_sched_mode`` at ``LEGACY`` ("Resolve requests
before preparing the next forward pass", megatron/core/inference/config.py at d98e8a64d;
nemo_rl/models/generation/megatron/megatron_worker.py ``_initialize_inference_engine`` at
7ea279abf passes none), in or out of a streaming rollout; under ``ASYNC`` the same PR finds
cutting 184 us of it moves throughput by +0.09 % (within noise): hidden there. The decode's
kernels run as CUDA-graph replays (NeMo RL's ``cuda_graph_impl: local``, ``num_cuda_graphs:
4``, grpo_math_1B.yaml), priced with :data:`STEP_OVERHEAD_S` per step as for vLLM; with
``cuda_graph_impl: none`` (``--enforce-eager``) the eager launches
(:mod:`rlmcost.perf.eager_launch`). A fiftieth of vLLM's :data:`VLLM_HOST_S_PER_SEQUENCE`:
Megatron-core keeps its per-request state in preallocated tensors, where vLLM builds Python
objects per request and step."""


class HostTerms(NamedTuple):
    """An engine's host seconds per decode step, the
    :class:`~rlmcost.perf.engine_step.EngineOptions` fields of the same names."""

    step_overhead_s: float
    per_sequence_s: float
    overlapped_s_per_sequence: float


def host_options(host_time_factor: float, in_process: bool, kind: str) -> HostTerms:
    """An engine's host terms per decode step (:class:`HostTerms`), on a host whose single-threaded
    PyTorch work takes ``host_time_factor`` times as long as on the x86 hosts the constants
    were measured on (``HardwareSpec.host_time_factor``: GB200's Grace 2.75, the CPU time of a
    ``torch.nn.Linear`` forward 37.08 us vs 13.48 us on a Xeon 8480C, NVIDIA/TransformerEngine
    issue 2053).

    * The step's fixed :data:`STEP_OVERHEAD_S` (input tensors built and copied, the CUDA
      graph replayed, the sampler launched and its tokens read back: per-step PyTorch calls
      of the kind issue 2053 times) takes the factor, in and out of process.
    * ``in_process`` (vLLM's ``LLM.generate``: one thread runs ``EngineCore.step`` and the
      ``OutputProcessor`` in turn): :data:`VLLM_HOST_S_PER_SEQUENCE` per sequence in flight
      adds to the step at its x86 value. Scaled by the factor, the GB200 colocated NeMo RL
      rows (v0.5-v0.7) would go from -22..+7 % to -10..+38 % of their published steps, so
      the evidence does not support scaling it. A candidate reason, not quantified: the
      x86 figure was measured on a streaming server, which builds a ``RequestOutput`` per
      request per step; offline ``LLM.generate`` sets ``RequestOutputKind.FINAL_ONLY``
      (``vllm/entrypoints/llm.py`` ``_validate_and_add_requests``), and
      ``OutputProcessor._make_request_output`` returns nothing for an unfinished request
      then, so the offline path's per-sequence work is lighter than the figure.
    * otherwise vLLM streams (``AsyncLLM``): ``vllm/v1/engine/async_llm.py`` starts the
      engine core in a background process (``EngineCoreClient.make_async_mp_client``, also
      under ``VLLM_ENABLE_V1_MULTIPROCESSING=0``, which only ``LLMEngine`` reads) and keeps
      the ``OutputProcessor`` (detokenization, logprobs, one ``RequestOutput`` per request
      per step into its queue) in the caller's process, in ``output_handler``; the per-
      request streaming work the ML.ENERGY server (an ``AsyncLLM``) also does. NeMo RL's
      async worker consumes every request's stream (``vllm_worker_async.py``: ``async for``
      over ``self.llm.generate``) at the default ``CUMULATIVE`` output kind
      (``vllm_worker.py`` ``_build_sampling_params`` sets none), so that work is done. A stage
      beside the GPU bounds the step from below instead of adding to it: the step lasts at
      least :data:`VLLM_HOST_S_PER_SEQUENCE` x factor per sequence in flight
      (``overlapped_s_per_sequence``, :meth:`~rlmcost.perf.generation.Engine.launch_floor_s`).
      Assumptions: the whole per-sequence figure is the front end's (the engine core's
      ``Scheduler.schedule`` / ``update_from_output`` share, on the step's path in
      ``vllm/v1/engine/core.py`` ``step``, is not separated by the sources and taken as 0);
      it takes the factor. On x86 hosts the floor stays under the GPU's step in every
      validated run; on Grace it binds where the GPU's step is short (Qwen3-30B-A3B at TP 1).
    * Megatron-core (``kind`` megatron): :data:`MEGATRON_HOST_S_PER_SEQUENCE` per sequence in
      flight on the step's path, in and out of a streaming rollout, at its x86 value (as vLLM's
      in-process figure; unmeasured on Grace).
    * not vLLM (SGLang's overlap scheduler, static batchers): the fixed overhead only.
    """
    f = host_time_factor
    per_seq = VLLM_HOST_S_PER_SEQUENCE.value
    vllm = kind == "vllm"  # an EngineKind value (deployment.kinds)
    if kind == "megatron":
        return HostTerms(STEP_OVERHEAD_S * f, MEGATRON_HOST_S_PER_SEQUENCE, 0.0)
    return HostTerms(
        step_overhead_s=STEP_OVERHEAD_S * f,
        per_sequence_s=per_seq if vllm and in_process else 0.0,
        overlapped_s_per_sequence=per_seq * f if vllm and not in_process else 0.0,
    )



