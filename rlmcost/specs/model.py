"""ModelSpec: a real model's shape, validated, convertible to an :class:`~rlmcost.arch.Arch`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlmcost.choices import FfnKind, NormKind

if TYPE_CHECKING:
    from rlmcost.arch import Arch


def _divisors(x: int) -> list[int]:
    return [i for i in range(1, x + 1) if x % i == 0]


class ModelSpec(BaseModel):
    """A decoder-only Transformer as a config describes it (all sizes in elements)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="canonical lower-case name, e.g. 'llama-3.1-70b'")
    aliases: tuple[str, ...] = Field(default=(), description="other names that resolve to it")
    family: str = Field(default="custom", description="model family, e.g. 'llama'")
    model_type: str = Field(default="llama", description="transformers model_type")
    source: str = Field(default="", description="where the numbers come from")
    n_layers: int = Field(gt=0, description="L, Transformer layers")
    d_model: int = Field(gt=0, description="d, hidden width")
    d_ff: int = Field(gt=0, description="dense FFN inner width")
    n_heads: int = Field(gt=0, description="h, query heads")
    n_kv_heads: int = Field(gt=0, description="h_kv, key/value heads (= n_heads for MHA)")
    head_dim: int = Field(gt=0, description="d_h, head dimension")
    vocab: int = Field(gt=0, description="V, vocabulary size")
    max_context: int = Field(default=0, ge=0, description="trained context length; 0 = unknown")
    ffn_kind: FfnKind = Field(default=FfnKind.GATED, description="plain (2 proj) or gated (3)")
    norm: NormKind = Field(default=NormKind.RMSNORM, description="rmsnorm or layernorm")
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    tie_embeddings: bool = False
    n_positions: int = Field(default=0, ge=0, description="learned position rows; 0 = RoPE")
    qk_norm: bool = False
    n_experts: int = Field(default=0, ge=0, description="routed experts; 0 = dense")
    top_k: int = Field(default=0, ge=0, description="experts per token; 0 for dense")
    d_expert: int = Field(default=0, ge=0, description="routed-expert inner width")
    n_shared_experts: int = Field(default=0, ge=0, description="shared experts per MoE layer")
    d_shared_expert: int = Field(default=0, ge=0, description="shared-expert inner width")
    shared_expert_gate: bool = False
    first_dense_layers: int = Field(default=0, ge=0, description="leading dense-FFN layers")

    @model_validator(mode="after")
    def _consistent(self) -> ModelSpec:
        from rlmcost.errors import SpecError

        if self.n_heads % self.n_kv_heads:
            raise SpecError(
                f"model {self.name}: n_kv_heads={self.n_kv_heads} must divide "
                f"n_heads={self.n_heads}; try one of {_divisors(self.n_heads)}"
            )
        if self.n_experts:
            if not 0 < self.top_k <= self.n_experts:
                raise SpecError(
                    f"model {self.name}: top_k={self.top_k} must be in 1..n_experts="
                    f"{self.n_experts}"
                )
            if not self.d_expert:
                raise SpecError(f"model {self.name}: an MoE model needs d_expert > 0")
            if self.first_dense_layers >= self.n_layers:
                raise SpecError(
                    f"model {self.name}: first_dense_layers={self.first_dense_layers} must be "
                    f"below n_layers={self.n_layers}"
                )
        elif self.top_k or self.n_shared_experts:
            raise SpecError(f"model {self.name}: top_k/shared experts set but n_experts=0")
        if self.n_shared_experts and not self.d_shared_expert:
            raise SpecError(f"model {self.name}: shared experts need d_shared_expert > 0")
        return self

    def context_note(self, tokens: int) -> str | None:
        """None when ``tokens`` positions fit the model, else a note for the output: past
        learned position embeddings (GPT-2, GPT-3) the real model cannot run at all (the costs
        extrapolate its shape); past ``max_context`` of a RoPE model it runs, untrained."""
        if self.n_positions and tokens > self.n_positions:
            return (
                f"{self.name} has {self.n_positions} learned positions but sequences here have "
                f"{tokens} tokens: the real model cannot run this; the costs extrapolate its shape"
            )
        if self.max_context and tokens > self.max_context:
            return (
                f"{self.name}: {tokens} tokens per sequence exceed its trained context of "
                f"{self.max_context} (RoPE runs, quality is not guaranteed)"
            )
        return None

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    def arch(self) -> Arch:
        """The shape as an :class:`Arch` with integer fields, for the cost code."""
        from rlmcost.arch import Arch  # the symbolic core loads sympy; numeric queries skip it

        fields = self.model_dump(
            exclude={"aliases", "family", "model_type", "source", "max_context"}
        )
        return Arch(**fields)
