"""The deployment's choices as enums whose values are the CLI spellings (no pydantic: the CLI
imports them at start-up)."""

from __future__ import annotations

from enum import StrEnum


class Offload(StrEnum):
    """What a trainer keeps in host memory instead of HBM (DeepSpeed ZeRO-Offload, FSDP
    CPUOffload; verl ``fsdp_config.optimizer_offload`` / ``param_offload``)."""

    OPTIMIZER = "optimizer"  # fp32 master weights and Adam moments (CPU Adam)
    PARAMS = "params"  # the parameter shard; gathered to the device layer by layer
    GRADS = "grads"  # the gradient shard, streamed to the host as it is reduced


class EngineKind(StrEnum):
    """What generates the rollouts.

    ``vllm`` / ``sglang``: an inference engine with continuous batching and a memory
    reservation of its own (paged KV pool); ``hf``: Hugging Face ``generate`` on the training
    model itself (TRL ``use_vllm: false``, OpenRLHF without ``--vllm_num_engines``): static
    padded batches in the trainer's layout, no reservation, eager kernels;
    ``ds-hybrid``: DeepSpeed-Chat's Hybrid Engine, the trainer's weights gathered into an
    inference TP layout with fused kernels, static batches, no reservation."""

    VLLM = "vllm"
    SGLANG = "sglang"
    HF = "hf"
    DS_HYBRID = "ds-hybrid"

    @property
    def static(self) -> bool:
        """Static batching on the training weights (no engine of its own)."""
        return self in (EngineKind.HF, EngineKind.DS_HYBRID)


class LogitsMode(StrEnum):
    """How log-probs over the vocabulary are computed (:mod:`rlmcost.deployment.logits`)."""

    MATERIALIZED = "materialized"  # full [tokens, V] logits, fp32 upcast, log-softmax
    LOW_MEMORY = "low-memory"  # model-dtype logits; log-softmax row by row or a fused CE kernel
    FUSED = "fused"  # chunked/fused linear + cross-entropy (Liger FLCE, verl fused kernels)
