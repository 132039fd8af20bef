"""Which keys a query meets and which positions the KV cache keeps, with or without a window.

Sliding-window attention (``Arch.sliding_window`` = W; Mistral-7B-v0.1, Phi-3, the local
layers of Gemma 2/3) follows transformers:

* the mask lets query i see keys j with i - W < j <= i: W keys, its own included
  (``sliding_window_overlay`` in ``transformers/masking_utils.py``: kv_idx > q_idx - W);
* the cache keeps the last W - 1 positions (``DynamicSlidingWindowLayer.update`` in
  ``transformers/cache_utils.py`` stores ``full_key_states[:, :, -sliding_window + 1:]`` and
  hands the cached W - 1 plus the new token to attention). After n tokens a sliding layer
  caches min(n, W - 1) positions and a decode step at context c (c positions, the new token
  included) attends min(c, W) keys. Mistral-7B-v0.1 (W = 4096) after 4096 tokens: 4095
  cached positions; the next step attends 4096 keys.

vLLM keeps the same window at block granularity: ``SlidingWindowManager`` in
``vllm/v1/core/single_type_kv_cache_manager.py`` skips max(0, n - W + 1) tokens and frees the
whole blocks among them, so a request holds its last W - 1 positions plus up to
block_size - 1 older ones in the first partly skipped block (and the tail block's empty
slots); ``SlidingWindowSpec.max_admission_blocks_per_request`` (``vllm/v1/kv_cache_interface.py``)
reserves cdiv(min(W - 1 + max_num_batched_tokens, max_model_len), block_size) + 1 blocks per
request. The counts here are transformers' W - 1 positions; block rounding is the engine's,
as everywhere rlmcost counts the KV cache per token.

Teacher-forced passes (prefill, assessment, training): counted ``full``, PyTorch's
FlopCounterMode reports the whole S x S score matrix whatever the mask, window or not (the
window changes nothing); counted ``causal``, the unmasked pairs: sum_{i=1}^{S} min(i, W) in a
sliding layer.

Layers: a model may mix sliding and full-attention layers (Gemma 2 alternates them, Gemma 3
keeps one full layer in six; ``layer_types`` in the config). Every count here is a sum over
layers, ``Arch.n_full_layers`` full ones and ``Arch.n_sliding_layers`` sliding ones (linear-
attention layers, ``Arch.n_linear_layers``, attend to no keys and cache none), so the
order of the layers does not matter.
"""

from __future__ import annotations

import sympy as sp

from rlmcost.arch import Arch
from rlmcost.blocks.attention import Expr
from rlmcost.blocks.sparse import sparse_keys, sparse_keys_sum, sparse_pairs
from rlmcost.choices import AttnCounting
from rlmcost.logs import clog2, sum_clog2


def _window(arch: Arch) -> Expr:
    if arch.sliding_window is None:
        raise ValueError(f"{arch.name} has no sliding window")
    return arch.sliding_window


def _prefix_min_sum(n: Expr, window: Expr) -> sp.Expr:
    """sum_{i=1}^{n} min(i, W) = a (a + 1) / 2 + (n - a) W with a = min(n, W), exactly."""
    a = sp.Min(n, window)
    return a * (a + 1) / 2 + (n - a) * window


def attended_keys(arch: Arch, context: Expr) -> sp.Expr:
    """Keys one query at ``context`` attends to, summed over the layers.

    L c without a window; n_full c + n_sliding min(c, W) with one.

    >>> from rlmcost.arch import CANONICAL
    >>> from rlmcost.symbols import c
    >>> attended_keys(CANONICAL, c), attended_keys(CANONICAL.with_(sliding_window=8), 100)
    (L*c, 8*L)
    """
    if arch.is_dsa:  # DeepSeek Sparse Attention: the indexer's top k (blocks.sparse)
        return sparse_keys(arch, context)
    if not arch.has_window:
        return sp.sympify(arch.n_softmax_layers * context)
    window = sp.Min(context, _window(arch))
    return sp.sympify(arch.n_full_layers * context + arch.n_sliding_layers * window)


def attended_keys_sum(arch: Arch, prompt: Expr, response: Expr) -> sp.Expr:
    """sum_{t=1}^{T} attended_keys(S + t): the keys of a rollout's T decode steps.

    Full layers: T S + T (T + 1) / 2 each; sliding layers: sum_{c=S+1}^{S+T} min(c, W)
    = P(S + T) - P(S) with P(n) = sum_{i=1}^{n} min(i, W) (:func:`_prefix_min_sum`).
    """
    if arch.is_dsa:  # DeepSeek Sparse Attention: min(c, k) keys per step (blocks.sparse)
        return sparse_keys_sum(arch, prompt, response)
    full = response * prompt + sp.sympify(response) * (response + 1) / 2  # sum (S + t)
    if not arch.has_window:
        return sp.sympify(arch.n_softmax_layers * full)
    w = _window(arch)
    sliding = _prefix_min_sum(prompt + response, w) - _prefix_min_sum(prompt, w)
    return sp.sympify(arch.n_full_layers * full + arch.n_sliding_layers * sliding)


