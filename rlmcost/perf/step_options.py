"""How the framework runs a training step: :class:`StepOptions`, which
:mod:`rlmcost.perf.step_pass` and the passes built on it read, and the attention kernel
(:class:`AttentionKernel`). Split from :mod:`rlmcost.perf.step_pass` by purpose; the dropout
fields are :mod:`rlmcost.perf.dropout`'s."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from rlmcost.choices import Fp8Recipe
from rlmcost.frozen import dataclass
from rlmcost.memo import memoized
from rlmcost.perf.collectives import Algorithm
from rlmcost.perf.ep_dispatch import EpDispatcher
from rlmcost.perf.fsdp_prefetch import BackwardPrefetch
from rlmcost.perf.logprob_head import FUSED, LogprobHead
from rlmcost.perf.moe_host import MOE_LAYER_HOST_S
from rlmcost.perf.overlap_contention import OVERLAP_COMPUTE_SLOWDOWN
from rlmcost.perf.selective_ac import SelectiveRecompute


class AttentionKernel(StrEnum):
    FLASH = "flash"  # fused, causal pairs only, the device's best kernel (FA3/cuDNN on Hopper)
    FLASH2 = "flash2"  # the same on a pre-FA3 kernel: FlashAttention-2, SDPA's flash backend
    MATERIALIZED = "materialized"  # s x s scores in HBM: softmax and dropout kernels

    @property
    def fused(self) -> bool:
        return self is not AttentionKernel.MATERIALIZED


@dataclass(frozen=True)
class StepOptions:
    """How the framework runs the step (defaults: a current Megatron-core / FSDP setup)."""

    attention: AttentionKernel = AttentionKernel.FLASH
    attention_dropout: bool = False  # on the attention probabilities (perf.dropout)
    hidden_dropout: bool = False  # after the output projections (perf.dropout)
    dropout_add_fused: bool = True  # its mask written by the residual add (the same)
    overlap_grad_reduce: bool = True
    overlap_param_gather: bool = True
    pp_scatter_gather: bool = True  # PP sends 1/P_t over the NIC, NVLink all-gather after
    pp_grad_scatter_gather: bool = True  # gradients too (off: DeepSpeed 2021, module doc)
    checkpoint_embeddings: bool = False  # full ckpt reruns embedding, head (deepspeed_pipe)
    pp_serial_p2p: bool = False  # each PP send / recv a blocking call (DeepSpeed 2021, the same)
    pp_overlap_p2p: bool = True  # Megatron's interleaved sends behind compute (megatron_pipe)
    offload_optimizer: bool = False
    host_link_bytes_per_s: float | None = None  # default: the spec's, else PCIe Gen4 x16
    main_grad_bytes: int = 4  # gradient buffer micro-batches accumulate into, the optimizer reads
    fused_grad_accumulation: bool = True  # weight-gradient GEMMs accumulate into main grads
    algorithm: Algorithm = Algorithm.AUTO
    logprob_head: LogprobHead = FUSED  # the log-softmax over fp32 logits (perf.logprob_head)
    moe_layer_host_s: float = MOE_LAYER_HOST_S.value  # a MoE layer's host floor (perf.moe_host)
    router_fp64: bool = False  # MoE router GEMM and casts in fp64 (perf.moe_router)
    moe_act_clamp: bool = False  # clamped GLU: eager clamp + cat (perf.moe_eager_ops)
    moe_permute_fusion: bool = True  # TE's fused MoE permute; off: unfused (perf.moe_permute)
    moe_rank_imbalance: float = 1.0  # busiest / mean EP rank's token copies (perf.moe_imbalance)
    ep_dispatcher: EpDispatcher = EpDispatcher.ALLTOALL  # across nodes (perf.ep_dispatch)
    moe_ep_overlap: bool = False  # all-to-alls behind another micro-batch (perf.ep_overlap)
    fsdp2_reduce_bytes: int = 0  # ZeRO-3 as FSDP2 with this reduce dtype (perf.policy_worker)
    fsdp_backward_prefetch: BackwardPrefetch = BackwardPrefetch.PRE  # FSDP1's (fsdp_prefetch)
    fsdp1_post_backward: bool = False  # FSDP1's gradient cast and pre-divide (fsdp_prefetch)
    hf_eager: bool = False  # eager Hugging Face layers' unfused kernels (perf.policy_worker)
    linear_mixer_replicated: bool = False  # Gated DeltaNet whole on each TP rank (linear_mixer)
    hf_output_cast: bool = False  # FSDP2 output_dtype=float32 casts around them (the same)
    fused_rope: bool = False  # the eager layers' RoPE one fused kernel (realhf; the same)
    rope_unfused: bool = False  # Megatron-core's eager RoPE, YaRN's mscale (perf.megatron_rope)
    torch_eager_block: bool = False  # llm-foundry MPT's eager backward kernels (perf.eager_block)
    train_metrics: int = 0  # Composer's cross-entropy training metrics (perf.train_metrics)
    composer_optimizer: bool = False  # DecoupledAdamW + FSDP1 clip (perf.composer_optimizer)
    selective: SelectiveRecompute = SelectiveRecompute.ATTENTION_CORE  # perf.selective_ac
    recompute_early_stop: bool = False  # torch non-reentrant ckpt's early stop (ckpt_early_stop)
    peft_lora: tuple[str, ...] = ()  # PEFT LoRA targets: their base GEMMs rerun (the same)
    module_ckpt: bool = False  # NeMo RL DTensor's ckpt of each layer's modules apart (module_ckpt)
    recompute_modules: tuple[str, ...] = ("core_attn",)  # Megatron's, selective "modules"
    tp_comm_overlap: bool = False  # SP collectives behind the GEMMs (perf.tp_overlap)
    grad_reduce_bytes: int = 0  # DP gradient reduce dtype; 0 = weight dtype (perf.data_parallel)
    megatron_loop: bool = False  # batch copy, loss report, DDP buckets (perf.megatron_loop)
    overlap_slowdown: float = OVERLAP_COMPUTE_SLOWDOWN  # compute beside NCCL (overlap_contention)
    fp8: Fp8Recipe | None = None  # TE FP8 Linear layers' recipe; None: bf16 (perf.fp8_train)
    mtp_layers: int = 0  # multi-token prediction depths on the last stage (perf.mtp_pass)
    mtp_detach_heads: bool = False  # their loss gives the output head no gradient (the same)
    mtp_repeated: bool = False  # one module's weights at every depth: memory only (the same)


_KEPT: Callable[..., StepOptions] = memoized()(StepOptions)


def kept_options(**fields: Any) -> StepOptions:
    """``StepOptions(**fields)``, one instance per equal fields and their types
    (:func:`rlmcost.memo.memoized`; built afresh inside :func:`rlmcost.memo.plain`): a
    deployment's pass options (``placement.pass_options.step_options``, asked once per group
    estimate and by the worker notes) cost a look-up instead of a frozen ``__init__`` of
    forty fields and a ``dataclasses.replace``, and the memoized passes' keys that hold them
    meet the same instance (an identity, not a forty-field ``__eq__``)."""
    return _KEPT(**fields)
