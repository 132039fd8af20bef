"""The deployment's choices as enums whose values are the CLI spellings (no pydantic: the CLI
imports them at start-up)."""

from __future__ import annotations

from enum import StrEnum


class Offload(StrEnum):
    """What a trainer keeps in host memory instead of HBM, and when.

    Kept there (the step runs with them on the host): DeepSpeed ZeRO-Offload
    ``offload_optimizer`` / OpenRLHF ``--adam_offload`` (CPU Adam), ZeRO-Infinity
    ``offload_param``, FSDP ``CPUOffload`` / FSDP2 ``CPUOffloadPolicy`` (verl
    ``fsdp_config.offload_policy``). Between phases (``-idle``, :data:`PHASE_OFFLOADS`): the
    states wait in host memory while the model does something else and come back to the GPU
    for their phase, so the update's peak is unchanged and the other phases' peak lower: verl
    ``actor.fsdp_config.param_offload`` / ``optimizer_offload`` (``verl/workers/
    fsdp_workers.py``: ``offload_fsdp_model_to_cpu`` / ``load_fsdp_model_to_gpu`` around each
    phase, ``offload_fsdp_optimizer`` / ``load_fsdp_optimizer`` around ``update_actor``;
    megatron ``param_offload`` / ``grad_offload`` / ``optimizer_offload`` the same in
    ``verl/workers/megatron_workers.py``), NeMo RL's colocated policy worker
    (``nemo_rl/models/policy/dtensor_policy_worker.py``: ``offload_before_refit`` moves the
    optimizer states to the host, ``offload_after_refit`` the model, ``prepare_for_training``
    brings both back).
    """

    OPTIMIZER = "optimizer"  # fp32 master weights and Adam moments (CPU Adam)
    PARAMS = "params"  # the parameter shard; gathered to the device layer by layer
    GRADS = "grads"  # the gradient shard, streamed to the host as it is reduced
    OPTIMIZER_IDLE = "optimizer-idle"  # Adam states on the host outside the update
    PARAMS_IDLE = "params-idle"  # the parameter shard on the host outside the model's phases
    GRADS_IDLE = "grads-idle"  # the gradient buffer on the host outside the update


PHASE_OFFLOADS = {
    Offload.OPTIMIZER_IDLE: "optimizer",
    Offload.PARAMS_IDLE: "weights",
    Offload.GRADS_IDLE: "gradients",
}
"""The between-phases offload kinds and the memory term each moves."""


class EngineKind(StrEnum):
    """What generates the rollouts.

    ``vllm`` / ``sglang``: an inference engine with continuous batching and a memory
    reservation of its own (paged KV pool); ``hf``: Hugging Face ``generate`` on the training
    model itself (TRL ``use_vllm: false``, OpenRLHF without ``--vllm_num_engines``): static
    padded batches in the trainer's layout, no reservation, eager kernels;
    ``ds-hybrid``: DeepSpeed-Chat's Hybrid Engine, the trainer's weights gathered into an
    inference TP layout with fused kernels, static batches, no reservation, each forward at
    least its layers' host time (no CUDA graphs; ``HYBRID_ENGINE_LAUNCH_S_PER_LAYER``);
    ``ds-hybrid-unpinned``: the same engine under ZeRO-3 with ``pin_parameters`` false
    (DeepSpeed-Chat's ``--unpin_actor_parameters``): nothing gathered ahead, each layer's
    parameters gathered over the trainer's ZeRO-3 group in every forward, so every decode step
    (deepspeed/runtime/hybrid_engine.py ``_zero3_forward``), in the trainer's layout;
    ``megatron``: Megatron-core's ``DynamicInferenceEngine`` as NeMo RL's Megatron generation
    backend runs it (``policy.generation.backend: megatron``;
    :mod:`rlmcost.deployment.megatron_engine`): continuous batching over a paged KV pool of a
    fixed size, CUDA graphs; colocated it serves the policy's own weights in the training
    layout (no copy, no refit), or a dedicated inference layout resharded into at each wake."""

    VLLM = "vllm"
    SGLANG = "sglang"
    HF = "hf"
    DS_HYBRID = "ds-hybrid"
    DS_HYBRID_UNPINNED = "ds-hybrid-unpinned"
    MEGATRON = "megatron"

    @property
    def static(self) -> bool:
        """Static batching on the training weights (no engine of its own)."""
        return self in (EngineKind.HF, EngineKind.DS_HYBRID, EngineKind.DS_HYBRID_UNPINNED)

    @property
    def hybrid_engine(self) -> bool:
        """DeepSpeed-Chat's Hybrid Engine, pinned or not."""
        return self in (EngineKind.DS_HYBRID, EngineKind.DS_HYBRID_UNPINNED)

    @property
    def in_trainer_layout(self) -> bool:
        """Generation in the trainer's own layout (ZeRO-3 shards gathered per forward)."""
        return self in (EngineKind.HF, EngineKind.DS_HYBRID_UNPINNED)


