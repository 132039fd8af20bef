"""ModelSpec: a real model's shape, validated, convertible to an :class:`~rlmcost.arch.Arch`."""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects
# (as strings it compiles each as a ForwardRef at every start); methods quote their own class.
from typing import TYPE_CHECKING

from pydantic import ConfigDict, Field, model_validator

from rlmcost.choices import FfnKind, NormKind
from rlmcost.specs.model_checks import check_structure
from rlmcost.specs.validation import Checked

if TYPE_CHECKING:
    from rlmcost.arch import Arch


def _divisors(x: int) -> list[int]:
    return [i for i in range(1, x + 1) if x % i == 0]


class ModelSpec(Checked):
    """A decoder-only Transformer as a config describes it (all sizes in elements)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="canonical lower-case name, e.g. 'llama-3.1-70b'")
    aliases: tuple[str, ...] = Field(default=(), description="other names that resolve to it")
    hf_ids: tuple[str, ...] = Field(
        default=(),
        description="Hugging Face repository ids of this exact shape (base, instruct, distilled "
        "variants), e.g. 'Qwen/Qwen2.5-7B-Instruct'; they resolve to this spec",
    )
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
    qk_norm_full: bool = Field(default=False, description="with qk_norm: the q and k RMSNorms "
        "span all heads' width (MiniMax-M2: weights h d_h and h_kv d_h); False = per head (d_h)")
    n_experts: int = Field(default=0, ge=0, description="routed experts; 0 = dense")
    top_k: int = Field(default=0, ge=0, description="experts per token; 0 for dense")
    d_expert: int = Field(default=0, ge=0, description="routed-expert inner width")
    n_shared_experts: int = Field(default=0, ge=0, description="shared experts per MoE layer")
    d_shared_expert: int = Field(default=0, ge=0, description="shared-expert inner width")
    shared_expert_gate: bool = False
    moe_latent: int = Field(default=0, ge=0, description="latent MoE: the routed experts' "
        "input/output width l behind d -> l and l -> d projections (Nemotron 3 Super's "
        "moe_latent_size); 0 = experts at d")
    first_dense_layers: int = Field(default=0, ge=0, description="leading dense-FFN layers")
    norms_per_layer: int = Field(
        default=2, ge=2, le=8, description="d-wide norm weights per layer: 2 (pre-attn, "
        "pre-FFN); 4 (Gemma 2/3); 8 (Gemma 4's MoE layers: 7 RMSNorms and the router's scale)"
    )
    hidden_dropout: float = Field(default=0.0, ge=0, lt=1, description="dropout after the "
        "attention's and FFN's output projections, in training (GPT-2 resid_pdrop; specs."
        "hf_dropout)")  # fmt: skip
    attention_dropout: float = Field(default=0.0, ge=0, lt=1, description="dropout on the "
        "attention probabilities, in training (attn_pdrop, attention_dropout)")
    notes: tuple[str, ...] = Field(
        default=(),
        description="what the costs approximate for this model (sliding windows, soft-capping, "
        "layers transformers does not build); empty = modelled exactly",
    )
    q_lora_rank: int | None = Field(
        default=None, gt=0, description="MLA query latent width; None = plain q projection"
    )
    kv_lora_rank: int | None = Field(
        default=None, gt=0, description="MLA key/value latent width; None = not MLA"
    )
    qk_nope_head_dim: int = Field(default=0, ge=0, description="MLA q/k head part without RoPE")
    qk_rope_head_dim: int = Field(default=0, ge=0, description="MLA q/k head part with RoPE")
    v_head_dim: int = Field(default=0, ge=0, description="MLA value head width")
    mtp_layers: int = Field(
        default=0,
        ge=0,
        description="multi-token-prediction modules the checkpoint ships beside the model "
        "(config num_nextn_predict_layers / mtp_num_hidden_layers); not counted in the "
        "parameters (transformers builds none); an 'mtp' speculative draft needs one",
    )
    checkpoint_quant: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9]+$",
        description="how the published checkpoint of hf_ids stores its weights where it is "
        "quantized, lower case: 'fp8' (block-wise FP8, DeepSeek-V3's quantization_config), "
        "'int4' (INT4 routed experts, compressed-tensors), 'mxfp4' (gpt-oss's experts); None = "
        "unquantized (its torch_dtype). An hf_id ending in a precision word (-bf16) is a "
        "dequantized copy. Costs use --dtype and --rollout-dtype whatever it says; a framework "
        "importer reads it where the framework serves the checkpoint as stored "
        "(rlmcost.frameworks.ckpt_quant); a config.json sets it from quantization_config "
        "(rlmcost.specs.hf_quant)",
    )
    sliding_window: int | None = Field(
        default=None,
        gt=0,
        description="W, keys a query attends to in a sliding-window layer (itself and the W - 1 "
        "positions before it; the cache keeps W - 1); None = full attention everywhere",
    )
    full_attention_layers: int = Field(
        default=0,
        ge=0,
        description="with a sliding window: layers that still attend to every position "
        "(Gemma 2/3's global layers); 0 = every layer slides",
    )

    full_head_dim: int = Field(default=0, ge=0, description="Gemma 4: the full-attention "
                               "layers' head width (global_head_dim); 0 = head_dim")
    full_kv_heads: int = Field(default=0, ge=0, description="Gemma 4: the full-attention "
                               "layers' KV heads (num_global_key_value_heads); 0 = n_kv_heads")
    full_k_eq_v: bool = Field(default=False, description="Gemma 4's attention_k_eq_v: the "
                              "full-attention layers' values are their keys' projection (no "
                              "v_proj); both are still cached")
    ple_dim: int = Field(default=0, ge=0, description="Gemma 4 E: per-layer input embedding "
                         "width (hidden_size_per_layer_input); 0 = none")
    ple_vocab: int = Field(default=0, ge=0, description="Gemma 4 E: rows of the per-layer "
                           "embedding table (vocab_size_per_layer_input)")
    kv_shared_layers: int = Field(default=0, ge=0, description="Gemma 4 E: the last layers that "
                                  "reuse an earlier layer's keys and values (no k/v projection, "
                                  "no KV cache; num_kv_shared_layers)")
    kv_shared_full_layers: int = Field(default=0, ge=0, description="of kv_shared_layers, the "
                                       "full-attention ones")
    kv_shared_wide_ffn: bool = Field(default=False, description="Gemma 4 E2B's "
                                     "use_double_wide_mlp: the KV-shared layers' FFN is 2 d_ff "
                                     "wide")

    encoder_params: int = Field(
        default=0,
        ge=0,
        description="parameters outside the decoder that text tokens do not pass through "
        "(the vision tower of Qwen2-VL / Qwen2.5-VL); counted in |M|, not in token FLOPs",
    )
    encoder_flops_per_patch: int = Field(
        default=0, ge=0, description="the vision tower's forward matmul FLOPs per patch "
        "(rlmcost.specs.hf_vision); 0 = no tower",
    )
    encoder_patches_per_token: int = Field(
        default=0, ge=0, description="patches merged into one image token (m^2)"
    )
    encoder_width: int = Field(default=0, ge=0, description="the vision tower's width d_v")
    encoder_heads: int = Field(default=0, ge=0, description="the vision tower's heads")
    encoder_ffn_width: int = Field(default=0, ge=0, description="the vision MLP's inner width")
    encoder_ffn_gated: bool = Field(default=False, description="gated vision MLP (Qwen2.5-VL)")
    encoder_layers: int = Field(default=0, ge=0, description="the vision tower's blocks")
    encoder_full_attention_layers: int = Field(
        default=0, ge=0, description="vision blocks attending over the whole image"
    )
    encoder_window_patches: int = Field(
        default=0, ge=0, description="patches per attention window of the other vision "
        "blocks (Qwen2.5-VL); 0 = every block full",
    )

    def encoder_forward_flops(self, image_tokens: int) -> int:
        """The vision tower's forward FLOPs over one image of ``image_tokens`` tokens
        (:func:`rlmcost.specs.hf_vision.vision_forward_flops`); 0 without a tower."""
        if not image_tokens:
            return 0
        from rlmcost.specs.hf_vision import vision_forward_flops

        return vision_forward_flops(
            self.encoder_flops_per_patch, self.encoder_patches_per_token, self.encoder_width,
            self.encoder_layers, self.encoder_full_attention_layers,
            self.encoder_window_patches, image_tokens,
        )  # fmt: skip

    attn_output_gate: bool = Field(
        default=False, description="q_proj also yields a sigmoid output gate (Qwen3-Next)"
    )
    linear_layers: int = Field(
        default=0, ge=0, description="layers with a Gated DeltaNet token mixer (Qwen3-Next)"
    )
    linear_key_heads: int = Field(default=0, ge=0, description="linear attention q/k heads")
    linear_value_heads: int = Field(default=0, ge=0, description="linear attention value heads")
    linear_key_head_dim: int = Field(default=0, ge=0, description="linear attention d_k")
    linear_value_head_dim: int = Field(default=0, ge=0, description="linear attention d_v")
    linear_conv_kernel: int = Field(default=0, ge=0, description="linear attention conv width")
    linear_mamba: bool = Field(default=False, description="the linear mixer is a Mamba-2 SSD "
        "(Nemotron-H): linear_key_heads = n_groups, linear_key_head_dim = ssm_state_size, "
        "linear_value_heads = mamba_num_heads, linear_value_head_dim = mamba_head_dim")
    linear_chunk: int = Field(default=0, ge=0, description="Mamba-2 SSD chunk length "
        "(chunk_size); 0 without Mamba-2")
    ffn_free_layers: int = Field(default=0, ge=0, description="layers holding a token mixer "
        "and its norm but no FFN (Nemotron-H's mixer-only blocks); 0 = every layer has one")
    index_topk: int | None = Field(default=None, gt=0, description="DeepSeek Sparse Attention "
        "(DeepSeek-V3.2, GLM-5): keys the lightning indexer picks per query (config "
        "index_topk); None = dense attention")
    index_heads: int = Field(default=0, ge=0, description="the indexer's heads (index_n_heads)")
    index_head_dim: int = Field(default=0, ge=0, description="the indexer's head width")
    index_layers: int = Field(default=0, ge=0, description="layers running their own indexer "
        "(the others reuse the previous top-k: GLM-5.2's indexer_types 'shared')")

    @model_validator(mode="after")
    def _consistent(self) -> "ModelSpec":
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
        elif self.top_k or self.n_shared_experts or self.moe_latent:
            raise SpecError(f"model {self.name}: top_k/shared experts/moe_latent set but "
                            "n_experts=0")
        if self.qk_norm_full and not self.qk_norm:
            raise SpecError(f"model {self.name}: qk_norm_full needs qk_norm; set qk_norm true")
        if self.n_shared_experts and not self.d_shared_expert:
            raise SpecError(f"model {self.name}: shared experts need d_shared_expert > 0")
        check_structure(self)  # MLA, DSA, window, linear attention, Mamba (specs.model_checks)
        return self

    def context_note(self, tokens: int, prompt: int | None = None) -> str | None:
        """None when ``tokens`` positions fit the model, else a note for the output: past
        learned position embeddings (GPT-2, GPT-3) the real model cannot run at all (the costs
        extrapolate its shape); past ``max_context`` of a RoPE model it runs, untrained. With
        ``prompt`` (the prompt's tokens of the ``tokens``), the note names the longest
        response that stays within the model's positions.

        >>> from rlmcost.specs.registry import get_model
        >>> get_model("llama-2-7b").context_note(5120, 1024).split("; ")[-1]
        '--response-len 3072 or less stays within it'
        """
        limit = self.n_positions or self.max_context
        within = "" if prompt is None or not limit or prompt >= limit else \
            f"; --response-len {limit - prompt} or less stays within it"  # fmt: skip
        if self.n_positions and tokens > self.n_positions:
            return (
                f"{self.name} has {self.n_positions} learned positions but sequences here have "
                f"{tokens} tokens: the real model cannot run this; the costs extrapolate its "
                f"shape{within}"
            )
        if self.max_context and tokens > self.max_context:
            return (
                f"{self.name}: {tokens} tokens per sequence exceed its trained context of "
                f"{self.max_context} (RoPE runs, quality is not guaranteed){within}"
            )
        return None

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    @property
    def is_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3)."""
        return self.kv_lora_rank is not None

    @property
    def n_sliding_layers(self) -> int:
        """Layers that attend through the sliding window (0 without one)."""
        return 0 if self.sliding_window is None else self.n_layers - self.full_attention_layers

    def attention_note(self) -> str | None:
        """For MLA, the decode and KV-cache conventions the numbers follow, else None."""
        if not self.is_mla:
            return None
        dsa = "" if self.index_topk is None else (
            f"; DeepSeek Sparse Attention: each query attends its indexer's top "
            f"{self.index_topk} keys (absorbed, FlashMLA sparse) and the lightning indexer "
            f"({self.index_heads} heads of {self.index_head_dim}) scores every earlier key, "
            f"forward only; its key cache ({self.index_head_dim} per token and layer) counted "
            "in the KV dtype")
        return (
            f"{self.name}: multi-head latent attention; decode FLOPs counted absorbed (W_UK "
            "into the query, W_UV into the output, as vLLM/SGLang/FlashMLA decode), prefill and "
            f"training {'absorbed (DSA)' if dsa else 'expanded'}; KV cache = latent "
            f"{self.kv_lora_rank} + RoPE key "
            f"{self.qk_rope_head_dim} elements per token and layer, whole on every TP rank{dsa}"
        )

    def arch(self) -> "Arch":
        """The shape as an :class:`Arch` with integer fields, for the cost code."""
        from rlmcost.arch import Arch  # the symbolic core loads sympy; numeric queries skip it

        fields = self.model_dump(
            exclude={"aliases", "hf_ids", "family", "model_type", "source", "max_context", "notes",
                     "mtp_layers", "checkpoint_quant",  # the importers' (frameworks.ckpt_quant)
                     "hidden_dropout", "attention_dropout",  # placement.model_dropout
                     *VISION_FIELDS}  # the tower's FLOPs: rlmcost.placement.vision
        )  # fmt: skip
        return Arch(**fields)


VISION_FIELDS = ("encoder_flops_per_patch", "encoder_patches_per_token", "encoder_width",
                 "encoder_heads", "encoder_ffn_width", "encoder_ffn_gated", "encoder_layers",
                 "encoder_full_attention_layers", "encoder_window_patches")
"""The vision tower's shape fields, read by :meth:`ModelSpec.encoder_forward_flops`, not by
the decoder's :class:`~rlmcost.arch.Arch`."""
