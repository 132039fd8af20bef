"""The memory-bound kernels of the log-softmax over a rank's fp32 logits, by implementation.

After the LM head's GEMM every teacher-forced pass turns the rank's logits (``V / P_t`` per
token) into token log-probabilities: a log-prob forward gathers them, a training step also
back-propagates through them. These kernels read and write vocabulary-wide tensors, so their
time is bytes over HBM bandwidth (:meth:`~rlmcost.perf.efficiency.Device.elementwise_s`).
A :class:`LogprobHead` gives, per token and per vocabulary entry of the rank's shard, the bytes
its kernels move forward and backward, and how many kernels they are; the bytes are fp32
(4 per element) except where a kernel reads the 16-bit logits of the GEMM.

* :data:`FUSED` (rlmcost's default, :mod:`rlmcost.perf.step_pass`): a fused vocabulary-parallel
  cross-entropy that writes the fp32 logits once and reads them once (8 bytes), the same
  backward; 3 kernels each way.
* :data:`NEMO_RL_DISTRIBUTED_LOGPROB`: NeMo RL's Megatron policy worker.
  ``get_logprobs`` (``nemo_rl/models/policy/workers/megatron_policy_worker.py``) post-processes
  every micro-batch with ``LogprobsPostProcessor`` (``nemo_rl/models/megatron/train.py``),
  which calls ``from_parallel_logits_to_logprobs[_packed_sequences]`` and so
  ``DistributedLogprob.forward`` (``nemo_rl/distributed/model_utils.py``, NVIDIA-NeMo/RL at
  v0.5.0 and r0.6.0); the training loss (``ClippedPGLossFn``) goes through the same function
  and its ``backward``. Counted from that code, per element of the rank's ``[T, V / P_t]``
  logits (``defer_fp32_logits: false`` and no ``logprob_chunk_size`` in
  ``examples/configs/grpo_math_1B.yaml`` and the performance recipes, so nothing is chunked):

  ==========================================================  ==============  =========
  kernel (forward)                                            read + write    bytes
  ==========================================================  ==============  =========
  ``vocab_parallel_logits.to(torch.float32)``                 2 + 4           6
  ``torch.amax`` (in ``_compute_distributed_log_softmax``)    4               4
  ``logits - logits_max``                                     4 + 4           8
  ``.exp()`` (a new tensor), then ``.sum(-1)``                4 + 4, 4        12
  ``logits - sum_exp_logits.log_()``                          4 + 4           8
  ``softmax_output = log_probs.exp()`` (kept even when
  ``inference_only``)                                         4 + 4           8
  ==========================================================  ==============  =========

  46 bytes in 7 kernels (the gather of the target's log-prob and the masks touch ``T``
  elements, not ``T V``). Backward (``DistributedLogprob.backward``, the 3-D branch):
  ``softmax.neg()`` (8), ``mul_(grad_output)`` (8), then autograd's gradient of the fp32 cast
  back to 16 bits (4 + 2): 22 bytes in 3 kernels (the ``scatter_add_`` of the chosen tokens
  touches ``T`` elements).

* :data:`MEGATRON_VOCAB_PARALLEL_CE`: Megatron-core's unfused vocabulary-parallel
  cross-entropy, the pre-training loss when ``--cross-entropy-loss-fusion`` is off (its
  default): ``_VocabParallelCrossEntropy`` in ``megatron/core/tensor_parallel/
  cross_entropy.py`` (NVIDIA/Megatron-LM @f2e5db402, Megatron-Core r0.8). Forward:
  ``.float()`` of the 16-bit logits (2 + 4), ``torch.max`` (4), ``logits -= logits_max``
  (4 + 4), ``torch.exp(out=)`` in place (4 + 4), ``.sum(-1)`` (4), ``exp_logits.div_(sum)``
  (4 + 4): 38 bytes in 6 kernels. Backward: ``grad_input.mul_(grad_output)`` (4 + 4) and the
  fp32 cast's gradient back to 16 bits (4 + 2): 14 bytes in 2 kernels (the target's
  ``grad_2d[arange, target] -= ...`` touches ``T`` elements).

* :data:`FLASH_ATTN_XENTROPY`: flash-attn's fused cross-entropy on the 16-bit logits, the loss
  of llm-foundry's MPT (``ComposerMPTCausalLM``'s default ``loss_fn: fused_crossentropy``,
  ``llmfoundry/models/mpt/modeling_mpt.py`` @061f2c7ce: ``flash_attn.losses.cross_entropy.
  CrossEntropyLoss``; ``setup.py``'s ``gpu`` extra pins ``xentropy-cuda-lib`` from
  flash-attention v1.0.9). ``csrc/xentropy/xentropy_kernel.cu``: the forward kernel
  (``cunn_SoftMaxXEntropyForward``, one block per token) reads the row twice (``ilpReduce`` of
  max and sum, then of the exponentials) and writes a loss and a log-sum-exp per token: 4
  bytes per bf16 element in 1 kernel; the backward (``cunn_SoftMaxXEntropyBackward``) reads the
  logits and writes their gradient (``empty_like``: ``inplace_backward`` is False): 4 bytes in
  1 kernel. Under ``amp_bf16`` the head's GEMM writes bf16 logits (autocast does not cast
  into this custom autograd function).

  NeMo RL's DTensor worker (``dtensor_policy_worker.py``) runs ``torch.nn.functional.
  log_softmax`` on the upcast logits instead when its TP degree is 1 (fewer bytes); the
  NeMo RL preset takes the Megatron path, the backend of every NeMo RL performance recipe.
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass


@dataclass(frozen=True)
class LogprobHead:
    """Bytes per token and vocabulary entry of the rank's shard, and kernels, of the
    log-softmax over fp32 logits (module docstring), forward and backward."""

    name: str
    fwd_bytes: int
    bwd_bytes: int
    fwd_kernels: int
    bwd_kernels: int
    source: str


FUSED = LogprobHead("fused", 8, 8, 3, 3, "rlmcost default: one fp32 write and one read")
NEMO_RL_DISTRIBUTED_LOGPROB = LogprobHead(
    "nemo-rl-distributed-logprob", 46, 22, 7, 3,
    "nemo_rl/distributed/model_utils.py DistributedLogprob (NVIDIA-NeMo/RL v0.5.0, r0.6.0)",
)  # fmt: skip

MEGATRON_VOCAB_PARALLEL_CE = LogprobHead(
    "megatron-vocab-parallel-ce", 38, 14, 6, 2,
    "megatron/core/tensor_parallel/cross_entropy.py _VocabParallelCrossEntropy (@f2e5db402)",
)  # fmt: skip

FLASH_ATTN_XENTROPY = LogprobHead(
    "flash-attn-xentropy", 4, 4, 1, 1,
    "flash-attention csrc/xentropy/xentropy_kernel.cu (v1.0.9; llm-foundry MPT fused_crossentropy)",
)  # fmt: skip

HEADS = {
    h.name: h
    for h in (FUSED, NEMO_RL_DISTRIBUTED_LOGPROB, MEGATRON_VOCAB_PARALLEL_CE, FLASH_ATTN_XENTROPY)
}


def logprob_head(name: str) -> LogprobHead:
    """The :class:`LogprobHead` called ``name``; SpecError naming the choices otherwise.

    >>> logprob_head("nemo-rl-distributed-logprob").fwd_bytes
    46
    """
    try:
        return HEADS[name]
    except KeyError:
        raise SpecError(
            f"unknown log-prob head '{name}'; use one of {', '.join(HEADS)}"
        ) from None