class LogitsMode(StrEnum):
    """How log-probs over the vocabulary are computed (:mod:`rlmcost.deployment.logits`)."""

    MATERIALIZED = "materialized"  # full [tokens, V] logits, fp32 upcast, log-softmax
    LOW_MEMORY = "low-memory"  # model-dtype logits; log-softmax row by row or a fused CE kernel
    FUSED = "fused"  # chunked/fused linear + cross-entropy (Liger FLCE, verl fused kernels)
    CHUNKED = "chunked"  # model-dtype logits; fp32 log-softmax per sequence chunk (NeMo RL)


class RouterDtype(StrEnum):
    """The MoE router's GEMM dtype (Megatron-core ``moe_router_dtype``; rlmcost.perf.moe_router)."""

    FP32 = "fp32"  # a 16-bit tensor-core GEMM writing fp32 logits (Megatron's None prices alike)
    FP64 = "fp64"  # DGEMMs and fp64 casts: NeMo RL's base config


class GradReduce(StrEnum):
    """The dtype of a Megatron-core trainer's gradient buffer, in which its micro-batches
    accumulate and its data-parallel reduce runs (``DistributedDataParallelConfig.
    grad_reduce_in_fp32``; :mod:`rlmcost.placement.grad_buffer` has the frameworks' choices)."""

    FP32 = "fp32"  # grad_reduce_in_fp32 true: 4 B a parameter (Megatron-LM's bf16 runs)
    PARAM = "param"  # false: the parameters' dtype (NeMo RL's configs)


def parse_offloads(v: object) -> object:
    """``TrainLayout.offload`` from a comma-separated string or a list of words: the
    :class:`Offload` values in order, once each; ValueError naming the choices otherwise."""
    if isinstance(v, str):
        v = [w for w in v.split(",") if w.strip()]
    if not isinstance(v, list | tuple):
        return v
    out = []
    for w in v:
        word = str(w).strip().lower()
        if word not in {o.value for o in Offload}:
            raise ValueError(f"unknown offload '{w}'; use any of "
                             f"{', '.join(o.value for o in Offload)} (comma-separated)")
        out.append(Offload(word))
    return tuple(dict.fromkeys(out))


class TrainerKernels(StrEnum):
    """The trainer's implementation where no ``--framework`` preset says, or (``liger``) the
    Liger patch over a preset's Hugging Face trainer (:mod:`rlmcost.placement.pass_options`)."""

    FUSED = "fused"  # Megatron-core / TE: fused norms, cuDNN / FlashAttention-3-class attention
    REALHF = "realhf"  # AReaL v0.3's ReaLModel: FA2, eager norms (perf.policy_worker), its rate
    LIGER = "liger"  # a Hugging Face trainer's layers under Liger's patch: fused RMSNorm, RoPE,
    # SwiGLU (placement.glu_kernel), its logits as --logits says (verl model.use_liger)


class LoraGather(StrEnum):
    """How a trainer gathers its weights when it refits an engine under LoRA
    (:mod:`rlmcost.placement.lora_gather`)."""

    ADAPTERS = "adapters"  # the adapters' tensors alone (FSDP2's DTensors, PEFT's state dict)
    LAYERS = "layers"  # one FSDP unit's full parameters at a time (verl rollout.layered_summon)
    MODEL = "model"  # the whole model's full parameters on every trainer GPU (verl on FSDP1)
