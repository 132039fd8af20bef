"""The micro-kernels to run, with their shapes and analytic FLOPs and bytes (no torch here).

A :class:`KernelCase` names a kernel, the profile table (``kernel_class``) its measurement
feeds, its shape, the :class:`~rlmcost.arch.Arch` it implements and the analytic counts from
:mod:`rlmcost.calibrate.analytic`. :func:`kernel_plan` lists the cases for a device: small
shapes on CPU (``--quick`` fits a 2-core CI runner in seconds), model-sized shapes on CUDA
(a Llama-3.1-8B layer, a Mixtral-8x7B expert layer).
"""

from __future__ import annotations

from dataclasses import field

from rlmcost.arch import Arch
from rlmcost.calibrate import analytic as an
from rlmcost.calibrate.device import DeviceKind
from rlmcost.choices import Dtype, FfnKind
from rlmcost.frozen import dataclass

#: profile tables read through ``Profile.compute`` (fraction of peak FLOP/s, by FLOPs)
COMPUTE_CLASSES = (
    "gemm",
    "attention",
    "attention_full",
    "attention_eager",
    "mlp",
    "mlp_plain",
    "forward",
    "train",
    "prefill",
    "moe",
)
#: profile tables read through ``Profile.bandwidth`` (fraction of peak bytes/s, by bytes)
BANDWIDTH_CLASSES = ("decode", "copy")


@dataclass(frozen=True)
class KernelCase:
    """One micro-kernel at one shape: what to build and what it should cost."""

    name: str  # the kernel, e.g. "sdpa_causal"
    kernel_class: str  # the profile table it feeds, e.g. "attention"
    shape: dict[str, int] = field(hash=False)
    flops: int  # analytic, from blocks
    bytes_moved: int  # analytic minimal traffic
    arch: Arch | None = None

    @property
    def label(self) -> str:
        """'M512 N512 K512'-style shape for tables."""
        return " ".join(f"{k}{v}" for k, v in self.shape.items())


# --------------------------------------------------------------------------------------------
# Case constructors: one per kernel kind; the shape keys are what kernels.build reads.
# --------------------------------------------------------------------------------------------


def gemm(m: int, n: int, k: int, dtype: Dtype) -> KernelCase:
    """C = A @ B, A m x k, B k x n."""
    return KernelCase(
        "gemm", "gemm", dict(M=m, N=n, K=k), an.flops_gemm(m, n, k), an.bytes_gemm(m, n, k, dtype)
    )


_ATTENTION = {  # name -> profile class
    "sdpa_causal": "attention",
    "sdpa_full": "attention_full",
    "attention_eager": "attention_eager",
}


def attention(name: str, b: int, s: int, h: int, kv: int, dh: int, dtype: Dtype) -> KernelCase:
    """softmax(q k^T / sqrt(d_h)) v over B sequences of S tokens, h query and kv KV heads.

    ``sdpa_causal`` / ``sdpa_full``: ``F.scaled_dot_product_attention`` with / without the
    causal mask; ``attention_eager``: matmul, mask, softmax, matmul (transformers' eager).
    """
    arch = an.micro_arch(d_model=h * dh, n_heads=h, n_kv_heads=kv, head_dim=dh)
    return KernelCase(
        name,
        _ATTENTION[name],
        dict(B=b, S=s, h=h, kv=kv, dh=dh),
        an.flops_attention(arch, b, s),
        an.bytes_attention(arch, b, s, dtype),
        arch,
    )


def mlp(kind: FfnKind, tokens: int, d: int, d_ff: int, dtype: Dtype) -> KernelCase:
    """A 2-projection (GELU) or gated 3-projection (SwiGLU) FFN over ``tokens`` tokens."""
    arch = an.micro_arch(d_model=d, n_heads=1, n_kv_heads=1, head_dim=d, d_ff=d_ff, ffn_kind=kind)
    name, cls = ("mlp_gated", "mlp") if kind is FfnKind.GATED else ("mlp_plain", "mlp_plain")
    return KernelCase(
        name,
        cls,
        dict(T=tokens, d=d, ff=d_ff),
        an.flops_ffn(arch, tokens),
        an.bytes_ffn(arch, tokens, dtype),
        arch,
    )


