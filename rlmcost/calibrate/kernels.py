"""Build each :class:`~rlmcost.calibrate.plan.KernelCase` as a ready-to-call closure.

``build(case, device, dtype)`` allocates the case's modules and inputs on ``device`` (a real
device to time, or ``meta`` to count FLOPs through a fused op's decomposition) and returns a
zero-argument function that runs the kernel once. Forward-only kernels run under
``torch.no_grad``; the training kernel returns the gradients of the input and of every
weight (``backward`` with an all-ones upstream gradient, so no loss op is added; gradients
are reset before each call). ``torch.autograd.grad`` would be neater but FlopCounterMode's
module tracker rejects it on leaf inputs (torch 2.13).

This module imports torch; import it only after :func:`~rlmcost.calibrate.device.require_torch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from rlmcost.calibrate.modules import Block, Mlp, MoeFfn, TinyLM, attend, sdpa_gqa_countable
from rlmcost.calibrate.plan import KernelCase
from rlmcost.choices import FfnKind

Kernel = Callable[[], Any]


def _no_grad(fn: Kernel) -> Kernel:
    def run() -> Any:
        with torch.no_grad():
            return fn()

    return run


def _gemm(case: KernelCase, device: Any, dtype: Any) -> Kernel:
    m, n, k = case.shape["M"], case.shape["N"], case.shape["K"]
    a = torch.randn(m, k, device=device, dtype=dtype)
    b = torch.randn(k, n, device=device, dtype=dtype)
    return lambda: torch.mm(a, b)


def _attention(case: KernelCase, device: Any, dtype: Any) -> Kernel:
    sh = case.shape
    b, s, h, kv, dh = sh["B"], sh["S"], sh["h"], sh["kv"], sh["dh"]
    q = torch.randn(b, h, s, dh, device=device, dtype=dtype)
    k = torch.randn(b, kv, s, dh, device=device, dtype=dtype)
    v = torch.randn(b, kv, s, dh, device=device, dtype=dtype)
    causal = case.name != "sdpa_full"
    eager = case.name == "attention_eager"
    return _no_grad(lambda: attend(q, k, v, causal=causal, eager=eager))


def _tokens(case: KernelCase, device: Any, dtype: Any) -> torch.Tensor:
    sh = case.shape
    tokens = sh["T"] if "T" in sh else sh["B"] * sh["S"]
    return torch.randn(tokens, sh["d"], device=device, dtype=dtype)


def _mlp(case: KernelCase, device: Any, dtype: Any) -> Kernel:
    sh = case.shape
    kind = FfnKind.GATED if case.name == "mlp_gated" else FfnKind.PLAIN
    with device:  # parameters are created on the device (fast init, no host copy)
        net = Mlp(sh["d"], sh["ff"], kind).to(dtype=dtype)
    x = _tokens(case, device, dtype)
    return _no_grad(lambda: net(x))


def _moe(case: KernelCase, device: Any, dtype: Any) -> Kernel:
    sh = case.shape
    with device:
        net = MoeFfn(sh["d"], sh["E"], sh["k"], sh["de"]).to(dtype=dtype)
    x = _tokens(case, device, dtype)
    return _no_grad(lambda: net(x))


def _block(case: KernelCase, device: Any, dtype: Any) -> Kernel:
    assert case.arch is not None
    sh = case.shape
    with device:
        net = Block(case.arch).to(dtype=dtype)
    train = case.name == "block_train"
    x = torch.randn(sh["B"], sh["S"], sh["d"], device=device, dtype=dtype, requires_grad=train)
    if not train:
        return _no_grad(lambda: net(x))
    inputs = [x, *net.parameters()]

    def forward_backward() -> Any:
        for t in inputs:  # fresh gradients each call, not accumulated ones
            t.grad = None
        y = net(x)
        y.backward(torch.ones_like(y))
        return x.grad

    return forward_backward


def _lm(case: KernelCase, device: Any, dtype: Any) -> TinyLM:
    assert case.arch is not None
    with device:
        return TinyLM(case.arch).to(dtype=dtype)


def _prefill(case: KernelCase, device: Any, dtype: Any) -> Kernel:
    sh = case.shape
    lm = _lm(case, device, dtype)
    ids = torch.randint(0, sh["V"], (sh["B"], sh["S"]), device=device)
    return _no_grad(lambda: lm.prefill(ids))


def _decode(case: KernelCase, device: Any, dtype: Any) -> Kernel:
    sh = case.shape
    lm = _lm(case, device, dtype)
    cache = lm.new_cache(sh["B"], sh["c"])
    ids = torch.randint(0, sh["V"], (sh["B"], 1), device=device)
    return _no_grad(lambda: lm.decode_step(ids, cache))


def _copy(case: KernelCase, device: Any, dtype: Any) -> Kernel:
    x = torch.randn(case.shape["N"], device=device, dtype=dtype)
    y = torch.empty_like(x)
    return lambda: y.copy_(x)


_BUILDERS: dict[str, Callable[[KernelCase, Any, Any], Kernel]] = {
    "gemm": _gemm,
    "sdpa_causal": _attention,
    "sdpa_full": _attention,
    "attention_eager": _attention,
    "mlp_gated": _mlp,
    "mlp_plain": _mlp,
    "moe_ffn": _moe,
    "block_forward": _block,
    "block_train": _block,
    "prefill": _prefill,
    "decode_step": _decode,
    "copy": _copy,
}


def build(case: KernelCase, device: Any, dtype: Any, seed: int = 0) -> Kernel:
    """The kernel of ``case`` on ``device`` in ``dtype``, inputs drawn with ``seed``. The
    grouped-query sdpa probe runs here, before any FLOP counter is entered (its own FLOPs
    would count otherwise)."""
    sdpa_gqa_countable(torch.device(device).type, dtype)
    torch.manual_seed(seed)
    return _BUILDERS[case.name](case, torch.device(device), dtype)
