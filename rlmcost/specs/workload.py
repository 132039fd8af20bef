"""Workload: the token counts and dtypes of one RL iteration (seed paper Table I notation)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rlmcost.choices import Dtype


class Workload(BaseModel):
    """B prompts x K samples, S prompt tokens and T response tokens each, and the dtypes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompts: int = Field(default=64, gt=0, description="B, prompts per iteration")
    samples_per_prompt: int = Field(default=1, gt=0, description="K, responses per prompt")
    prompt_len: int = Field(default=1024, gt=0, description="S, prompt tokens")
    response_len: int = Field(default=1024, gt=0, description="T, response tokens")
    weight_dtype: Dtype = Field(default=Dtype.BF16, description="weights and gradients")
    activation_dtype: Dtype = Field(default=Dtype.BF16, description="activations")
    kv_dtype: Dtype = Field(default=Dtype.BF16, description="KV cache")
    logits_dtype: Dtype = Field(default=Dtype.FP32, description="logits for log-probs")
    compute_dtype: Dtype = Field(default=Dtype.BF16, description="GEMM dtype for peak FLOP/s")

    @property
    def sequences(self) -> int:
        """B x K sequences per iteration."""
        return self.prompts * self.samples_per_prompt

    @property
    def seq_len(self) -> int:
        """m = S + T."""
        return self.prompt_len + self.response_len
