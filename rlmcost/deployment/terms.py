"""Deployment memory terms beyond the paper's model states, activations and KV cache.

Each function returns exact bytes per device and cites where its numbers come from:

* :func:`logits_peak_bytes`: the log-prob computation over the whole vocabulary;
* :func:`lora_params`: the adapters' parameter count;
* :func:`overhead_bytes`: CUDA context, communicator buffers (:func:`communicator_bytes`) and
  allocator slack;
* :func:`kv_pool_bytes`, :func:`engine_slots` and :func:`pool_tokens`: the inference engine's
  KV-cache pool from its memory reservation, the sequences it holds at full length, and its
  tokens in whole blocks;
* :func:`refit_buffer_bytes`: the weights in flight beside the engine while it is refitted.
"""

from __future__ import annotations

from math import ceil, floor

from rlmcost.choices import Dtype
from rlmcost.deployment.sglang_pool import dist_init_bytes
from rlmcost.deployment.spec import LogitsMode, LoraSpec, Overhead

LOGITS_FORWARD_BYTES = {"model": 1, "fp32": 2}
"""Log-prob forward, per logit element: the model's logits in the activation dtype, their fp32
upcast and the fp32 log-softmax output, alive together (verl ``logprobs_from_logits``,
OpenRLHF ``log_probs_from_logits``: ``logits.float()`` then ``log_softmax``)."""

LOGITS_TRAIN_BYTES = {"model": 2, "fp32": 3}
"""Training, per logit element at the backward of the loss: the model's logits and the gradient
cast back to them (activation dtype, 2), the saved fp32 log-softmax, its fp32 gradient and the
fp32 gradient of the upcast (3)."""

FUSED_CHUNK_COPIES = 2
"""A fused/chunked linear + cross-entropy kernel (Liger ``LigerFusedLinearCrossEntropy``, verl
``use_fused_kernels``) keeps one chunk's fp32 logits and their gradient."""

CHUNKED_FORWARD_BYTES = 12
"""Chunked log-probs (NeMo RL ``policy.logprob_chunk_size``: ``ChunkedDistributedLogprob`` in
``nemo_rl/distributed/model_utils.py`` @7ea279abf), forward, per element of one sequence chunk
beside the whole model-dtype logits: the chunk's fp32 cast (4), then in
``_compute_distributed_log_softmax`` the max-shifted copy (4) and its ``exp()`` (4) or, once
summed, the log-softmax output (4): 12 bytes at once."""

CHUNKED_TRAIN_BYTES = 24
"""Chunked log-probs, training (``ChunkedDistributedLogprob.backward``, same file), per element
of one chunk beside the saved model-dtype logits and the model-dtype ``grad_input``
(``torch.zeros_like(vocab_parallel_logits)``): the chunk's fp32 cast (4), its softmax (4), and
``one_hot(masked_target)`` (int64, 8) times the bool mask of the chosen ids, an int64 product
(8): 24 bytes; then ``is_chosen.float()`` (4) after the one-hot is freed: 20."""


def logits_peak_bytes(
    positions: int,
    vocab_per_rank: int,
    train: bool,
    mode: LogitsMode,
    activation_dtype: Dtype,
    logits_dtype: Dtype,
    chunk_tokens: int,
    train_copies: int = 2,
) -> int:
    """Peak bytes of the log-prob computation over ``positions`` token positions of one
    micro-batch, ``vocab_per_rank`` vocabulary columns (V / P_t under TP).

    Materialized: ``positions x V`` elements times :data:`LOGITS_FORWARD_BYTES` (forward) or
    :data:`LOGITS_TRAIN_BYTES` (training), each part in its dtype: 2 + 4 + 4 = 10 bytes per
    element forward and 2 x 2 + 3 x 4 = 16 training with bf16 activations and fp32 logits.
    Low-memory: the logits in the activation dtype (and, training, their gradient:
    ``train_copies`` buffers in all, 2 unless a framework's code keeps more, as verl's 4,
    :mod:`rlmcost.placement.head_peak`): the
    log-softmax runs row by row or in a fused cross-entropy kernel that keeps fp32 in registers
    (verl ``logprobs_from_logits``: flash-attn's triton ``cross_entropy`` when installed, else
    ``logprobs_from_logits_v2`` row by row for bf16; TRL ``selective_log_softmax``; OpenRLHF
    ``log_probs_from_logits``). Fused: one chunk of ``min(positions, chunk_tokens)`` positions,
    :data:`FUSED_CHUNK_COPIES` fp32 copies. Chunked (NeMo RL's ``logprob_chunk_size``): the
    logits in the activation dtype (and, training, their gradient) and one chunk's fp32 work,
    :data:`CHUNKED_FORWARD_BYTES` or :data:`CHUNKED_TRAIN_BYTES` per element of the chunk.
    At 150k-token vocabularies and long responses this is what runs small models out of memory
    (a 1.5B model, 8k-token sequences, forward: 8192 x 151,936 x 10 B = 11.6 GiB).

    >>> logits_peak_bytes(8192, 151_936, False, LogitsMode.MATERIALIZED, Dtype.BF16, Dtype.FP32,
    ...                   1024)
    12446597120
    """
    if mode is LogitsMode.FUSED:
        rows = min(positions, chunk_tokens)
        return rows * vocab_per_rank * FUSED_CHUNK_COPIES * logits_dtype.bytes
    if mode is LogitsMode.LOW_MEMORY:  # the logits (and, training, their gradient) only
        return positions * vocab_per_rank * (train_copies if train else 1) * activation_dtype.bytes
    if mode is LogitsMode.CHUNKED:  # the logits (and their gradient) + one chunk's fp32 work
        chunk = min(positions, chunk_tokens) * (CHUNKED_TRAIN_BYTES if train
                                                else CHUNKED_FORWARD_BYTES)  # fmt: skip
        return vocab_per_rank * (positions * (2 if train else 1) * activation_dtype.bytes + chunk)
    parts = LOGITS_TRAIN_BYTES if train else LOGITS_FORWARD_BYTES
    per = parts["model"] * activation_dtype.bytes + parts["fp32"] * logits_dtype.bytes
    return positions * vocab_per_rank * per


