"""Saved activations per rank under TP/SP and checkpointing, and the cost of recomputation.

Two conventions, told apart by their names:

* :func:`activation_memory_korthikanti2022`: Korthikanti et al. 2022 (arXiv:2205.05198),
  Table 2 / §4: bytes per layer for GPT-style layers in 16-bit with dropout and a
  materialized s x s softmax (no FlashAttention).
* :func:`saved_bytes_per_token_layer`: the faithful per-layer model of
  ``blocks.activation_bytes_per_token_layer`` (fused attention, no dropout, GQA, gated FFN,
  MoE) on one rank's TP shard. Without SP, the token-wise tensors of full width d are
  replicated on every TP rank (both norm inputs, the QKV and FFN inputs; MoE: the dispatched
  token copies and the fp32 router logits); SP shards them over P_t too (Korthikanti §4.2.2).
  On GPT layers it equals Korthikanti's count less the dropout masks (2 sbh bytes) and the
  softmax terms (5 a s^2 b), plus the fp32 log-sum-exp FlashAttention keeps (4 a s b).

The gated FFN as the trainer's kernels keep it (``fused_glu``, ``blocks``' docstring): 4 d_ff
unfused (a Hugging Face model's MLP under autograd), 3 d_ff under a fused SwiGLU, Megatron-core's
``bias_activation_fusion`` (NVIDIA/Megatron-LM @core_v0.15.0 megatron/core/fusions/
fused_bias_swiglu.py: ``SwiGLUFunction`` saves its input alone, ``WeightedSwiGLUFunction`` its
input and the routed copy's weight; moe/experts.py ``TEGroupedMLP``) or Liger's patch
(``LigerSiLUMulFunction``). Which trainer runs which: :mod:`rlmcost.placement.glu_kernel`. A
per-head q/k RMSNorm (``Arch.qk_norm``; Megatron-core's TENorm ``q_layernorm`` /
``k_layernorm``, transformers' ``Qwen3RMSNorm``) saves its input and fp32 1 / rms, counted for
every trainer. On Qwen3-235B-A22B at TP 4 with SP under Megatron-core, bytes a token and layer:
58,048 - 6,144 (a d_expert per copy) + 8 (the copies' fp32 weights) + 4,352 (q and k before
their norms) + 68 (their 1 / rms) = 56,332 (tests/test_verl_megatron_activations.py), the
router's top-k bookkeeping and the permutation's row map aside.

Checkpointing (seed paper §III-G2): ``selective`` recomputes the attention core (Korthikanti
§4.3); with fused attention that frees only the core's own fp32 log-sum-exp, since its inputs
q, k, v and its output are saved by the projections around it. ``full`` keeps each layer's
input (d per token) and recomputes the whole layer in the backward pass, which costs one more
forward of the body (not of the LM head) in work and one more layer forward per layer in depth.
"""

from __future__ import annotations

import sympy as sp

from rlmcost import blocks as bl
from rlmcost.arch import Arch, Size
from rlmcost.blocks.memory import glu_flag
from rlmcost.choices import AttnCounting, Dtype
from rlmcost.logs import clog2
from rlmcost.parallel.layout import Checkpointing
from rlmcost.parallel.shard import tp_shard


def activation_memory_korthikanti2022(
    s: Size,
    b: Size,
    h: Size,
    a: Size,
    t: Size = 1,
    sequence_parallel: bool = False,
    recompute: Checkpointing = Checkpointing.NONE,
) -> sp.Expr:
    """Activation bytes of one Transformer layer, Korthikanti et al. 2022, Table 2.

    s sequence length, b micro-batch, h hidden size, a heads, t tensor-parallel size; 16-bit
    activations, dropout masks 1 byte per element. No parallelism: sbh (34 + 5as/h); TP:
    sbh (10 + 24/t + 5as/(ht)); TP + SP: sbh/t (34 + 5as/h); selective recomputation drops the
    5as/h terms; full recomputation keeps the layer input, 2sbh.

    >>> from rlmcost.symbols import S, B, d, h, P_t
    >>> activation_memory_korthikanti2022(S, B, d, h, P_t)
    B*S*d*(10 + 5*S*h/(P_t*d) + 24/P_t)
    """
    if recompute is Checkpointing.FULL:
        return sp.sympify(2 * s * b * h)
    core = 0 if recompute is Checkpointing.SELECTIVE else sp.sympify(5 * a * s) / h
    if sequence_parallel:
        return sp.sympify(s * b * h) / t * (34 + core)
    return sp.sympify(s * b * h) * (10 + sp.Integer(24) / t + core / t)


def _dense_view(arch: Arch) -> Arch:
    """The arch with every layer dense (for the per-layer bytes of its dense layers)."""
    return arch.with_(
        n_experts=0, top_k=0, d_expert=0, n_shared_experts=0, d_shared_expert=0,
        first_dense_layers=0, moe_latent=0,
    )  # fmt: skip


def _moe_view(arch: Arch) -> Arch:
    """The arch with every layer MoE (for the per-layer bytes of its MoE layers)."""
    return arch.with_(first_dense_layers=0)


