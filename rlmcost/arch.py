"""A Transformer's shape as one object whose fields may be sympy symbols or integers.

``CANONICAL`` is the seed paper's model (Table III: multi-head attention, 2-projection FFN,
no biases, untied embeddings) with every field symbolic; ``CANONICAL_MOE`` adds routed experts
for the EP rows of Tables V-VIII. A real model (Llama-3.1-70B, Mixtral-8x7B, Qwen3-MoE) is an
``Arch`` with integer fields, built by ``rlmcost.specs``. The cost code in ``blocks`` serves
both, so the paper's tables and the faithful numbers cannot drift apart.
"""

from __future__ import annotations

from dataclasses import fields, replace
from functools import cache
from typing import TYPE_CHECKING, Any, TypeAlias, Union

from rlmcost.choices import FfnKind, NormKind
from rlmcost.frozen import dataclass

if TYPE_CHECKING:
    import sympy as sp

# A size is an exact integer or a sympy expression. The alias names sympy only as a string, so
# importing this module (the numeric CLI paths do) loads no sympy.
Size: TypeAlias = Union[int, "sp.Expr"]


def is_zero(x: Size) -> bool:
    """True when ``x`` is the number 0 (a symbol is never zero)."""
    return bool(x == 0)


@dataclass(frozen=True)
class Arch:
    """Shape of a decoder-only Transformer.

    Sizes are elements; counts are plain numbers. A MoE model has ``n_experts > 0``; its first
    ``first_dense_layers`` layers keep the dense FFN of width ``d_ff``.
    """

    name: str
    n_layers: Size  # L
    d_model: Size  # d
    d_ff: Size  # dense FFN inner width
    n_heads: Size  # h (query heads)
    n_kv_heads: Size  # h_kv: = h (MHA), 1 (MQA), in between (GQA)
    head_dim: Size  # d_h
    vocab: Size  # V
    ffn_kind: FfnKind = FfnKind.GATED
    norm: NormKind = NormKind.RMSNORM
    qkv_bias: bool = False  # biases on the q, k, v projections (Qwen2, GPT-2)
    out_bias: bool = False  # bias on the attention output projection (GPT-2)
    mlp_bias: bool = False  # biases on the FFN projections (GPT-2)
    tie_embeddings: bool = False  # LM head shares the token-embedding matrix
    n_positions: Size = 0  # rows of a learned absolute position embedding (GPT-2); 0 = RoPE
    qk_norm: bool = False  # per-head RMSNorm on q and k (Qwen3)
    # with qk_norm: the q and k RMSNorms span all heads' width (MiniMax-M2: weights h d_h and
    # h_kv d_h, one 1 / rms per token each) instead of one head's (d_h, shared by the heads)
    qk_norm_full: bool = False
    n_experts: Size = 0  # E routed experts per MoE layer; 0 = dense model
    top_k: Size = 0  # k experts per token
    d_expert: Size = 0  # d_e, inner width of one routed expert
    n_shared_experts: Size = 0  # E_s experts every token passes through
    d_shared_expert: Size = 0  # inner width of one shared expert
    shared_expert_gate: bool = False  # sigmoid gate d -> 1 on the shared expert (Qwen2-MoE)
    first_dense_layers: Size = 0  # leading layers with a dense FFN (DeepSeek-style)
    norms_per_layer: Size = 2  # norms per layer: 2 (pre-attn, pre-FFN); 4 with post-norms (Gemma)
    # Multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434 §2.1); off when
    # kv_lora_rank is None. An MLA arch has head_dim = qk_nope_head_dim + qk_rope_head_dim
    # (the query/key head width) and n_kv_heads = n_heads (keys and values are expanded per
    # head from the latent), so q_width is the width of the queries.
    q_lora_rank: Size | None = None  # d_cq, query latent; None = plain d -> h (d_nope + d_rope)
    kv_lora_rank: Size | None = None  # d_c, the cached key/value latent; None = not MLA
    qk_nope_head_dim: Size = 0  # d_nope, per-head query/key part without RoPE
    qk_rope_head_dim: Size = 0  # d_rope, RoPE part: per head in q, one shared key in the cache
    v_head_dim: Size = 0  # d_v, per-head value width
    # Sliding-window attention (Mistral-7B-v0.1, Phi-3, Gemma 2/3's local layers): a query
    # attends to itself and the W - 1 positions before it; off when sliding_window is None.
    sliding_window: Size | None = None  # W, keys one query attends to in a sliding layer
    full_attention_layers: Size = 0  # with a window: layers that attend to every position
    # Gemma 4's full-attention layers have their own head width and KV heads (transformers
    # ``Gemma4TextConfig.per_layer_config``: global_head_dim, num_global_key_value_heads);
    # both 0 = the full layers are shaped as the others. With full_k_eq_v their keys'
    # projection is also their values' (``attention_k_eq_v``: no v_proj; both still cached).
    full_head_dim: Size = 0  # d_h of a full-attention layer (with full_kv_heads)
    full_kv_heads: Size = 0  # h_kv of a full-attention layer
    full_k_eq_v: bool = False  # a full-attention layer has no v_proj
    # Gemma 4 E2B / E4B (transformers 5.24 ``Gemma4TextModel``, ``Gemma4TextDecoderLayer``):
    # per-layer input embeddings (PLE) of ple_dim a layer, looked up in a second table of
    # ple_vocab rows x n_layers ple_dim (a gather), plus the model's d -> n_layers ple_dim
    # projection; each layer gates its slice in (d -> ple_dim, ple_dim -> d). 0 = none.
    ple_dim: Size = 0  # p, hidden_size_per_layer_input
    ple_vocab: Size = 0  # rows of the per-layer embedding table, vocab_size_per_layer_input
    # The last kv_shared_layers layers (kv_shared_full_layers of them full-attention) reuse the
    # keys and values of the last earlier layer of their kind: no k/v projections, k norm or
    # KV cache of their own (num_kv_shared_layers); with kv_shared_wide_ffn their FFN is
    # 2 d_ff wide (use_double_wide_mlp).
    kv_shared_layers: Size = 0
    kv_shared_full_layers: Size = 0
    kv_shared_wide_ffn: bool = False
    # Parameters outside the decoder stack that no text token passes through: the vision tower
    # of Qwen2-VL / Qwen2.5-VL (rlmcost.specs.hf_vision). Held in memory, not in token FLOPs.
    encoder_params: Size = 0
    # Hybrid linear attention (Qwen3-Next): linear_layers of the n_layers mix tokens
    # with a Gated DeltaNet (Yang et al. 2024, arXiv:2412.06464; transformers
    # ``Qwen3NextGatedDeltaNet``) instead of softmax attention: a fixed per-sequence state of
    # linear_value_heads x d_k x d_v, no growing KV cache. Off when linear_layers = 0.
    attn_output_gate: bool = False  # q_proj also yields a sigmoid gate on the output (d -> 2 h d_h)
    linear_layers: Size = 0  # layers with a Gated DeltaNet token mixer
    linear_key_heads: Size = 0  # H_k, query/key heads of the linear attention
    linear_value_heads: Size = 0  # H_v, value heads (one d_k x d_v state each)
    linear_key_head_dim: Size = 0  # d_k
    linear_value_head_dim: Size = 0  # d_v
    linear_conv_kernel: Size = 0  # K, width of the depthwise causal conv over q, k, v
    # Mamba-2 (Dao & Gu 2024, arXiv:2405.21060) as the linear mixer (Nemotron-H, transformers
    # ``NemotronHMamba2Mixer``): the linear_* sizes read H_k = n_groups (B and C, the keys and
    # queries), d_k = ssm_state_size N, H_v = mamba_num_heads H, d_v = mamba_head_dim P.
    linear_mamba: bool = False  # the linear mixer is a Mamba-2 SSD, not a Gated DeltaNet
    linear_chunk: Size = 0  # Q, chunk length of the SSD's chunked (training, prefill) form
    # Layers of one kind each (Nemotron-H): a layer here is a token mixer with its norm plus an
    # FFN with its norm; ffn_free_layers of them hold the mixer and its norm alone.
    ffn_free_layers: Size = 0  # layers without an FFN (and without the FFN's norm)
    # DeepSeek Sparse Attention (DSA: DeepSeek-V3.2, GLM-5; arXiv:2512.02556 §2.1; transformers
    # ``DeepseekV32Indexer``) on MLA: a lightning indexer of index_heads heads of index_head_dim
    # scores every earlier position for each query, and the MLA attends to the index_topk best
    # (min(position, k) keys); off when index_topk is None. index_layers of the layers run
    # their own indexer; the others reuse the previous one's top-k (GLM-5.2's IndexShare).
    index_topk: Size | None = None  # k, keys each query's sparse attention takes
    index_heads: Size = 0  # H_I, the indexer's query heads (one shared key head)
    index_head_dim: Size = 0  # d_I, the indexer's head width
    index_layers: Size = 0  # layers with an indexer of their own
    # Latent MoE (Nemotron 3 Super, "LatentMoE"): the routed experts read and write width
    # moe_latent behind a d -> l projection of the token and an l -> d projection of their
    # combined output (transformers 5.24 ``NemotronHMoE`` fc1/fc2_latent_proj, no biases;
    # Megatron-Core moe_layer.py); the router and the shared experts stay at d. 0 = none.
    moe_latent: Size = 0  # l, the routed experts' input and output width

    def __hash__(self) -> int:
        """The hash of the fields (as the dataclass's own), kept on the instance after the
        first call: an Arch is part of the key of every memoized pass and memory
        (:mod:`rlmcost.memo`), and hashing its forty fields each time was a tenth of a group
        estimate's lookups. Not pickled or copied (:meth:`__getstate__`): string hashes
        differ between processes."""
        kept = self.__dict__.get("_hash")
        if kept is None:
            kept = self.__dict__["_hash"] = hash(tuple(self.__dict__[n] for n in _ARCH_FIELDS))
        return kept

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    @property
    def is_moe(self) -> bool:
        return not is_zero(self.n_experts)

    @property
    def n_moe_layers(self) -> Size:
        return self.n_layers - self.first_dense_layers if self.is_moe else 0

    @property
    def n_dense_layers(self) -> Size:
        return self.first_dense_layers if self.is_moe else self.n_layers

    @property
    def expert_width(self) -> Size:
        """Width a routed expert reads and writes, and its tokens travel at to the expert
        ranks: the latent l of a latent MoE, else d."""
        return self.d_model if is_zero(self.moe_latent) else self.moe_latent

    @property
    def is_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3) rather than MHA/GQA/MQA."""
        return self.kv_lora_rank is not None

    @property
    def is_dsa(self) -> bool:
        """DeepSeek Sparse Attention: a lightning indexer picks index_topk keys per query."""
        return self.index_topk is not None

    @property
    def n_index_layers(self) -> Size:
        """Layers that run their own lightning indexer: index_layers, at most the layers a
        slice of the model holds (a head-only copy holds none)."""
        n = self.index_layers
        if isinstance(n, int) and n == 0:
            return 0
        if isinstance(n, int) and isinstance(self.n_layers, int):
            return min(n, self.n_layers)
        import sympy as sp  # a symbolic arch: the symbolic core has loaded sympy already

        return sp.Min(n, self.n_layers)

    def index_layers_of(self, layers: Size) -> Size:
        """Indexer layers among ``layers`` consecutive layers (a pipeline stage), in
        proportion as :meth:`linear_layers_of` counts linear ones (exact when every layer
        runs its indexer, DeepSeek-V3.2, GLM-5)."""
        n = self.index_layers
        if isinstance(n, int) and n == 0:
            return 0
        if isinstance(n, int) and isinstance(layers, int) and isinstance(self.n_layers, int):
            return n * layers // self.n_layers
        return n * layers / self.n_layers

    @property
    def has_window(self) -> bool:
        """Some layers attend through a sliding window of ``sliding_window`` keys."""
        return self.sliding_window is not None

    @property
    def n_sliding_layers(self) -> Size:
        """Layers that attend through the window: n_layers - full_attention_layers, and 0 when
        no window is set or when a slice of the model (a head-only copy with n_layers = 0)
        holds fewer layers than the full-attention count (max(., 0) keeps it a count)."""
        if self.sliding_window is None:
            return 0
        sliding = self.n_layers - self.full_attention_layers
        if isinstance(sliding, int):
            return max(sliding, 0)
        import sympy as sp  # a symbolic arch: the symbolic core has loaded sympy already

        return sp.Max(sliding, 0)

    @property
    def n_linear_layers(self) -> Size:
        """Layers with a linear-attention (Gated DeltaNet) token mixer: linear_layers,
        at most the layers a slice of the model holds (a head-only copy holds none)."""
        lin = self.linear_layers
        if isinstance(lin, int) and lin == 0:
            return 0
        if isinstance(lin, int) and isinstance(self.n_layers, int):
            return min(lin, self.n_layers)
        import sympy as sp  # a symbolic arch: the symbolic core has loaded sympy already

        return sp.Min(lin, self.n_layers)

    def linear_layers_of(self, layers: Size) -> Size:
        """Linear-attention layers among ``layers`` consecutive layers (a pipeline stage), in
        proportion: exact for Qwen3-Next's one full layer in every k when the slice holds whole
        periods of k layers (48 layers, k = 4: 12 or 16 or 24 per stage)."""
        lin = self.linear_layers
        if isinstance(lin, int) and lin == 0:
            return 0
        if isinstance(lin, int) and isinstance(layers, int) and isinstance(self.n_layers, int):
            return lin * layers // self.n_layers
        return lin * layers / self.n_layers

    @property
    def n_ffn_free_layers(self) -> Size:
        """Layers without an FFN: ffn_free_layers, at most the layers a slice of the model holds
        (a head-only copy holds none)."""
        free = self.ffn_free_layers
        if isinstance(free, int) and free == 0:
            return 0
        if isinstance(free, int) and isinstance(self.n_layers, int):
            return min(free, self.n_layers)
        import sympy as sp  # a symbolic arch: the symbolic core has loaded sympy already

        return sp.Min(free, self.n_layers)

    def full_layers_of(self, layers: int) -> int:
        """Full-attention layers among ``layers`` consecutive layers (a pipeline stage), in
        proportion as :meth:`linear_layers_of` counts linear ones (Gemma 4: one in six)."""
        return int(self.n_full_layers) * layers // int(self.n_layers)

    def ffn_free_layers_of(self, layers: Size) -> Size:
        """FFN-free layers among ``layers`` consecutive layers (a pipeline stage), in proportion
        as :meth:`linear_layers_of` counts linear ones."""
        free = self.ffn_free_layers
        if isinstance(free, int) and free == 0:
            return 0
        if isinstance(free, int) and isinstance(layers, int) and isinstance(self.n_layers, int):
            return free * layers // self.n_layers
        return free * layers / self.n_layers

    @property
    def n_softmax_layers(self) -> Size:
        """Layers with softmax attention (full or sliding): all but the linear-attention ones."""
        return self.n_layers - self.n_linear_layers

    @property
    def n_full_layers(self) -> Size:
        """Layers that attend to every position: all of them without a window or linear layers."""
        return self.n_layers - self.n_sliding_layers - self.n_linear_layers

    @property
    def linear_conv_width(self) -> Size:
        """2 H_k d_k + H_v d_v: the q, k, v channels of the linear attention's causal conv."""
        return 2 * self.linear_key_heads * self.linear_key_head_dim + (
            self.linear_value_heads * self.linear_value_head_dim
        )

    @property
    def linear_state_width(self) -> Size:
        """Elements one linear-attention layer keeps per sequence, whatever its length: the
        recurrent state H_v d_k d_v and the conv state (K - 1) x conv width, the shapes of vLLM's
        ``MambaStateShapeCalculator.gated_delta_net_state_shape``
        (vllm/model_executor/layers/mamba/mamba_utils.py)."""
        return (
            self.linear_value_heads * self.linear_key_head_dim * self.linear_value_head_dim
            + (self.linear_conv_kernel - 1) * self.linear_conv_width
        )

    @property
    def has_full_shape(self) -> bool:
        """The full-attention layers have a head width and KV heads of their own (Gemma 4)."""
        return not is_zero(self.full_head_dim)

    def full_view(self) -> Arch:
        """One full-attention layer's shape as an ``Arch`` (its head width and KV heads), for
        the per-layer counts; ``self`` when the full layers are shaped as the others."""
        if not self.has_full_shape:
            return self
        return self.with_(head_dim=self.full_head_dim, n_kv_heads=self.full_kv_heads,
                          full_head_dim=0, full_kv_heads=0)

    @property
    def q_width(self) -> Size:
        """h * d_h: width of the queries (= d for canonical MHA)."""
        return self.n_heads * self.head_dim

    @property
    def kv_width(self) -> Size:
        """h_kv * d_h: width of the keys (and of the values)."""
        return self.n_kv_heads * self.head_dim

    @property
    def v_width(self) -> Size:
        """h * d_v: width of the attention output (MLA), else of the values, h * d_h."""
        return self.n_heads * self.v_head_dim if self.is_mla else self.q_width

    @property
    def kv_cache_width(self) -> Size:
        """Elements one layer caches per token: 2 h_kv d_h (keys and values), or for MLA the
        latent d_c plus the shared RoPE key d_rope, which engines (vLLM, SGLang, FlashMLA) and
        transformers' DynamicCache store, not the per-head keys and values."""
        if self.kv_lora_rank is not None:  # is_mla
            return self.kv_lora_rank + self.qk_rope_head_dim + self.index_cache_width
        return 2 * self.kv_width

    @property
    def index_cache_width(self) -> Size:
        """Elements a DSA layer caches per token for its lightning indexer: the one key head
        of d_I (transformers ``DynamicIndexedLayer``; vLLM's and SGLang's indexer caches keep it
        in fp8 with an fp32 scale per 128, 132 bytes at d_I = 128: counted here in the KV
        cache's dtype, an upper bound); 0 without DSA. Counted on every layer, also on the
        layers that reuse another's top-k (GLM-5.2's IndexShare), which keep none in
        transformers' cache: an upper bound there."""
        return 0 if self.index_topk is None else self.index_head_dim

    def with_(self, **changes: Any) -> Arch:
        """A copy with some fields changed."""
        return replace(self, **changes)


