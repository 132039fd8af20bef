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
engine load. An engine serving FP8 (``--rollout-dtype fp8``) also quantizes every received
weight on every rank (:func:`fp8_requant_s`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.perf.rl_constants import Constant

if TYPE_CHECKING:
    from rlmcost.specs.hardware import HardwareSpec

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


NEMO_RL_FP8_REQUANT_BYTES_PER_PARAM = 49
"""HBM bytes each engine rank moves per parameter of the received model when its engine
serves FP8: NeMo RL's ``load_weights`` (``nemo_rl/models/generation/fp8.py`` at v0.5.0,
``nemo_rl/models/generation/vllm/quantization/fp8.py`` at v0.6.0 and v0.7.0, called from
``vllm_backend.py`` ``update_weights_from_collective`` on every unpacked bucket) casts every
received full (unsharded) weight to FP8 with ``cast_tensor_to_fp8_blockwise(v.to(torch.float),
...)``, eager PyTorch ops over the whole tensor, each reading and writing it: ``v.to(float)``
2 + 4 B, the permuted ``.contiguous()`` copy 4 + 4, ``abs`` 4 + 4, ``amax`` 4, ``data_hp *
scale_fp`` 4 + 4, ``clamp`` 4 + 4, ``.to(float8_e4m3fn)`` 4 + 1, the permuted ``reshape`` back
1 + 1: 49 B. The per-block scales (1/16384 of that) and the rank's copy of its own shard (a few
bytes over TP) are left out. A count of the code's traffic, not a fitted figure. NeMo RL PR
4217 (2026-09-21) names the cost: engine ranks that receive the whole model (~790 GB) and
convert all of it to (MX)FP8 spent 5.5-15 s per rank per refit.
"""


def fp8_requant_s(n_params: int, hardware: HardwareSpec) -> float:
    """Seconds each FP8 engine rank spends quantizing the full received model in a NeMo RL
    non-colocated refit (``NEMO_RL_FP8_REQUANT_BYTES_PER_PARAM`` per parameter through HBM at
    the device's streaming efficiency, :meth:`~rlmcost.perf.efficiency.Device.memory_s`); the
    ranks do it at once, so the refit grows by it once.

    >>> from rlmcost.specs.registry import get_hardware
    >>> round(fp8_requant_s(671 * 10**9, get_hardware("h100-sxm")), 1)  # DeepSeek-V3
    10.9
    """
    from rlmcost.perf.efficiency import Device

    return Device(hardware).memory_s(n_params * NEMO_RL_FP8_REQUANT_BYTES_PER_PARAM)
