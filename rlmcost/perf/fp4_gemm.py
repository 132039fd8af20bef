"""W4A4 GEMMs: an engine's FP4 weights multiplied by FP4 activations on FP4 tensor cores
(``--rollout-weights nvfp4-w4a4[:PARTS]``, :data:`~rlmcost.parallel.packed_weights.W4A4`).

**How vLLM runs an NVFP4 Linear layer** (vllm-project/vllm
``vllm/model_executor/layers/quantization/utils/nvfp4_utils.py`` @4159f5ba,
``select_nvfp4_linear_backend`` and ``apply_nvfp4_linear``, called by ``modelopt.py``
``ModelOptNvFp4LinearMethod`` and the compressed-tensors W4A4 NVFP4 scheme): on compute
capability 10.x with FlashInfer, FlashInfer's CUTLASS FP4 GEMM; else vLLM's own CUTLASS FP4
GEMM where ``cutlass_scaled_mm_supports_fp4`` (SM100 and up); else Marlin
(``is_fp4_marlin_supported``: capability 8.0 and up), which dequantizes the FP4 weights in
registers against 16-bit activations, i.e. W4A16. An FP4 path first quantizes the 16-bit
activations (``scaled_fp4_quant``: E2M1 values and an E4M3 scale per 16 elements, the scales
swizzled), then the GEMM reads FP4 activations and FP4 weights and writes the 16-bit output.

So on a part with FP4 tensor cores (``HardwareSpec.fp4_peak_flops_per_s``: B200, GB200) a
W4A4 GEMM ``[m, k] x [k, n]`` is priced (:meth:`~rlmcost.perf.efficiency.Device.gemm_s` with
``fp4``) as

* the quantizing kernel: one read of the ``m k`` activations in the activation dtype (``x``
  B each) and one write of their FP4 copy, ``ceil(9 m k / 16)`` B (:func:`fp4_bytes`; the
  swizzled scale layout's padding to 128 rows and 4 scale columns not counted): a memory-bound
  kernel with its launch gap, once per GEMM input. The grouped expert GEMMs of a fused MoE
  take it once per layer, on the ``[m, d]`` hidden states before the dispatch (vLLM
  ``fused_moe/flashinfer_cutlass_prepare_finalize.py`` ``prepare``:
  ``moe_kernel_quantize_input``; priced by :class:`~rlmcost.perf.generation.Engine`), the
  second GEMM's input quantized inside the fused kernel's activation step (TensorRT-LLM's
  CUTLASS MoE, FlashInfer ``cutlass_fused_moe``): no kernel of its own, its FP4 rows read;
* the GEMM: the tile model at the dense FP4 peak x the profile's ``gemm_efficiency``. No
  sustained FP4 GEMM rate is published for these parts (the MSMF / MAMF tables of
  stas00/ml-engineering are bf16), so the bf16 sustained fraction is carried to FP4, an
  assumption: a power-limited FP4 GEMM may reach a lower fraction, which makes W4A4 look
  faster than it is. Its memory side reads the FP4 activations, the packed weights
  (``Device.weight_bytes``) and writes the output in ``x``.

Prefill chunks are compute-bound, so their packed GEMMs run about peak_fp4 / peak_bf16 (4 on
B200 and GB200) times as fast, less the quantizing kernel; decode steps stream the weights,
whose bytes do not change, so they barely move.

The roofline bound of such an engine's generation (``placement.group_cost.GroupModel.
roofline``) takes the FP4 peak as its compute dtype's (:func:`w4a4_hardware`): the evaluation
never puts a prediction under its bound, which at the bf16 peak a prefill-heavy W4A4 rollout
could undercut.

**On a part without FP4 tensor cores** (Hopper, Ampere, Ada, AMD) vLLM's selection above
falls to Marlin: an NVFP4 W4A4 checkpoint runs W4A16 there. rlmcost prices it so (exactly as
``nvfp4``: packed weights, 16-bit GEMMs) and says so in a note (:func:`w4a4_note`), rather than
refusing a configuration the engine runs. SGLang is priced alike, an assumption: its NVFP4
Marlin fallback for parts below Blackwell (sgl-project/sglang PR 19652) was reverted (PR 22047),
so a release may refuse such a checkpoint there instead.

MXFP4 is not taken W4A4: vLLM's MXFP4 MoE backends (``quantization/mxfp4.py``
``Mxfp4Backend``: ``SM100_FI_MXFP4_MXFP8_TRTLLM`` / ``_CUTLASS``, ``SM100_FI_MXFP4_BF16``,
``SM90_FI_MXFP4_BF16``, Marlin, Triton) multiply FP4 weights by MXFP8 or 16-bit activations,
never MXFP4 x MXFP4."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.choices import Dtype
    from rlmcost.perf.efficiency import Device
    from rlmcost.specs import HardwareSpec

FP4_BITS, FP4_SCALE_BITS, FP4_BLOCK = 4, 8, 16
"""NVFP4 activations: E2M1 values, one E4M3 scale per 16 elements (vLLM ``scaled_fp4_quant``
returns ``x_fp4`` uint8 [m, k / 2] and ``x_blockscale`` float8_e4m3fn [m, k / 16],
nvfp4_utils.py @4159f5ba ``apply_nvfp4_linear``)."""


def fp4_bytes(elements: int) -> int:
    """Bytes of ``elements`` NVFP4 values with their block scales, exact: ceil(9 e / 16).

    >>> fp4_bytes(16), fp4_bytes(4096 * 8192)
    (9, 18874368)
    """
    bits = FP4_BITS * FP4_BLOCK + FP4_SCALE_BITS  # one block: 72 bits
    return -(-elements * bits // (8 * FP4_BLOCK))


def has_fp4(hardware: HardwareSpec) -> bool:
    """Whether ``hardware`` has FP4 tensor cores (a dense FP4 peak in its spec)."""
    return hardware.fp4_peak_flops_per_s is not None


def fp4_peak(hardware: HardwareSpec) -> int:
    """Dense FP4 tensor peak of ``hardware``, FLOP/s; SpecError on a part without one."""
    peak = hardware.fp4_peak_flops_per_s
    if peak is None:
        raise SpecError(f"hardware {hardware.name} has no FP4 tensor cores (no "
                        "fp4_peak_flops_per_s): its engines run FP4 weights as W4A16")  # fmt: skip
    return peak


@cache
def w4a4_hardware(hardware: HardwareSpec, dtype: Dtype, packed_format: str | None) -> HardwareSpec:
    """``hardware`` with its ``dtype`` peak raised to its FP4 peak where a generation task
    serves W4A4 weights (``packed_format``) on a part with FP4 tensor cores, else itself: the
    roofline a W4A4 engine's bound takes, below every GEMM of it (its packed GEMMs at the FP4
    peak, the rest slower), as the prediction is never put under the bound."""
    from rlmcost.parallel.packed_weights import W4A4

    if packed_format not in W4A4 or not has_fp4(hardware):
        return hardware
    peaks = {**hardware.peak_flops_per_s, dtype: fp4_peak(hardware)}
    return hardware.model_copy(update={"peak_flops_per_s": peaks})


def quantize_s(device: Device, elements: int) -> float:
    """Seconds of the kernel quantizing a GEMM's ``elements`` activations to NVFP4: one read
    in the device's dtype, one write of :func:`fp4_bytes`, its launch gap (module docstring)."""
    return device.elementwise_s(elements * device.dtype.bytes + fp4_bytes(elements))


