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
    model itself when its full layers are shaped as the others; Gemma 4 E's KV-shared layers
    (:func:`shared_kinds`) as kinds of their own."""
    if int(arch.kv_shared_layers):
        return shared_kinds(arch, count)
    if not has_full_kind(arch):
        return [(arch, count)]
    full = arch.full_layers_of(count)
    return [(sliding_layer_arch(arch), count - full), (full_layer_arch(arch), full)]


def _own_kv(arch: Arch) -> Arch:
    return arch.with_(kv_shared_layers=0, kv_shared_full_layers=0, kv_shared_wide_ffn=False)


def _shared(arch: Arch, wide: bool) -> Arch:
    """A layer of ``arch``'s shape that reuses another's keys and values (every layer of the
    returned shape shared: :func:`kv_projections` 0), its FFN 2 d_ff wide with ``wide``."""
    n = arch.n_layers
    return arch.with_(kv_shared_layers=n, kv_shared_full_layers=0 if arch.has_window else n,
                      kv_shared_wide_ffn=False, d_ff=arch.d_ff * (2 if wide else 1))  # fmt: skip


def shared_kinds(arch: Arch, count: int) -> list[tuple[Arch, int]]:
    """Gemma 4 E's layers as four kinds: sliding and full layers with their own keys and values,
    and the shared ones of each (no k/v projections, a double-wide FFN with
    ``kv_shared_wide_ffn``), in the model's proportion (exact for the whole stack)."""
    n, shared, shared_full = int(arch.n_layers), int(arch.kv_shared_layers), \
        int(arch.kv_shared_full_layers)  # fmt: skip
    full, wide = int(arch.n_full_layers), arch.kv_shared_wide_ffn
    base = _own_kv(arch)
    sliding_arch = sliding_layer_arch(base) if has_full_kind(base) else base
    full_arch = full_layer_arch(base) if has_full_kind(base) else base
    counts = [n - full - (shared - shared_full), full - shared_full, shared - shared_full,
              shared_full]  # fmt: skip
    here = [c * count // n for c in counts]
    here[0] += count - sum(here)
    kinds = [sliding_arch, full_arch, _shared(sliding_arch, wide), _shared(full_arch, wide)]
    return [(k, c) for k, c in zip(kinds, here, strict=True) if c]


def kv_projections(arch: Arch) -> int:
    """Key/value projections of a layer of ``arch``'s shape: 0 for a layer that reuses
    another's keys and values (Gemma 4 E's, :func:`shared_kinds`), 1 for a full-attention
    layer whose values are its keys' projection (``full_k_eq_v`` without a window: the shape
    of :func:`full_layer_arch`), else 2."""
    if int(arch.kv_shared_layers) and arch.kv_shared_layers == arch.n_layers:
        return 0
    return 1 if arch.full_k_eq_v and not arch.has_window else 2


def ple_gemms(arch: Arch, tokens: int, gemm: Any) -> None:
    """Gemma 4 E's per-layer input path for one layer through ``gemm(m, n, k)``: its slice of
    the d -> L p model projection, the d -> p gate and the p -> d projection (replicated
    under TP: vLLM's ``ReplicatedLinear`` gate, transformers' TP plan leaves them out)."""
    p, d = int(arch.ple_dim), int(arch.d_model)
    if p:
        gemm(tokens, p, d)
        gemm(tokens, p, d)
        gemm(tokens, d, p)


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
    ``blocks.work_forward`` counts them (0 without a full kind); plus Gemma 4 E's per-layer
    input path and KV-shared layers on ``tokens`` tokens (:func:`e_extra_weights`)."""
    if not has_full_kind(arch):
        return e_extra_weights(arch) * 2 * tokens  # Gemma 4 E
    f, d, h = full_layer_arch(arch), int(arch.d_model), int(arch.n_heads)
    q, kv, qf = int(arch.q_width), int(arch.kv_width), int(f.q_width)
    extra = d * (qf + kv_projections(f) * int(f.kv_width)) + qf * d - (d * (q + 2 * kv) + q * d)
    pair = 4 * h * (int(f.head_dim) - int(arch.head_dim))
    return int(arch.n_full_layers) * (2 * extra * tokens + pair * pairs) + \
        e_extra_weights(arch) * 2 * tokens  # fmt: skip


def e_extra_weights(arch: Arch) -> int:
    """Weight elements a token multiplies in Gemma 4 E's per-layer input path (3 L d p) and
    the KV-shared layers' difference (no k/v projections, a wider FFN), as
    :mod:`rlmcost.blocks.ple` counts them (0 for other models)."""
    shared, p = int(arch.kv_shared_layers), int(arch.ple_dim)
    if not (shared or p):
        return 0
    d, n = int(arch.d_model), int(arch.n_layers)
    sliding = shared - int(arch.kv_shared_full_layers)
    full = arch.full_view()
    per_full = (1 if arch.full_k_eq_v else 2) * int(full.kv_width)
    w = 3 * n * d * p - d * (sliding * 2 * int(arch.kv_width)
                             + int(arch.kv_shared_full_layers) * per_full)  # fmt: skip
    if arch.kv_shared_wide_ffn:
        w += shared * arch.ffn_kind.projections * d * int(arch.d_ff)
    return w


def shared_gemms_s(arch: Arch, sh: Arch, devices: tuple[Any, Any], rows: tuple[int, int]) -> float:
    """An engine's GEMM seconds beyond every layer at its own attention shape, all layers:
    Gemma 4 E's per-layer input path and the KV-shared layers' missing k/v projections and
    wider FFNs (``devices`` attention / FFN, ``rows`` their token rows; 0 for other models)."""
    if not (int(arch.kv_shared_layers) or int(arch.ple_dim)):
        return 0.0
    (ad, fd), (ma, m), d = devices, rows, int(arch.d_model)
    out = 0.0
    if int(arch.ple_dim):
        p = int(arch.ple_dim)
        out += int(arch.n_layers) * (2 * fd.gemm_s(m, p, d) + fd.gemm_s(m, d, p))
    sliding = int(arch.kv_shared_layers) - int(arch.kv_shared_full_layers)
    q, kv = int(sh.q_width), int(sh.kv_width)
    out -= sliding * (ad.gemm_s(ma, q + 2 * kv, d) - ad.gemm_s(ma, q, d))
    if int(arch.kv_shared_full_layers):
        f = full_layer_arch(sh) if has_full_kind(sh) else sh
        qf, kvf = int(f.q_width), kv_projections(_own_kv(f)) * int(f.kv_width)
        out -= int(arch.kv_shared_full_layers) * (ad.gemm_s(ma, qf + kvf, d) - ad.gemm_s(ma, qf, d))
    if arch.kv_shared_wide_ffn:
        pr, ff = arch.ffn_kind.projections, int(sh.d_ff)
        wide = fd.gemm_s(m, (pr - 1) * 2 * ff, d) + fd.gemm_s(m, d, 2 * ff)
        out += int(arch.kv_shared_layers) * (wide - fd.gemm_s(m, (pr - 1) * ff, d)
                                             - fd.gemm_s(m, d, ff))  # fmt: skip
    return out