def _layer_arch(d: int, h: int, kv: int, d_ff: int, layers: int = 1, vocab: int = 0) -> Arch:
    return an.micro_arch(
        d_model=d,
        n_heads=h,
        n_kv_heads=kv,
        head_dim=d // h,
        d_ff=d_ff,
        vocab=vocab,
        n_layers=layers,
    )


def block(
    train: bool, b: int, s: int, d: int, h: int, kv: int, d_ff: int, dtype: Dtype
) -> KernelCase:
    """One pre-norm Transformer layer (RMSNorm, GQA SDPA causal, SwiGLU), forward or
    forward + backward (gradients of the input and of every weight)."""
    arch = _layer_arch(d, h, kv, d_ff)
    shape = dict(B=b, S=s, d=d, h=h, kv=kv, ff=d_ff)
    if train:
        flops, moved = an.flops_block_train(arch, b, s), an.bytes_block_train(arch, b, s, dtype)
        return KernelCase("block_train", "train", shape, flops, moved, arch)
    flops, moved = an.flops_block_forward(arch, b, s), an.bytes_block_forward(arch, b, s, dtype)
    return KernelCase("block_forward", "forward", shape, flops, moved, arch)


def prefill(
    b: int, s: int, d: int, h: int, kv: int, d_ff: int, layers: int, vocab: int, dtype: Dtype
) -> KernelCase:
    """A small LM's prefill: embedding, ``layers`` layers, final norm, LM head on the last
    position (transformers' ``logits_to_keep=1``)."""
    arch = _layer_arch(d, h, kv, d_ff, layers, vocab)
    return KernelCase(
        "prefill",
        "prefill",
        dict(B=b, S=s, L=layers, d=d, h=h, kv=kv, ff=d_ff, V=vocab),
        an.flops_prefill(arch, s, b),
        an.bytes_prefill(arch, s, b, dtype),
        arch,
    )


def decode_step(
    b: int, c: int, d: int, h: int, kv: int, d_ff: int, layers: int, vocab: int, dtype: Dtype
) -> KernelCase:
    """One decode step of the same LM: one new token per sequence writes its K/V at position
    c - 1 of a preallocated cache and attends to all c positions."""
    arch = _layer_arch(d, h, kv, d_ff, layers, vocab)
    return KernelCase(
        "decode_step",
        "decode",
        dict(B=b, c=c, L=layers, d=d, h=h, kv=kv, ff=d_ff, V=vocab),
        an.flops_decode_step(arch, c, b),
        an.bytes_decode_step(arch, c, b, dtype),
        arch,
    )


def moe(tokens: int, d: int, experts: int, top_k: int, d_expert: int, dtype: Dtype) -> KernelCase:
    """A routed MoE FFN: router (d x E), softmax top-k, one SwiGLU expert loop (eager)."""
    arch = an.micro_arch(
        d_model=d,
        n_heads=1,
        n_kv_heads=1,
        head_dim=d,
        n_experts=experts,
        top_k=top_k,
        d_expert=d_expert,
    )
    return KernelCase(
        "moe_ffn",
        "moe",
        dict(T=tokens, d=d, E=experts, k=top_k, de=d_expert),
        an.flops_ffn(arch, tokens),
        an.bytes_ffn(arch, tokens, dtype),
        arch,
    )


def copy(elements: int, dtype: Dtype) -> KernelCase:
    """``y.copy_(x)`` over ``elements`` elements: the streaming memory bandwidth."""
    return KernelCase("copy", "copy", dict(N=elements), 0, an.bytes_copy(elements, dtype))


# --------------------------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------------------------


def kernel_plan(kind: DeviceKind, quick: bool, dtype: Dtype) -> list[KernelCase]:
    """Every case to run on ``kind``, smallest first within each kernel."""
    if kind is DeviceKind.CUDA:
        return _cuda_plan(quick, dtype)
    return _cpu_plan(quick, dtype)


