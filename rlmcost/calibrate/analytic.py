"""Analytic FLOPs and bytes of each micro-kernel, derived from :mod:`rlmcost.blocks`.

Each kernel's shape maps to a small :class:`~rlmcost.arch.Arch`, and its FLOPs are Table III
terms of that Arch (never re-derived): a Transformer block is ``work_forward`` of a one-layer
Arch minus its LM head (``work_head_per_token``), an FFN is ``work_linear_per_token`` minus
the same Arch without FFN, and so on. FLOP convention as in ``blocks``: only matrix products
count, one add or one multiply = 1 FLOP, teacher-forced attention counted ``full`` (all
S x S pairs, the masked half too), which is what ``FlopCounterMode`` reports.

Bytes are the roofline's minimal traffic: every operand read once and every result written
once per pass at the kernel's dtype (caches and re-reads ignored, so a lower bound).
Every function returns an exact ``int``.
"""

from __future__ import annotations

from fractions import Fraction

from rlmcost import blocks as bl
from rlmcost.arch import Arch
from rlmcost.choices import AttnCounting, Dtype, FfnKind
from rlmcost.errors import SpecError
from rlmcost.substitute import to_int


def micro_arch(
    *,
    d_model: int,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    d_ff: int = 0,
    ffn_kind: FfnKind = FfnKind.GATED,
    vocab: int = 0,
    n_layers: int = 1,
    n_experts: int = 0,
    top_k: int = 0,
    d_expert: int = 0,
) -> Arch:
    """The Arch a micro-kernel implements: RMSNorm, no biases, untied head, RoPE-free."""
    if n_heads % n_kv_heads:
        raise SpecError(f"n_kv_heads={n_kv_heads} must divide n_heads={n_heads}")
    return Arch(
        name=f"micro-L{n_layers}-d{d_model}",
        n_layers=n_layers,
        d_model=d_model,
        d_ff=d_ff,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=head_dim,
        vocab=vocab,
        ffn_kind=ffn_kind,
        n_experts=n_experts,
        top_k=top_k,
        d_expert=d_expert,
    )


def _without_ffn(arch: Arch) -> Arch:
    """The same Arch with no FFN at all (no dense width, no experts, no router)."""
    return arch.with_(d_ff=0, n_experts=0, top_k=0, d_expert=0)


# --------------------------------------------------------------------------------------------
# FLOPs
# --------------------------------------------------------------------------------------------


def flops_gemm(m: int, n: int, k: int) -> int:
    """C = A B with A m x k, B k x n: m n dot products of length k, 2 m n k FLOPs.

    The primitive behind every Table III term (blocks' convention: a length-k dot product
    costs 2k); ``FlopCounterMode`` counts ``aten.mm`` the same way.
    """
    return 2 * m * n * k


def flops_attention(arch: Arch, seqs: int, seq: int) -> int:
    """Teacher-forced attention (scores and values) over ``seqs`` x ``seq`` tokens, all layers.

    ``work_forward`` minus its projections and head: 4 L h d_h seq^2 per sequence (full
    counting, also for a causal mask, as the counter reports).
    """
    rest = seqs * seq * (bl.work_linear_per_token(arch) + bl.work_head_per_token(arch))
    return to_int(bl.work_forward(arch, seqs, seq, AttnCounting.FULL) - rest)


def flops_ffn(arch: Arch, tokens: int) -> int:
    """One FFN (dense, or MoE: router + top-k experts) per layer for ``tokens`` tokens.

    ``work_linear_per_token`` minus that of the Arch without FFN: 2 x the FFN weights one
    token multiplies (2 or 3 projections; MoE: d E router + k expert FFNs).
    """
    per_token = bl.work_linear_per_token(arch) - bl.work_linear_per_token(_without_ffn(arch))
    return to_int(tokens * per_token)


def flops_block_forward(arch: Arch, seqs: int, seq: int) -> int:
    """Forward of the Transformer body (no LM head) over ``seqs`` x ``seq`` tokens.

    ``work_forward`` minus ``seqs * seq * work_head_per_token``.
    """
    head = seqs * seq * bl.work_head_per_token(arch)
    return to_int(bl.work_forward(arch, seqs, seq, AttnCounting.FULL) - head)


def flops_block_train(arch: Arch, seqs: int, seq: int) -> int:
    """Forward + backward (input and weight gradients) of the body: ``work_train`` - 3 x head."""
    head = 3 * seqs * seq * bl.work_head_per_token(arch)
    return to_int(bl.work_train(arch, seqs, seq, AttnCounting.FULL) - head)


def flops_prefill(arch: Arch, prompt: int, seqs: int) -> int:
    """Prefill of ``seqs`` prompts of ``prompt`` tokens, LM head on the last: ``work_prefill``."""
    return to_int(bl.work_prefill(arch, prompt, seqs, AttnCounting.FULL))


def flops_decode_step(arch: Arch, context: int, seqs: int) -> int:
    """One decode step of ``seqs`` sequences at KV context ``context``: ``work_decode_step``."""
    return to_int(bl.work_decode_step(arch, context, seqs))