_ARCH_FIELDS = tuple(f.name for f in fields(Arch) if f.compare)  # what ``==`` compares

CANONICAL_NAMES = ("CANONICAL", "CANONICAL_GQA", "CANONICAL_MOE")


@cache
def _canonical() -> dict[str, Arch]:
    """The symbolic instances, built on first use so that numeric code never loads sympy."""
    from rlmcost import symbols as sy

    canonical = Arch(
        name="canonical",
        n_layers=sy.L,
        d_model=sy.d,
        d_ff=sy.d_ff,
        n_heads=sy.h,
        n_kv_heads=sy.h,
        head_dim=sy.d / sy.h,
        vocab=sy.V,
        ffn_kind=FfnKind.PLAIN,
        norm=NormKind.LAYERNORM,
    )
    return {
        # the seed paper's model (Table III caption): MHA (h_kv = h, h d_h = d), 2-projection FFN
        "CANONICAL": canonical,
        # canonical with grouped-query attention and a free head dimension
        "CANONICAL_GQA": canonical.with_(name="canonical-gqa", n_kv_heads=sy.h_kv, head_dim=sy.d_h),
        # every FFN replaced by E routed 2-projection experts of width d_e, top-k
        "CANONICAL_MOE": canonical.with_(
            name="canonical-moe", n_experts=sy.E, top_k=sy.k, d_expert=sy.d_e
        ),
    }


def __getattr__(name: str) -> Arch:
    """``CANONICAL``, ``CANONICAL_GQA``, ``CANONICAL_MOE`` (PEP 562: built lazily)."""
    if name in CANONICAL_NAMES:
        return _canonical()[name]
    raise AttributeError(f"module 'rlmcost.arch' has no attribute {name!r}")
