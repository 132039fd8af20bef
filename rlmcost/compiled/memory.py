"""Numeric twin of :mod:`rlmcost.parallel.memory`: peak bytes per rank, without sympy.

Same signatures and the same exact ints as :func:`rlmcost.parallel.memory.memory_per_stage` and
:func:`~rlmcost.parallel.memory.memory_per_rank` (every term, dtype and source is in that
module's docstring), computed from the generated blocks (``blocks_gen``) with Python ints and
``Fraction``. ``tests/test_compiled_memory.py`` checks the two component by component on random
models, layouts and modes.

What the symbolic module computes with sympy-importing helpers is restated here in plain
integer arithmetic: the data split (``data_share``), the pipeline stages
(``pipeline_split.stage_layer_counts``, shared), ZeRO's model-state bytes
(``zero.model_state_bytes_per_rank``) and the layout rules (``validate.check_layout``, called
for its one-line message when a rule fails). The in-flight micro-batches come from
:mod:`rlmcost.parallel.pipeline` itself."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import cache
from math import ceil
from typing import Any

from rlmcost.choices import Head
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import (
    arch_numbers,
    full_layer,
    full_layers_of,
    linear_state,
    recurrent_state,
    replicates_kv,
)
from rlmcost.compiled.dtypes import Dtypes
from rlmcost.compiled.runtime import ceil_div
from rlmcost.memo import memoized
from rlmcost.parallel import breakdown as bd
from rlmcost.parallel import framework_memory as fm
from rlmcost.parallel.act_offload import OFFLOAD_MIN_LAYERS, offload_kept
from rlmcost.parallel.breakdown import MemoryBreakdown, Mode, StageParams, data_share, stage_params
from rlmcost.parallel.kv_shared import shared_kv_per_sequence
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage
from rlmcost.parallel.packed_weights import packed_saving_bytes
from rlmcost.parallel.pipeline import head_in_flight, in_flight_layer_microbatches
from rlmcost.parallel.pipeline_split import split_problem, stage_dense_moe, uses_megatron_split
from rlmcost.parallel.shard import PipelineStage
from rlmcost.specs.workload import SGLANG_SWA_FULL_TOKENS_RATIO

__all__ = ["MemoryBreakdown", "Mode", "Dtypes", "layout_ok", "memory_per_rank", "memory_per_stage",
           "saved_bytes", "stage_layers"]  # fmt: skip


def _full_kv_wider(a: g.ArchNumbers, tp: int) -> int:
    """Elements a full-attention layer's TP shard caches per token beyond a sliding one's
    (Gemma 4: its own head width and KV heads, one replicated head per rank past them, as
    ``shard.tp_shard`` holds them); 0 when the full layers are shaped as the others."""
    if not a.fullshape:
        return 0
    full = full_layer(a, tp)

    def one(b: g.ArchNumbers) -> int:  # one replicated KV head per rank past the heads
        return int(g.kv_cache_per_token_layer(b._replace(n_kv_heads=tp) if replicates_kv(b, tp)
                                              else b, tp))  # fmt: skip

    return one(full) - one(a)


def per_kv_arch(a: g.ArchNumbers, tps: Any) -> Callable[[Any], Any]:
    """``fn -> fn(a, tps)`` as a float64 array over the TP degrees ``tps``, each degree above
    the KV heads (a multiple of them) evaluated on ``a`` with one KV head per rank, as
    :func:`memory_per_rank` evaluates it (``compiled.sweep``'s tables)."""
    import numpy as np

    def f(b: g.ArchNumbers, t: Any, fn: Any) -> Any:  # float64 over t (sweep._along)
        return np.broadcast_to(np.asarray(fn(b, t), dtype=np.float64), np.shape(t))

    def over(fn: Any) -> Any:
        out = np.array(f(a, tps, fn))
        for i in (i for i, t in enumerate(tps) if replicates_kv(a, int(t))):
            one = tps[i:i + 1]
            out[i] = f(a._replace(n_kv_heads=int(one[0])), one, fn)[0]
        return out

    return over


def moe_layer_dense(a: g.ArchNumbers, tp: Any) -> Any:
    """A MoE layer's parameters on a TP rank but its routed experts'."""
    return g.params_layer_moe(a, tp) - g.params_routed_experts(a, tp)


def attention_split(a: g.ArchNumbers, tp: int) -> tuple[g.ArchNumbers, int]:
    """``(arch, tp)`` for an attention layer split over ``tp`` ranks: one replicated KV head
    per rank above the KV heads (:func:`replicates_kv`). Under SGLang's data-parallel
    attention (``Layout.attention_dp`` P_a; ``compute_dp_attention_world_info`` in
    python/sglang/srt/layers/dp_attention.py: ``attn_tp_size = tp_size // dp_size``) each
    engine rank holds the attention weights of tp / P_a ranks and the KV of the requests
    of its own attention-DP rank (its own scheduler and KV pool, python/sglang/srt/managers/
    data_parallel_controller.py), at tp / P_a head split; the MoE / FFN layers stay over
    all tp ranks. :func:`memory_per_stage` counts a rank's KV at 1 / P_a of the engine's
    sequences (rounded up): the average over its attention-DP ranks."""
    return (a._replace(n_kv_heads=tp) if replicates_kv(a, tp) else a), tp


def _whole(x: Any) -> int:
    """``x`` as an int; it is whole (an exact Fraction of whole parameter counts)."""
    f = Fraction(x)
    assert f.denominator == 1, x
    return int(f)


def layout_ok(a: g.ArchNumbers, layout: Layout, replicate_kv: bool = False) -> bool:
    """True when ``validate.check_layout`` accepts ``layout`` for ``a`` (no GPU count): positive
    degrees, TP dividing the heads and FFN widths and dividing the KV heads or a multiple of
    them (an engine replicates them, ``replicate_kv``; a Megatron-core trainer sub-shards the
    QKV activations, ``validate.KV_SUBSHARD_COMMIT``), PP at most the layers, virtual
    stages only interleaved and dividing the layers, EP only for MoE and dividing the
    experts, ETP dividing the expert width and ETP P_e dividing P_t P_c P_d
    (``validate.check_expert_grid``), a hybrid shard's P_z dividing P_d P_c
    (``validate.check_zero_shard``)."""
    degrees = (
        layout.dp, layout.tp, layout.pp, layout.cp, layout.ep, layout.expert_tp,
        layout.micro_batch,
    )  # fmt: skip
    if not all(isinstance(x, int) and x >= 1 for x in degrees) or layout.virtual_stages < 1:
        return False
    tp, att = layout.tp, layout.attention_dp
    if not isinstance(att, int) or att < 1 or tp % att:
        return False
    heads = [a.n_heads] if replicates_kv(a, tp // att) else [a.n_heads, a.n_kv_heads]
    if any(h % (tp // att) for h in heads):  # the heads over the attention TP ranks
        return False
    if a.fullshape and a.full_kv_heads % (tp // att) and (tp // att) % a.full_kv_heads:
        return False  # Gemma 4's full layers: their KV heads split or replicated
    widths = []
    if not a.moe or a.first_dense_layers:
        widths.append(a.d_ff)
    if a.moe:
        widths.append(a.d_expert)
        if a.n_shared_experts:
            widths.append(a.d_shared_expert)
    if any(w % tp for w in widths) or layout.pp > a.n_layers:
        return False
    v = layout.virtual_stages
    megatron_split = uses_megatron_split(layout)  # validate.check_layout, the same function
    if megatron_split and split_problem(a.n_layers, layout):
        return False
    if v > 1 and (layout.schedule is not PipelineSchedule.INTERLEAVED or layout.pp == 1
                  or (a.n_layers % (layout.pp * v) and not megatron_split)):  # fmt: skip
        return False
    if layout.ep > 1 and not (a.moe and not a.n_experts % layout.ep):
        return False
    etp = layout.expert_tp
    z = layout.zero_shard  # validate.check_zero_shard
    if z is not None and layout.zero is not ZeroStage.NONE and not (
        isinstance(z, int) and z >= 1 and not (layout.dp * layout.cp) % layout.zero_group
        and not layout.expert_dp % layout.zero_replicas
    ):
        return False
    return not a.moe or (
        not a.d_expert % etp and not (layout.tp * layout.cp * layout.dp) % (etp * layout.ep)
    )


def _check(a: g.ArchNumbers, layout: Layout, replicate_kv: bool = False) -> None:
    """Raise validate.check_layout's SpecError when ``layout`` cannot run ``a``."""
    if layout_ok(a, layout, replicate_kv):
        return
    from rlmcost.parallel.validate import check_layout  # the error's wording

    check_layout(a, layout, replicate_kv=replicate_kv)  # type: ignore[arg-type]
    raise AssertionError(f"layout_ok and check_layout disagree on {layout}")


def stage_layers(a: g.ArchNumbers, layout: Layout | int) -> list[tuple[int, int]]:
    """(dense, MoE) layers of each of the P_p stages (``pipeline_split.stage_dense_moe``;
    an int is P_p with rlmcost's even split), the MoE model's first ``first_dense_layers``
    dense (``parallel.shard.stages``)."""
    layout = Layout(pp=layout) if isinstance(layout, int) else layout
    return stage_dense_moe(a.n_layers, a.first_dense_layers if a.moe else a.n_layers, layout)


def _model_states(
    n_params: int, zero: ZeroStage, shards: int, w: int, trainable: bool, gb: int | None = None
) -> tuple[int, int, int]:
    """(weights, gradients, optimizer) bytes: ``parallel.zero.model_state_bytes_per_rank``
    (Rajbhandari et al. 2020, Table 1; K = 12 fp32 bytes, 8 when the weights are fp32;
    gradients of ``gb`` bytes, None: ``w``)."""
    sharded = ceil_div(n_params, shards)
    weights = w * (sharded if zero is ZeroStage.OS_G_P else n_params)
    if not trainable:
        return weights, 0, 0
    grads = (gb or w) * (sharded if zero in (ZeroStage.OS_G, ZeroStage.OS_G_P) else n_params)
    k = 8 if w == 4 else 12
    return weights, grads, k * (n_params if zero is ZeroStage.NONE else sharded)


@cache
def _saved(ckpt: Checkpointing, sp: bool, moe: bool) -> Callable[..., Any]:
    """The generated ``saved_bytes_per_token_layer_*`` of one case (loaded on first use)."""
    name = f"saved_bytes_per_token_layer_{ckpt.value}{'_sp' if sp else ''}_"
    return g.FUNCTIONS[name + ("moe" if moe else "dense")]


def saved_bytes(
    a: g.ArchNumbers, tp: Any, sp: bool, ckpt: Checkpointing, moe: bool, act_bytes: Any,
    fused_glu: bool = False,
) -> Any:
    """``parallel.activations.saved_bytes_per_token_layer`` (bytes, exact; arrays elementwise;
    ``fused_glu``: the trainer's gated FFN a fused SwiGLU)."""
    return _saved(Checkpointing(ckpt), bool(sp), bool(moe))(a, tp, act_bytes, int(fused_glu))


@memoized(copy=list)
def memory_per_stage(
    arch: Any,
    layout: Layout,
    mode: Mode | str,
    sequences: int,
    seq_len: int,
    workload: Any | None = None,
    head: Head = Head.LM,
    linear_mixer_replicated: bool = False,
    fused_glu: bool = False,
) -> list[MemoryBreakdown]:
    """:func:`memory_per_rank` for a rank of every pipeline stage, first to last.

    ``arch``: an ``Arch``, a ``ModelSpec``, a mapping of their fields or ``ArchNumbers``;
    ``workload``: a ``specs.Workload`` for its dtypes (default ``Workload()``'s) or ``Dtypes``;
    ``linear_mixer_replicated``: the Gated DeltaNet mixers whole on every TP rank
    (``parallel.memory.memory_per_rank``); ``fused_glu``: the trainer's gated FFN a fused SwiGLU,
    3 d_ff kept not 4 (:mod:`rlmcost.placement.glu_kernel` says which trainers).
    """
    a = arch_numbers(arch)
    mode = Mode(mode)
    _check(a, layout, replicate_kv=mode is Mode.GENERATE)
    att = layout.attention_dp  # SGLang's data-parallel attention (attention_split)
    attn_a, attn_tp = attention_split(a, layout.tp // att)
    if replicates_kv(a, layout.tp):  # one KV head per rank: an engine's replicated one, or
        a = a._replace(n_kv_heads=layout.tp)  # a Megatron-core trainer's sub-sharded QKV
    dt = workload if isinstance(workload, Dtypes) else Dtypes.of(workload)
    share = data_share(layout, sequences, seq_len)  # the same split as parallel.memory
    tp, sp_on, zero = layout.tp, layout.sp, layout.zero
    per_shard, n_mb = share.sequences, share.micro_batches
    per_seq, mb_tokens = share.tokens_per_sequence, share.tokens_per_micro_batch
    train = mode is Mode.TRAIN
    w = dt.weight
    stored = (dt.param or w) if train else w  # parallel.memory: the trainer's stored dtype
    cast_units = zero is ZeroStage.OS_G_P or stored != w
    vocab_per_rank = ceil_div(a.vocab, tp) if head is Head.LM else 1
    kept16 = dt.unquantized if mode is Mode.GENERATE else None  # an FP8 engine's 16-bit parts

    if train:
        x = dt.activation
        glu = bool(fused_glu)
        saved = {m: saved_bytes(a, tp, sp_on, layout.ckpt, m, x, glu) for m in (False, True)}
        rebuilt = {m: saved_bytes(a, tp, sp_on, Checkpointing.NONE, m, x, glu)
                   for m in (False, True)}  # fmt: skip
        final_norm_input = Fraction(x * a.d_model, tp if sp_on else 1)
        if layout.loss_upcast or layout.loss_compiled:  # torchtitan's head keeps its input
            final_norm_input += fm.head_input_bytes_per_token(a.d_model, x)
        sac = layout.op_sac and layout.ckpt is Checkpointing.SELECTIVE  # torchtitan's op SAC
        if sac:  # parallel.framework_memory
            saved[False] = fm.op_sac_of(a, tp, sp_on, x)
        full_saved = {}  # Gemma 4's full layers at their own widths (kept, rebuilt)
        if a.fullshape and not sac:
            fa = full_layer(a, tp)
            full_saved = {m: (saved_bytes(fa, tp, sp_on, layout.ckpt, m, x, glu),
                              saved_bytes(fa, tp, sp_on, Checkpointing.NONE, m, x, glu))
                          for m in (False, True)}  # fmt: skip
    else:
        buffer = Fraction(g.memory_inference_buffer(a, 1, tp))
        if sp_on and tp > 1:
            buffer -= a.d_model * (1 - Fraction(1, tp))
        buffer_bytes = ceil(mb_tokens * buffer * dt.activation)
    kv_per_token_layer = g.kv_cache_per_token_layer(attn_a, attn_tp) * dt.kv
    full_wider = _full_kv_wider(a, attn_tp) * dt.kv  # Gemma 4's full layers, per token and layer

    out = []
    layers = stage_layers(a, layout)
    for s, (n_dense, n_moe) in enumerate(layers):
        last = s == layout.pp - 1
        stage = PipelineStage(s, layout.pp, n_dense, n_moe)
        p = stage_params(a, layout, stage, head, linear_mixer_replicated)
        n_lin = a.linear_layers * (n_dense + n_moe) // a.n_layers
        if att > 1:  # the attention layers' weights at tp / P_a (attention_split)
            more = g.params_attention_per_layer(attn_a, attn_tp) - \
                g.params_attention_per_layer(*attention_split(a, tp))  # fmt: skip
            p = StageParams(_whole(p.dense + (n_dense + n_moe - n_lin) * more), p.expert,
                            p.largest_unit)  # fmt: skip
        dw, dg, do = _model_states(p.dense, zero, layout.zero_group, stored, train, dt.grad)
        dw += bd.unquantized_extra_bytes(a, tp, stage, w, kept16) - (packed_saving_bytes(
            a, layout, stage, dt.packed_parts, dt.packed, w) if dt.packed and mode is
            Mode.GENERATE else 0)  # a 4-bit engine's packed parts
        ew, eg, eo = _model_states(p.expert, zero, layout.expert_zero_group, stored, train, dt.grad)
        buffers = 2 * p.largest_unit * w if cast_units else 0
        if train and layout.pp_fsdp_gathered:  # FSDP2 in torch's pipelining
            fm.check_pp_gathered(layout.pp, zero is ZeroStage.OS_G_P)
            buffers = fm.pp_gathered_bytes(p.dense + p.expert, w)
        if train:
            kept = n_dense * saved[False] + n_moe * saved[True]
            n_full = full_layers_of(a, n_dense + n_moe) if full_saved else 0
            if n_full:  # in proportion, as parallel.memory
                kept += n_full * (full_saved[bool(n_moe)][0] - saved[bool(n_moe)])
            if layout.act_offload and n_dense + n_moe >= OFFLOAD_MIN_LAYERS and not sac:
                kept = sum(saved[m] for m in offload_kept(n_dense, n_moe))  # parallel.act_offload
            in_flight = in_flight_layer_microbatches(
                layout.schedule, s, layout.pp, n_mb, layout.virtual_stages
            )
            head_kept = head_in_flight(layout.schedule, in_flight, layout.virtual_stages) \
                * final_norm_input if last else 0  # fmt: skip
            total = mb_tokens * (in_flight * Fraction(kept) + head_kept)
            if layout.ckpt is Checkpointing.FULL:
                kinds = [m for m, n in ((False, n_dense), (True, n_moe)) if n]
                ones = [rebuilt[m] for m in kinds]
                ones += [full_saved[bool(n_moe)][1]] if n_full else []
                total += mb_tokens * max((Fraction(r) for r in ones), default=0)
            elif sac and n_dense:  # the rest of one layer rebuilt for one micro-batch
                total += mb_tokens * (Fraction(rebuilt[False]) - saved[False])
            act = ceil(total)
        else:
            act = buffer_bytes
        kv = 0
        if mode is Mode.GENERATE:  # linear layers: a state per sequence (parallel.memory)
            n = n_dense + n_moe
            n_lin = a.linear_layers * n // a.n_layers
            n_sw = max(a.n_layers - a.full_attention_layers, 0) * n // a.n_layers if (
                dt.kv_window and a.swa) else 0  # fmt: skip
            kept = min(per_seq, -(-(a.sliding_window - 1) // layout.cp)) if n_sw else 0
            n_pool = max(a.n_layers - a.full_attention_layers, 0) * n // a.n_layers if (
                dt.kv_swa_pool and not dt.kv_window and a.swa) else 0  # fmt: skip
            num, den = SGLANG_SWA_FULL_TOKENS_RATIO  # SGLang's SWA pool, rounded up
            pos = (n - n_lin - n_sw - n_pool) * per_seq + n_sw * kept
            kv = (pos + -(-(n_pool * per_seq * num) // den)) * kv_per_token_layer * per_shard
            kv += full_layers_of(a, n) * per_seq * full_wider * per_shard if a.fullshape else 0
            sl_pos = kept if n_sw else per_seq * num // den if n_pool else per_seq
            kv -= shared_kv_per_sequence(  # Gemma 4 E's KV-shared layers hold none
                (a.n_layers, a.kv_shared_layers, a.kv_shared_full_layers), n, (sl_pos, per_seq),
                (kv_per_token_layer, kv_per_token_layer + full_wider)) * per_shard  # fmt: skip
            kv = -(-kv // att)  # a rank's share of the requests under DP attention
            if n_lin:  # the recurrent state in the engine's dtype, the conv state in its own
                rec = recurrent_state(a, tp)
                kv += n_lin * per_shard * (rec * (dt.state or dt.kv)
                                           + (linear_state(a, tp) - rec) * (dt.conv or dt.kv))
        logits = 0
        if last:
            positions = per_shard if mode is Mode.GENERATE else mb_tokens
            logits = positions * vocab_per_rank * dt.logits
            if train:  # F.cross_entropy(logits.float()), eager or compiled (framework_memory)
                logits = fm.loss_bytes(layout, positions, vocab_per_rank, dt.activation) or logits
        if train and layout.pp_stage_buffers:  # torch's PipelineStage (framework_memory)
            hidden, outs = fm.pp_stage_buffer_bytes(layout, s, share, a.d_model, vocab_per_rank, x)
            buffers, logits = buffers + hidden, logits + outs
        out.append(MemoryBreakdown(dw + ew, dg + eg, do + eo, act, kv, logits, buffers))
    return out


@memoized()
def memory_per_rank(
    arch: Any,
    layout: Layout,
    mode: Mode | str,
    sequences: int,
    seq_len: int,
    workload: Any | None = None,
    head: Head = Head.LM,
    linear_mixer_replicated: bool = False,
    fused_glu: bool = False,
) -> MemoryBreakdown:
    """Peak bytes on the most loaded rank: the stage of :func:`memory_per_stage` with the
    largest total (the first of equals), as ``parallel.memory.memory_per_rank``.

    >>> m = memory_per_rank({"name": "llama-3.1-8b", "n_layers": 32, "d_model": 4096,
    ...     "d_ff": 14336, "n_heads": 32, "n_kv_heads": 8, "head_dim": 128, "vocab": 128256},
    ...     Layout(), "train", 1, 4096)
    >>> m.weights == 2 * 8_030_261_248, m.optimizer == 12 * 8_030_261_248
    (True, True)
    """
    return max(
        memory_per_stage(arch, layout, mode, sequences, seq_len, workload, head,
                         linear_mixer_replicated, fused_glu),
        key=lambda b: b.total,
    )
