"""The Gated DeltaNet token mixer of a hybrid model's linear-attention layers in one rank's
training pass: what one such layer costs beyond the softmax-attention block
:func:`rlmcost.perf.step_pass._layer` prices for every layer.

A linear-attention layer (Qwen3-Next, Qwen3.5; :attr:`rlmcost.arch.Arch.linear_layers`) mixes
tokens with a Gated DeltaNet (Yang et al. 2024, arXiv:2412.06464) in place of attention. Its
pass on one rank, for the micro-batch's T tokens:

* **projections** (GEMMs, forward and the two backward GEMMs): in_proj_qkv d -> 2 H_k d_k +
  H_v d_v, in_proj_z d -> H_v d_v, in_proj_b and in_proj_a d -> H_v each, out_proj H_v d_v ->
  d (radixark/miles miles_plugins/models/qwen3_5.py ``Qwen3_5GatedDeltaNet`` at bb6f7dbd;
  THUDM/slime slime_plugins/models/qwen3_5.py at 624b824a, the same);
* **the chunked delta rule** (flash-linear-attention ``chunk_gated_delta_rule``,
  fla/ops/gated_delta_rule/chunk.py at v0.4.2, the version miles's docker/Dockerfile pins):
  memory-bound Triton kernels, priced by the bytes they move per token and value head
  (:func:`core_bytes_per_token_head`); the backward at twice the forward's bytes and kernels,
  as :mod:`rlmcost.perf.step_pass` prices every memory-bound kernel;
* **elementwise**: the causal conv over the q, k, v channels (fla ``ShortConvolution``),
  q and k repeated from H_k to H_v heads (``repeat_interleave``), the gated RMSNorm
  (fla ``FusedRMSNormGated``): each read and written once.

**Replicated over TP** (``StepOptions.linear_mixer_replicated``; ``Behaviour.
linear_mixer_tp_replicated``): slime's and miles's Megatron spec for Qwen3.5 builds the mixer
from plain ``nn.Linear`` inside ``HuggingfaceAttention`` (miles_plugins/models/hf_attention.py
at bb6f7dbd): under sequence parallelism it all-gathers the layer input over the TP group
(``gather_from_sequence_parallel_region(tensor_parallel_output_grad=False)``: its backward a
split, no reduce-scatter), runs the whole mixer, every head, on every TP rank, and splits the
output back (``scatter_to_sequence_parallel_region``: a local split, its backward an
all-gather). So each rank does the full mixer's work (widths not divided by P_t), and one
reduce-scatter of the forward and one of the backward are gone (without SP: the all-reduce of
each). Otherwise (Megatron-core's own GDN, an engine) the heads split over P_t as
:func:`rlmcost.parallel.shard.tp_shard` splits them.

The replicated mixer's parameters are whole on every rank in its memory too (weights,
gradients and optimizer states: ``parallel.memory.stage_params`` with
``linear_mixer_replicated``, which ``placement.group_own.GroupTasks.mixer_replicated`` passes
for the trainer's passes, so a CPU Adam steps them whole) and in its data-parallel gradient
reduce (:func:`rank_param_counts`: each TP rank's DP group reduces its own copy).

What the delta leaves out: the attention layers' output gate (``attn_output_gate``, q_proj d
-> 2 h d_h) is not priced by ``_layer`` either; the GPU optimizer step's shard
(``perf.data_parallel.optimizer_step_s``) still splits the mixers by P_t; with a materialized
(non-fused) attention kernel the subtracted attention core is the fused one's.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from rlmcost.choices import Head
from rlmcost.parallel.comm import Collective
from rlmcost.parallel.layout import Checkpointing
from rlmcost.perf.qkv_subshard import add_qkv_gather
from rlmcost.perf.selective_ac import SelectiveRecompute, attention_fwd_flops

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.parallel.layout import Layout
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.step_pass import StagePass, StepContext

CHUNK_TOKENS = 64
"""Tokens per chunk of fla's chunked delta rule: ``chunk_size=64`` in
``chunk_gated_delta_rule_fwd`` (fla/ops/gated_delta_rule/chunk.py at v0.4.2)."""

CORE_FWD_KERNELS = 8
"""Kernels of one forward of fla's ``chunk_gated_delta_rule`` with ``use_qk_l2norm_in_kernel``
(fla/ops/gated_delta_rule/chunk.py at v0.4.2): l2norm of q and of k, chunk_local_cumsum,
chunk_scaled_dot_kkt_fwd, solve_tril, recompute_w_u_fwd, chunk_gated_delta_rule_fwd_h,
chunk_fwd_o."""


def core_bytes_per_token_head(d_k: int, d_v: int, x: int, chunk: int = CHUNK_TOKENS) -> int:
    """Bytes the forward of fla's ``chunk_gated_delta_rule`` moves per token and value head,
    activations of ``x`` bytes, fp32 (4 B) where fla keeps fp32 (fla/ops/gated_delta_rule/
    chunk.py at v0.4.2, kernel by kernel):

    l2norm q and k (read, write): 4 d_k x; cumsum of the decay g: 2 x 4; kkt: k in, A
    [C] fp32 out: d_k x + 4 C; solve_tril: A fp32 in, A out: 4 C + C x; recompute_w_u: k, v,
    A in, w, u out: 2 d_k x + 2 d_v x + C x; fwd_h: k, w, u in, the chunk state h (d_k d_v /
    C per token) and v_new out: 2 d_k x + 2 d_v x + d_k d_v x / C; fwd_o: q, k, v_new, h in,
    o out: 2 d_k x + 2 d_v x + d_k d_v x / C.

    >>> core_bytes_per_token_head(128, 128, 2)  # Qwen3.5: 6.2 KB per token and value head
    6152
    """
    return (11 * d_k * x + 6 * d_v * x + 2 * 4 + 2 * 4 * chunk + 2 * chunk * x
            + 2 * d_k * d_v * x // chunk)  # fmt: skip


def _widths(arch: Arch, tp: int, replicated: bool) -> tuple[int, int, int, int]:
    """(H_k d_k, H_v d_v, H_v, H_k) on one rank: whole when replicated, else split by P_t."""
    r = 1 if replicated else tp
    hk, hv = int(arch.linear_key_heads) // r, int(arch.linear_value_heads) // r
    return hk * int(arch.linear_key_head_dim), hv * int(arch.linear_value_head_dim), hv, hk


def linear_mixer_delta(c: StepContext) -> StagePass:
    """One linear-attention layer's pass on the rank minus the attention block ``_layer``
    prices for it (module docstring): its projections and fused attention core out, the
    Gated DeltaNet's projections, chunked core and elementwise kernels in, and under
    replication the reduce-scatters (or all-reduces) the mixer does not run."""
    from rlmcost.parallel.shard import tp_shard
    from rlmcost.perf.fp8_train import linear_pricer
    from rlmcost.perf.head_dim_attention import timed_attention_flops
    from rlmcost.perf.step_pass import AttentionKernel, StagePass

    arch, lay, dev, opt = c.arch, c.layout, c.device, c.options
    t, T, x, d = lay.tp, c.tokens, c.workload.activation_dtype.bytes, int(arch.d_model)
    rep = opt.linear_mixer_replicated and t > 1
    kd, vd, hv, hk = _widths(arch, t, rep)
    dk, dv = int(arch.linear_key_head_dim), int(arch.linear_value_head_dim)
    out, lin = StagePass(), linear_pricer(c)  # TE Linear layers, FP8 under its recipe

    def gemm(m: int, n: int, k: int, sign: int) -> None:
        f, b, wf, wb = lin(m, n, k)
        out.fwd["gemm"] += sign * f
        out.bwd["gemm"] += sign * b
        out.fp8_weights_fwd_s += sign * wf
        out.fp8_weights_s += sign * wb
        out.flops += sign * 6 * m * n * k

    sh = tp_shard(arch, t)
    q, kv = int(sh.q_width), int(sh.kv_width)
    gemm(T, q + 2 * kv, d, -1)  # the attention block _layer priced
    gemm(T, d, q, -1)
    add_qkv_gather(c, out, -1)  # no QKV all-gather (a TP above the KV heads: perf.qkv_subshard)
    attn, fa2 = attention_fwd_flops(c), opt.attention is AttentionKernel.FLASH2
    timed = timed_attention_flops(c, attn)  # as _layer timed it (perf.head_dim_attention)
    out.fwd["attention"] -= dev.flash_attention_s(timed, False, opt.attention_dropout, fa2)
    out.bwd["attention"] -= dev.flash_attention_s(timed, True, opt.attention_dropout, fa2)
    out.flops -= 3 * attn
    for n in (2 * kd + vd, vd, hv, hv):  # in_proj_qkv, in_proj_z, in_proj_b, in_proj_a
        gemm(T, n, d, +1)
    gemm(T, d, vd, +1)  # out_proj
    core = T * hv * core_bytes_per_token_head(dk, dv, x)
    out.fwd["attention"] += dev.elementwise_s(core, CORE_FWD_KERNELS)
    out.bwd["attention"] += dev.elementwise_s(2 * core, 2 * CORE_FWD_KERNELS)
    core_flops = T * hv * 6 * dk * dv  # read, update, output of each d_k x d_v state
    out.flops += 3 * core_flops
    out.module_flops["attention"] = core_flops - attn  # what attention-core recompute reruns
    conv = 2 * kd + vd  # the conv reads and writes the q, k, v channels
    repeat = 2 * kd + 2 * hv * dk if hv != hk else 0  # q and k read, written at H_v heads
    elem = T * x * (2 * conv + repeat + 3 * vd)  # gated norm: o and z in, out
    out.fwd["elementwise"] += dev.elementwise_s(elem, 3)
    out.bwd["elementwise"] += dev.elementwise_s(2 * elem, 6)
    if rep:  # no reduce-scatter after the mixer, none for its input gradient (module doc)
        act = T * d * x
        kind, part = ((Collective.REDUCE_SCATTER, "sp") if lay.sp
                      else (Collective.ALL_REDUCE, "tp"))  # fmt: skip
        saved = c.comm(kind, act, t, ("tp",))
        out.fwd[part] -= saved
        out.bwd[part] -= saved
    return out


def add_linear_mixers(c: StepContext, stage: PipelineStage, out: StagePass) -> None:
    """Adds the stage's linear-attention layers' :func:`linear_mixer_delta` (their share of
    the stage's layers, ``Arch.linear_layers_of``) to ``out``, with the recomputation full
    checkpointing (the whole forward) or attention-core recomputation adds for it."""
    n = int(c.arch.linear_layers_of(stage.layers))
    if not n or c.arch.is_mla:
        return
    delta = linear_mixer_delta(c)
    rec_s, rec_flops = 0.0, 0
    ckpt, core = c.layout.ckpt, c.options.selective is SelectiveRecompute.ATTENTION_CORE
    if ckpt is Checkpointing.FULL:
        rec_s, rec_flops = delta.fwd_s, delta.flops // 3
    elif ckpt is Checkpointing.SELECTIVE and core:
        rec_s, rec_flops = delta.fwd["attention"], delta.module_flops["attention"]
    out.add(delta, n, rec_s, rec_flops)


def mixer_params(arch: Arch) -> int:
    """Parameters of one whole Gated DeltaNet mixer (transformers ``Qwen3_5GatedDeltaNet``;
    miles_plugins/models/qwen3_5.py at bb6f7dbd): in_proj_qkv, in_proj_z, in_proj_b, in_proj_a,
    out_proj, the depthwise conv's K weights per q, k, v channel, dt_bias and A_log per value
    head and the gated norm's d_v weights."""
    d, hv = int(arch.d_model), int(arch.linear_value_heads)
    kd = int(arch.linear_key_heads) * int(arch.linear_key_head_dim)
    vd = hv * int(arch.linear_value_head_dim)
    conv = int(arch.linear_conv_kernel) * (2 * kd + vd)
    return d * (2 * kd + vd) + d * vd + 2 * d * hv + vd * d + conv + 2 * hv + vd // hv


def rank_param_counts(c: StepContext, stage: PipelineStage) -> tuple[int, int]:
    """(dense, routed-expert) parameter elements one rank of ``stage`` holds and reduces over
    its data-parallel group: :func:`~rlmcost.perf.step_pass.stage_param_counts`, with
    the mixers whole under ``StepOptions.linear_mixer_replicated`` (module docstring;
    :func:`~rlmcost.parallel.breakdown.stage_params`, the memory model's count)."""
    from rlmcost.perf.step_pass import stage_param_counts

    if not c.options.linear_mixer_replicated or not c.arch.n_linear_layers:
        return stage_param_counts(c.arch, c.layout, stage)
    return _replicated_counts(c.arch, c.layout, stage)


@cache
def _replicated_counts(arch: Arch, layout: Layout, stage: PipelineStage) -> tuple[int, int]:
    from rlmcost.parallel.breakdown import stage_params

    p = stage_params(arch, layout, stage, Head.LM, linear_mixer_replicated=True)
    return p.dense, p.expert
