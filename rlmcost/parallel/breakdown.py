"""The result types of the per-rank memory model and what it rests on, free of sympy.

:mod:`rlmcost.parallel.memory` (symbolic core) and :mod:`rlmcost.compiled.memory` (its numeric
twin) both return :class:`MemoryBreakdown`; numeric queries import it from here without
loading sympy. The data split (:func:`data_share`) and the parameters one rank of a pipeline
stage holds (:func:`stage_params`, from the generated blocks) serve the memory twin, the
gradient traffic of :mod:`rlmcost.parallel.comm` and the step time of
:mod:`rlmcost.perf.train_step` alike.
"""

from __future__ import annotations

import operator
from dataclasses import fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rlmcost.choices import Head
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers, full_layer, full_layers_of
from rlmcost.compiled.runtime import ceil_div
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.kv_shared import shared_params_here

if TYPE_CHECKING:
    from rlmcost.parallel.layout import Layout
    from rlmcost.parallel.shard import PipelineStage


@dataclass(frozen=True)
class StageParams:
    """Parameter elements one rank of a pipeline stage holds, by how widely they are
    replicated (``parallel.memory.stage_params`` and its numeric twin, :func:`stage_params`)."""

    dense: int  # replicated over P_d P_c
    expert: int  # routed experts, replicated over the expert-DP group (``Layout.expert_dp``)
    largest_unit: int  # largest ZeRO-3 gather unit (a layer, the embedding or the head)


