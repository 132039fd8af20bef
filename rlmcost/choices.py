"""Choices as string enums whose values are the CLI spellings.

This module imports nothing heavy, so the CLI can build its options from it at start-up.
"""

from __future__ import annotations

from enum import StrEnum


class Dtype(StrEnum):
    """Element type of a tensor; ``.bytes`` is its size."""

    FP32 = "fp32"
    TF32 = "tf32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    FP64 = "fp64"  # NeMo RL's MoE router (rlmcost.perf.moe_router)

    @property
    def bytes(self) -> int:
        return _DTYPE_BYTES[self._value_]  # a module dict: no dict built and no ``value`` walk


_DTYPE_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "fp64": 8}
"""Bytes per element of each :class:`Dtype` by value (the IEEE 754 and OCP FP8 formats' widths;
TF32 is stored in 32 bits)."""


class FfnKind(StrEnum):
    """Feed-forward block shape."""

    PLAIN = "plain"  # 2 projections, up -> activation -> down (GPT-2, the paper's canonical FFN)
    GATED = "gated"  # 3 projections, act(gate) * up -> down (SwiGLU: Llama, Mistral, Qwen)

    @property
    def projections(self) -> int:
        return 2 if self is FfnKind.PLAIN else 3


class NormKind(StrEnum):
    """Normalization layer: RMSNorm has a weight vector, LayerNorm a weight and a bias."""

    RMSNORM = "rmsnorm"
    LAYERNORM = "layernorm"

    @property
    def vectors(self) -> int:
        return 1 if self is NormKind.RMSNORM else 2


class Head(StrEnum):
    """Output head on top of the last hidden state."""

    LM = "lm"  # d x V language-model head (actor, reference): logits for every position
    VALUE = "value"  # d x 1 scalar head (critic, reward model)


class AttnCounting(StrEnum):
    """How the FLOPs of a teacher-forced (prefill / training) attention are counted.

    ``full``: every query meets every key of the sequence, masked or not: what
    ``torch.utils.flop_counter.FlopCounterMode`` counts for SDPA and eager attention (default).
    ``causal``: only the unmasked query-key pairs, S(S+1)/2 per head (about half of ``full``).
    A decode step attends to its whole KV cache under both conventions.
    """

    FULL = "full"
    CAUSAL = "causal"


class RankOrder(StrEnum):
    """How a framework orders its hosts in rank order (rlmcost.placement.rank_order):
    ``topology`` by NVLink domain (rlmcost's layout), ``random`` regardless of racks."""

    TOPOLOGY = "topology"
    RANDOM = "random"


class MlaDecode(StrEnum):
    """How a decode step of multi-head latent attention (DeepSeek-V2/V3) is computed.

    ``absorbed`` (default): what inference engines run for decode (vLLM's MLA backends, SGLang,
    FlashMLA; DeepSeek-V2, arXiv:2405.04434 §2.1.2): W_UK is absorbed into the query and W_UV
    into the output, so attention runs over the cached latent (kv_lora_rank + qk_rope_head_dim
    elements per position, one shared "head") and the per-head keys and values are never
    materialized. ``reference``: transformers' eager DeepseekV3 code (what FlopCounterMode
    counts), which re-expands every cached latent through kv_b_proj at every step.
    Prefill and training use the expanded form under both (engines do too: it is compute-bound).
    """

    ABSORBED = "absorbed"
    REFERENCE = "reference"


class EpDispatcher(StrEnum):
    """How a MoE layer's tokens reach their experts' ranks (Megatron-core's
    ``moe_token_dispatcher_type``; the pricing and sources: :mod:`rlmcost.perf.ep_dispatch`)."""

    ALLTOALL = "alltoall"  # NCCL all-to-all: each copy once, NIC or NVLink by its peer
    DEEPEP = "deepep"  # flex + DeepEP normal kernels: once per remote node, then NVLink
    ALLGATHER = "allgather"  # Megatron's default: ETP x EP all-gather, reduce-scatter back


class TurnSchedule(StrEnum):
    """How a multi-turn (agentic) rollout interleaves its samples' turns with the environment
    (rlmcost.placement.turns).

    ``per-sample``: each trajectory runs as its own task and the engine keeps decoding other
    samples while one waits for its tool (verl's agent loop, ``verl/experimental/agent_loop/
    tool_agent_loop.py`` @b178a3cd; NeMo RL ``run_async_multi_turn_rollout`` under
    ``vllm_cfg.async_engine``; slime's per-sample ``generate``, ``slime/rollout/
    sglang_rollout.py`` @624b824a). ``turn-synchronous``: every active sample's turn i is one
    generation batch, then one environment step for all, then turn i + 1 (NeMo RL
    ``run_multi_turn_rollout``, ``nemo_rl/experience/rollouts.py`` @7ea279abf)."""

    PER_SAMPLE = "per-sample"
    TURN_SYNC = "turn-synchronous"


class Fp8Recipe(StrEnum):
    """Transformer Engine's FP8 training recipe of a Megatron-core trainer (``--fp8-recipe``;
    the pricing and sources: :mod:`rlmcost.perf.fp8_train`)."""

    DELAYED = "delayed"  # DelayedScaling: a per-tensor scale from the amax history
    TENSORWISE = "tensorwise"  # Float8CurrentScaling: a per-tensor scale from this amax
    BLOCKWISE = "blockwise"  # Float8BlockScaling: 1x128 activations, 128x128 weights (Hopper)
    MXFP8 = "mxfp8"  # MXFP8BlockScaling: an E8M0 scale per 32 elements (Blackwell only)
