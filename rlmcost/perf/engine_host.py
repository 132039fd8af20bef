"""An inference engine's host time per decode step that the GPU does not hide: the fixed CPU
overhead of a step (:data:`STEP_OVERHEAD_S`) and vLLM's per-sequence work
(:data:`VLLM_HOST_S_PER_SEQUENCE`). Split from :mod:`rlmcost.perf.generation`, which prices
the step, by purpose."""

from __future__ import annotations

from rlmcost.perf.rl_constants import Constant

STEP_OVERHEAD_S = 1e-3
"""Engine CPU overhead per decode step not hidden behind the GPU (the
:mod:`rlmcost.perf.generation` docstring)."""

VLLM_HOST_S_PER_SEQUENCE = Constant(73e-6, 20e-6, 127e-6, "ML.ENERGY v3 ITL at batch 8 and 64")
"""vLLM host seconds per sequence in flight per decode step, on the step's critical path.

Measured figure: the ML.ENERGY Leaderboard v3.0 (source ``mlenergy_v3`` of
``rlmcost/perf/data/engine_runs.json``, a vLLM server) publishes the median inter-token latency
of the same model, GPU and TP degree at batch 8 and at 64 (32 for Qwen3-14B); from 8 to 64 it
grows by 4-8 ms on H100 and B200 alike, where the kernels (this module without this term)
grow by 0.6-2 ms. The excess per added sequence, ((published - kernels) at the larger batch -
(published - kernels) at 8) / (added sequences), over the twelve such pairs (chat: Llama-3.1-8B,
Llama-3.1-70B, Qwen3-8B, Qwen3-30B-A3B on H100 and B200, Qwen3-32B on B200; GPQA on H100:
Qwen3-8B, Qwen3-14B, Qwen3-32B): median 73 us (value), lowest 20 us (Qwen3-30B-A3B chat, H100:
low), highest 127 us (Qwen3-8B chat, B200: high). Left out: H100 Qwen3-32B chat (batch 8 at TP 1,
64 at TP 2) and GPQA Qwen3-30B-A3B (8 and 16 sequences, too close to show it). Of the same
order: vLLM issue 6913 (2024-07, V0) profiles ``_process_model_outputs`` at 3.4 ms for 32
sequences of Llama-3-70B on 4 x H100 (106 us each); vLLM PR 57442 (2026-09, V1 0.29, one L20, a
0.5B model at concurrency 64) serves 18,645 output tokens/s, 3.4 ms per step of 64 sequences
where the weights stream in about 1.2 ms (about 35 us per sequence). Which process spends it
(engine core or serving front end) the sources do not separate; an RL framework's offline
``LLM.generate`` runs both in one process (NeMo RL sets ``VLLM_ENABLE_V1_MULTIPROCESSING=0``,
``nemo_rl/models/generation/vllm.py``), so none of it overlaps the GPU there. Streamed
generation (``partial_rollout``: NeMo RL's ``async_engine``, verl's fully-async rollouter)
runs ``AsyncLLM``, whose engine core is a process apart from the output processing; the
placement charges nothing there (``placement.group_jobs.engine_model``), an assumption: the
ML.ENERGY server is an ``AsyncLLM`` too, so only the asynchronous RL runs check it (charged
there, their errors would move by up to +45 points, NeMo RL v0.6 Qwen3-30B-A3B 8-step
off-policy from +11 % to +55 % of its published step).
"""