def w4a4_note(formats: set[str], hardware: list[HardwareSpec]) -> str | None:
    """What an engine serving W4A4 weights (``formats`` among the query's engines) is priced
    as on ``hardware`` (the query's accelerators); None without W4A4."""
    from rlmcost.parallel.packed_weights import W4A4

    if not formats & set(W4A4):
        return None
    fast = list(dict.fromkeys(h.name for h in hardware if has_fp4(h)))
    slow = list(dict.fromkeys(h.name for h in hardware if not has_fp4(h)))
    out = []
    if fast:
        out.append(f"on {', '.join(fast)} its packed parts' GEMMs multiply FP4 activations "
                   "(a quantizing kernel per GEMM input: one read in bf16, one write of E2M1 "
                   "+ E4M3 per 16) at the dense FP4 peak x the bf16 GEMM efficiency (no FP4 "
                   "figure published: an assumption)")  # fmt: skip
    if slow:
        out.append(f"{', '.join(slow)} has no FP4 tensor cores: vLLM runs NVFP4 there through "
                   "Marlin (W4A16: select_nvfp4_linear_backend), priced so")
    return ("W4A4 rollout weights (nvfp4-w4a4): " + "; ".join(out)
            + " (rlmcost.perf.fp4_gemm)")  # fmt: skip
