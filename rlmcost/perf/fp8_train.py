"""FP8 training: a Megatron-core trainer's Linear layers run through Transformer Engine's FP8
recipes (``TrainLayout.fp8``, ``--train-fp8 RECIPE``; ``StepOptions.fp8``).

**Which GEMMs.** Megatron-core enters TE's ``fp8_autocast`` around every transformer layer
(``TransformerBlock.forward``: ``get_fp8_context(config, layer_number)`` per layer, around the
whole block for the delayed recipe; megatron/core/transformer/transformer_block.py
@d98e8a64dd), whether the model trains or not (no ``self.training`` test there: a Megatron
worker's log-prob forwards run FP8 too). Inside a layer TE's modules run FP8: the QKV (MLA's
down- and up-projections) and output projections, the FFN's fc1 (gate and up) and fc2, the
shared experts and the routed experts' grouped GEMMs, a Gated DeltaNet's projections.
Outside FP8 stay the attention core (TE's fused attention in bf16: FP8 attention is the
recipe's ``fp8_dpa``, False by default, transformer_engine/common/recipe/__init__.py
@d0067d0d), the MoE router (``TopKRouter.gating``: ``router_gating_linear``, a torch GEMM,
megatron/core/transformer/moe/router.py @d98e8a64dd), norms, activations, RoPE, the
permutation, the embedding, and the output layer with the loss: ``GPTModel.output_layer``
sits outside the block, a ``tensor_parallel.ColumnParallelLinear`` unless
``is_mxfp8_output_proj_active`` (megatron/core/models/gpt/gpt_model.py @d98e8a64dd).

**The GEMMs.** Each FP8 Linear's three GEMMs (forward, data and weight gradient) take the tile
model (:meth:`~rlmcost.perf.efficiency.Device.gemm_s`) at the dense FP8 peak
(``HardwareSpec.peak_flops_per_s['fp8']``) x the profile's GEMM efficiency x
:data:`FP8_GEMM_EFFICIENCY_RATIO` (Transformer Engine's GEMM benchmark: FP8 GEMMs at 1.905 x
bf16's speed on an H200 NVL, where the peaks are 2 x; a measured calibration's GEMM table
as it is). Their memory side reads FP8 operands (the 16-bit output counted at 1 byte
too: these GEMMs are compute-bound). Blockwise GEMMs take :data:`BLOCKWISE_GEMM_RATIO` x the
tensorwise seconds, MXFP8 GEMMs :data:`MXFP8_GEMM_RATIO` x (TE's B300 kernels). The casts
below are booked in the ``gemm`` part (the Linear's time as TE's module runs it).

**The quantizing kernels** (memory-bound, :meth:`~rlmcost.perf.efficiency.Device.elementwise_s`;
exact int bytes, ``x`` the activation dtype's bytes). TE quantizes each FP8 GEMM input into a
row-wise copy and, where a backward reads it, a column-wise copy (transposed on Hopper, scaled
along the other side for MXFP8) in one kernel:

* forward: the Linear's input [m, k]: its row-wise copy; the column-wise copy (the weight
  gradient's) is booked on the backward side, as a pass under ``torch.no_grad`` (a log-prob
  forward, a fully recomputed layer's first forward) writes none;
* backward: the output gradient [m, n], both copies;
* weights [k, n]: both copies once per optimizer step, not per micro-batch: Megatron-core's TE
  modules pass ``is_first_microbatch`` (``TELinear.forward``,
  megatron/core/extensions/transformer_engine.py @d98e8a64dd), True on the step's first
  micro-batch of each model chunk (``forward_step`` -> ``set_is_first_microbatch``,
  megatron/core/pipeline_parallel/schedules.py), and TE reuses its cached FP8 weights after
  it; a forward-only call casts them once, row-wise. Under ``fp8_param`` the optimizer writes
  the FP8 weights from the fp32 master instead, priced alike.

Each element read once in ``x`` bytes (tensorwise twice: Float8CurrentScaling computes the
tensor's amax in a kernel before the cast), written as 1 byte per copy plus the copy's scales:
delayed and tensorwise one fp32 scale per tensor; blockwise an fp32 scale per 1 x 128
elements of activations and gradients along the copy's contraction and per 128 x 128 block of
weights (``Float8BlockScaling``: ``x_block_scaling_dim`` 1, ``w_block_scaling_dim`` 2,
``grad_block_scaling_dim`` 1; NeMo RL's recipes set NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1);
mxfp8 an E8M0 byte per 32 elements along the copy's contraction (``MXFP8BlockScaling``; TE's
padding of the scale tensors to 128 x 4 tiles not counted). One kernel a tensor (tensorwise:
two). Not modelled: TE fusing a cast into the norm before it, the amax all-reduces, NeMo RL's
padding of packed sequences to 128 (blockwise) or 32 (MXFP8) tokens."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rlmcost.choices import Dtype, Fp8Recipe
from rlmcost.errors import SpecError
from rlmcost.perf.efficiency import Device
from rlmcost.perf.fp4_gemm import has_fp4

if TYPE_CHECKING:
    from collections.abc import Callable

    from rlmcost.perf.step_pass import StepContext
    from rlmcost.specs import HardwareSpec

_H200_NVL_BF16_MS, _CURRENT_MS, _CURRENT_AUTOCAST_MS, _BLOCK_AUTOCAST_MS = (
    767.242, 402.838, 486.851, 549.171)
"""Transformer Engine's GEMM benchmark of a 5B model's layer shapes (hidden 4096, FFN 16384, 24
layers, 31 x 512 tokens) on an H200 NVL, total GEMM milliseconds: bf16 and FP8 current scaling
pre-quantized (GEMM kernels alone), FP8 current scaling and FP8 block scaling in autocast
(their quantization inside); docs/examples/gemm_profiling/gemm_profiling.rst @d0067d0d,
"Worked Example: 5B Model on H200"."""

FP8_GEMM_EFFICIENCY_RATIO = _H200_NVL_BF16_MS / _CURRENT_MS * 989.4 / 1978.9
"""An FP8 GEMM's sustained fraction of the FP8 peak over a bf16 GEMM's of the bf16 peak:
0.952, the benchmark's pre-quantized FP8 GEMMs at 1.905 x bf16's speed on a part whose FP8
peak is 2.0 x its bf16 peak (989.4 and 1,978.9 TFLOP/s dense, H200 datasheet). The default
profile's GEMM efficiency times it for FP8 GEMMs (a measured calibration's own table, taken
at bf16, holds as it is)."""

BLOCKWISE_GEMM_RATIO = (_BLOCK_AUTOCAST_MS - _CURRENT_AUTOCAST_MS + _CURRENT_MS) / _CURRENT_MS
"""Seconds of a blockwise (``Float8BlockScaling``) FP8 GEMM over a tensorwise
(``Float8CurrentScaling``) one's: 1.155, the benchmark's block-scaled autocast time less the
quantization current scaling measured there (its autocast less its pre-quantized time, 84.0
ms), over current scaling's kernels (402.838 ms): blockwise's quantization taken as costly as
current scaling's, an assumption (rlmcost prices each recipe's casts apart, blockwise's one
pass below current scaling's two). No kernel-only blockwise figure is published: Hopper's
cuBLAS takes no pre-quantized 2D x 2D blocks (same page)."""

_B300_BF16_MS, _B300_CURRENT_MS, _B300_MXFP8_MS = 314.445, 163.493, 171.869
"""The same benchmark on a B300 (Blackwell), pre-quantized (GEMM kernels alone), total GEMM
milliseconds of the 5B model's 24 layers: bf16, FP8 current scaling, MXFP8 (same page, "Autocast
vs Pre-quantized"). In autocast (quantization inside; the page's first B300 table) they are
306.192, 219.522 and 215.608, FP8 delayed scaling 187.246; tests/test_fp8_te_benchmark.py
compares rlmcost's kernels and casts with both tables."""

