"""What a checkpointing policy recomputes in one layer's backward (part ``recompute`` of
:mod:`~rlmcost.perf.step_pass`).

* ``full`` reruns the layer's whole forward (GEMMs, kernels, TP and EP collectives) before its
  backward (Chen et al. 2016; Megatron-LM ``--recompute-granularity full``); under PyTorch's
  non-reentrant checkpoint with its early stop (``StepOptions.recompute_early_stop``) a dense
  layer's rerun ends before the FFN's down projection (:mod:`~rlmcost.perf.ckpt_early_stop`);
  NeMo RL's DTensor worker checkpoints each layer's modules apart (``StepOptions.module_ckpt``:
  the projections before their outputs and the residual adds not rerun,
  :mod:`~rlmcost.perf.module_ckpt`).
* ``selective`` comes in two kinds, a :class:`SelectiveRecompute` of the trainer
  (``StepOptions.selective``):

  - ``attention-core`` (default): the attention core's forward, Korthikanti et al. 2022 §5
    (Megatron-LM ``--recompute-granularity selective``);
  - ``every-second-mm``: torchtitan's op-level selective activation checkpointing
    (``activation_checkpoint.mode = "selective"``, ``selective_ac_option = "op"``):
    ``torchtitan/parallelisms/parallelize_llama.py`` @9dec370 wraps each transformer block in
    a checkpoint whose policy (``_custom_policy``) saves the outputs of the ops of
    ``_save_list`` (``aten.mm``, SDPA's flash and efficient kernels, the reduce-scatter,
    ``abs``/``max``) except every second ``aten.mm`` of the block (a counter per checkpointed
    forward, ``meta[f"{mode}_mm_count"] % 2 == 0``), and recomputes the rest. A Llama block of
    torchtitan runs its mms in the order ``wq, wk, wv, wo`` (``Attention.forward``) then
    ``w1, w3, w2`` (``FeedForward.forward``: ``w2(silu(w1(x)) * w3(x))``), so the recomputed
    GEMMs are ``wk``, ``wo`` and ``w3`` (``wk``, ``wo``, ``w2`` for a 2-projection FFN):
    ``2 d (d_kv + d + d_ff)`` FLOPs per token and layer for a gated FFN. The attention core
    (SDPA) is saved, not recomputed. The elementwise ops (norms, RoPE, SiLU, the product,
    residual adds) are recomputed as well; under ``torch.compile`` (the rows that use this)
    the compiler fuses them into the backward's kernels, and they are not priced here, as
    step_pass does not price the compiler's own pointwise recomputation without
    checkpointing either. Defined for dense blocks of multi-head / grouped-query attention
    (torchtitan's Llama at 9dec370 has no MoE or MLA): other layers are a SpecError.
  - ``modules``: Megatron-core's ``--recompute-granularity selective --recompute-modules``
    (``TransformerConfig.recompute_modules``, megatron/core/transformer/transformer_config.py
    @d98e8a64dd), the modules of ``StepOptions.recompute_modules``, each rerunning its own
    forward before the layer's backward: ``core_attn`` (the attention core, as above),
    ``layernorm`` (input_layernorm and pre_mlp_layernorm), ``moe_act`` (the experts'
    activation), ``moe`` (the whole MoE layer: router, permutation, dispatch and combine, the
    routed and shared experts), ``shared_experts``, ``mlp`` (a dense layer's FFN). Their
    forward seconds and FLOPs are the step pass's own (``StagePass.modules``, the busiest
    rank's share of an uneven MoE layer included); ``moe`` covers ``moe_act`` and
    ``shared_experts``, which are then not counted twice; ``mla_up_proj`` (multi-head latent
    attention's q and kv up-projection GEMMs, rerun with the q/kv norms and RoPE under
    ``qkv_up_checkpoint``: megatron/core/transformer/multi_latent_attention.py @cba6b0ed; the
    GEMMs priced, the norms and RoPE on the latent and head widths left out, under 1 % of the
    layer's forward in DeepSeek-V3).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing
from rlmcost.parallel.shard import tp_shard
from rlmcost.perf.attention_shapes import causal_pairs, pair_flops
from rlmcost.perf.ckpt_early_stop import early_stop_skip
from rlmcost.perf.module_ckpt import module_skip, per_module

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.perf.step_pass import StagePass, StepContext


class SelectiveRecompute(StrEnum):
    """What ``--ckpt selective`` recomputes (module docstring)."""

    ATTENTION_CORE = "attention-core"  # Korthikanti et al. 2022 §5 (Megatron-LM)
    EVERY_SECOND_MM = "every-second-mm"  # torchtitan op-level SAC (parallelize_llama.py)
    MODULES = "modules"  # Megatron-core --recompute-modules (StepOptions.recompute_modules)


MEGATRON_MODULES = ("core_attn", "layernorm", "moe_act", "moe", "shared_experts", "mlp",
                    "mla_up_proj")  # fmt: skip
"""The ``--recompute-modules`` choices priced (Megatron-core's; GDN's are not)."""


def megatron_modules(c: StepContext, layer: StagePass, moe: bool) -> tuple[float, int]:
    """Seconds and FLOPs Megatron-core's selective ``recompute_modules`` add to one layer's
    backward (module docstring)."""
    mods = set(c.options.recompute_modules)
    if unknown := mods - set(MEGATRON_MODULES):
        raise SpecError(f"recompute modules {sorted(unknown)} are not priced; choose from "
                        f"{', '.join(MEGATRON_MODULES)}")  # fmt: skip
    if "mla_up_proj" in mods and not c.arch.is_mla:  # Megatron-core's TransformerConfig check
        raise SpecError("recompute module mla_up_proj needs multi-head latent attention "
                        f"(MLA); {c.arch.name} has none")  # fmt: skip
    s, flops = 0.0, 0
    if "core_attn" in mods:
        s, flops = layer.fwd["attention"], attention_fwd_flops(c)
    ffn = "moe" if moe else "mlp"
    parts = {"layernorm", ffn} if ffn in mods else {"layernorm", "moe_act", "shared_experts"}
    parts.add("mla_up_proj")
    for name in parts & mods:
        s += layer.modules[name]
        flops += layer.module_flops.get(name, 0)
    return s, flops


def recomputed_mms(arch: Arch, tp: int, tokens: int) -> list[tuple[int, int, int]]:
    """The [m, n, k] GEMMs (``[m, k] x [k, n]``) of one dense layer that torchtitan's op-level
    SAC recomputes for ``tokens`` tokens on a rank of TP degree ``tp``: every second
    ``aten.mm`` of the block (module docstring).

    >>> from rlmcost.specs import get_model
    >>> recomputed_mms(get_model("llama-3.1-8b").arch(), 1, 1)  # wk, wo, w3
    [(1, 1024, 4096), (1, 4096, 4096), (1, 14336, 4096)]
    """
    t, T = tp, tokens
    if arch.is_mla or arch.n_experts:
        raise SpecError(
            "selective every-second-mm recomputation (torchtitan's op-level SAC) is defined "
            "for dense blocks without MLA; use --ckpt full or --selective attention-core"
        )
    sh = tp_shard(arch, t)
    d, q, kv, ff = int(arch.d_model), int(sh.q_width), int(sh.kv_width), int(sh.d_ff)
    mms = [(T, q, d), (T, kv, d), (T, kv, d), (T, d, q)]  # wq, wk, wv, wo
    if arch.ffn_kind.projections == 3:
        mms += [(T, ff, d), (T, ff, d), (T, d, ff)]  # w1, w3, w2
    else:
        mms += [(T, ff, d), (T, d, ff)]  # w1, w2
    return mms[1::2]


def attention_fwd_flops(c: StepContext) -> int:
    """Forward FLOPs of one layer's attention core on the rank: the causal pairs for a fused
    kernel, the full s x s scores for a materialized one."""
    b, s = c.micro_batch, c.seq
    fused = c.options.attention.fused
    pairs = b * causal_pairs(c.arch, s) // c.layout.cp if fused else b * c.positions * s
    return pair_flops(c.arch, int(tp_shard(c.arch, c.layout.tp).n_heads)) * pairs


def recompute(c: StepContext, layer: StagePass, moe: bool) -> tuple[float, int]:
    """Seconds and FLOPs the checkpointing policy adds to one layer's backward (module
    docstring): the whole forward (``full``; every FLOP of ``layer`` was counted as 3 x
    forward), the attention core's forward or every second mm (``selective``)."""
    ckpt = c.layout.ckpt
    if ckpt is Checkpointing.NONE:
        return 0.0, 0
    if ckpt is Checkpointing.FULL:  # less the tail torch's early stop skips (ckpt_early_stop)
        per_mod = c.options.module_ckpt and per_module(c.arch)  # NeMo RL's modules (module_ckpt)
        skip_s, skip_flops = module_skip(c, moe) if per_mod else early_stop_skip(c, moe)
        return layer.fwd_s - skip_s, layer.flops // 3 - skip_flops
    if c.options.selective is SelectiveRecompute.ATTENTION_CORE:
        return layer.fwd["attention"], attention_fwd_flops(c)
    if c.options.selective is SelectiveRecompute.MODULES:
        return megatron_modules(c, layer, moe)
    if moe:
        raise SpecError("selective every-second-mm recomputation (torchtitan's op-level SAC) "
                        "is defined for dense layers; use --ckpt full or --selective "
                        "attention-core")  # fmt: skip
    mms = recomputed_mms(c.arch, c.layout.tp, c.tokens)
    return sum(c.device.gemm_s(m, n, k) for m, n, k in mms), sum(2 * m * n * k for m, n, k in mms)