def lora_params(
    d_model: int,
    q_width: int,
    kv_width: int,
    ffn_width: int,
    ffn_projections: int,
    layers: int,
    lora: LoraSpec,
) -> int:
    """Adapter parameters: r (d_in + d_out) per targeted projection per layer (Hu et al. 2021,
    arXiv:2106.09685 §4: W + B A, A in R^{r x d_in}, B in R^{d_out x r}). Projections: q
    (d -> h d_h), k and v (d -> h_kv d_h), o (h d_h -> d), gate and up (d -> d_ff), down
    (d_ff -> d); a 2-projection FFN has no gate. Routed experts get no adapters (PEFT's
    ``all-linear`` on dense layers; say so when a model is MoE).

    >>> from rlmcost.deployment.spec import LoraSpec
    >>> lora_params(4096, 4096, 1024, 14336, 3, 32, LoraSpec(rank=8))  # Llama-3.1-8B, r = 8
    20971520
    """
    shapes = {
        "q": (d_model, q_width),
        "k": (d_model, kv_width),
        "v": (d_model, kv_width),
        "o": (q_width, d_model),
        "gate": (d_model, ffn_width) if ffn_projections == 3 else None,
        "up": (d_model, ffn_width),
        "down": (ffn_width, d_model),
    }
    per_layer = sum(
        lora.rank * (shape[0] + shape[1])
        for name, shape in shapes.items()
        if name in lora.targets and shape is not None
    )
    return layers * per_layer


def communicator_bytes(gpus: int, overhead: Overhead, sglang_gpus: int = 0) -> int:
    """The communicators' bytes on each device of a group of ``gpus``: on the GPUs of an SGLang
    replica of ``sglang_gpus`` > 1 GPUs, what SGLang's ``init_torch_distributed`` takes
    (:func:`~rlmcost.deployment.sglang_pool.dist_init_bytes`, 2 GiB: the NCCL communicators
    and custom all-reduce buffers of its process group), the figure its pool leaves out of
    ``total_gpu_memory`` and so the one the device carries, once; else
    ``overhead.communicator_bytes`` on a group of several GPUs, 0 on one.

    >>> from rlmcost.deployment.spec import Overhead
    >>> [communicator_bytes(8, Overhead(), n) // 2**20 for n in (0, 1, 8)]
    [512, 512, 2048]
    """
    if sglang_gpus > 1:
        return dist_init_bytes(sglang_gpus)
    return overhead.communicator_bytes if gpus > 1 else 0


def overhead_bytes(
    allocated_bytes: int, gpus: int, overhead: Overhead, switches: bool = False,
    sglang_gpus: int = 0,
) -> int:  # fmt: skip
    """Device bytes outside the model's tensors: the CUDA context, the communicator buffers
    (:func:`communicator_bytes`: SGLang's process group on the GPUs of an SGLang replica of
    ``sglang_gpus`` > 1 GPUs) and the allocator's slack over the allocated peak,
    larger on GPUs that ``switches`` between generation and training unless expandable
    segments are on (:meth:`~rlmcost.deployment.spec.Overhead.allocator_slack_for`; sources on
    the :class:`~rlmcost.deployment.spec.Overhead` defaults).

    >>> from rlmcost.deployment.spec import Overhead
    >>> overhead_bytes(10**9, 1, Overhead(cuda_context_bytes=0), switches=True)
    100000000
    """
    fixed = overhead.cuda_context_bytes + communicator_bytes(gpus, overhead, sglang_gpus)
    return fixed + ceil(allocated_bytes * overhead.allocator_slack_for(switches))


