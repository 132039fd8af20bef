"""Gemma 4's full-attention layers in the step and engine models: a layer kind of its own.

Gemma 4's full-attention layers have their own head width and KV heads
(``Arch.full_head_dim``, ``Arch.full_kv_heads``; transformers ``Gemma4TextAttention`` reads
``per_layer_config``) and, with ``Arch.full_k_eq_v``, no v_proj. The kernel models price one
layer at a time, so a stage's layers split into sliding ones (the model's base shape, every
layer through the window) and full ones (that shape alone, no window), each priced as its own
layer; a model whose full layers are shaped as the others stays one kind.
"""

from __future__ import annotations

from typing import Any

from rlmcost.arch import Arch


def has_full_kind(arch: Arch) -> bool:
    """The full-attention layers differ from the others in shape (Gemma 4)."""
    return arch.has_full_shape or (arch.full_k_eq_v and arch.has_window)


def full_layer_arch(arch: Arch) -> Arch:
    """One full-attention layer's shape, every layer so (no window): its head width, KV heads
    and, with ``full_k_eq_v``, no v_proj (:func:`kv_projections`)."""
    return arch.full_view().with_(sliding_window=None, full_attention_layers=0)


def sliding_layer_arch(arch: Arch) -> Arch:
    """The sliding layers' shape, every layer through the window."""
    return arch.with_(full_attention_layers=0, full_head_dim=0, full_kv_heads=0,
                      full_k_eq_v=False)  # fmt: skip


def layer_kinds(arch: Arch, count: int) -> list[tuple[Arch, int]]:
    """``count`` consecutive layers (a pipeline stage's) as (shape, layers) pairs: the sliding
    and the full ones in the model's proportion (Gemma 4: one full layer in six), or the
    model itself when its full layers are shaped as the others."""
    if not has_full_kind(arch):
        return [(arch, count)]
    full = int(arch.n_full_layers) * count // int(arch.n_layers)
    return [(sliding_layer_arch(arch), count - full), (full_layer_arch(arch), full)]


def kv_projections(arch: Arch) -> int:
    """Key/value projections of a layer of ``arch``'s shape: 1 for a full-attention layer
    whose values are its keys' projection (``full_k_eq_v`` without a window: the shape of
    :func:`full_layer_arch`), else 2."""
    return 1 if arch.full_k_eq_v and not arch.has_window else 2


def full_gemms_s(arch: Arch, sh: Arch, device: Any, rows: int, attn: float) -> float:
    """An engine's extra GEMM seconds for ``rows`` tokens through the full-attention layers'
    q, k, v, o projections (their own widths; TP shard ``sh``) over a sliding layer's
    ``attn``, all full layers (0 without a full kind)."""
    if not has_full_kind(arch):
        return 0.0
    f, d = full_layer_arch(sh), int(arch.d_model)
    qf, kvf = int(f.q_width), kv_projections(f) * int(f.kv_width)
    full = device.gemm_s(rows, qf + kvf, d) + device.gemm_s(rows, d, qf)
    return int(arch.n_full_layers) * (full - attn)


def full_decode(arch: Arch, sh: Arch, flops: float, nbytes: float, kv_bytes: float,
                dp: int) -> tuple[float, float]:  # fmt: skip
    """Decode attention (FLOPs, bytes) per cached token with the full-attention layers at their
    own widths: 4 h d_full and 2 h_kv,full d_full per token and full layer in place of the
    sliding shape's (DP attention: 1 / ``dp`` of the contexts)."""
    if not sh.has_full_shape:
        return flops, nbytes
    full, n = sh.full_view(), int(arch.n_full_layers) / dp
    return (flops + 4 * (int(full.q_width) - int(sh.q_width)) * n,
            nbytes + 2 * (int(full.kv_width) - int(sh.kv_width)) * kv_bytes * n)  # fmt: skip


def full_prefill_s(arch: Arch, sh: Arch, device: Any, chunk: tuple[int, int], flops: int,
                   kv_bytes: float, dp: int) -> float:  # fmt: skip
    """An engine's extra seconds for a prefill chunk of (tokens, prompt) in the full-attention
    layers: their attention at d_full over the sliding shape's ``flops`` (one layer's), and
    their wider KV writes (0 without a full kind)."""
    if not sh.has_full_shape:
        return 0.0
    from rlmcost.perf.attention_shapes import prefill_flops

    (tokens, prompt), full = chunk, sh.full_view()
    wide = prefill_flops(full_layer_arch(arch), int(sh.n_heads), tokens, prompt)[0]
    attn = device.flash_attention_s(wide, backward=False) - \
        device.flash_attention_s(flops, backward=False)  # fmt: skip
    write = device.memory_s(tokens * int(full.kv_cache_width) * kv_bytes) - \
        device.memory_s(tokens * int(sh.kv_cache_width) * kv_bytes)  # fmt: skip
    return int(arch.n_full_layers) / dp * (attn + write)


def full_extra_flops(arch: Arch, tokens: int, pairs: int) -> int:
    """Forward FLOPs the full-attention layers (all of them) spend beyond sliding-shaped ones
    on ``tokens`` tokens whose queries meet ``pairs`` keys in each full layer: their q, k, v, o
    projections at their own widths (2 per weight) and 4 h (d_full - d_h) a pair, as
    ``blocks.work_forward`` counts them (0 without a full kind)."""
    if not has_full_kind(arch):
        return 0
    f, d, h = full_layer_arch(arch), int(arch.d_model), int(arch.n_heads)
    q, kv, qf = int(arch.q_width), int(arch.kv_width), int(f.q_width)
    extra = d * (qf + kv_projections(f) * int(f.kv_width)) + qf * d - (d * (q + 2 * kv) + q * d)
    pair = 4 * h * (int(f.head_dim) - int(arch.head_dim))
    return int(arch.n_full_layers) * (2 * extra * tokens + pair * pairs)
