"""The KV cache Gemma 4 E's KV-shared layers do not hold, on one rank of a pipeline stage.

The last ``Arch.kv_shared_layers`` layers (``kv_shared_full_layers`` of them full-attention)
reuse the keys and values of an earlier layer of their kind (transformers 5.24
``Gemma4TextAttention.is_kv_shared_layer``; vLLM's Gemma 4 attention passes
``kv_sharing_target_layer_name``, so the engine allocates no cache for them). Both memory
models (``parallel.memory`` and ``compiled.memory``) take this off a stage's cache with the
same integer arithmetic: a stage holds its share of the shared layers in proportion, as
``Arch.linear_layers_of`` counts linear ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.specs.workload import SGLANG_SWA_FULL_TOKENS_RATIO

if TYPE_CHECKING:
    from rlmcost.arch import Arch


def shared_kv_per_sequence(counts: tuple[int, int, int], stage_layers: int,
                           positions: tuple[Any, int], widths: tuple[Any, Any]) -> Any:  # fmt: skip
    """Cache (in the units of ``widths``, per token and layer) one sequence's shared layers on
    the stage would hold: ``counts`` = (n_layers, kv_shared_layers, kv_shared_full_layers);
    ``positions`` = (a sliding layer's kept positions as the engine keeps them, the sequence's
    tokens); ``widths`` = (a sliding layer's, a full layer's)."""
    n, shared, shared_full = counts
    if not shared:
        return 0
    here, full_here = shared * stage_layers // n, shared_full * stage_layers // n
    (sliding_pos, tokens), (sliding, full) = positions, widths
    return (here - full_here) * sliding_pos * sliding + full_here * tokens * full


def shared_params_here(counts: tuple[int, int, int], stage_layers: int,
                       widths: tuple[int, int, int, int], switches: tuple[bool, bool, bool, bool],
                       ffn: tuple[int, int, int]) -> int:  # fmt: skip
    """Parameters on one rank of a stage's share of the shared layers beyond the same layers
    holding their own keys and values, as ``blocks.ple.params_kv_shared_delta`` counts them:
    ``counts`` as :func:`shared_kv_per_sequence`; ``widths`` = (the rank's sliding KV width,
    full KV width, head_dim, full head_dim); ``switches`` = (qk_norm, qkv_bias, full_k_eq_v,
    kv_shared_wide_ffn); ``ffn`` = (d_model, the rank's d_ff, projections). A mlp bias is
    not counted (no Gemma 4 has one)."""
    n, shared, shared_full = counts
    if not shared:
        return 0
    here, full_here = shared * stage_layers // n, shared_full * stage_layers // n
    (kv_s, kv_f, dh, dh_f), (qk_norm, bias, k_eq_v, wide), (d, ff, proj) = widths, switches, ffn
    kv_proj_f = 1 if k_eq_v else 2
    wider = proj * d * ff if wide else 0
    sliding = -(2 * kv_s * (d + bias) + dh * qk_norm) + wider
    full = -(kv_proj_f * kv_f * (d + bias) + dh_f * qk_norm) + wider
    return (here - full_here) * sliding + full_here * full


def stage_shared_kv(arch: Arch, sh: Arch, layers: int, kept: tuple[int, int, int], cp: int) -> int:
    """Elements a sequence's KV-shared layers on a stage of ``layers`` would cache (``sh`` the
    TP shard; ``kept`` = (the sequence's tokens, the stage's sliding layers kept at the window,
    those in SGLang's SWA pool)): a sliding one at the positions the engine keeps (the window's
    W - 1 over context parallelism ``cp``, SGLang's pool share, or all), a full one at all."""
    per_seq, n_sw, n_pool = kept
    num, den = SGLANG_SWA_FULL_TOKENS_RATIO
    pos = min(per_seq, -(-(int(arch.sliding_window or 0) - 1) // cp)) if n_sw else \
        per_seq * num // den if n_pool else per_seq  # fmt: skip
    return shared_kv_per_sequence((int(arch.n_layers), int(arch.kv_shared_layers),
                                   int(arch.kv_shared_full_layers)), layers, (pos, per_seq),
                                  (int(sh.kv_cache_width), int(sh.full_view().kv_cache_width)))


def stage_shared_params(arch: Arch, shard: Arch, layers: int) -> int:
    """:func:`shared_params_here` of ``arch`` on a rank holding the TP shard ``shard`` of a
    stage of ``layers`` layers (0 without shared layers)."""
    if not int(arch.kv_shared_layers):
        return 0
    full = shard.full_view()
    return shared_params_here(
        (int(arch.n_layers), int(arch.kv_shared_layers), int(arch.kv_shared_full_layers)),
        layers, (int(shard.kv_width), int(full.kv_width), int(arch.head_dim),
                 int(full.head_dim)),
        (arch.qk_norm, arch.qkv_bias, arch.full_k_eq_v, arch.kv_shared_wide_ffn),
        (int(arch.d_model), int(shard.d_ff), arch.ffn_kind.projections))  # fmt: skip