def reservation_bytes(fraction: float, capacity_bytes: int) -> int:
    """What an engine reserves: ``gpu_memory_utilization`` x the device's memory, as vLLM
    sizes it (``requested_memory = total_memory * gpu_memory_utilization``, vLLM worker)."""
    return floor(fraction * capacity_bytes)


def kv_pool_bytes(reserved: int, weights: int, workspace: int) -> int:
    """The KV-cache pool: the reservation minus the weights and the activation workspace the
    engine profiles (vLLM ``determine_available_memory``); negative when they do not fit."""
    return reserved - weights - workspace


def engine_slots(
    pool_bytes: int, kv_bytes_per_sequence: int, tokens_per_sequence: int, block_size: int,
    max_num_seqs: int, sequences: int,
) -> int:  # fmt: skip
    """Sequences an engine replica runs at once: what its KV pool holds in whole blocks of
    ``block_size`` tokens (PagedAttention, Kwon et al. 2023, arXiv:2309.06180), capped by
    ``max_num_seqs`` and the replica's share of the batch; 0 when not one sequence fits.

    >>> engine_slots(10 * 2**30, 2**30, 4096, 16, 256, 64)
    10
    """
    if pool_bytes <= 0 or kv_bytes_per_sequence <= 0:
        return 0
    blocks = -(-tokens_per_sequence // block_size)
    per_seq = -(-kv_bytes_per_sequence * blocks * block_size // tokens_per_sequence)
    return max(0, min(max_num_seqs, sequences, pool_bytes // per_seq))


def pool_tokens(
    pool_bytes: int, kv_bytes_per_sequence: int, tokens_per_sequence: int, block_size: int
) -> int:
    """The KV pool in tokens of whole blocks (per device): floor(pool / (KV bytes of one
    block of ``block_size`` tokens)) x ``block_size``, the block's bytes being
    ``kv_bytes_per_sequence`` / ``tokens_per_sequence`` per token (PagedAttention, Kwon et al.
    2023, arXiv:2309.06180 §4.2; vLLM ``num_gpu_blocks`` = available memory // page size,
    ``vllm/v1/core/kv_cache_utils.py``); 0 when the pool is empty. Exact ints.

    >>> pool_tokens(10 * 2**30, 2**30, 4096, 16)  # 10 sequences of 4,096 tokens
    40960
    """
    if pool_bytes <= 0 or kv_bytes_per_sequence <= 0:
        return 0
    blocks = pool_bytes * tokens_per_sequence // (kv_bytes_per_sequence * block_size)
    return blocks * block_size


REFIT_PER_TENSOR = {
    "trl": "trl/scripts/vllm_serve.py: update_named_param allocates torch.empty(shape) on "
    "each engine rank, receives the trainer's NCCL broadcast of one full tensor and "
    "load_weights it in place",
    "openrlhf": "openrlhf/trainer/ray/vllm_worker_wrap.py: update_weight allocates one full "
    "tensor, receives its broadcast and load_weights it (ppo_actor.py _broadcast_to_vllm "
    "gathers one ZeRO-3 parameter at a time)",
    "verl": "verl/workers/sharding_manager/fsdp_vllm.py: the FSDP state dict's DTensors are "
    "gathered one full_tensor() at a time as vLLM's load_weights consumes them",
}
"""Frameworks whose refit moves one full parameter tensor at a time, and where they do it."""

NEMO_RL_REFIT_BUFFER_RATIO = 0.2
"""NeMo RL's refit buffer: ``NRL_REFIT_BUFFER_MEMORY_RATIO`` (default 0.2) of the device's
free memory holds the packed full tensors of one refit chunk (``nemo_rl/models/policy/
dtensor_policy_worker.py`` ``get_free_memory_bytes`` / ``stream_weights_via_ipc_zmq``,
consumed by ``nemo_rl/models/generation/vllm``)."""


def refit_buffer_bytes(
    framework: str | None, largest_tensor_bytes: int, model_bytes: int, free_bytes: int
) -> int:
    """Bytes per engine device of the weights in flight while the engine is refitted with
    the trainer's new weights: one full (unsharded) parameter tensor for the frameworks of
    :data:`REFIT_PER_TENSOR` (the largest, ``largest_tensor_bytes``: the embedding or head
    at V x d); NeMo RL's buffer, :data:`NEMO_RL_REFIT_BUFFER_RATIO` of ``free_bytes``, at most
    the whole model (``model_bytes``); 0 for rlmcost's bare layout (``framework`` None),
    which counts no refit.

    >>> refit_buffer_bytes("trl", 152_064 * 3_584 * 2, 15_231_233_024, 8 * 2**30)
    1089994752
    >>> refit_buffer_bytes("nemo-rl", 0, 15_231_233_024, 10 * 2**30)
    2147483648
    """
    if framework in REFIT_PER_TENSOR:
        return largest_tensor_bytes
    if framework == "nemo-rl":
        return min(model_bytes, floor(NEMO_RL_REFIT_BUFFER_RATIO * max(free_bytes, 0)))
    return 0
