"""NeMo RL's non-colocated refit: a packed, double-buffered NCCL broadcast from the trainer to the
engines over one process group that holds every trainer rank and every engine rank.

What the code does (NVIDIA-NeMo/RL tags v0.5.0, v0.6.0, v0.7.0):

* ``init_collective`` (``nemo_rl/models/policy/workers/base_policy_worker.py``,
  ``nemo_rl/models/generation/vllm/vllm_backend.py``) builds one ``StatelessProcessGroup`` of
  ``train_world_size + inference_world_size`` ranks with a PyNccl communicator (PR 1264,
  "inclusive comm group");
* ``broadcast_weights_for_collective`` (``megatron_policy_worker.py``) runs on every trainer
  rank: the Megatron-Bridge export gathers each parameter over TP / PP / EP into full
  Hugging Face tensors (step 1 of the refit, the same gather as the colocated refit) and
  ``packed_broadcast_producer`` (``nemo_rl/utils/packed_tensor.py``) concatenates them into
  uint8 buckets of ``min(0.02 x GPU memory, 5 GiB)`` (``NRL_REFIT_BUFFER_MEMORY_RATIO``; 1.6
  GiB on an 80 GB H100) and broadcasts each from rank 0 to the whole group, two buckets in
  flight on two CUDA streams (``NRL_REFIT_NUM_BUFFERS`` = 2, PR 1379: the next bucket's
  gather and packing overlap the current bucket's broadcast);
* every engine rank receives the full model, bucket by bucket, and ``packed_broadcast_consumer``
  unpacks each bucket into ``model_runner.model.load_weights``, which keeps the rank's shard
  (step 3, inside the same pipeline);
* the engines do not generate meanwhile: async GRPO's ``refit_policy_generation`` runs under
  the ``weight_sync`` timer after ``prepare_for_refit`` has paused the collector
  (``nemo_rl/algorithms/grpo.py``, ``async_utils.py``).

A pipelined broadcast's time does not grow with the group's size (each rank forwards each
chunk once), so the refit's time is a fixed part plus the full model's bytes over one measured
end-to-end rate (``NEMO_RL_PACKED_REFIT_FIXED_S`` + bytes / ``NEMO_RL_PACKED_REFIT_BYTES_PER_S``,
the line through NeMo RL PR 1379's two measurements), with no per-node lanes and no separate
engine load.
"""

from __future__ import annotations

from rlmcost.perf.rl_constants import Constant

NEMO_RL_PACKED_REFIT_BYTES_PER_S = Constant(102.6e9, 85.5e9, 102.6e9, "NeMo RL PR 1379")
"""Full-model bf16 bytes per second of NeMo RL's non-colocated (packed NCCL) refit, end to end.

NVIDIA-NeMo/RL pull request 1379 ("feat: Overlap param iteration and broadcast in
non-colocated refit", 2025-10-16, merged and cherry-picked into r0.4.0 by PR 1418, so in
v0.5.0 onward) measured non-colocated refit times with the double-buffered packed broadcast:
DeepSeek-V3 (671e9 parameters, 1342 GB in bf16) 34 s -> 14 s, Qwen3-235B-A22B (235e9, 470 GB)
13 s -> 5.5 s. value (and high): the slope of the line through the two, (1342 - 470) GB /
(14 - 5.5) s = 102.6 GB/s; low: Qwen3-235B all in, 470 GB / 5.5 s = 85.5 GB/s. NeMo RL PR 2779
(2026-06-11) agrees: its H100 64n8g async 1-off DeepSeek-V3 step, 70.2 s, less the colocated
32n8g generation of the same 256-GPU engine set, 57.4 s, leaves 12.8 s for the refit.
"""

NEMO_RL_PACKED_REFIT_FIXED_S = Constant(0.92, 0.18, 0.92, "NeMo RL PR 1379; TRL PR 5892")
"""Fixed seconds per NeMo RL non-colocated refit (engine pause and resume, Ray calls, NCCL
launches), whatever the model's size.

value (and high): the intercept of the NEMO_RL_PACKED_REFIT_BYTES_PER_S line, 14 s - 1342 GB /
102.6 GB/s = 0.92 s (NeMo RL PR 1379); low: REFIT_NCCL_FIXED_S's value, a small model's NCCL
weight sync on one node, ~0.18 s (huggingface/trl PR 5892).
"""


def packed_refit_s(model_bytes: int, end: str = "value") -> float:
    """Seconds of one NeMo RL non-colocated refit of ``model_bytes`` (the full model in the
    weight dtype; module docstring); ``end``: ``"low"``, ``"value"`` or ``"high"`` time.

    >>> round(packed_refit_s(1342 * 10**9), 1)  # DeepSeek-V3 in bf16, NeMo RL PR 1379
    14.0
    >>> round(packed_refit_s(470 * 10**9), 1)  # Qwen3-235B-A22B in bf16, PR 1379
    5.5
    """
    if model_bytes <= 0:
        return 0.0
    rate_end = {"low": "high", "high": "low"}.get(end, end)  # the low time takes the high rate
    return NEMO_RL_PACKED_REFIT_FIXED_S.at(end) + model_bytes / \
        NEMO_RL_PACKED_REFIT_BYTES_PER_S.at(rate_end)  # fmt: skip
