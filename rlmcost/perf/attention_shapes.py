"""Attention shapes of a training pass beyond multi-head attention's: the FLOPs of a query-key
pair and the projections of multi-head latent attention (MLA, DeepSeek-V2/V3), shared by
:mod:`~rlmcost.perf.step_pass` (kernel times) and :mod:`~rlmcost.perf.train_step` (FLOPs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlmcost.arch import Arch

if TYPE_CHECKING:
    from rlmcost.perf.step_pass import StagePass


def pair_flops(arch: Arch, heads: int, dense: bool = False) -> int:
    """Forward FLOPs of one query meeting one key: 4 h d_h; MLA (keys d_h = d_nope + d_rope,
    values d_v) 2 h (d_h + d_v) (``rlmcost.blocks.attention_flops_per_pair``); DeepSeek Sparse
    Attention the absorbed form of its sparse kernels, 2 h (2 d_c + d_rope) (rlmcost.blocks.
    sparse), unless ``dense`` (transformers' eager path: expanded, every key, masked)."""
    if arch.index_topk is not None and not dense:
        return 2 * heads * (2 * int(arch.kv_lora_rank or 0) + int(arch.qk_rope_head_dim))
    if arch.is_mla:
        return 2 * heads * (int(arch.head_dim) + int(arch.v_head_dim))
    return 4 * heads * int(arch.head_dim)


def causal_pairs(arch: Arch, seq: int) -> int:
    """Query-key pairs a fused causal kernel meets in one sequence of ``seq`` tokens and one
    layer, the mean over the model's layers: ``seq (seq + 1) / 2`` in a full-attention layer,
    ``sum_{i=1}^{seq} min(i, W)`` in a sliding-window layer of W keys (``Arch.sliding_window``;
    rlmcost.blocks.window counts the same pairs for teacher-forced passes). A fused kernel with
    a window (FlashAttention's and cuDNN's ``window_size``, TransformerEngine's
    ``DotProductAttention(window_size=...)``) skips the key tiles wholly outside the window;
    the tiles the window cuts are computed whole, which this count of exact pairs leaves out
    (at W = 128 and 128-key tiles up to W more keys per query: GPT-OSS's sliding layers). A
    kernel handed the window as a dense mask (PyTorch SDPA with ``attn_mask``) computes every
    causal pair; the fused kernels' count is taken for every ``flash`` pass.

    >>> from rlmcost.specs.registry import get_model
    >>> causal_pairs(get_model("llama-3.1-8b").arch(), 4096) == 4096 * 4097 // 2
    True
    """
    full = seq * (seq + 1) // 2
    if arch.index_topk is not None:  # DSA: min(i, k) keys per query (rlmcost.blocks.sparse)
        k = int(arch.index_topk)
        a = min(seq, k)
        return a * (a + 1) // 2 + (seq - a) * k
    if arch.sliding_window is None:
        return full
    n, sliding = int(arch.n_layers), int(arch.n_sliding_layers)
    return (full * (n - sliding) + window_pairs(seq, int(arch.sliding_window)) * sliding) // n


def window_pairs(seq: int, w: int) -> int:
    """Query-key pairs of one sliding-window layer of ``w`` keys over ``seq`` tokens:
    ``sum_{i=1}^{seq} min(i, w)``.

    >>> window_pairs(4, 2), window_pairs(2, 8)
    (7, 3)
    """
    a = min(seq, w)
    return a * (a + 1) // 2 + (seq - a) * w


def mla_projections(
    arch: Arch, heads: int, tokens: int, gemm: Callable[..., None],
    up: Callable[..., None] | None = None,
) -> None:  # fmt: skip
    """MLA's GEMMs as training runs them (no absorption): q_a d -> d_cq, q_b d_cq -> h d_qk (or
    q_proj d -> h d_qk), kv_a d -> d_c + d_rope, kv_b d_c -> h (d_nope + d_v), o h d_v -> d
    (arXiv:2405.04434 §2.1.2; Megatron-core ``MLASelfAttention``: down-projections not TP-split).
    ``up`` (default ``gemm``) takes the two up-projections, q_b and kv_b: what Megatron-core's
    ``--recompute-modules mla_up_proj`` reruns (``qkv_up_proj_and_rope_apply`` under
    ``qkv_up_checkpoint``, megatron/core/transformer/multi_latent_attention.py @cba6b0ed)."""
    up = up or gemm
    d, dc = int(arch.d_model), int(arch.kv_lora_rank or 0)
    qk, dv, rope = int(arch.head_dim), int(arch.v_head_dim), int(arch.qk_rope_head_dim)
    if arch.q_lora_rank is None:
        gemm(tokens, heads * qk, d)
    else:
        gemm(tokens, int(arch.q_lora_rank), d)
        up(tokens, heads * qk, int(arch.q_lora_rank))
    gemm(tokens, dc + rope, d)
    up(tokens, heads * (qk - rope + dv), dc)
    gemm(tokens, d, heads * dv)


def module_gemm(out: StagePass, name: str, gemm: Callable[..., None]) -> Callable[..., None]:
    """``gemm`` that also books its forward seconds and FLOPs in ``out`` as Megatron-core's
    recompute module ``name`` (:mod:`~rlmcost.perf.selective_ac`)."""

    def run(m: int, n: int, k: int) -> None:
        g, f = out.fwd["gemm"], out.flops
        gemm(m, n, k)
        out.modules[name] += out.fwd["gemm"] - g
        out.module_flops[name] = out.module_flops.get(name, 0) + (out.flops - f) // 3

    return run


def mla_up_weights(arch: Arch) -> int:
    """Weights of one layer's MLA up-projections, q_b d_cq -> h d_qk (when q is compressed) and
    kv_b d_c -> h (d_nope + d_v): what ``--recompute-modules mla_up_proj`` reruns per token."""
    h, qk = int(arch.n_heads), int(arch.head_dim)
    kv = int(arch.kv_lora_rank or 0) * h * (qk - int(arch.qk_rope_head_dim) + int(arch.v_head_dim))
    return kv + (int(arch.q_lora_rank) * h * qk if arch.q_lora_rank is not None else 0)


def indexer_flops(arch: Arch, tokens: int, pairs: int) -> int:
    """Forward FLOPs of the DSA lightning indexers over ``tokens`` queries meeting ``pairs``
    keys in all, summed over the layers that run one: the projections wq_b, wk, weights_proj
    (2 weights a token) and 2 H_I (d_I + 1) a pair (rlmcost.blocks.sparse; the indexer is
    replicated on every TP rank and runs forward only); 0 without DSA."""
    if arch.index_topk is None:
        return 0
    d, heads, dim = int(arch.d_model), int(arch.index_heads), int(arch.index_head_dim)
    weights = int(arch.q_lora_rank or 0) * heads * dim + d * (dim + heads)
    per_layer = 2 * weights * tokens + 2 * heads * (dim + 1) * pairs
    return int(arch.n_index_layers) * per_layer


def prefill_flops(arch: Arch, heads: int, tokens: int, prompt: int) -> tuple[int, int]:
    """(one layer's attention FLOPs, all indexers' FLOPs) of an engine's prefill chunk of
    ``tokens`` tokens of prompts of ``prompt``: causal pairs at 4 h d_h (a chunk of a longer
    prompt attends its prefix, (prompt + 1) / 2 keys a query on average); DSA at its absorbed
    pairs over min(i, k) keys, plus the indexers over every causal pair (FlashMLA sparse
    prefill, DeepGEMM ``fp8_mqa_logits``; rlmcost.blocks.sparse)."""
    prompts = -(-tokens // prompt)
    whole = tokens >= prompt
    pairs = prompts * prompt * (prompt + 1) // 2 if whole else tokens * (prompt + 1) // 2
    if arch.index_topk is None:
        return 4 * heads * int(arch.head_dim) * pairs, 0
    k = int(arch.index_topk)
    sparse = prompts * causal_pairs(arch, prompt) if whole else tokens * min((prompt + 1) // 2, k)
    return pair_flops(arch, heads) * sparse, indexer_flops(arch, tokens, pairs)