# --------------------------------------------------------------------------------------------
# Bytes (minimal traffic)
# --------------------------------------------------------------------------------------------


def bytes_gemm(m: int, n: int, k: int, dtype: Dtype) -> int:
    """Read A (m k) and B (k n), write C (m n)."""
    return (m * k + k * n + m * n) * dtype.bytes


def bytes_attention(arch: Arch, seqs: int, seq: int, dtype: Dtype) -> int:
    """Read q (h d_h), k, v (h_kv d_h each), write o (h d_h) per token and layer.

    The fused (flash) kernel's traffic; the eager path also writes and reads the S x S
    scores, which this lower bound leaves out.
    """
    per_token = 2 * arch.q_width + 2 * arch.kv_width
    return arch.n_layers * seqs * seq * per_token * dtype.bytes


def _ffn_weights(arch: Arch) -> int:
    if arch.is_moe:
        return to_int(bl.params_moe_per_layer(arch))
    return to_int(bl.params_ffn(arch, arch.d_ff))


def bytes_ffn(arch: Arch, tokens: int, dtype: Dtype) -> int:
    """Read the FFN weights (MoE: router and every expert) and the input, write the output."""
    return (_ffn_weights(arch) + 2 * tokens * arch.d_model) * dtype.bytes


def _body_weights(arch: Arch) -> int:
    """Parameters of the body: the layers and the final norm (no embedding, no head)."""
    from rlmcost.choices import Head

    total = bl.params(arch) - bl.params_embedding(arch) - bl.params_head(arch, Head.LM)
    return to_int(total)


def bytes_block_forward(arch: Arch, seqs: int, seq: int, dtype: Dtype) -> int:
    """Read the layer weights and the input activations, write the output activations."""
    return (_body_weights(arch) + 2 * seqs * seq * arch.d_model) * dtype.bytes


def bytes_block_train(arch: Arch, seqs: int, seq: int, dtype: Dtype) -> int:
    """Forward (weights, x, y) then backward (weights, dy, dx, and the weight gradients).

    3 |W| + 4 T d elements; saved activations re-read in backward are left out.
    """
    return (3 * _body_weights(arch) + 4 * seqs * seq * arch.d_model) * dtype.bytes


def _lm_weights(arch: Arch) -> int:
    """Weights a forward reads: the body, the final norm and the LM head (not the embedding)."""
    return to_int(bl.params(arch) - bl.params_embedding(arch))


def bytes_prefill(arch: Arch, prompt: int, seqs: int, dtype: Dtype) -> int:
    """Read the weights and the prompt's embedding rows, write the KV cache of the prompt."""
    tokens = seqs * prompt
    kv = to_int(bl.memory_kv_cache(arch, prompt, seqs))
    return (_lm_weights(arch) + tokens * arch.d_model + kv) * dtype.bytes


def bytes_decode_step(arch: Arch, context: int, seqs: int, dtype: Dtype) -> int:
    """Read the weights, one embedding row per sequence and the KV cache of ``context``.

    The memory-bound decode model: weights + M_KV(seqs x context) (Table III, M_KV).
    """
    kv = to_int(bl.memory_kv_cache(arch, context, seqs))
    return (_lm_weights(arch) + seqs * arch.d_model + kv) * dtype.bytes


def bytes_copy(elements: int, dtype: Dtype) -> int:
    """``y.copy_(x)``: read and write ``elements`` elements (the STREAM copy kernel)."""
    return 2 * elements * dtype.bytes


# --------------------------------------------------------------------------------------------
# Collectives
# --------------------------------------------------------------------------------------------

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")


def collective_bus_bytes(op: str, size_bytes: int, ranks: int) -> int:
    """Bytes each rank sends (= receives) in a bandwidth-optimal ring collective.

    Source: Thakur, Rabenseifner & Gropp 2005 (ring / reduce-scatter+all-gather algorithms)
    and NCCL-tests' "bus bandwidth" (doc/PERFORMANCE.md), whose size conventions we follow:
    all-reduce of an S-byte buffer moves 2 (p-1)/p S per rank; all-gather with an S-byte
    output and reduce-scatter with an S-byte input move (p-1)/p S. ``size_bytes`` must be a
    multiple of ``ranks`` so the result is exact.

    >>> collective_bus_bytes("all_reduce", 1024, 2), collective_bus_bytes("all_gather", 1024, 4)
    (1024, 768)
    """
    if ranks < 1:
        raise SpecError(f"ranks={ranks} must be a positive integer")
    factor = {"all_reduce": Fraction(2 * (ranks - 1), ranks)}.get(op, Fraction(ranks - 1, ranks))
    if op not in COLLECTIVES:
        raise SpecError(f"unknown collective '{op}'; use one of {', '.join(COLLECTIVES)}")
    value = factor * size_bytes
    if value.denominator != 1:
        raise SpecError(f"size_bytes={size_bytes} must be a multiple of ranks={ranks}")
    return int(value)
