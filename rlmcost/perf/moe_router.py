"""An fp64 MoE router: Megatron-core's ``moe_router_dtype: fp64``, as every NeMo RL recipe sets it.

**Where it is set.** NeMo RL's base configs set ``policy.megatron_cfg.moe_router_dtype: "fp64"``
at every release rlmcost validates (NVIDIA-NeMo/RL examples/configs/grpo_math_1B_megatron.yaml
at v0.3.0 line 87, v0.4.0-v0.5.0 line 93, v0.6.0 line 95, v0.7.0 line 110; grpo_math_1B.yaml
from v0.4.0), and its Megatron recipes inherit it; the FP8 DeepSeek-V3 performance recipe sets
``fp32`` (examples/configs/recipes/llm/performance/grpo-deepseek-v3-64n8g-fp8-async-1off.yaml,
v0.5.0-v0.7.0). Megatron-core's default is None, "no changes for dtype" (TransformerConfig
``moe_router_dtype``, megatron/core/transformer/transformer_config.py, NVIDIA/Megatron-LM
@d98e8a64dd): the router's GEMM in the model dtype. Megatron-Bridge's pre-training recipes set
None or ``fp32`` (src/megatron/bridge/recipes), so ``validate``'s pre-training rows are unmoved.

**What runs in fp64** (megatron/core/transformer/moe/router.py ``TopKRouter.gating`` and
moe_utils.py ``RouterGatingLinearFunction``, at d30c3ae5 as NeMo RL v0.6.0 pins it and at
d98e8a64dd; v0.3.0's 2ff0f099 runs ``F.linear`` on the same fp64 casts):

* the router GEMM [T, d] x [d, E] in fp64: ``te_general_gemm`` serves fp32 only ("router_dtype
  != torch.float64"), so fp64 takes ``torch.mm(inp.to(fp64), weight.to(fp64).t())``, a DGEMM
  on the FP64 tensor cores; backward ``grad_input = torch.mm(grad_output, weight.to(fp64))``
  and ``grad_weight = torch.mm(grad_output.t(), inp.to(fp64))``, two more DGEMMs;
* the casts: forward the input [T, d] and the weight [E, d] to fp64 (read the 16-bit element,
  write 8 bytes); backward both again (the function saves the 16-bit tensors), and the two
  gradients back to their 16-bit dtypes (read 8 bytes, write the 16-bit element);
* the score function and top-k on the [T, E] fp64 logits (``topk_routing_with_score_function``:
  softmax or sigmoid, then top-k): priced as two memory-bound kernels reading and writing
  [T, E] fp64 forward, twice the bytes backward.

Left out: the weighted average of the expert outputs by the fp64 probabilities (the option's
"expert output weighted averaging"): with ``bias_activation_fusion`` (NeMo RL's base config:
true) the probabilities multiply inside the fused SwiGLU (experts.py ``weighted_bias_swiglu_impl``,
"dtype is handled inside the fused kernel"), reading k fp64 values per token, under 1 % of the
activation's bytes. The all-to-all dispatcher's expert-TP reduce-scatter in the probabilities'
dtype (token_dispatcher.py ``token_combine``) needs ETP > 1; NeMo RL sets ETP 1.

**Priced** on the rank's router shape (the router GEMM :mod:`~rlmcost.perf.step_pass` prices
in the model dtype otherwise, same FLOPs): each of the three DGEMMs as max(FLOPs / (FP64 peak x
eta_gemm), its fp64 operand bytes at HBM speed) plus a launch gap, at the device's FP64 peak
(``peak_flops_per_s["fp64"]``, the datasheet's FP64 Tensor Core figure, in
specs/data/hardware.json) and the GEMM efficiency eta_gemm of the device's 16-bit profile (an
assumption: cuBLAS DGEMM sustains 55-59 of H100's 66.9 TFLOP/s in HPL, 0.82-0.88 of peak, per
the Top500 figures glennklockwood.com/garden/processors/h100 quotes; rlmcost's H100 eta_gemm is
0.711). Full occupancy is assumed (a lower bound): the tile model of
:mod:`~rlmcost.perf.efficiency` lists cuBLAS's 16-bit tile shapes only, and with them
Qwen3-30B-A3B's [4096, 128] router output would be one wave of 32 tiles on H100's 132 SMs, 4.1x
longer; cuBLAS's DGEMM tiles and split-K choice for these skinny shapes are not published. The
casts and score kernels are memory-bound bytes. A device without an FP64 figure is an error
that names the fix.
The MoE host floor (:mod:`~rlmcost.perf.moe_host`) still applies over the layer: where a
layer's pass is host-bound the router's GPU time hides under it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import Dtype
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.step_pass import StagePass, StepContext

FP64 = Dtype.FP64.bytes
"""Bytes of one fp64 element."""

SCORE_KERNELS = 2
"""Memory-bound kernels on the [T, E] fp64 logits forward: the score function, top-k."""

ROUTER_FP64_NOTE = (
    "MoE router in fp64 (moe_router_dtype: fp64, NeMo RL's base config): the router GEMM and "
    "its two backward GEMMs at the device's FP64 tensor-core peak, the input and weight cast "
    "to fp64 and the gradients back, score and top-k over fp64 logits (Megatron-core "
    "RouterGatingLinearFunction; rlmcost.perf.moe_router)"
)
"""The output's note when a MoE model's router is priced in fp64."""


def router_fp64_bytes(tokens: int, d: int, experts: int, x: int, w: int) -> tuple[int, int]:
    """(forward, backward) HBM bytes of the fp64 router's casts and score kernels for
    ``tokens`` tokens of width ``d``, ``experts`` experts, activations of ``x`` bytes and a
    router weight of ``w`` bytes (module doc).

    >>> router_fp64_bytes(1, 1, 1, 2, 2)  # casts 2 x 10, scores 2 x 16; backward 2 x 20 + 64
    (52, 104)
    """
    casts = tokens * d * (x + FP64) + experts * d * (w + FP64)
    scores = SCORE_KERNELS * tokens * experts * 2 * FP64
    return casts + scores, 2 * casts + 2 * scores


def dgemm_s(dev: Device, m: int, n: int, k: int) -> float:
    """Seconds of one [m, k] x [k, n] fp64 GEMM at full occupancy (module doc): FLOPs at the
    FP64 peak x the profile's GEMM efficiency, or its fp64 operand bytes at HBM speed."""
    peak = dev.hardware.peak(Dtype.FP64) * dev.defaults.gemm_efficiency
    memory = dev.memory_s((m * k + k * n + m * n) * FP64)
    return max(2 * m * n * k / peak, memory) + dev.defaults.kernel_gap_s


