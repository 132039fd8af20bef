"""Peak memory per rank, in bytes by component, of one model invocation under a layout.

The numeric counterpart of the tables' memory column (§III-G), with mixed-precision bytes:

* weights / gradients / optimizer: the rank's share of the parameters (its pipeline stage's
  layers, 1/P_t of each split matrix, E/P_e routed experts each split over ETP ranks; norms
  and the router replicated; with ``linear_mixer_replicated`` a linear-attention layer's
  Gated DeltaNet whole, as slime's and miles's Megatron trainer builds it from plain
  ``nn.Linear`` on every TP rank: :mod:`rlmcost.perf.linear_mixer`) in
  ``workload.weight_dtype`` (GENERATE with ``workload.unquantized_dtype``: an FP8 engine's
  embedding, head, norms and routers in that 16-bit dtype,
  :func:`~rlmcost.parallel.breakdown.unquantized_params`), gradients in the same dtype
  (``workload.grad_dtype`` where a trainer keeps a wider buffer: Megatron-core's fp32
  ``grad_reduce_in_fp32``), Adam's K = 12 bytes of fp32 master weights and moments
  (:mod:`rlmcost.parallel.zero`). ZeRO (or Megatron's distributed optimizer,
  ``megatron/core/optimizer/distrib_optimizer.py``, which shards over the data-parallel group of
  each parameter) shards each parameter's states over the ranks that hold a replica of it: the dense
  parameters over P_d P_c ranks, the routed experts over the expert-DP group P_t P_c P_d / (ETP P_e)
  (Megatron-core's expert grid, :mod:`rlmcost.parallel.layout`; with P_c = 1 and no MoE this is P_z
  = P_d). Hybrid sharding (``Layout.zero_shard``: FSDP HYBRID_SHARD, verl's ``fsdp_size``) shards
  them over P_z ranks instead, every group of P_z holding a whole copy (``Layout.zero_group``), the
  experts over the expert-DP group divided by the P_d P_c / P_z replicas.
* activations: TRAIN keeps the faithful per-layer bytes (``parallel.activations.saved_bytes_
  per_token_layer``, TP/SP/CP-sharded, per ``layout.ckpt``; ``fused_glu``: a fused SwiGLU, 3
  d_ff kept not 4, ``placement.glu_kernel``; the last two layers' under ``Layout.act_offload``)
  of every micro-batch the pipeline schedule has in flight on the stage (``parallel.pipeline``),
  plus under full recomputation one layer rebuilt for one micro-batch. FORWARD and GENERATE keep
  the transient buffer of one layer (``blocks.memory_inference_buffer``) for one micro-batch.
* kv_cache (GENERATE): every sequence the rank owns at its final context, its stage's softmax
  layers, h_kv / P_t heads, 1 / P_c of the positions, in ``workload.kv_dtype``; a
  sliding-window layer at its last W - 1 positions where the engine frees the rest
  (``workload.kv_window``: vLLM, :mod:`rlmcost.deployment.engine_kv`;
  ``blocks.window.cached_positions``' count), else at the whole context; its
  linear-attention layers (``Arch.linear_layers_of``) keep no keys or values but a fixed state
  per sequence, ``Arch.linear_state_width`` / P_t (``blocks.memory_kv_cache``'s count), the
  recurrent H_v d_k d_v of it in ``workload.linear_state_dtype`` (the engine's: SGLang fp32,
  vLLM the model's), the conv state in the KV dtype. MLA
  (DeepSeek-V2/V3) caches the latent d_c + d_rope per token and layer, one shared "head" that
  TP does not split: every TP rank holds all of it, as vLLM does (SGLang's DP attention avoids
  that copy).
* logits: the last stage's logits of one micro-batch (TRAIN/FORWARD: every position; GENERATE:
  one position per sequence), V / P_t vocabulary columns, in ``workload.logits_dtype`` (fp32);
  its final norm's input is kept for each micro-batch in flight there (one under interleaving:
  :func:`~rlmcost.parallel.pipeline.head_in_flight`).
* buffers: under ZeRO-3 the all-gathered parameters of two units (the one computing and the
  one prefetched; a unit is a layer, the embedding or the head), in the weight dtype. A
  trainer that stores its parameters in a wider dtype (``workload.param_dtype``: fp32 under
  FSDP mixed precision, :mod:`rlmcost.parallel.zero`) keeps its weights and gradients in
  that dtype, Adam's K = 8, and casts two units per use to the weight dtype at any ZeRO
  stage (FSDP's per-unit ``param_dtype`` copy; forwards and generation use the weight dtype).
  A trainer's own (``Layout`` flags): :mod:`rlmcost.parallel.framework_memory`.

Data: the ``sequences`` of the invocation are split over the P_d data shards (EP is folded
inside P_t P_c P_d, so the EP ranks own the tokens of their own data shards) and each sequence
over P_c context ranks; the most loaded rank gets the rounded-up share. A micro-batch of
``layout.micro_batch`` sequences (at most the rank's share) is the unit of the pipeline
schedule.

Suppressed: allocator fragmentation, CUDA context and library workspaces, DDP gradient buckets,
pipeline send/receive buffers (but torch's, ``pp_stage_buffers``), ZeRO-1/2's all-gather buffers.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil

import sympy as sp

from rlmcost import blocks as bl
from rlmcost.arch import Arch
from rlmcost.blocks.params import params_ffn_free_delta, params_full_attention_delta
from rlmcost.choices import Head
from rlmcost.errors import SpecError
from rlmcost.parallel.act_offload import OFFLOAD_MIN_LAYERS, offload_kept
from rlmcost.parallel.activations import saved_bytes_per_token_layer
from rlmcost.parallel.breakdown import (
    DataShare,
    MemoryBreakdown,
    Mode,
    StageParams,
    data_share,
    unquantized_extra_bytes,
)
from rlmcost.parallel.framework_memory import (
    check_pp_gathered,
    head_input_bytes_per_token,
    loss_bytes,
    op_sac_of_arch,
    pp_gathered_bytes,
    pp_stage_buffer_bytes,
)
from rlmcost.parallel.kv_shared import stage_shared_kv, stage_shared_params
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.packed_weights import packed_saving_bytes
from rlmcost.parallel.pipeline import head_in_flight, in_flight_layer_microbatches
from rlmcost.parallel.shard import PipelineStage, split, split_up, stages, tp_shard
from rlmcost.parallel.validate import check_layout
from rlmcost.parallel.zero import model_state_bytes_per_rank
from rlmcost.specs.workload import SGLANG_SWA_FULL_TOKENS_RATIO, Workload


def _int(x: object) -> int:
    return int(sp.sympify(x))


def _fraction(x: object) -> Fraction:
    """An exact sympy Rational (or int) as a Fraction."""
    r = sp.Rational(sp.sympify(x))
    return Fraction(int(r.p), int(r.q))


def stage_params(
    arch: Arch, layout: Layout, stage: PipelineStage, head: Head,
    linear_mixer_replicated: bool = False,
) -> StageParams:  # fmt: skip
    """Parameter elements on one rank of ``stage``: its layers' TP shards, E/P_e routed experts
    each split over ETP ranks, the embedding on the first stage, the final norm and head on the
    last (a tied embedding's copy too, when the stages differ). ``linear_mixer_replicated``:
    each linear-attention layer holds its whole Gated DeltaNet in place of its attention
    block's TP shard (slime's and miles's ``HuggingfaceAttention``: miles_plugins/models/
    hf_attention.py and qwen3_5.py at bb6f7dbd; :mod:`rlmcost.perf.linear_mixer`)."""
    shard = tp_shard(arch, layout.tp)
    units = [0]
    dense = stage.dense_layers * _int(bl.params_layer_dense(shard)) if stage.dense_layers else 0
    if stage.dense_layers:
        units.append(_int(bl.params_layer_dense(shard)))
    expert = 0
    if stage.moe_layers:
        routed = _int(shard.n_experts * bl.params_routed_expert(shard))
        moe_dense = _int(bl.params_layer_moe(shard)) - routed
        d_e = split(arch.d_expert, layout.expert_tp)
        one = bl.params_routed_expert(arch.with_(d_expert=d_e))  # an expert-TP shard
        routed_here = _int(arch.n_experts * one) // layout.ep
        dense += stage.moe_layers * moe_dense
        expert = stage.moe_layers * routed_here
        units.append(moe_dense + routed_here)
    n_linear = arch.linear_layers_of(stage.dense_layers + stage.moe_layers)
    if n_linear:  # Gated DeltaNet layers: their mixer in place of attention
        if linear_mixer_replicated:  # the whole mixer less the attention shard it replaces
            whole = bl.params_linear_attention_per_layer(arch)
            mixer = whole - bl.params_attention_per_layer(shard)
        else:
            mixer = bl.params_linear_mixer_delta(shard)
        dense += _int(n_linear * mixer)
    n_free = arch.ffn_free_layers_of(stage.dense_layers + stage.moe_layers)
    if n_free:  # FFN-free layers (Nemotron-H's mixer-only blocks): no FFN, no FFN norm
        routed = _int(shard.n_experts * bl.params_routed_expert(shard)) if stage.moe_layers \
            else 0  # fmt: skip
        dense += _int(n_free * (params_ffn_free_delta(shard) + routed))
        expert -= n_free * routed_here if stage.moe_layers else 0
    dense += stage_shared_params(arch, shard, stage.dense_layers + stage.moe_layers)  # Gemma 4 E
    if int(arch.n_full_layers):  # Gemma 4's full layers: their own widths, in proportion
        dense += arch.full_layers_of(stage.layers) * _int(params_full_attention_delta(shard))
    if stage.first:  # the embedding; an encoder (vision tower) whole, not TP-split (an upper bound)
        emb = _int(bl.params_embedding(shard))
        dense += emb + _int(arch.encoder_params)
        units.append(emb)
    if stage.last:
        out = _int(bl.params_head(shard, head))
        if head is Head.LM and arch.tie_embeddings and not stage.first:
            out = _int(shard.vocab * shard.d_model)  # the last stage keeps its own copy
        dense += out + _int(bl.params_norm(shard))
        units.append(out)
    return StageParams(dense, expert, max(units))


def _activation_bytes_train(
    arch: Arch, layout: Layout, stage: PipelineStage, share: DataShare, workload: Workload,
    fused_glu: bool = False,
) -> int:
    dtype = workload.activation_dtype
    tp, sp_on, ckpt = layout.tp, layout.sp, layout.ckpt
    op_sac = layout.op_sac and ckpt is Checkpointing.SELECTIVE  # torchtitan's (framework_memory)
    # Gemma 4's full layers at their own widths, in proportion (as their weights and KV cache)
    n_full = arch.full_layers_of(stage.layers) if arch.has_full_shape and not op_sac else 0

    def per_token(c: Checkpointing) -> Fraction:
        total = 0
        if stage.dense_layers:
            total += stage.dense_layers * saved_bytes_per_token_layer(
                arch, tp, sp_on, c, False, dtype, fused_glu
            )
        if stage.moe_layers:
            total += stage.moe_layers * saved_bytes_per_token_layer(
                arch, tp, sp_on, c, True, dtype, fused_glu
            )
        if n_full:
            moe = bool(stage.moe_layers)
            total += n_full * (
                saved_bytes_per_token_layer(arch.full_view(), tp, sp_on, c, moe, dtype, fused_glu)
                - saved_bytes_per_token_layer(arch, tp, sp_on, c, moe, dtype, fused_glu))
        return _fraction(total)

    sac = op_sac_of_arch(arch, tp, sp_on, dtype.bytes) if op_sac else Fraction(0)
    kept = sac * stage.layers if op_sac else per_token(ckpt)
    if layout.act_offload and stage.layers >= OFFLOAD_MIN_LAYERS and not op_sac:  # act_offload
        kept = _fraction(sum(saved_bytes_per_token_layer(arch, tp, sp_on, ckpt, m, dtype, fused_glu)
                             for m in offload_kept(stage.dense_layers, stage.moe_layers)))
    head_kept = Fraction(0)
    if stage.last:  # the final norm's input (and the head's, under torchtitan's loss)
        head_kept = Fraction(dtype.bytes * int(arch.d_model), tp if sp_on else 1)
        if layout.loss_upcast or layout.loss_compiled:
            head_kept += head_input_bytes_per_token(int(arch.d_model), dtype.bytes)
    in_flight = in_flight_layer_microbatches(
        layout.schedule, stage.index, layout.pp, share.micro_batches, layout.virtual_stages
    )
    last = head_in_flight(layout.schedule, in_flight, layout.virtual_stages)  # its own count
    total = share.tokens_per_micro_batch * (in_flight * kept + last * head_kept)
    if ckpt is Checkpointing.FULL:  # one layer rebuilt for one micro-batch during its backward
        rebuilt = [
            saved_bytes_per_token_layer(shape, tp, sp_on, Checkpointing.NONE, moe, dtype,
                                        fused_glu)
            for moe, n in ((False, stage.dense_layers), (True, stage.moe_layers))
            for shape in ((arch, arch.full_view()) if n_full else (arch,))
            if n
        ]
        # a stage of no layers (a layout string's 'E|' or '|L' stage) rebuilds none
        total += share.tokens_per_micro_batch * max((_fraction(r) for r in rebuilt), default=0)
    elif op_sac and stage.layers:  # the rest of one layer rebuilt for one micro-batch
        total += share.tokens_per_micro_batch * (per_token(Checkpointing.NONE) / stage.layers
                                                 - sac)
    return ceil(total)


def _inference_buffer_bytes(arch: Arch, layout: Layout, tokens: int, workload: Workload) -> int:
    """One layer's transients for ``tokens`` positions on one rank (TP-sharded; SP shards the
    residual stream too)."""
    shard = tp_shard(arch, layout.tp)
    per_token = Fraction(_int(bl.memory_inference_buffer(shard, 1)))
    if layout.sp and layout.tp > 1:
        per_token -= Fraction(int(arch.d_model)) * (1 - Fraction(1, layout.tp))
    return ceil(tokens * per_token * workload.activation_dtype.bytes)


def memory_per_stage(
    arch: Arch,
    layout: Layout,
    mode: Mode,
    sequences: int,
    seq_len: int,
    workload: Workload | None = None,
    head: Head = Head.LM,
    linear_mixer_replicated: bool = False,
    fused_glu: bool = False,
) -> list[MemoryBreakdown]:
    """:func:`memory_per_rank` for a rank of every pipeline stage, first to last. SGLang's
    data-parallel attention (``layout.attention_dp`` above 1) is refused here: its split is
    priced by the compiled twin alone (:func:`rlmcost.compiled.memory.attention_split`)."""
    workload = workload or Workload()
    if layout.attention_dp != 1:
        raise SpecError(f"attention_dp={layout.attention_dp}: SGLang's data-parallel attention "
                        "is priced by rlmcost.compiled.memory.memory_per_rank, not this "
                        "reference form")  # fmt: skip
    check_layout(arch, layout, replicate_kv=Mode(mode) is Mode.GENERATE)
    share = data_share(layout, sequences, seq_len)
    mode = Mode(mode)
    train = mode is Mode.TRAIN
    w_dtype = workload.weight_dtype
    stored = workload.stored_dtype if train else w_dtype
    grads = workload.gradient_dtype if train else None
    cast_units = layout.zero is ZeroStage.OS_G_P or (train and stored != w_dtype)
    replicas_dense = layout.zero_group  # P_d P_c, or a hybrid shard's P_z
    replicas_expert = layout.expert_zero_group
    vocab_per_rank = split_up(int(arch.vocab), layout.tp) if head is Head.LM else 1
    out = []
    for stage in stages(arch, layout):
        p = stage_params(arch, layout, stage, head, linear_mixer_replicated)
        dense = model_state_bytes_per_rank(p.dense, layout.zero, replicas_dense, stored, train,
                                           grads)  # fmt: skip
        expert = model_state_bytes_per_rank(p.expert, layout.zero, replicas_expert, stored, train,
                                            grads)  # fmt: skip
        buffers = 2 * p.largest_unit * w_dtype.bytes if cast_units else 0
        if train and layout.pp_fsdp_gathered:  # FSDP2 in torch's pipelining (framework_memory)
            check_pp_gathered(layout.pp, layout.zero is ZeroStage.OS_G_P)
            buffers = pp_gathered_bytes(p.dense + p.expert, w_dtype.bytes)
        kv = logits = 0
        if train:
            act = _activation_bytes_train(arch, layout, stage, share, workload, fused_glu)
        else:
            act = _inference_buffer_bytes(arch, layout, share.tokens_per_micro_batch, workload)
        if mode is Mode.GENERATE:
            # 2 h_kv d_h / P_t per token and softmax layer; MLA's latent is not split over TP;
            # a linear-attention layer its fixed state per sequence, no keys or values
            sh = tp_shard(arch, layout.tp)
            per_seq = share.tokens_per_sequence
            n_lin = int(arch.linear_layers_of(stage.dense_layers + stage.moe_layers))
            n_sw = _sliding_kept(arch, stage.layers, workload)
            n_pool = _sliding_pooled(arch, stage.layers, workload)
            positions = (stage.layers - n_lin - n_sw - n_pool) * per_seq
            if n_sw:  # a sliding layer at its last W - 1 positions (CP: 1 / P_c of them)
                positions += n_sw * min(per_seq, -(-(_int(arch.sliding_window) - 1) // layout.cp))
            if n_pool:  # SGLang's SWA pool: ratio x the full layers' slots, rounded up
                num, den = SGLANG_SWA_FULL_TOKENS_RATIO
                positions += -(-(n_pool * per_seq * num) // den)
            kv = positions * int(sh.kv_cache_width) * share.sequences * workload.kv_dtype.bytes
            if sh.has_full_shape:  # Gemma 4's full layers cache their own width, all positions
                wider = int(sh.full_view().kv_cache_width) - int(sh.kv_cache_width)
                kv += arch.full_layers_of(stage.layers) * per_seq * wider * share.sequences * \
                    workload.kv_dtype.bytes  # fmt: skip
            if int(arch.kv_shared_layers):  # Gemma 4 E's shared layers hold none (kv_shared)
                held = (per_seq, n_sw, n_pool)
                kv -= stage_shared_kv(arch, sh, stage.layers, held, layout.cp) * \
                    share.sequences * workload.kv_dtype.bytes  # fmt: skip
            if n_lin:  # the recurrent state in the engine's dtype, the conv state in its own
                conv = int(sh.linear_state_width) - _recurrent_width(sh)
                kv += n_lin * share.sequences * (
                    _recurrent_width(sh) * workload.linear_state_dtype.bytes
                    + conv * workload.linear_conv_dtype.bytes)  # fmt: skip
        if stage.last:
            positions = share.sequences if mode is Mode.GENERATE else share.tokens_per_micro_batch
            logits = positions * vocab_per_rank * workload.logits_dtype.bytes
            if train:  # F.cross_entropy(logits.float()), eager or compiled (framework_memory)
                x = workload.activation_dtype.bytes
                logits = loss_bytes(layout, positions, vocab_per_rank, x) or logits
        if train and layout.pp_stage_buffers:  # torch's PipelineStage (framework_memory)
            hidden, outs = pp_stage_buffer_bytes(layout, stage.index, share, int(arch.d_model),
                                                 vocab_per_rank, workload.activation_dtype.bytes)
            buffers, logits = buffers + hidden, logits + outs
        kept = workload.unquantized_dtype  # an FP8 engine's 16-bit parts (breakdown)
        extra = unquantized_extra_bytes(arch, layout.tp, stage, w_dtype.bytes,
                                        None if kept is None else kept.bytes)  # fmt: skip
        if workload.packed_format is not None:  # a 4-bit engine's packed parts
            extra -= packed_saving_bytes(arch, layout, stage, workload.packed_parts,
                                         workload.packed_format, w_dtype.bytes)  # fmt: skip
        out.append(
            MemoryBreakdown(
                weights=dense.weights + expert.weights + (extra if mode is Mode.GENERATE else 0),
                gradients=dense.gradients + expert.gradients,
                optimizer=dense.optimizer + expert.optimizer,
                activations=act,
                kv_cache=kv,
                logits=logits,
                buffers=buffers,
            )
        )
    return out


def _sliding_kept(arch: Arch, layers: int, workload: Workload) -> int:
    """Sliding-window layers among a stage's ``layers`` whose KV cache keeps the window only
    (``workload.kv_window``, the engine's choice: :mod:`rlmcost.deployment.engine_kv`), in
    proportion as ``Arch.linear_layers_of`` counts linear ones; 0 otherwise."""
    if not workload.kv_window or not arch.has_window:
        return 0
    return int(arch.n_sliding_layers) * layers // int(arch.n_layers)


def _sliding_pooled(arch: Arch, layers: int, workload: Workload) -> int:
    """Sliding-window layers among a stage's ``layers`` in SGLang's hybrid SWA pool
    (``workload.kv_swa_pool``: :mod:`rlmcost.deployment.engine_kv`), counted as
    :func:`_sliding_kept` counts; 0 otherwise."""
    if not workload.kv_swa_pool or workload.kv_window or not arch.has_window:
        return 0
    return int(arch.n_sliding_layers) * layers // int(arch.n_layers)


def _recurrent_width(shard: Arch) -> int:
    """H_v d_k d_v / P_t: the recurrent part of ``Arch.linear_state_width`` on a TP rank."""
    return int(shard.linear_value_heads * shard.linear_key_head_dim * shard.linear_value_head_dim)


def memory_per_rank(
    arch: Arch,
    layout: Layout,
    mode: Mode,
    sequences: int,
    seq_len: int,
    workload: Workload | None = None,
    head: Head = Head.LM,
    linear_mixer_replicated: bool = False,
    fused_glu: bool = False,
) -> MemoryBreakdown:
    """Peak bytes on the most loaded rank for one invocation over `sequences` sequences (the whole
    invocation's batch, split over layout.dp) of `seq_len` tokens (GENERATE: final context S+T).

    Dtypes from workload (default Workload()): bf16 weights/grads, mixed-precision Adam fp32
    states (12 bytes/param: master, m, v) sharded per layout.zero over dp; activations by the
    faithful byte model (micro-batches in flight per pipeline schedule, checkpointing per
    layout.ckpt, TP/SP/CP sharding); KV cache for GENERATE (sharded over tp by kv heads); fp32
    logits of one micro-batch (vocab sharded over tp). The module docstring gives every term.

    The most loaded rank is the pipeline stage with the largest total (TP, CP and data ranks of
    one stage are alike). ``arch`` must be numeric (a ``ModelSpec.arch()``).
    ``linear_mixer_replicated``: a hybrid model's Gated DeltaNet mixers whole on every TP rank
    (:func:`stage_params`), in its weights, gradients, optimizer states and ZeRO-3 shards; the
    caller says where it applies (a framework's trainer, ``Behaviour.linear_mixer_tp_replicated``;
    an inference engine splits the heads). ``fused_glu``: the trainer's gated FFN is a fused
    SwiGLU (:func:`~rlmcost.parallel.activations.saved_bytes_per_token_layer`).

    >>> from rlmcost.specs import get_model
    >>> m = memory_per_rank(get_model("llama-3.1-8b").arch(), Layout(), Mode.TRAIN, 1, 4096)
    >>> m.weights == 2 * 8_030_261_248, m.optimizer == 12 * 8_030_261_248
    (True, True)
    """
    return max(
        memory_per_stage(arch, layout, mode, sequences, seq_len, workload, head,
                         linear_mixer_replicated, fused_glu),
        key=lambda b: b.total,
    )