def _replicated_bytes_per_token_layer(
    arch: Arch, moe: bool, dtype: Dtype, fused_glu: Size = False
) -> sp.Expr:
    """Token-wise tensors of full width that TP without SP keeps on every rank [bytes].

    Attention-norm input, QKV input, FFN-norm input, FFN input (4 d); MoE: the top-k
    dispatched copies (k d, or k l and the combined l of a latent MoE), the fp32 router
    logits (E) and, under a fused gated FFN, the copies' fp32 routing weights (k).
    """
    x = dtype.bytes
    rep = x * 4 * arch.d_model
    if moe:
        rep += x * arch.top_k * arch.expert_width + 4 * arch.n_experts
        rep += x * arch.moe_latent  # a latent MoE's combined output (fc2_latent_proj's input)
        if arch.ffn_kind.projections != 2:
            rep += 4 * arch.top_k * glu_flag(fused_glu)
    return sp.sympify(rep)


def saved_bytes_per_token_layer(
    arch: Arch,
    tp: Size = 1,
    sequence_parallel: bool = False,
    ckpt: Checkpointing = Checkpointing.NONE,
    moe: bool = False,
    dtype: Dtype = Dtype.BF16,
    fused_glu: Size = False,
) -> sp.Expr:
    """Bytes one token's layer keeps for the backward pass on one TP rank.

    ``moe`` selects a MoE layer of a MoE arch (else a dense layer). Under expert parallelism
    with balanced routing a rank processes k expert copies of as many tokens as it owns, so EP
    does not change this count. ``fused_glu``: the trainer's gated FFN is a fused SwiGLU
    (3 d_ff kept, not 4; module docstring).

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import P_t
    >>> saved_bytes_per_token_layer(CANONICAL, P_t)  # replicated 8d; sharded q k v o, lse, FFN
    8*d + 8*d/P_t + 4*d_ff/P_t + 4*h/P_t
    """
    view = _moe_view(arch) if moe else _dense_view(arch)
    shard = tp_shard(view, tp)
    if ckpt is Checkpointing.FULL:
        layer_input = dtype.bytes * arch.d_model
        return sp.sympify(layer_input / tp if sequence_parallel else layer_input)
    kept = bl.activation_bytes_per_token_layer(shard, dtype, fused_glu)
    if sequence_parallel:
        rep = _replicated_bytes_per_token_layer(shard, moe, dtype, fused_glu)
        kept -= rep * (1 - sp.Integer(1) / tp)
    if ckpt is Checkpointing.SELECTIVE:
        kept -= 4 * shard.n_heads  # the core's fp32 log-sum-exp
    return sp.expand(kept)


def kappa_ckpt(
    arch: Arch,
    ckpt: Checkpointing,
    tp: Size = 1,
    sequence_parallel: bool = False,
    dtype: Dtype = Dtype.BF16,
) -> sp.Expr:
    """kappa_ckpt of §III-G2: saved activations with ``ckpt`` / without, for a dense layer.

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost import symbols as sy
    >>> kappa_ckpt(CANONICAL.with_(d_ff=4 * sy.d), Checkpointing.FULL)
    d/(2*(8*d + h))
    """
    with_ckpt = saved_bytes_per_token_layer(arch, tp, sequence_parallel, ckpt, False, dtype)
    without = saved_bytes_per_token_layer(arch, tp, sequence_parallel, Checkpointing.NONE)
    return sp.simplify(with_ckpt / without)


def work_recompute(
    arch: Arch,
    seqs: Size,
    seq: Size,
    ckpt: Checkpointing,
    counting: AttnCounting = AttnCounting.FULL,
) -> sp.Expr:
    """Extra forward FLOPs the backward pass recomputes for ``seqs`` x ``seq`` tokens.

    full: the whole body (every projection and the attention, not the LM head); selective: the
    attention core (scores and values); none: 0.
    """
    if ckpt is Checkpointing.NONE:
        return sp.Integer(0)
    forward = bl.work_forward(arch, seqs, seq, counting)
    linear_and_head = seqs * seq * (bl.work_linear_per_token(arch) + bl.work_head_per_token(arch))
    if ckpt is Checkpointing.SELECTIVE:
        return sp.expand(forward - linear_and_head)
    return sp.expand(forward - seqs * seq * bl.work_head_per_token(arch))


def depth_recompute(arch: Arch, context: Size, ckpt: Checkpointing) -> sp.Expr:
    """Extra critical-path levels of recomputation: each layer's recomputed forward (full) or
    attention core (selective: scores over d_h, values over the context) runs right before
    that layer's backward, so it adds to the path once per layer."""
    if ckpt is Checkpointing.NONE:
        return sp.Integer(0)
    if ckpt is Checkpointing.SELECTIVE:
        core = (1 + clog2(sp.sympify(arch.head_dim))) + (1 + clog2(sp.sympify(context)))
        return sp.expand(arch.n_layers * core)
    head_only = arch.with_(n_layers=0, first_dense_layers=0)
    return sp.expand(bl.depth_forward(arch, context) - bl.depth_forward(head_only, context))
