"""Depth of the Table III blocks: the critical path of GEMM reduction chains, in levels.

A length-x dot product is one multiply level plus ceil(log2 x) add levels; the suppressed
reductions are listed in the package docstring (:mod:`rlmcost.blocks`). Layers add up along the
path; within a layer, heads, experts and tokens run side by side.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from rlmcost.arch import Arch, is_zero
from rlmcost.blocks.attention import Expr
from rlmcost.blocks.window import sum_clog2_window, window_depth
from rlmcost.blocks.work import _head_width
from rlmcost.choices import Head
from rlmcost.logs import clog2, sum_clog2


def _gemm_depth(reduction: Expr) -> sp.Expr:
    """One multiply level plus a ceil(log2 x) add tree over the reduction length x."""
    return 1 + clog2(sp.sympify(reduction))


def _ffn_inner_width(arch: Arch) -> tuple[Expr, Expr]:
    """(dense, MoE) FFN widths that a token's down projection reduces over."""
    return arch.d_ff, arch.d_expert


def depth_layer_forward(arch: Arch, context: Expr, moe: bool = False) -> sp.Expr:
    """Forward critical path of one layer at context ``context``.

    Chain: QKV projection (reduce over d) -> scores (d_h) -> weighted values (context) ->
    output projection (h d_h) -> FFN up/gate (d) -> FFN down (d_ff or d_e); an MoE layer puts
    the router (d) before its experts; experts and heads run side by side.

    MLA (expanded form, also used for decode steps): the down-projections (d) are followed by
    the up-projections q_b (d_cq) and kv_b (d_c) side by side, max(d_cq, d_c), before the
    scores (d_nope + d_rope); the output projection reduces over h d_v.
    """
    dense_w, moe_w = _ffn_inner_width(arch)
    depth = (
        _gemm_depth(arch.d_model)
        + _gemm_depth(arch.head_dim)
        + _gemm_depth(context)
        + _gemm_depth(arch.v_width)
        + _gemm_depth(arch.d_model)
        + _gemm_depth(moe_w if moe else dense_w)
    )
    if arch.is_mla:
        depth += _gemm_depth(_mla_max(arch.q_lora_rank, arch.kv_lora_rank))
    if moe:
        depth += _gemm_depth(arch.d_model)
        if not is_zero(arch.moe_latent):  # latent MoE: fc1_latent_proj reduces over d (the
            # up term above), the experts' up projection over l, fc2_latent_proj over l
            depth += _gemm_depth(arch.moe_latent) + _gemm_depth(arch.moe_latent)
    return depth


def _mla_max(a: Expr | None, b: Expr) -> Expr:
    """max(a, b) of two widths (b when a is None), symbolic when either is a symbol."""
    return b if a is None else sp.Max(a, b)


def _layers_sum(arch: Arch, per_layer: Callable[[bool], Expr]) -> sp.Expr:
    total = arch.n_dense_layers * per_layer(False)
    if arch.is_moe:
        total += arch.n_moe_layers * per_layer(True)
    return sp.sympify(total)


def depth_forward(arch: Arch, context: Expr, head: Head = Head.LM) -> sp.Expr:
    """D_f: forward critical path of one token at context ``context``: L layers then the head.

    Independent of the batch: tokens and sequences run side by side. A sliding layer's
    attention-value reduction runs over min(context, W) keys (``window.window_depth``).

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import m
    >>> depth_forward(CANONICAL, m)
    L*(3*clog2(d) + clog2(d_ff) + clog2(m) + clog2(d/h) + 6) + clog2(d) + 1
    """
    layers = _layers_sum(arch, lambda moe: depth_layer_forward(arch, context, moe))
    return layers + window_depth(arch, context) + _gemm_depth(arch.d_model)


