"""FlashAttention in Triton (2022) as a run's pre-FlashAttention-3 kernel: its rate against
FlashAttention-2's.

llm-foundry's MPT benchmark sweep runs ``attn_impl: triton`` (mosaicml/llm-foundry
@061f2c7ce: ``scripts/train/benchmarking/submit_benchmarks.py`` ``--attn_impl`` default
'triton', which ``sweep.sh`` does not set; ``llmfoundry/models/layers/attention.py``
``triton_flash_attn_fn``). That is ``llmfoundry/models/layers/flash_attn_triton.py``,
"Copied from HazyResearch/flash-attention@eff9fe6b flash_attn/flash_attn_triton.py", on
``triton_pre_mlir`` (``setup.py``: vchiley/triton@triton_pre_mlir_sm90, the Triton of
2022-12, which that file says it was tested with, patched to run on sm_90). Its header:
"Triton forward is generally faster than CUDA forward, while Triton backward is generally
slower"; "only been tested on A100".

FlashAttention-2's author measured it against FlashAttention-2 on an A100 (Dao 2023, arXiv
2307.08691, §4.1: "FlashAttention-2 is around 1.3-1.5x faster than FlashAttention in Triton in
the forward pass and around 2x faster in the backward pass"). So its forward runs at
FlashAttention-2's rate / :data:`FORWARD_SLOWDOWN` (1.4, the range's middle: 1.3 or 1.5 move
a forward + backward pass by -1.3 / +1.2 %) and its backward at / :data:`BACKWARD_SLOWDOWN`.
On Hopper the same ratios are taken to FlashAttention-2's 35 % of peak (assumption: both are
mma.sync code there). The legacy Triton the runs used (vchiley/triton@triton_pre_mlir_sm90,
``lib/codegen/selection/generator.cc``: ``visit_mma16816`` wherever ``sm() >= 80``; its codegen
has no ``wgmma``, the warpgroup MMA FlashAttention-3 is built on) emits ``mma.sync.m16n8k16`` on
sm_90 as on sm_80, also under the runs' CUDA 12.1 (torch 2.1.0.dev20230821+cu121: the
``h100new.csv`` image, published.json's llm_foundry_h100 source), for which the fork's
``lib/driver/llvm.cc`` ``vptx`` emits PTX ISA 8.0 (commit 48b1cc9ff, 2023-05-30).
"""

from __future__ import annotations

from dataclasses import replace

from rlmcost.errors import SpecError
from rlmcost.perf.efficiency import AcceleratorProfile

FORWARD_SLOWDOWN = 1.4
"""FlashAttention-2's forward speed over FlashAttention in Triton's: "1.3-1.5x" (arXiv
2307.08691 §4.1), the middle."""
BACKWARD_SLOWDOWN = 2.0
"""The same for the backward: "around 2x" (arXiv 2307.08691 §4.1)."""

FLASH_ATTENTION_2 = "flash-attention-2"
TRITON_2022 = "flash-attn-triton-2022"
KERNELS = (FLASH_ATTENTION_2, TRITON_2022)
"""A run's pre-FlashAttention-3 kernel: FlashAttention-2 (and SDPA's flash backend), the
default, or FlashAttention in Triton of 2022 (module docstring)."""

_SOURCE = (
    "FlashAttention in Triton (llm-foundry attn_impl triton: flash-attention@eff9fe6b "
    "flash_attn_triton.py on triton_pre_mlir): FlashAttention-2's forward / 1.4, backward / 2 "
    "(arXiv 2307.08691 §4.1: '1.3-1.5x faster ... in the forward pass and around 2x faster in "
    "the backward pass'), carried to Hopper (no wgmma before CUDA 12.0)"
)


def pre_fa3_kernel_profile(profile: AcceleratorProfile, kernel: str) -> AcceleratorProfile:
    """``profile`` with its pre-FlashAttention-3 slot (``fa2_attention_efficiency``, its
    backward ``fa2_backward_efficiency``) holding ``kernel``'s rates (module docstring).

    >>> from rlmcost.perf.efficiency import default_profile
    >>> p = pre_fa3_kernel_profile(default_profile("a100-80gb"), TRITON_2022)
    >>> round(p.fa2_attention_efficiency, 3), p.fa2_backward_efficiency
    (0.429, 0.3)
    """
    if kernel not in KERNELS:
        raise SpecError(f"unknown attention kernel {kernel!r}; use one of: {', '.join(KERNELS)}")
    if kernel == FLASH_ATTENTION_2:
        return profile
    fa2 = profile.fa2_attention_efficiency
    sources = tuple(
        (k, f"{v}; as {_SOURCE}" if k == "fa2_attention_efficiency" else v)
        for k, v in profile.sources
    )
    return replace(
        profile,
        fa2_attention_efficiency=fa2 / FORWARD_SLOWDOWN,
        fa2_backward_efficiency=fa2 / BACKWARD_SLOWDOWN,
        sources=sources,
    )