def price_router_fp64(c: StepContext, out: StagePass) -> None:
    """Add one MoE layer's fp64 router (micro-batch of ``c.tokens`` tokens on one rank) to
    ``out``: the DGEMMs as part ``gemm``, the casts and score kernels as ``elementwise``."""
    hw = c.device.hardware
    if Dtype.FP64 not in hw.peak_flops_per_s:
        raise SpecError(f"hardware {hw.name} lists no fp64 peak for an fp64 MoE router; give "
                        "--router-dtype fp32, or a hardware spec with peak_flops_per_s.fp64")
    t, d, e = c.tokens, int(c.arch.d_model), int(c.arch.n_experts)
    out.fwd["gemm"] += dgemm_s(c.device, t, e, d)
    out.bwd["gemm"] += dgemm_s(c.device, t, d, e) + dgemm_s(c.device, d, e, t)
    out.flops += 6 * t * e * d
    x, w = c.workload.activation_dtype.bytes, c.workload.weight_dtype.bytes
    fwd, bwd = router_fp64_bytes(t, d, e, x, w)
    out.fwd["elementwise"] += c.device.elementwise_s(fwd, 2 + SCORE_KERNELS)
    out.bwd["elementwise"] += c.device.elementwise_s(bwd, 4 + 2 * SCORE_KERNELS)
