"""4-bit weights an inference engine serves (W4A16 and FP4 checkpoints): how many bytes its
quantized parts take on one rank.

A 4-bit format packs two elements in a byte and adds a scale per block of ``g`` elements along
the reduction dimension; the GEMM kernels dequantize the block in registers (W4A16: Marlin,
Machete, CUTLASS mixed-input), so the engine computes in its activation dtype and reads the
packed bytes. Bytes per element, exact (:data:`FORMATS`):

* ``nvfp4``: E2M1 values and an FP8 E4M3 scale per 16 (NVIDIA ModelOpt NVFP4; vLLM
  ``ModelOptNvFp4LinearMethod`` ``weight`` uint8 [N, K/2] and ``weight_scale`` float8_e4m3fn
  [N, K/16]): (4 x 16 + 8) / 16 bits = 9/16 B;
* ``nvfp4-w4a4``: the same tensors, with activations quantized to NVFP4 too where the part has
  FP4 tensor cores (:mod:`rlmcost.perf.fp4_gemm`; :data:`W4A4`);
* ``mxfp4``: E2M1 values and an E8M0 scale per 32 (OCP Microscaling; GPT-OSS's checkpoint,
  vLLM ``Mxfp4MoEMethod``): (4 x 32 + 8) / 32 bits = 17/32 B;
* ``int4-g32`` / ``int4-g128``: symmetric INT4 with a bf16 scale per 32 / 128 elements
  (compressed-tensors ``pack-quantized``, vLLM ``CompressedTensorsWNA16``: ``weight_packed``
  int32 [N, K/8], ``weight_scale`` bf16 [N, K/g]): (4 g + 16) / g bits = 9/16 B at g 32
  (Kimi-K2-Thinking's routed experts; slime ``OPEN_TRAINING_INT4_GROUP_SIZE`` 32), 33/64 B at
  g 128 (slime's other INT4 recipes).

A tensor's per-tensor fp32 global scale (NVFP4's ``weight_scale_2``, 4 B a projection) is not
counted. Which weights take the format (:data:`PARTS`): ``linear``, every Linear layer and
expert, the embedding, LM head, norms and MoE routers left in the model's 16-bit dtype (as an
FP8 engine keeps them: :func:`rlmcost.parallel.breakdown.unquantized_params`); ``mlp``, the
FFNs alone (dense FFNs, routed and shared experts; NeMo RL's ``nvfp4_a16_mlp_only.yaml``);
``experts``, the routed experts alone (Kimi-K2-Thinking's checkpoint, NeMo RL's
``nvfp4_experts.yaml``, slime's INT4 MoE recipes). Counts are the ranks' own
(:func:`~rlmcost.parallel.breakdown.stage_params`), so TP, EP and the pipeline stage split
them as they split the model."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers
from rlmcost.errors import SpecError

FORMATS: dict[str, Fraction] = {
    "nvfp4": Fraction(9, 16),
    "nvfp4-w4a4": Fraction(9, 16),
    "mxfp4": Fraction(17, 32),
    "int4-g32": Fraction(9, 16),
    "int4-g128": Fraction(33, 64),
}
"""Bytes per element of each 4-bit weight format, scales included (module docstring)."""

W4A4 = ("nvfp4-w4a4",)
"""The formats whose GEMMs take FP4 activations (W4A4) on FP4 tensor cores
(:mod:`rlmcost.perf.fp4_gemm`); the rest multiply 16-bit activations (W4A16)."""

PARTS = ("linear", "mlp", "experts")
"""Which weights a 4-bit engine holds in its format (module docstring)."""


def check_format(name: str, parts: str) -> None:
    """SpecError unless ``name`` is a known format and ``parts`` a known part set."""
    if name not in FORMATS:
        raise SpecError(f"4-bit weight format {name!r}: give one of {', '.join(FORMATS)}")
    if parts not in PARTS:
        raise SpecError(f"4-bit weight parts {parts!r}: give one of {', '.join(PARTS)}")


def engine_packed(workload: Any) -> tuple[Fraction, str, bool] | None:
    """``EngineOptions.packed`` of a generation task's workload: (bytes per element, parts,
    W4A4) of its 4-bit weights, None without (``Workload.packed_format``)."""
    fmt = getattr(workload, "packed_format", None)
    return None if fmt is None else (FORMATS[fmt], workload.packed_parts, fmt in W4A4)


def packed_params(arch: Any, layout: Any, stage: Any, parts: str) -> int:
    """Elements on one rank of ``stage`` (``layout``'s TP, EP and expert TP) that the engine
    holds in its 4-bit format (module docstring)."""
    from rlmcost.parallel.breakdown import stage_params, unquantized_params

    p = stage_params(arch, layout, stage)
    if parts == "experts":
        return int(p.expert)
    if parts == "linear":
        return int(p.dense + p.expert) - unquantized_params(arch, layout.tp, stage)
    a, tp = arch_numbers(arch), layout.tp
    n_free = a.ffn_free_layers * (stage.dense_layers + stage.moe_layers) // a.n_layers
    out = int(p.expert)
    if stage.dense_layers:  # FFN-free layers (Nemotron-H) sit among the dense layers
        out += (stage.dense_layers - (0 if stage.moe_layers else n_free)) * int(
            g.params_ffn_dense(a, tp))
    if stage.moe_layers:
        shared = (g.params_moe_per_layer(a, tp) - g.params_routed_experts(a, tp)
                  - a.d_model * a.n_experts - a.d_model * a.shared * a.shared_expert_gate
                  - 2 * a.d_model * a.latent * a.moe_latent)  # fmt: skip
        out += (stage.moe_layers - n_free) * int(shared)
    return out


def packed_saving_bytes(arch: Any, layout: Any, stage: Any, parts: str, fmt: str,
                        weight_bytes: int) -> int:  # fmt: skip
    """Bytes a rank of ``stage`` holds less when its ``parts`` take format ``fmt`` instead of
    ``weight_bytes`` per element: q x weight_bytes - ceil(q x format bytes)."""
    check_format(fmt, parts)
    q = packed_params(arch, layout, stage, parts)
    per = FORMATS[fmt]
    return q * weight_bytes - -(-q * per.numerator // per.denominator)