MXFP8_GEMM_RATIO = _B300_MXFP8_MS / _B300_CURRENT_MS
"""Seconds of an MXFP8 (``MXFP8BlockScaling``) GEMM over a tensorwise FP8 one of the same shape:
1.051, the benchmark's pre-quantized MXFP8 kernels over its current-scaling kernels on a B300
(171.869 / 163.493 ms: the E8M0 block scales the block-scaled tensor-core instructions read
beside the operands). Applied to MXFP8's three GEMMs per Linear as
:data:`BLOCKWISE_GEMM_RATIO` is to blockwise's; no B200 / GB200 kernel-only figure is published
(B300's Blackwell Ultra tensor cores are B200's at FP8: 4.5 PFLOP/s dense each, an
assumption)."""

BLOCK, MX_BLOCK, SCALE_BYTES = 128, 32, 4
"""Blockwise's 128-element blocks (1 x 128, 128 x 128) with fp32 scales; MXFP8's 32-element
blocks with 1-byte E8M0 scales (module docstring)."""


def copy_bytes(recipe: Fp8Recipe, rows: int, cols: int, weight: bool = False) -> int:
    """Bytes of one FP8 copy of a [rows, cols] tensor scaled along ``cols``, its scales with it.

    >>> copy_bytes(Fp8Recipe.BLOCKWISE, 256, 4096), copy_bytes(Fp8Recipe.MXFP8, 256, 4096)
    (1081344, 1081344)
    >>> copy_bytes(Fp8Recipe.BLOCKWISE, 4096, 4096, weight=True)  # 32 x 32 fp32 scales
    16781312
    """
    values = rows * cols
    if recipe is Fp8Recipe.BLOCKWISE and weight:
        return values + SCALE_BYTES * -(-rows // BLOCK) * -(-cols // BLOCK)
    if recipe is Fp8Recipe.BLOCKWISE:
        return values + SCALE_BYTES * rows * -(-cols // BLOCK)
    if recipe is Fp8Recipe.MXFP8:
        return values + rows * -(-cols // MX_BLOCK)
    return values + SCALE_BYTES


def read_bytes(recipe: Fp8Recipe, elements: int, x: int) -> int:
    """Bytes the cast of ``elements`` x-byte values reads (tensorwise: twice, its amax first)."""
    return (2 if recipe is Fp8Recipe.TENSORWISE else 1) * elements * x


def kernels(recipe: Fp8Recipe) -> int:
    """Kernels a tensor's cast runs: amax and cast under tensorwise, one otherwise."""
    return 2 if recipe is Fp8Recipe.TENSORWISE else 1


def gemm_ratio(recipe: Fp8Recipe) -> float:
    """Seconds of ``recipe``'s FP8 GEMM over a tensorwise one's: :data:`BLOCKWISE_GEMM_RATIO`,
    :data:`MXFP8_GEMM_RATIO`, else 1 (delayed and tensorwise scaling run the same kernels)."""
    return {Fp8Recipe.BLOCKWISE: BLOCKWISE_GEMM_RATIO,
            Fp8Recipe.MXFP8: MXFP8_GEMM_RATIO}.get(recipe, 1.0)  # fmt: skip


def fp8_hardware(hardware: HardwareSpec, dtype: Dtype) -> HardwareSpec:
    """``hardware`` with its ``dtype`` peak raised to its FP8 peak: the roofline an FP8 trainer's
    bound takes, below every GEMM of it (its FP8 GEMMs at that peak, the rest slower)."""
    peaks = {**hardware.peak_flops_per_s, dtype: fp8_peak(hardware, None)}
    return hardware.model_copy(update={"peak_flops_per_s": peaks})


def fp8_peak(hardware: HardwareSpec, recipe: Fp8Recipe | None) -> int:
    """Dense FP8 peak FLOP/s of ``hardware``; SpecError where it has no FP8 tensor cores, or
    for MXFP8 where it has no block-scaled ones (Blackwell's: a part with an FP4 peak)."""
    peak = hardware.peak_flops_per_s.get(Dtype.FP8)
    if peak is None:
        raise SpecError(f"--train-fp8: hardware {hardware.name} has no FP8 tensor cores (no "
                        "fp8 peak); drop it (Transformer Engine's FP8 needs Hopper, Ada or "
                        "Blackwell)")  # fmt: skip
    if recipe is Fp8Recipe.MXFP8 and not has_fp4(hardware):
        raise SpecError(f"--train-fp8 mxfp8 needs Blackwell's block-scaled tensor cores, which "
                        f"{hardware.name} lacks; use blockwise or tensorwise there")  # fmt: skip
    return peak


def linear_pricer(c: StepContext) -> Callable[..., tuple[float, float, float, float]]:
    """The pricer of the context's Linear-layer GEMMs [m, k] x [k, n] (``batch`` grouped):
    (forward seconds, backward seconds, and the seconds of casting its [n, k] weights once
    for a forward call and once for a training step; 0 and 0 in bf16). In bf16 the device's
    GEMMs; under ``StepOptions.fp8`` the module docstring's FP8 GEMMs and casts."""
    dev, recipe = c.device, c.options.fp8
    if recipe is None:

        def bf16(m: int, n: int, k: int, batch: int = 1) -> tuple[float, float, float, float]:
            f = dev.gemm_s(m, n, k, batch)
            return f, dev.gemm_s(m, k, n, batch) + dev.gemm_s(k, n, m, batch), 0.0, 0.0

        return bf16
    fp8_peak(dev.hardware, recipe)
    prof = dev.defaults  # FP8 GEMMs' sustained fraction (FP8_GEMM_EFFICIENCY_RATIO)
    prof = replace(prof, gemm_efficiency=prof.gemm_efficiency * FP8_GEMM_EFFICIENCY_RATIO)
    dev8 = Device(dev.hardware, Dtype.FP8, prof, dev.measured)
    ratio = gemm_ratio(recipe)
    x, n_k = c.workload.activation_dtype.bytes, kernels(recipe)

    def fp8(m: int, n: int, k: int, batch: int = 1) -> tuple[float, float, float, float]:
        f = ratio * dev8.gemm_s(m, n, k, batch)
        b = ratio * (dev8.gemm_s(m, k, n, batch) + dev8.gemm_s(k, n, m, batch))
        f += dev.elementwise_s(batch * (read_bytes(recipe, m * k, x) + copy_bytes(recipe, m, k)),
                               n_k)  # fmt: skip
        b += dev.memory_s(batch * copy_bytes(recipe, k, m))  # the input's column-wise copy
        grad = read_bytes(recipe, m * n, x) + copy_bytes(recipe, m, n) + copy_bytes(recipe, n, m)
        b += dev.elementwise_s(batch * grad, n_k)
        row = batch * (read_bytes(recipe, k * n, x) + copy_bytes(recipe, n, k, weight=True))
        both = row + batch * copy_bytes(recipe, k, n, weight=True)
        return f, b, dev.elementwise_s(row, n_k), dev.elementwise_s(both, n_k)

    return fp8