def _pairs(seq: Expr, counting: AttnCounting) -> sp.Expr:
    """Query-key pairs of one teacher-forced sequence: seq^2 (full) or seq(seq+1)/2 (causal)."""
    seq = sp.sympify(seq)
    return seq**2 if counting is AttnCounting.FULL else sp.sympify(seq) * (seq + 1) / 2


def attended_pairs(arch: Arch, seq: Expr, counting: AttnCounting) -> sp.Expr:
    """Query-key pairs of one teacher-forced sequence of ``seq`` tokens, summed over layers.

    ``full``: seq^2 in every layer, the masked pairs too (FlopCounterMode counts the whole
    score matrix; a window's mask is a mask like the causal one). ``causal``: the unmasked
    pairs, seq (seq + 1) / 2 in a full layer and sum_{i=1}^{seq} min(i, W) in a sliding one.
    DeepSeek Sparse Attention: seq min(seq, k) or sum_{i=1}^{seq} min(i, k) per layer
    (:func:`~rlmcost.blocks.sparse.sparse_pairs`).
    """
    if arch.is_dsa:
        return sparse_pairs(arch, seq, counting)
    if not arch.has_window or counting is AttnCounting.FULL:
        return sp.sympify(arch.n_softmax_layers * _pairs(seq, counting))
    sliding = _prefix_min_sum(seq, _window(arch))
    return sp.sympify(arch.n_full_layers * _pairs(seq, counting) + arch.n_sliding_layers * sliding)


def full_keys(arch: Arch, context: Expr) -> sp.Expr:
    """Keys one query at ``context`` attends to in the full-attention layers alone:
    n_full c (the layers whose own head width Gemma 4 sets, ``Arch.full_head_dim``)."""
    return sp.sympify(arch.n_full_layers * context)


def full_keys_sum(prompt: Expr, response: Expr) -> sp.Expr:
    """sum_{t=1}^{T} (S + t) = T S + T (T + 1) / 2: one full layer's keys over a rollout's
    T decode steps."""
    return response * prompt + sp.sympify(response) * (response + 1) / 2


def full_pairs(arch: Arch, seq: Expr, counting: AttnCounting) -> sp.Expr:
    """Query-key pairs of one teacher-forced sequence in the full-attention layers alone."""
    return sp.sympify(arch.n_full_layers * _pairs(seq, counting))


def cached_positions(arch: Arch, tokens: Expr) -> sp.Expr:
    """Positions one sequence's KV cache holds after ``tokens`` tokens, summed over layers.

    A full layer keeps all ``tokens``; a sliding layer keeps min(tokens, W - 1), as
    transformers' ``DynamicSlidingWindowLayer`` does (module docstring; vLLM rounds that out to
    whole blocks).
    """
    if not arch.has_window:
        return sp.sympify(arch.n_softmax_layers * tokens)
    kept = sp.Min(tokens, _window(arch) - 1)
    return sp.sympify(arch.n_full_layers * tokens + arch.n_sliding_layers * kept)


def window_depth(arch: Arch, context: Expr) -> sp.Expr:
    """What the window takes off the attention reductions of one pass at ``context``:
    n_sliding (ceil(log2 min(c, W)) - ceil(log2 c)) levels (0 without a window). The
    weighted sum of values (forward) and dQ = dS K (backward) reduce over the keys a query
    attends to."""
    if not arch.has_window:
        return sp.Integer(0)
    keys = sp.Min(context, _window(arch))
    return sp.sympify(arch.n_sliding_layers * (clog2(keys) - clog2(sp.sympify(context))))


def sum_clog2_window(prompt: Expr, response: Expr, window: Expr) -> sp.Expr:
    """sum_{c=S+1}^{S+T} ceil(log2 min(c, W)) in closed form.

    Contexts up to W contribute sum_{c=min(S,W)+1}^{min(S+T,W)} ceil(log2 c) (``logs.sum_clog2``;
    empty when S >= W); the max(S + T, W) - max(S, W) contexts past W contribute ceil(log2 W)
    each.
    """
    lo, hi = sp.Min(prompt, window), sp.Min(prompt + response, window)
    past = sp.Max(prompt + response, window) - sp.Max(prompt, window)
    return sum_clog2(lo + 1, hi) + clog2(sp.sympify(window)) * past