def _cpu_plan(quick: bool, dtype: Dtype) -> list[KernelCase]:
    # A d=512 model: GQA 8 query / 2 KV heads of 64, SwiGLU 1376 (= Llama's 8/3 d, rounded).
    d, h, kv, ff, dh = 512, 8, 2, 1376, 64
    gemms = [256, 512, 1024] if quick else [128, 256, 512, 1024, 1536, 2048]
    seqs_attn = [256, 1024] if quick else [128, 256, 512, 1024, 2048]
    contexts = [256, 1024] if quick else [128, 512, 1024, 2048]
    tokens = [512] if quick else [256, 1024, 2048]
    copies = [1 << 22, 1 << 25] if quick else [1 << 20, 1 << 22, 1 << 24, 1 << 25]
    cases = [gemm(n, n, n, dtype) for n in gemms]
    cases.append(gemm(2048, 4 * d, d, dtype))  # a projection-shaped GEMM: T x d -> 4d
    cases += [attention("sdpa_causal", 1, s, h, kv, dh, dtype) for s in seqs_attn]
    cases += [attention("sdpa_full", 1, s, h, kv, dh, dtype) for s in seqs_attn[-1:]]
    cases += [attention("attention_eager", 1, s, h, kv, dh, dtype) for s in seqs_attn[-1:]]
    cases += [mlp(FfnKind.GATED, t, d, ff, dtype) for t in tokens]
    cases += [mlp(FfnKind.PLAIN, t, d, 4 * d, dtype) for t in tokens]
    for t in tokens:
        cases += [block(False, 2, t // 2, d, h, kv, ff, dtype)]
        cases += [block(True, 2, t // 2, d, h, kv, ff, dtype)]
    cases += [
        prefill(1, s, d, h, kv, ff, 2, 8192, dtype) for s in ([256] if quick else [256, 1024])
    ]
    cases += [decode_step(4, c, d, h, kv, ff, 2, 8192, dtype) for c in contexts]
    cases += [moe(t // 2, d, 8, 2, d, dtype) for t in tokens]
    cases += [copy(n, dtype) for n in copies]
    return cases


def _cuda_plan(quick: bool, dtype: Dtype) -> list[KernelCase]:
    # Llama-3.1-8B's layer: d 4096, 32 query / 8 KV heads of 128, SwiGLU 14336;
    # Mixtral-8x7B's expert layer: d 4096, 8 experts of 14336, top-2.
    d, h, kv, ff, dh = 4096, 32, 8, 14336, 128
    gemms = [1024, 4096, 8192] if quick else [512, 1024, 2048, 4096, 8192, 16384]
    seqs_attn = [1024, 4096] if quick else [512, 1024, 2048, 4096, 8192, 16384]
    tokens = [4096] if quick else [1024, 4096, 16384]
    contexts = [1024, 8192] if quick else [512, 2048, 8192, 32768]
    copies = [1 << 26, 1 << 29] if quick else [1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30]
    cases = [gemm(n, n, n, dtype) for n in gemms]
    cases.append(gemm(16384, 3 * ff // 2, d, dtype))  # fused gate+up-shaped: T x d -> 21504
    cases += [attention("sdpa_causal", 4, s, h, kv, dh, dtype) for s in seqs_attn]
    cases += [attention("sdpa_full", 4, s, h, kv, dh, dtype) for s in seqs_attn[-2:]]
    cases += [attention("attention_eager", 4, s, h, kv, dh, dtype) for s in seqs_attn[:1]]
    cases += [mlp(FfnKind.GATED, t, d, ff, dtype) for t in tokens]
    cases += [mlp(FfnKind.PLAIN, t, d, 4 * d, dtype) for t in tokens]
    for t in tokens:
        cases += [block(False, 1, t, d, h, kv, ff, dtype)]
        cases += [block(True, 1, t, d, h, kv, ff, dtype)]
    for s in [2048] if quick else [1024, 4096]:
        cases += [prefill(4, s, d, h, kv, ff, 4, 128256, dtype)]
    cases += [decode_step(64, c, d, h, kv, ff, 4, 128256, dtype) for c in contexts]
    cases += [moe(t, d, 8, 2, ff, dtype) for t in tokens]
    cases += [copy(n, dtype) for n in copies]
    return cases
