"""Predicted seconds of the weight refit, the engine's sleep/wake and the controller, as RL
frameworks run them (constants: :mod:`rlmcost.perf.rl_constants`, each with its source).

* **Refit** (trainer -> inference engine, once per iteration): every mechanism gathers the full
  parameters bucket by bucket (FSDP / Megatron), hands them over and lets each engine rank keep
  its shard (NeMo RL blog 2025-08-12 "How Refit is Done"; verl
  ``verl/workers/sharding_manager/fsdp_vllm.py``; OpenRLHF
  ``openrlhf/trainer/ray/ppo_actor.py`` ``_broadcast_to_vllm``). Its time is
  ``fixed + model_bytes / rate`` over the full model in the weight dtype:

  - ``in-process``: trainer and engine in one process (verl's hybrid engine, TRL's colocate
    mode): ``REFIT_INPROCESS_*``;
  - ``ipc``: engine processes on the trainer's GPUs, tensors passed as CUDA IPC handles
    (NeMo RL colocated, OpenRLHF ``--colocate_all_models``, slime ``--colocate``):
    ``REFIT_IPC_*``;
  - ``per-tensor``: a Megatron-core trainer exporting one tensor at a time into an engine
    on its own GPUs (verl's hybrid engine with the Megatron backend:
    ``verl/workers/megatron_workers.py`` ``rollout_mode`` at volcengine/verl b25bb7d4f feeds
    mbridge's ``export_weights`` or ``verl/utils/megatron_utils.py``
    ``per_tensor_generator``, a pipeline broadcast and TP / EP all-gathers per tensor, to
    ``rollout.update_weights``): ``MEGATRON_PER_TENSOR_REFIT_BYTES_PER_S``, no bucketing;
  - ``disk``: the trainer saves the parameters to shared storage and every engine server
    reloads them (AReaL: :mod:`rlmcost.perf.disk_refit`, ``DISK_REFIT_BYTES_PER_S``);
  - ``packed-nccl``: NeMo RL non-colocated: packed, double-buffered buckets broadcast from
    trainer rank 0 over one NCCL group of every trainer and engine rank, the export's gather,
    the broadcast and the engines' ``load_weights`` pipelined (:mod:`rlmcost.perf.packed_refit`,
    ``NEMO_RL_PACKED_REFIT_BYTES_PER_S``, measured end to end);
  - ``nccl``: engines on GPUs of their own, a broadcast from the trainer (OpenRLHF, TRL
    server mode, slime): ``REFIT_NCCL_FIXED_S`` + bytes at the intra- or
    cross-node rate, plus the engine rank's ``load_weights`` of its shard
    (``ENGINE_LOAD_WEIGHTS_BYTES_PER_S``). Across nodes each node of a sharded trainer sends
    its own part over its own NICs at once (one stream per pair of sending and receiving
    nodes; NeMo RL refit blog 2025-08-12: DeepSeek-V3's 1342 GB in 47 s over many nodes), so
    the caller passes one node's part.
* **Sleep / wake** (vLLM sleep mode level 1, ``vllm/device_allocator/cumem.py``): the engine's
  weights go to host memory after generation and come back before the next one:
  ``bytes / VLLM_SLEEP_BYTES_PER_S + VLLM_WAKE_FIXED_S + bytes / VLLM_WAKE_BYTES_PER_S``; at
  level 2 (verl with vLLM >= 0.8.5) the weights are discarded and the refit reloads them:
  ``VLLM_WAKE_FIXED_S``.
* **Controller** (Ray single-controller frameworks): ``STEP_OVERHEAD_RESIDUAL_S`` per
  iteration, what NeMo RL's published step times leave beside their listed phases (dispatch,
  data processing, rewards, advantages).

Every function takes ``end`` (``"low"``, ``"value"``, ``"high"``): the constants' documented
spread, for prediction intervals.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from rlmcost.perf import rl_constants as rc
from rlmcost.perf.interval import Spread


class Refit(StrEnum):
    """How a framework moves updated weights into its inference engine (module docstring)."""

    IN_PROCESS = "in-process"
    IPC = "ipc"
    PER_TENSOR = "per-tensor"
    NCCL = "nccl"
    PACKED_NCCL = "packed-nccl"
    DISK = "disk"


MEGATRON_PER_TENSOR_REFIT_BYTES_PER_S = rc.Constant(11.2e9, 3.9e9, 16.8e9,
                                                    "verl issue 5311; verl fully_async.md")
"""Full-model bf16 bytes per second of a Megatron-core trainer's per-tensor weight export.

