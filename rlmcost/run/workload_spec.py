"""`WorkloadSpec`: a Run's token counts, response-length distribution, multi-turn rollout
and dtypes (:mod:`rlmcost.run.spec`'s ``workload`` section; split from it by purpose)."""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects.
from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from rlmcost.choices import Dtype, TurnSchedule
from rlmcost.specs.validation import Checked

_STRICT = ConfigDict(frozen=True, extra="forbid")


class WorkloadSpec(Checked):
    """Token counts of one iteration (None: B = 64, K = the algorithm's default group, S = T =
    1024), the response-length distribution (``--length-dist`` text; None: every response
    has T tokens) and a multi-turn rollout's turns, observations and tool latency."""

    model_config = _STRICT

    prompts: int | None = Field(default=None, description="B, prompts (pairs) per step")
    samples_per_prompt: int | None = Field(default=None, description="K, responses")
    prompt_len: int | None = Field(default=None, description="S, prompt tokens")
    response_len: int | None = Field(default=None, description="T, response tokens")
    length_dist: str | None = Field(
        default=None,
        description="fixed, reasoning, uniform:LO,HI, lognormal:MEAN,SIGMA[,MAX[,CLIP]], file:PATH",
    )
    image_tokens: int | None = Field(
        default=None, ge=0, description="tokens of one image per prompt, part of S (a "
        "vision-language model; None = 0, text only)",
    )
    turns: int = Field(default=1, ge=1, description="N, assistant turns per sample; 1 = one "
                       "response (rlmcost.placement.turns)")
    observation_tokens: int = Field(default=0, ge=0, description="O, environment tokens "
                                    "after every turn but the last, part of T")
    tool_latency_s: float = Field(default=0.0, ge=0.0, allow_inf_nan=False,
                                  description="L, seconds of each environment call")
    turn_schedule: TurnSchedule | None = Field(
        default=None, description="per-sample or turn-synchronous (None: the framework's, "
        "rlmcost.run.defaults.turn_schedule)",
    )
    weight_dtype: Dtype = Field(default=Dtype.BF16, description="weights and gradients")
    activation_dtype: Dtype = Field(default=Dtype.BF16, description="activations")
    kv_dtype: Dtype = Field(default=Dtype.BF16, description="KV cache")
    logits_dtype: Dtype = Field(default=Dtype.FP32, description="logits for log-probs")
    compute_dtype: Dtype = Field(default=Dtype.BF16, description="GEMM dtype for peak FLOP/s")

    @field_validator("prompts", "samples_per_prompt", "prompt_len", "response_len")
    @classmethod
    def _positive(cls, v: int | None, info: ValidationInfo) -> int | None:
        if v is not None and v < 1:
            flag = {"prompts": "batch", "samples_per_prompt": "group"}
            name = flag.get(str(info.field_name), info.field_name)
            raise ValueError(f"{name}={v} must be a positive integer")
        return v

    def dtypes(self) -> dict[str, Dtype]:
        """The dtype fields, as :class:`~rlmcost.specs.Workload` names them."""
        return {k: getattr(self, k) for k in DTYPE_FIELDS}


DTYPE_FIELDS = ("weight_dtype", "activation_dtype", "kv_dtype", "logits_dtype", "compute_dtype")
