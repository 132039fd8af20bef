"""Small torch modules whose shapes are an :class:`~rlmcost.arch.Arch`: the micro-kernels.

The layer structure follows transformers' Llama (pre-norm RMSNorm, q/k/v/o projections
without biases, grouped-query attention, SwiGLU FFN, untied LM head) and GPT-2's GELU FFN;
rotary embeddings are left out (elementwise, uncounted, see ``tests/FLOP_CONVENTIONS.md``).
Every matrix product is an ``nn.Linear`` or ``torch.matmul`` on 2-D/4-D tensors, i.e.
``aten.mm`` / ``aten.addmm`` / ``aten.bmm``, which ``FlopCounterMode`` counts as 2 M N K.

This module imports torch; import it only after :func:`~rlmcost.calibrate.device.require_torch`.
"""

from __future__ import annotations

import math
from functools import cache
from typing import SupportsInt

import torch
import torch.nn.functional as F
from torch import nn

from rlmcost.arch import Arch
from rlmcost.choices import FfnKind


def _int(x: SupportsInt) -> int:
    return int(x)  # Arch fields are plain ints for micro-kernels


@cache
def sdpa_gqa_countable(device: str = "cpu", dtype: torch.dtype = torch.float32) -> bool:
    """Whether this torch's ``FlopCounterMode`` counts a grouped-query
    ``scaled_dot_product_attention`` (``enable_gqa=True``) on ``device`` in ``dtype`` (the
    backend the dispatcher picks there is what the counter sees): torch 2.11's CUDA
    ``sdpa_flop_count`` asserts equal head counts ("query/key/value shapes are incompatible"),
    so there the fused path repeats K/V to the query heads first, as transformers' sdpa
    attention does where ``enable_gqa`` is unusable (``repeat_kv``; the copy is in the measured
    time)."""
    from torch.utils.flop_counter import FlopCounterMode

    q = torch.zeros(1, 4, 2, 64, device=device, dtype=dtype)
    kv = torch.zeros(1, 2, 2, 64, device=device, dtype=dtype)
    try:
        with FlopCounterMode(display=False):
            F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)
    except (AssertionError, RuntimeError, TypeError):
        return False
    return True


def attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, eager: bool = False
) -> torch.Tensor:
    """softmax(q k^T / sqrt(d_h)) v for q (B, h, S_q, d_h) and k, v (B, h_kv, S_k, d_h).

    ``eager=False``: ``F.scaled_dot_product_attention`` (fused flash kernel on CPU and CUDA);
    ``eager=True``: transformers' eager path, K/V repeated to h heads (``repeat_kv``), two
    matmuls around a masked softmax. A causal mask aligns the last query with the last key.
    """
    h, h_kv = q.shape[1], k.shape[1]
    if not eager and (h == h_kv or sdpa_gqa_countable(q.device.type, q.dtype)):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=h != h_kv)
    if h != h_kv:  # transformers' repeat_kv (its sdpa path too where enable_gqa cannot run)
        k = k.repeat_interleave(h // h_kv, dim=1)
        v = v.repeat_interleave(h // h_kv, dim=1)
    if not eager:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        s_q, s_k = q.shape[-2], k.shape[-2]
        mask = torch.ones(s_q, s_k, dtype=torch.bool, device=q.device).tril(s_k - s_q)
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


class Mlp(nn.Module):
    """FFN of width ``d_ff``: GELU 2-projection (``PLAIN``) or SwiGLU 3-projection (``GATED``)."""

    def __init__(self, d: int, d_ff: int, kind: FfnKind) -> None:
        super().__init__()
        self.kind = kind
        self.up = nn.Linear(d, d_ff, bias=False)
        self.gate = nn.Linear(d, d_ff, bias=False) if kind is FfnKind.GATED else None
        self.down = nn.Linear(d_ff, d, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gate is None:
            return self.down(F.gelu(self.up(x)))
        return self.down(F.silu(self.gate(x)) * self.up(x))


class MoeFfn(nn.Module):
    """Routed experts: router d -> E, softmax, top-k, each expert a SwiGLU of width d_e.

    The per-expert loop of transformers' ``experts_implementation="eager"``: each expert runs
    on the tokens routed to it (``aten.mm``), so the counted FLOPs are 2 T d E (router) plus
    2 T k 3 d d_e for any routing (the per-expert token counts sum to T k).
    """

    def __init__(self, d: int, n_experts: int, top_k: int, d_expert: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(d, n_experts, bias=False)
        scale = 1.0 / math.sqrt(d)
        self.w_gate = nn.Parameter(torch.randn(n_experts, d_expert, d) * scale)
        self.w_up = nn.Parameter(torch.randn(n_experts, d_expert, d) * scale)
        self.w_down = nn.Parameter(torch.randn(n_experts, d, d_expert) / math.sqrt(d_expert))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights, chosen = torch.topk(torch.softmax(self.router(x), dim=-1), self.top_k, dim=-1)
        out = torch.zeros_like(x)
        for e in range(self.w_gate.shape[0]):
            token, slot = torch.where(chosen == e)
            if token.numel() == 0:
                continue
            xe = x[token]
            inner = F.silu(xe @ self.w_gate[e].T) * (xe @ self.w_up[e].T)
            out.index_add_(0, token, (inner @ self.w_down[e].T) * weights[token, slot, None])
        return out


class Attention(nn.Module):
    """q, k, v, o projections (no biases) around :func:`attend`, GQA with h_kv KV heads."""

    def __init__(self, arch: Arch, eager: bool = False) -> None:
        super().__init__()
        d, dh = _int(arch.d_model), _int(arch.head_dim)
        self.h, self.h_kv, self.dh, self.eager = (
            _int(arch.n_heads),
            _int(arch.n_kv_heads),
            dh,
            eager,
        )
        self.q = nn.Linear(d, self.h * dh, bias=False)
        self.k = nn.Linear(d, self.h_kv * dh, bias=False)
        self.v = nn.Linear(d, self.h_kv * dh, bias=False)
        self.o = nn.Linear(self.h * dh, d, bias=False)

    def _split(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        b, s, _ = x.shape
        return x.view(b, s, heads, self.dh).transpose(1, 2)

    def forward(
        self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> torch.Tensor:
        """Teacher-forced causal attention, or (``cache`` given) one decode step whose K/V go
        to the cache's last position before attending to the whole cache."""
        b, s, _ = x.shape
        q = self._split(self.q(x), self.h)
        k = self._split(self.k(x), self.h_kv)
        v = self._split(self.v(x), self.h_kv)
        if cache is not None:
            k_cache, v_cache = cache
            k_cache[:, :, -s:] = k
            v_cache[:, :, -s:] = v
            k, v = k_cache, v_cache
        out = attend(q, k, v, causal=cache is None, eager=self.eager)
        return self.o(out.transpose(1, 2).reshape(b, s, self.h * self.dh))


class Block(nn.Module):
    """One pre-norm Transformer layer: x + attn(norm(x)), then x + ffn(norm(x))."""

    def __init__(self, arch: Arch, eager: bool = False) -> None:
        super().__init__()
        d = _int(arch.d_model)
        self.norm_attn = nn.RMSNorm(d)
        self.attn = Attention(arch, eager)
        self.norm_ffn = nn.RMSNorm(d)
        self.ffn = Mlp(d, _int(arch.d_ff), arch.ffn_kind)

    def forward(
        self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> torch.Tensor:
        x = x + self.attn(self.norm_attn(x), cache)
        return x + self.ffn(self.norm_ffn(x))


class TinyLM(nn.Module):
    """Embedding, L blocks, final RMSNorm and an untied LM head d -> V."""

    def __init__(self, arch: Arch) -> None:
        super().__init__()
        d = _int(arch.d_model)
        self.arch = arch
        self.embed = nn.Embedding(_int(arch.vocab), d)
        self.layers = nn.ModuleList(Block(arch) for _ in range(_int(arch.n_layers)))
        self.norm = nn.RMSNorm(d)
        self.head = nn.Linear(d, _int(arch.vocab), bias=False)

    def prefill(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits of the last position only (transformers' ``logits_to_keep=1``)."""
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x[:, -1:]))

    def new_cache(self, seqs: int, context: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """A KV cache of ``context`` positions per layer (random contents stand in for a
        prefill: the decode step's cost does not depend on the cached values)."""
        a = self.arch
        p = self.head.weight
        shape = (seqs, _int(a.n_kv_heads), context, _int(a.head_dim))
        return [
            (
                torch.randn(shape, device=p.device, dtype=p.dtype),
                torch.randn(shape, device=p.device, dtype=p.dtype),
            )
            for _ in self.layers
        ]

    def decode_step(
        self, ids: torch.Tensor, cache: list[tuple[torch.Tensor, torch.Tensor]]
    ) -> torch.Tensor:
        """One new token per sequence (``ids`` is B x 1) written at the cache's last position,
        attending to all of it: logits B x 1 x V."""
        x = self.embed(ids)
        for layer, kv in zip(self.layers, cache, strict=True):
            x = layer(x, kv)
        return self.head(self.norm(x))