class Mode(StrEnum):
    """What the invocation does with the model."""

    TRAIN = "train"  # forward + backward + optimizer step (actor/critic in Training)
    FORWARD = "forward"  # teacher-forced forward only (reward/reference/critic in Assessment)
    GENERATE = "generate"  # prefill + decode with a KV cache (actor in Generation)


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per rank (per device), exact ints. ``engine`` and ``overhead`` are deployment
    terms (:mod:`rlmcost.deployment`); the paper's model leaves them 0."""

    weights: int
    gradients: int
    optimizer: int
    activations: int
    kv_cache: int
    logits: int
    buffers: int
    engine: int = 0  # an awake inference engine's reservation while another model runs
    overhead: int = 0  # CUDA context, communicator buffers, allocator slack (deployment)
    rollout: int = 0  # the rollout batch's buffers as the framework keeps them (deployment)

    @property
    def total(self) -> int:
        return sum((self.weights, self.gradients, self.optimizer, self.activations,
                    self.kv_cache, self.logits, self.buffers, self.engine, self.overhead,
                    self.rollout))

    def to_json(self) -> dict[str, int]:
        """Component -> bytes, plus ``total``."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["total"] = self.total
        return out


@dataclass(frozen=True)
class DataShare:
    """What the most loaded rank processes: sequences, micro-batching and tokens per rank."""

    sequences: int  # sequences per data shard (of P_d), rounded up
    micro_batch: int  # sequences per micro-batch, at most ``sequences``
    micro_batches: int  # micro-batches per iteration on the rank
    tokens_per_sequence: int  # ceil(seq_len / P_c) positions of each sequence on the rank

    @property
    def tokens_per_micro_batch(self) -> int:
        return self.micro_batch * self.tokens_per_sequence


def _positive(name: str, value: object) -> int:
    """``value`` as a Python int (ints, numpy and sympy integers), or a SpecError."""
    try:
        v = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        v = 0
    if v < 1:
        raise SpecError(f"{name}={value} must be a positive integer")
    return v


def data_share(layout: Layout, sequences: int, seq_len: int) -> DataShare:
    """Split ``sequences`` sequences of ``seq_len`` tokens over the P_d data and P_c context
    ranks (EP ranks are folded inside them and own no tokens of their own)."""
    sequences, seq_len = _positive("sequences", sequences), _positive("seq_len", seq_len)
    shards = layout.dp  # fewer sequences than shards: some ranks idle
    per_shard = -(-sequences // shards)
    mb = min(layout.micro_batch, per_shard)
    return DataShare(per_shard, mb, -(-per_shard // mb), -(-seq_len // layout.cp))


def stage_params(
    arch: Any, layout: Layout, stage: PipelineStage, head: Head = Head.LM,
    linear_mixer_replicated: bool = False,
) -> StageParams:  # fmt: skip
    """Parameter elements on one rank of ``stage``, numerically (the twin of
    ``parallel.memory.stage_params``; the generated blocks, exact ints): its
    layers' TP shards, E/P_e routed experts each split over ETP ranks (Megatron-core's expert
    grid), the embedding on the first stage, the final norm and head on the last (a tied
    embedding's own copy when the stages differ); ``linear_mixer_replicated``: each
    linear-attention layer's whole Gated DeltaNet (slime's and miles's trainer,
    :mod:`rlmcost.perf.linear_mixer`)."""
    a, tp = arch_numbers(arch), layout.tp
    if tp > a.n_kv_heads and not tp % a.n_kv_heads:  # one KV head per rank (shard.tp_shard)
        a = a._replace(n_kv_heads=tp)
    units = [0]
    dense = 0
    expert = 0
    if stage.dense_layers:
        layer = g.params_layer_dense(a, tp)
        dense += stage.dense_layers * layer
        units.append(layer)
    if stage.moe_layers:
        routed_here = g.params_routed_experts(a, layout.expert_tp) // layout.ep
        moe_dense = g.params_layer_moe(a, tp) - g.params_routed_experts(a, tp)
        dense += stage.moe_layers * moe_dense
        expert = stage.moe_layers * routed_here
        units.append(moe_dense + routed_here)
    # the stage's share of linear-attention layers, as rlmcost.arch.Arch.linear_layers_of
    n_linear = a.linear_layers * (stage.dense_layers + stage.moe_layers) // a.n_layers
    if n_linear:  # Gated DeltaNet layers: their mixer in place of attention
        if linear_mixer_replicated:  # the whole mixer less the attention shard it replaces
            whole = g.params_linear_mixer_delta(a, 1) + g.params_attention_per_layer(a, 1)
            dense += n_linear * (whole - g.params_attention_per_layer(a, tp))
        else:
            dense += n_linear * g.params_linear_mixer_delta(a, tp)
    # FFN-free layers (Nemotron-H's mixer-only blocks), as rlmcost.arch.Arch.ffn_free_layers_of:
    # a layer less its attention and mixer norm is its FFN and the FFN's norm
    n_free = a.ffn_free_layers * (stage.dense_layers + stage.moe_layers) // a.n_layers
    if n_free:
        norm = a.d_model * (2 if a.norm_layernorm else 1)
        if stage.moe_layers:
            dense -= n_free * (moe_dense - g.params_attention_per_layer(a, tp) - norm)
            expert -= n_free * routed_here
        else:
            dense -= n_free * (g.params_layer_dense(a, tp) - g.params_attention_per_layer(a, tp)
                               - norm)  # fmt: skip
    if a.kv_shared_layers:  # Gemma 4 E's KV-shared layers, as parallel.memory.stage_params
        fk = a.full_kv_heads if a.fullshape else a.n_kv_heads
        fk = 1 if tp > fk and not tp % fk else fk // tp  # parallel.shard._kv_split
        dh_f = a.full_head_dim if a.fullshape else a.head_dim
        dense += shared_params_here(
            (a.n_layers, a.kv_shared_layers, a.kv_shared_full_layers),
            stage.dense_layers + stage.moe_layers,
            (a.n_kv_heads // tp * a.head_dim, fk * dh_f, a.head_dim, dh_f),
            (bool(a.qk_norm), bool(a.qkv_bias), bool(a.full_k_eq_v), bool(a.kv_shared_wide_ffn)),
            (a.d_model, a.d_ff // tp, 2 if a.ffn_kind_plain else 3))  # fmt: skip
    if a.fullshape or a.full_k_eq_v:  # Gemma 4's full layers, as parallel.memory.stage_params
        dense += full_layers_of(a, stage.dense_layers + stage.moe_layers) * \
            _full_attention_delta(a, tp)  # fmt: skip
    if stage.first:  # the embedding; an encoder (vision tower) whole, not TP-split (an upper bound)
        embedding = g.params_embedding(a, tp)
        dense += embedding + a.encoder_params
        units.append(embedding)
    if stage.last:
        if head is Head.LM and a.tie_embeddings and not stage.first:
            out = ceil_div(a.vocab, tp) * a.d_model  # the last stage keeps its own copy
        else:
            out = g.params_head_lm(a, tp) if head is Head.LM else g.params_head_value(a, tp)
        dense += out + g.params_norm(a)
        units.append(out)
    return StageParams(dense, expert, max(units))


def _full_attention_delta(a: Any, tp: int) -> int:
    """Parameters a full-attention layer's TP shard holds beyond a sliding one's (Gemma 4: its
    head width and KV heads, one KV head per rank past them, and no v_proj with
    ``full_k_eq_v``): the numeric twin of ``blocks.params.params_full_attention_delta`` of
    ``shard.tp_shard``."""
    full = full_layer(a, tp)
    delta = g.params_attention_per_layer(full, tp) - g.params_attention_per_layer(a, tp)
    if a.full_k_eq_v:  # no v_proj (nor its bias)
        kv_width = full.n_kv_heads // tp * full.head_dim
        delta -= a.d_model * kv_width + (kv_width if a.qkv_bias else 0)
    return int(delta)


def unquantized_params(arch: Any, tp: int, stage: PipelineStage) -> int:
    """Parameter elements on one TP rank of ``stage`` (an engine's, LM head) that an FP8 engine
    keeps in the model's 16-bit dtype: the input embedding on the first stage, the LM head
    (0 when tied on one stage, :func:`stage_params`'s copy otherwise) and the final norm on
    the last, each layer's norms (q/k norms, MLA's latent norms) and each MoE layer's router
    (E x d, whole on each rank) and shared-expert gate. vLLM's online FP8 (``Fp8Config``)
    quantizes ``LinearBase`` layers (``Fp8LinearMethod``) and ``FusedMoE`` experts
    (``Fp8MoEMethod``) only: ``VocabParallelEmbedding`` / ``ParallelLMHead`` and ``RMSNorm``
    keep the model dtype, and the router is built unquantized (vllm-project/vllm
    vllm/model_executor/models/qwen3_moe.py @002456df ``ReplicatedLinear(..., quant_config=
    None)``; deepseek_v2.py @002d6073 ``GateLinear``, no quant_config); SGLang's online FP8
    likewise (sgl-project/sglang python/sglang/srt/models/qwen3_moe.py @008af3a6: "The online
    Fp8/mxfp8 path keeps the gate in bf16"); a block-FP8 checkpoint (DeepSeek-V3 config.json
    ``quantization_config``) stores these parts in bf16 too. Biases, Gated DeltaNet norms and
    the vision tower are counted with the quantized weights."""
    a = arch_numbers(arch)
    if tp > a.n_kv_heads and not tp % a.n_kv_heads:  # one KV head per rank (shard.tp_shard)
        a = a._replace(n_kv_heads=tp)
    n = stage.dense_layers + stage.moe_layers
    n_attention = n - a.linear_layers * n // a.n_layers
    n_free = a.ffn_free_layers * n // a.n_layers  # Nemotron-H's FFN-free layers: one norm
    norm = g.params_norm(a)
    out = (n * a.norms_per_layer - n_free) * norm
    ln = 1 + a.norm_layernorm
    if a.mla:  # kv_a_layernorm, q_a_layernorm (whole on each rank)
        out += n_attention * (a.kv_lora_rank + a.qlora * a.q_lora_rank) * ln
    elif a.qk_norm:  # per head_dim, or over all heads' width split over TP (qk_norm_full)
        full = ceil_div((a.n_heads + a.n_kv_heads) * a.head_dim, tp)
        out += n_attention * (full if a.qk_norm_full else 2 * a.head_dim)
    if a.moe:
        out += stage.moe_layers * a.d_model * (a.n_experts + a.shared * a.shared_expert_gate)
    if stage.first:
        out += g.params_embedding(a, tp)
    if stage.last:
        tied_here = a.tie_embeddings and stage.first
        out += norm + (0 if tied_here else ceil_div(a.vocab, tp) * a.d_model)
    return int(out)


def unquantized_extra_bytes(arch: Any, tp: int, stage: PipelineStage, weight: int,
                            kept: int | None) -> int:  # fmt: skip
    """Bytes an engine holding its weights at ``weight`` bytes adds for the parts it keeps
    at ``kept`` bytes (:func:`unquantized_params`; ``Workload.unquantized_dtype``): 0 when
    ``kept`` is None or not wider."""
    if kept is None or kept <= weight:
        return 0
    return unquantized_params(arch, tp, stage) * (kept - weight)
