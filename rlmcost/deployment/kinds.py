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


class LogitsMode(StrEnum):
    """How log-probs over the vocabulary are computed (:mod:`rlmcost.deployment.logits`)."""

    MATERIALIZED = "materialized"  # full [tokens, V] logits, fp32 upcast, log-softmax
    LOW_MEMORY = "low-memory"  # model-dtype logits; log-softmax row by row or a fused CE kernel
    FUSED = "fused"  # chunked/fused linear + cross-entropy (Liger FLCE, verl fused kernels)
