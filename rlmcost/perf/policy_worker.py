"""Two costs of a policy worker's own mechanics that its GEMMs and collectives leave out: the
reference model swapped in through host memory, and FSDP2's per-micro-batch parameter and
gradient copies. (llm-foundry MPT's eager block, ``StepOptions.torch_eager_block``, is
:mod:`rlmcost.perf.eager_block`'s, added from :func:`worker_kernels`.)

* **Reference swap** (:func:`reference_swap_s`). NeMo RL runs the reference's log-prob forward
  in the policy's own model: ``use_reference_model`` in ``nemo_rl/models/policy/
  megatron_policy_worker.py`` (NVIDIA-NeMo/RL v0.3.0 and v0.4.0; ``workers/megatron_policy_
  worker.py`` at v0.5.0 and v0.7.0) copies the policy's state dict to the host
  (``item.detach().to(device="cpu", non_blocking=True, copy=True)``), loads the reference's
  host copy into the model (``load_state_dict(self.reference_state_dict)``), and on exit loads
  the policy's back; ``dtensor_policy_worker.py`` (v0.3.0) does the same with
  ``get_cpu_state_dict(..., pin_memory=True)`` and ``copy_``. That is
  :data:`REFERENCE_SWAP_COPIES` copies of the rank's model state (its parameters as the model
  holds them: 16-bit in Megatron-core beside the distributed optimizer's fp32 master copy, the
  fp32 FSDP2 shard in the DTensor worker) over the host link, in series with the forward. The
  ``gc.collect()`` and ``torch.cuda.empty_cache()`` around them are not priced.
* **FSDP2 copies** (:func:`fsdp2_copy_bytes`). ``fully_shard`` (PyTorch ``torch/distributed/
  fsdp/_fully_shard/_fsdp_param_group.py`` ``wait_for_unshard``, ``_fsdp_collectives.py``
  ``foreach_all_gather_copy_out`` and ``foreach_reduce``) shards each parameter on its own, so
  every all-gather lands in a flat buffer that ``split_with_sizes_copy`` copies out into the
  parameters (read + write of ``a`` bytes each, ``a`` = the MixedPrecisionPolicy's
  ``param_dtype``), on the compute stream, before the layer runs: once in the forward and once
  more in the backward (``reshard_after_forward=True``, the default the per-layer
  ``fully_shard`` of ``nemo_rl/models/dtensor/parallelize.py`` keeps). Before each
  reduce-scatter the gradients (``a`` bytes) are copied into the reduce-scatter buffer in the
  ``reduce_dtype`` (``r`` bytes: ``foreach_reduce_scatter_copy_in`` / ``_chunk_cat``, on the
  compute stream before ``reduce_scatter_stream.wait_stream(current_stream)``). NeMo RL's
  DTensor worker sets ``MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32,
  output_dtype=float32)`` (``parallelize.py`` at v0.3.0) and syncs gradients every micro-batch
  (its ``train`` loop has no ``set_requires_gradient_sync(False)``), so per micro-batch and
  parameter of the rank's tensor-parallel shard: forward ``2 a``, backward ``2 a + a + r``
  bytes (bf16 / fp32: 4 and 10), and the reduce-scatter moves ``r`` bytes per parameter.
* **Eager Hugging Face layers** (:func:`hf_eager_bytes`, :func:`worker_kernels`). A trainer
  that runs the Hugging Face model as written, without Liger kernels or ``torch.compile`` of
  the model (which trainers do, with their sources: :mod:`rlmcost.placement.pass_options`;
  NeMo RL's DTensor worker: ``AutoModelForCausalLM.from_pretrained(...,
  attn_implementation="flash_attention_2")`` in ``dtensor_policy_worker.py`` at v0.3.0), runs
  unfused the memory-bound kernels that
  :mod:`~rlmcost.perf.step_pass` prices fused run unfused (transformers ``modeling_llama.py``,
  the same in ``modeling_qwen2``/``qwen3``), per token and layer, ``x`` the activation bytes:
  ``LlamaRMSNorm`` upcasts to fp32 (``to``, ``pow``, ``mean``, ``* rsqrt``, ``to``, ``weight *``:
  ``(4 x + 28) d`` bytes in 6 kernels, against the fused norm's ``2 x d`` in 1), twice;
  ``apply_rotary_pos_emb`` (``rotate_half``'s ``neg`` and ``cat``, ``* cos``, ``* sin``, ``+``:
  ``10 x`` per element of q and of k in 5 kernels each, against ``2 x`` in 1); ``act_fn(gate) *
  up`` (``5 x d_ff`` in 2 kernels, against ``3 x d_ff`` in 1); and, NeMo RL's only
  (``StepOptions.hf_output_cast``), FSDP2's ``output_dtype=float32`` (``parallelize.py``)
  casts each layer's output to fp32 and ``cast_forward_inputs`` the next layer's input back
  (``(2 x + 8) d`` in 2 kernels). verl's FSDP workers set no ``output_dtype``
  (``MixedPrecisionPolicy(param_dtype, reduce_dtype, cast_forward_inputs=True)``,
  verl/workers/fsdp_workers.py @b178a3cd: the layers' bf16 inputs need no cast) and
  DeepSpeed's bf16 engine (OpenRLHF) holds the model in bf16: no casts. The extra bytes and
  kernels are added forward and, at twice them (step_pass's rule for memory-bound kernels),
  backward; d-wide tensors are split over TP under SP, q, k and d_ff over TP. MoE layers are
  left as step_pass prices them.
  AReaL v0.3's trainer (realhf's own ``ReaLModel`` under Megatron's DDP, ``--trainer-kernels
  realhf``) runs the same eager norm and SiLU x up: at tag v0.3.0
  ``realhf/impl/model/modules/mlp.py`` picks ``_LlamaRMSNorm`` (HF's fp32-upcast code) unless
  ``REAL_LLM_USE_TE=1`` (``realhf/base/constants.py`` ``use_te_impl``; no launcher sets it),
  ``LlamaLayerNormMLP.forward`` returns ``down_proj(act_fn(gate) * upproj)``; its attention is
  ``flash_attn_varlen_func`` of the flash-attn 2 package (``modules/attn.py``) and its RoPE
  flash-attn's fused Triton rotary (``StepOptions.fused_rope``: no RoPE term).
* **Per-sequence loss of a packed micro-batch** (:func:`packed_loss_s`). Under sequence packing
  NeMo RL's trainers wrap the loss in ``SequencePackingLossWrapper``
  (``nemo_rl/algorithms/loss_functions.py`` at v0.3.0-v0.5.0, ``nemo_rl/algorithms/loss/
  wrapper.py`` at v0.6.0-v0.7.0; called from ``nemo_rl/models/megatron/common.py``
  ``forward_step_arbitrary_loss`` and ``dtensor_policy_worker.py`` ``train``), which calls the
  loss once per packed sequence "to avoid excessive padding": ``next_token_logits[:, slice]``
  (v0.3.0) or ``.narrow(1, ...)`` (v0.5.0 on; a slice for autograd) and the whole
  ``ClippedPGLossFn`` on that sequence. Two costs follow, per micro-batch of ``k`` sequences and
  ``T`` tokens on the rank (the last pipeline stage's), ``V / P_t`` vocabulary entries each:

  - *gradient bytes*: autograd's ``slice_backward`` returns a zero-filled gradient of the whole
    ``[T, V / P_t]`` logits for every slice (a write of ``x`` bytes per element) and the
    gradients of the ``k`` slices are summed into one (``k - 1`` adds, read ``2 x`` write
    ``x``): ``(4 k - 3) x`` bytes per element (:func:`packed_loss_grad_bytes`), ``x`` = 4: the
    logits are fp32, Megatron-core's ``Float16Module`` casting the last stage's output up
    (``fp32_output=True``, ``megatron/core/transformer/module.py`` at NVIDIA/Megatron-LM
    d98e8a64; NeMo RL leaves ``defer_fp32_logits`` false) and FSDP2's ``output_dtype=float32``;
  - *host-serialized launches*: each call issues its kernels from Python between host syncs
    (the ``.item()`` of every metric), so the GPU cannot run ahead and each launch costs its
    host time. Counted at v0.3.0 for one sequence: about 78 forward kernels (the wrapper's
    boundary arithmetic, ``from_parallel_logits_to_logprobs`` and ``DistributedLogprob``'s 22
    with its 3 all-reduces, the KL, ratio, clipping, importance-weight and 6 ``masked_mean``
    metrics), about 35 backward kernels through the same graph, and 19 device-to-host syncs
    (2 + 6 + 1 in the wrapper's ``.item()`` and tensor-bounded slices, 8 metric ``.item()``,
    2 boolean-mask ``index_put``): :data:`PACKED_LOSS_LAUNCHES_PER_SEQUENCE`, each at
    :data:`~rlmcost.perf.rl_constants.EAGER_LAUNCH_S_PER_LAYER` / 15 (that constant's ~15
    kernels a layer, an estimate). Later versions log more metrics per call: a lower bound.

  NeMo RL v0.6.0 added ``policy.sequence_packing.fuse_loss`` (NVIDIA-NeMo/RL PR 1904, "Apply
  a single call of loss function to all sequences ... up to 15% speedup on policy training",
  ``SequencePackingFusionLossWrapper``), default false; with it (``TrainLayout.fused_loss``)
  neither cost is charged. The log-prob forwards are not wrapped (``get_logprobs`` post-processes
  a micro-batch in one call; its per-sequence loops move ``T``-sized tensors only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import NormKind
from rlmcost.parallel.layout import ZeroStage
from rlmcost.parallel.shard import tp_shard
from rlmcost.perf.eager_block import eager_block_kernels
from rlmcost.perf.rl_constants import EAGER_LAUNCH_S_PER_LAYER

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.step_pass import StagePass, StepContext

EAGER_KERNELS_PER_LAYER = 15
"""Kernels per layer behind :data:`~rlmcost.perf.rl_constants.EAGER_LAUNCH_S_PER_LAYER` (its
docstring: ~15 kernels per decoder layer), to turn it into seconds per launch."""

REFERENCE_SWAP_COPIES = 3
"""Host-link copies of the rank's model state per reference forward: policy out, reference
in, policy back in (NeMo RL ``use_reference_model``, module docstring)."""


def reference_swap_s(state_bytes_per_device: int, host_bytes_per_s: float,
                     copies: int = REFERENCE_SWAP_COPIES) -> float:  # fmt: skip
    """Seconds of one reference swap: ``copies`` x the rank's model state bytes over the host
    link (module docstring).

    >>> reference_swap_s(16_000_000_000, 64e9)  # Llama-3.1-8B bf16 at TP 1, PCIe Gen5 x16
    0.75
    """
    return copies * state_bytes_per_device / host_bytes_per_s if copies else 0.0


PACKED_LOSS_LAUNCHES_PER_SEQUENCE = 132
"""Host-serialized launches of one sequence's loss call under NeMo RL's
``SequencePackingLossWrapper``: 78 forward kernels, 35 backward, 19 device-to-host syncs
(counted from nemo_rl/algorithms/loss_functions.py and distributed/model_utils.py at v0.3.0;
module docstring)."""

PACKED_LOSS_LOGITS_BYTES = 4
"""Bytes per element of the logits the loss slices: fp32 (Megatron-core ``Float16Module``
``fp32_output``, FSDP2 ``output_dtype=float32``; module docstring)."""


def packed_loss_grad_bytes(sequences: int, tokens: int, vocab_shard: int,
                           logits_bytes: int = PACKED_LOSS_LOGITS_BYTES) -> int:  # fmt: skip
    """Bytes the per-sequence slices' gradients move in one micro-batch of ``sequences``
    packed sequences and ``tokens`` tokens, ``vocab_shard`` logits each: a zero-filled
    full-size gradient per slice and ``sequences - 1`` accumulating adds, ``(4 k - 3) x`` per
    element (module docstring; 0 without sequences).

    >>> packed_loss_grad_bytes(1, 10, 100)  # one slice: its zero fill only
    4000
    >>> packed_loss_grad_bytes(4, 10, 100)  # 13 x 4 B x 1000 elements
    52000
    """
    if sequences < 1:
        return 0
    return (4 * sequences - 3) * logits_bytes * tokens * vocab_shard


def packed_loss_s(device: Device, sequences: int, micro_batches: int, tokens: int,
                  vocab_shard: int) -> float:  # fmt: skip
    """Seconds the per-sequence loss adds to one optimizer step of a rank (module docstring):
    ``sequences`` packed sequences in ``micro_batches`` micro-batches of ``tokens`` tokens in
    all on the rank, the gradient bytes at HBM speed (sequences spread evenly over the
    micro-batches) and :data:`PACKED_LOSS_LAUNCHES_PER_SEQUENCE` host launches per sequence.

    >>> from rlmcost.perf.efficiency import Device
    >>> from rlmcost.specs import get_hardware
    >>> dev = Device(get_hardware("h100-sxm"))
    >>> round(packed_loss_s(dev, 256, 0, 0, 0), 3)  # no micro-batch: nothing
    0.0
    >>> round(packed_loss_s(dev, 1, 1, 4096, 128256) * 1e3, 2) > 0.88  # launches + fill
    True
    """
    if sequences < 1 or micro_batches < 1:
        return 0.0
    per_mb = tokens // micro_batches
    k, extra = divmod(sequences, micro_batches)
    grad = (micro_batches - extra) * packed_loss_grad_bytes(k, per_mb, vocab_shard) + \
        extra * packed_loss_grad_bytes(k + 1, per_mb, vocab_shard)  # fmt: skip
    launch_s = EAGER_LAUNCH_S_PER_LAYER.value / EAGER_KERNELS_PER_LAYER
    return device.memory_s(grad) + sequences * PACKED_LOSS_LAUNCHES_PER_SEQUENCE * launch_s


def fsdp2_copy_bytes(params: int, param_bytes: int, reduce_bytes: int) -> tuple[int, int]:
    """(forward, backward) bytes FSDP2's copies move per micro-batch for ``params`` parameters
    of the rank's tensor-parallel shard (module docstring): the all-gather copy-out
    (``2 a``) each way, and the reduce-scatter copy-in (``a + r``) in the backward.

    >>> fsdp2_copy_bytes(1_000, 2, 4)  # bf16 parameters, fp32 gradient reduction
    (4000, 10000)
    """
    out = 2 * param_bytes * params
    return out, out + (param_bytes + reduce_bytes) * params


def hf_eager_bytes(
    arch: Arch, tp: int, sp: bool, x: int, output_cast: bool = True, fused_rope: bool = False
) -> tuple[int, int]:
    """(bytes, kernels) per token that one dense layer's eager Hugging Face kernels and, with
    ``output_cast``, FSDP2's fp32 output casts add to :mod:`~rlmcost.perf.step_pass`'s fused
    ones, forward (module docstring); ``fused_rope``: RoPE as one fused kernel, as priced
    fused (AReaL v0.3's realhf ``ReaLModel``: ``apply_rotary_varlen``, flash-attn's Triton
    rotary, ``realhf/impl/model/modules/rotary.py``), so only the norms and SiLU x up add.

    >>> from rlmcost.specs import get_model
    >>> hf_eager_bytes(get_model("llama-3.1-8b").arch(), 1, False, 2)  # 76 d + 16 (q + kv) + 4 d_ff
    (450560, 22)
    >>> hf_eager_bytes(get_model("llama-3.1-8b").arch(), 1, False, 2, False)  # less 12 d
    (401408, 20)
    """
    sh = tp_shard(arch, tp)
    d = int(arch.d_model) // (tp if sp else 1)
    out, kernels = ((2 * x + 8) * d, 2) if output_cast else (0, 0)  # fp32 output, input back
    if arch.norm is NormKind.RMSNORM:
        out, kernels = out + 2 * (2 * x + 28) * d, kernels + 2 * 5
    if not arch.n_positions and not fused_rope:  # RoPE on q and k
        out, kernels = out + 8 * x * (int(sh.q_width) + int(sh.kv_width)), kernels + 9
    if arch.ffn_kind.projections == 3:
        out, kernels = out + 2 * x * int(sh.d_ff), kernels + 1
    return out, kernels


def worker_kernels(c: StepContext, stage: PipelineStage, p: StagePass) -> None:
    """Add the eager Hugging Face layers' extra memory-bound kernels to one micro-batch's pass
    of ``stage`` when the options say the trainer runs them (``StepOptions.hf_eager``; FSDP2's
    fp32 output casts with ``hf_output_cast``, under ZeRO-3 only, where FSDP2 wraps them)."""
    eager_block_kernels(c, stage, p)  # llm-foundry MPT's (perf.eager_block)
    lay, opt = c.layout, c.options
    if not opt.hf_eager or not stage.dense_layers:
        return
    cast = opt.hf_output_cast and lay.zero is ZeroStage.OS_G_P
    x = c.workload.activation_dtype.bytes
    per_token, kernels = hf_eager_bytes(c.arch, lay.tp, lay.sp, x, cast, opt.fused_rope)
    n = stage.dense_layers
    p.fwd["elementwise"] += c.device.elementwise_s(c.tokens * per_token * n, kernels * n)
    p.bwd["elementwise"] += c.device.elementwise_s(2 * c.tokens * per_token * n, 2 * kernels * n)
