"""Megatron-LM's own FLOP count of a training step, as its ``--log-throughput`` prints it.

Megatron-LM logs ``throughput per GPU (TFLOP/s/GPU)`` = ``num_floating_point_operations(args,
batch_size)`` / (step time x 10^12 x world size) (``megatron/training/training.py``,
``training_log``, NVIDIA/Megatron-LM @d98e8a64dd; the same count at @1e057005, the commit the
Megatron-MoE-ModelZoo's Qwen3 H100 rows name, written there as 12 L h^2 (1 + g/a + s / 2h) q/h
for the attention). For a model of multi-head or grouped-query attention (``transformer_flops``,
BSHD: every sample ``seq`` tokens, no packing) it counts, per token,

    6 h (f ffn dense_layers + f (d_e k + d_s) moe_layers)        FFN: dense, k routed, shared
  + 6 (h (q + 2 kv) + q h) L                                     QKV and output projections
  + 6 h V                                                        the logits (padded vocabulary)

and per sequence ``6 q L s^2`` for the attention core (``QK^T`` and ``PV`` over the causal
half: "/ 2 causal mask, x 2 QK^T and (QK^T)V"), with f = 3 for SwiGLU (``--swiglu``), else 2,
q = heads x kv_channels, kv = query_groups x kv_channels, and 6 = 3 (forward, data and weight
gradient) x 2 (multiply and add). Not counted: the router GEMM, norms, activations,
recomputation. Exact integers (every term is whole).

Differs from :func:`~rlmcost.perf.train_step.model_flops_train` (attention over the full S x S,
the router counted); a row whose source prints Megatron's figure (metric
``tflops_per_gpu_megatron`` of :mod:`~rlmcost.perf.validate`) is compared in this count.
Multi-latent attention (Megatron's MLA branch) and linear-attention layers (its Gated DeltaNet
branch) are not written here: a SpecError.
"""

from __future__ import annotations

from rlmcost.arch import Arch
from rlmcost.errors import SpecError


def megatron_train_flops(arch: Arch, sequences: int, seq: int) -> int:
    """``num_floating_point_operations`` of Megatron-LM for ``sequences`` x ``seq`` tokens
    (module docstring). Exact int.

    Qwen3-235B-A22B at GBS 2048 x 4096: Megatron-MoE-ModelZoo's 19.7 s step printed as 245
    TFLOP/s on 256 GPUs (best_practice/qwen3/readme.md @e8650517d6):

    >>> from rlmcost.specs.registry import get_model
    >>> f = megatron_train_flops(get_model("qwen3-235b-a22b").arch(), 2048, 4096)
    >>> round(f / (19.7 * 256) / 1e12, 1)
    246.2
    """
    if arch.is_mla or int(arch.n_linear_layers):
        raise SpecError(
            f"{arch.name}: Megatron-LM's FLOP count is written here for multi-head and "
            "grouped-query attention only (not MLA or linear attention)"
        )
    if sequences < 1 or seq < 1:
        raise SpecError(f"sequences={sequences} and seq={seq} must be positive")
    h, L, V = int(arch.d_model), int(arch.n_layers), int(arch.vocab)
    q, kv = int(arch.q_width), int(arch.kv_width)
    f = 3 if arch.ffn_kind.projections == 3 else 2
    ffn = f * int(arch.d_ff) * int(arch.n_dense_layers)
    if arch.is_moe:
        routed = int(arch.d_expert) * int(arch.top_k)
        shared = int(arch.d_shared_expert) * int(arch.n_shared_experts or 0)
        ffn += f * (routed + shared) * int(arch.n_moe_layers)
    per_token = 6 * h * ffn + 6 * (h * (q + 2 * kv) + q * h) * L + 6 * h * V
    return sequences * seq * per_token + sequences * seq * seq * 6 * q * L