verl-project/verl issue 5311 (2026-02-13, "optimize the megatron weight transfer speed"):
DeepSeek-V3.1 (671e9 parameters, 1342 GB in bf16) weight transfer 120 s on 16 x 8 GPUs (TP8,
PP16, EP8) -> 11.2 GB/s (value), 80 s on 32 x 8 (PP16, EP16) -> 16.8 GB/s (high), "most time
... on the mbridge weights all_gather", broadcast "one by one". low: verl docs/advance/
fully_async.md (b178a3c), checkpoint-engine table, Megatron on H20 with checkpoint-engine
False (the same per-tensor export, then NCCL to the rollout GPUs): Qwen3-30B-A3B (30.5e9, 61 GB)
15.76 s -> 3.9 GB/s; Qwen3-235B-A22B (470 GB) 58.57 s -> 8.0 GB/s lies inside.
"""


def refit_s(mechanism: Refit, model_bytes: int, *, engine_shard_bytes: int = 0,
            cross_node: bool = False, end: str = "value") -> float:  # fmt: skip
    """Seconds of one refit of ``model_bytes`` (the full model in the weight dtype).

    ``engine_shard_bytes``: what one engine rank loads (``nccl``); ``cross_node``: the
    broadcast crosses nodes (``nccl``).

    >>> round(refit_s(Refit.IPC, 16 * 10**9), 2)  # Llama-3.1-8B in bf16, NeMo RL colocated
    7.48
    """
    if model_bytes <= 0:
        return 0.0
    if mechanism is Refit.IN_PROCESS:
        return rc.REFIT_INPROCESS_FIXED_S.at(end) + model_bytes / _rate(
            rc.REFIT_INPROCESS_BYTES_PER_S, end)  # fmt: skip
    if mechanism is Refit.DISK:
        from rlmcost.perf.disk_refit import disk_refit_s

        return disk_refit_s(model_bytes, end)
    if mechanism is Refit.PACKED_NCCL:
        from rlmcost.perf.packed_refit import packed_refit_s

        return packed_refit_s(model_bytes, end)
    if mechanism is Refit.PER_TENSOR:
        return model_bytes / _rate(MEGATRON_PER_TENSOR_REFIT_BYTES_PER_S, end)
    if mechanism is Refit.IPC:
        return rc.REFIT_IPC_FIXED_S.at(end) + model_bytes / _rate(rc.REFIT_IPC_BYTES_PER_S, end)
    link = rc.REFIT_NCCL_CROSS_NODE_BYTES_PER_S if cross_node else \
        rc.REFIT_NCCL_INTRA_NODE_BYTES_PER_S  # fmt: skip
    load = engine_shard_bytes / _rate(rc.ENGINE_LOAD_WEIGHTS_BYTES_PER_S, end)
    return rc.REFIT_NCCL_FIXED_S.at(end) + model_bytes / _rate(link, end) + load


def sleep_wake_s(weight_bytes_per_gpu: int, end: str = "value", level: int = 1) -> float:
    """Seconds of one vLLM sleep (weights to host) and wake (back) of ``weight_bytes_per_gpu``;
    ``level`` 2 discards the weights instead (the refit brings them back): the wake's fixed
    cost only.

    >>> round(sleep_wake_s(16 * 10**9), 2), sleep_wake_s(16 * 10**9, level=2)
    (3.43, 0.17)
    """
    if weight_bytes_per_gpu <= 0:
        return 0.0
    if level == 2:
        return rc.VLLM_WAKE_FIXED_S.at(end)
    return (weight_bytes_per_gpu / _rate(rc.VLLM_SLEEP_BYTES_PER_S, end)
            + rc.VLLM_WAKE_FIXED_S.at(end)
            + weight_bytes_per_gpu / _rate(rc.VLLM_WAKE_BYTES_PER_S, end))  # fmt: skip


def controller_s(end: str = "value") -> float:
    """Seconds per iteration of a Ray single controller outside the modelled phases."""
    return rc.STEP_OVERHEAD_RESIDUAL_S.at(end)


def _rate(c: rc.Constant, end: str) -> float:
    """A rate at the end that makes the time ``end``: the low time takes the high rate."""
    return c.at({"low": "high", "high": "low"}.get(end, end))


def spread_of(seconds_at: Callable[[str], float], source: str) -> Spread:
    """The :class:`~rlmcost.perf.interval.Spread` of a time computed at each end."""
    value = seconds_at("value")
    if value <= 0:
        return Spread(1.0, 1.0, source)
    return Spread(min(1.0, seconds_at("low") / value), max(1.0, seconds_at("high") / value), source)
