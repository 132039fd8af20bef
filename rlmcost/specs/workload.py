"""Workload: the token counts and dtypes of one RL iteration (seed paper Table I notation)."""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects
# (as strings it compiles each as a ForwardRef at every start); methods quote their own class.
from pydantic import ConfigDict, Field

from rlmcost.choices import Dtype, TurnSchedule
from rlmcost.specs.validation import Checked

SGLANG_SWA_FULL_TOKENS_RATIO = (4, 5)
"""SGLang's ``--swa-full-tokens-ratio`` default 0.8 as (numerator, denominator): its hybrid SWA
pool gives the sliding layers 0.8 token slots per full-layer slot (python/sglang/srt/
server_args.py ``swa_full_tokens_ratio: float = 0.8``; model_executor/pool_configurator.py
``HybridSWAPoolConfigurator``: bytes per full-pool token = full layers' KV + ratio x sliding
layers' KV)."""


class Workload(Checked):
    """B prompts x K samples, S prompt tokens and T response tokens each, and the dtypes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompts: int = Field(default=64, gt=0, description="B, prompts per iteration")
    samples_per_prompt: int = Field(default=1, gt=0, description="K, responses per prompt")
    prompt_len: int = Field(default=1024, gt=0, description="S, prompt tokens")
    response_len: int = Field(default=1024, gt=0, description="T, response tokens")
    image_tokens: int = Field(
        default=0, ge=0, description="tokens of one image in each prompt (part of S), which a "
        "vision-language model's tower encodes; 0 = text only",
    )
    turns: int = Field(default=1, ge=1, description="N, assistant turns per sample (an "
                       "agentic rollout); 1 = one response (rlmcost.placement.turns)")
    observation_tokens: int = Field(
        default=0, ge=0, description="O, tokens the environment returns after every turn but "
        "the last, prefilled on the cached context; part of T (rlmcost.placement.turns)",
    )
    tool_latency_s: float = Field(
        default=0.0, ge=0.0, allow_inf_nan=False,
        description="L, seconds a sample waits for its environment after each turn but the last",
    )
    turn_schedule: TurnSchedule = Field(
        default=TurnSchedule.PER_SAMPLE, description="how the turns meet the environment: "
        "per-sample (asynchronous) or turn-synchronous rounds (rlmcost.choices.TurnSchedule)",
    )
    weight_dtype: Dtype = Field(default=Dtype.BF16, description="weights and gradients")
    activation_dtype: Dtype = Field(default=Dtype.BF16, description="activations")
    kv_dtype: Dtype = Field(default=Dtype.BF16, description="KV cache")
    logits_dtype: Dtype = Field(default=Dtype.FP32, description="logits for log-probs")
    compute_dtype: Dtype = Field(default=Dtype.BF16, description="GEMM dtype for peak FLOP/s")
    state_dtype: Dtype | None = Field(
        default=None,
        description="generation: the recurrent state of linear-attention (Gated DeltaNet) "
        "layers (None: kv_dtype); the engine's (vLLM: the model dtype, SGLang: fp32; "
        "rlmcost.deployment.engine_kv)",
    )
    conv_dtype: Dtype | None = Field(
        default=None,
        description="generation: the convolution state of linear-attention (Mamba-2, Gated "
        "DeltaNet) layers (None: kv_dtype); the model's dtype under an engine's FP8 KV cache "
        "(vLLM mamba_cache_dtype 'auto'; rlmcost.deployment.engine_kv)",
    )
    kv_window: bool = Field(
        default=False,
        description="generation: a sliding-window layer's KV cache holds its window only "
        "(vLLM's hybrid KV cache manager frees the blocks outside it); false: every layer "
        "at the whole context (rlmcost.deployment.engine_kv)",
    )
    kv_swa_pool: bool = Field(
        default=False,
        description="generation: SGLang's hybrid SWA pool (GPT-OSS): the sliding-window "
        "layers' slots sized at swa_full_tokens_ratio 0.8 of the full layers' per token "
        "(rlmcost.deployment.engine_kv)",
    )
    unquantized_dtype: Dtype | None = Field(
        default=None,
        description="generation: the dtype an FP8 engine keeps its embedding, LM head, norms "
        "and MoE routers in (the model's 16-bit; vLLM and SGLang quantize Linear layers and "
        "experts only: rlmcost.parallel.breakdown.unquantized_params); None: all in "
        "weight_dtype",
    )
    packed_format: str | None = Field(
        default=None,
        description="generation: the 4-bit format an engine serves its packed_parts in "
        "(nvfp4, mxfp4, int4-g32, int4-g128: W4A16; nvfp4-w4a4: W4A4 where the part has FP4 "
        "tensor cores; the rest in weight_dtype; rlmcost.parallel.packed_weights); None: no "
        "4-bit weights",
    )
    packed_parts: str = Field(
        default="linear",
        description="generation: which weights take packed_format: linear (every Linear "
        "layer and expert), mlp (FFNs and experts) or experts (routed experts)",
    )
    param_dtype: Dtype | None = Field(
        default=None,
        description="what a trainer stores its parameters and gradients in (None: "
        "weight_dtype); fp32 under FSDP mixed precision, weight_dtype the compute copy",
    )

    grad_dtype: Dtype | None = Field(
        default=None,
        description="what a trainer accumulates and reduces its gradients in (None: the "
        "stored dtype); fp32: a Megatron-core gradient buffer with grad_reduce_in_fp32 "
        "(rlmcost.placement.grad_buffer)",
    )

    @property
    def gradient_dtype(self) -> Dtype:
        """The dtype of a trainer's resident gradients: ``grad_dtype``, else
        :attr:`stored_dtype`."""
        return self.grad_dtype or self.stored_dtype

    @property
    def stored_dtype(self) -> Dtype:
        """The dtype of a trainer's resident parameters and gradients: ``param_dtype``, else
        ``weight_dtype``."""
        return self.param_dtype or self.weight_dtype

    @property
    def linear_state_dtype(self) -> Dtype:
        """The dtype of a linear-attention layer's recurrent state in generation:
        ``state_dtype``, else ``kv_dtype``."""
        return self.state_dtype or self.kv_dtype

    @property
    def linear_conv_dtype(self) -> Dtype:
        """The dtype of a linear-attention layer's convolution state in generation:
        ``conv_dtype``, else ``kv_dtype``."""
        return self.conv_dtype or self.kv_dtype

    @property
    def mixed_storage(self) -> bool:
        """Parameters stored in a wider dtype than they compute in (FSDP ``MixedPrecision``
        with fp32 parameters and ``param_dtype=bf16``): each unit is cast per use."""
        return self.stored_dtype != self.weight_dtype

    @property
    def sequences(self) -> int:
        """B x K sequences per iteration."""
        return self.prompts * self.samples_per_prompt

    @property
    def seq_len(self) -> int:
        """m = S + T."""
        return self.prompt_len + self.response_len