def depth_layer_backward(arch: Arch, context: Expr, moe: bool = False) -> sp.Expr:
    """Backward (input-gradient) critical path of one layer, reversed forward chain.

    FFN down^T (reduce over d) -> FFN up^T (d_ff or d_e, and the router's E) -> output
    projection^T (d) -> dP = dO V^T (d_h) -> dQ = dS K (context) -> QKV^T ((h + 2 h_kv) d_h).

    MLA: dP reduces over d_v; then the up-projections^T side by side (q_b^T over
    h (d_nope + d_rope), kv_b^T over h (d_nope + d_v)) and the down-projections^T (q_a^T over
    d_cq, kv_a^T over d_c + d_rope), each pair taken at its longer reduction (q_proj^T over
    h (d_nope + d_rope) when q_lora_rank is None).
    """
    dense_w, moe_w = _ffn_inner_width(arch)
    if arch.is_mla:
        up = sp.Max(arch.q_width, arch.n_heads * (arch.qk_nope_head_dim + arch.v_head_dim))
        attn_in = _gemm_depth(up) + _gemm_depth(_mla_max(arch.q_lora_rank, arch.kv_cache_width))
        head_reduce = arch.v_head_dim
    else:
        attn_in = _gemm_depth(arch.q_width + 2 * arch.kv_width)
        head_reduce = arch.head_dim
    depth = (
        _gemm_depth(arch.d_model)
        + _gemm_depth(moe_w if moe else dense_w)
        + _gemm_depth(arch.d_model)
        + _gemm_depth(head_reduce)
        + _gemm_depth(context)
        + attn_in
    )
    if moe:
        depth += _gemm_depth(arch.n_experts)
    return depth


def depth_backward(arch: Arch, context: Expr, tokens: Expr, head: Head = Head.LM) -> sp.Expr:
    """D_b: head^T (reduce over V), L layers of input gradients, then the last weight gradient.

    Parameter-gradient accumulation dW = X^T dY reduces over all ``tokens`` of the batch
    (1 + ceil(log2 tokens)); each layer's dW overlaps the propagation to earlier layers, so
    only the first layer's stays on the critical path. A sliding layer's dQ = dS K reduces
    over min(context, W) keys (``window.window_depth``).
    """
    return (
        _gemm_depth(_head_width(arch, head))
        + _layers_sum(arch, lambda moe: depth_layer_backward(arch, context, moe))
        + window_depth(arch, context)
        + _gemm_depth(tokens)
    )


def depth_train(arch: Arch, context: Expr, tokens: Expr, head: Head = Head.LM) -> sp.Expr:
    """D_tr = D_f + D_b (Table IV caption)."""
    return depth_forward(arch, context, head) + depth_backward(arch, context, tokens, head)


def depth_prefill(arch: Arch, prompt: Expr) -> sp.Expr:
    """Prefill critical path: one forward at context S (prompt tokens run side by side)."""
    return depth_forward(arch, prompt)


def depth_decode_step(arch: Arch, context: Expr) -> sp.Expr:
    """One decode step: a forward of one token at context ``context``."""
    return depth_forward(arch, context)


def depth_generation(arch: Arch, prompt: Expr, response: Expr, closed_form: bool = True) -> sp.Expr:
    """D_gen = D_prefill(S) + sum_{t=1}^{T} D_dec(S + t): T sequential decode steps.

    Exact closed form: only the attention-value reduction depends on t, and
    sum_{t=1}^{T} ceil(log2(S+t)) is summed in closed form (``logs.sum_clog2``); a sliding
    layer's sum_{t=1}^{T} ceil(log2 min(S+t, W)) likewise (``window.sum_clog2_window``).
    ``closed_form=False`` gives the upper bound D_prefill(S) + T D_dec(S + T), the form the
    Big-O tables use: Theta(T * D_f(S + T)) as §II-F states.
    """
    if not closed_form:
        return sp.expand(
            depth_prefill(arch, prompt) + response * depth_decode_step(arch, prompt + response)
        )
    x = sp.Dummy("context", integer=True, positive=True)
    per_step = sp.expand(depth_decode_step(arch, x))
    n_attn = per_step.coeff(clog2(x))
    rest = sp.expand(per_step - n_attn * clog2(x))
    windowed = sp.Integer(0)
    if arch.sliding_window is not None:  # the sliding layers reduce over min(c, W) keys
        term = clog2(sp.Min(x, arch.sliding_window))
        n_window = rest.coeff(term)
        rest = sp.expand(rest - n_window * term)
        windowed = n_window * sum_clog2_window(prompt, response, arch.sliding_window)
    if x in rest.free_symbols:
        raise ValueError(f"depth_generation: a decode step's depth left {rest} per step")
    return sp.expand(
        depth_prefill(arch, prompt)
        + response * rest
        + n_attn * sum_clog2(sp.sympify(prompt) + 1, sp.sympify(prompt) + response)
        + windowed
    )
