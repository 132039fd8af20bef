"""Check a layout against a model and a GPU count; each error names the factors and a fix."""

from __future__ import annotations

from rlmcost.arch import Arch
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, PipelineSchedule, ZeroStage
from rlmcost.parallel.moe_capacity import check_capacity
from rlmcost.parallel.pipeline_split import (
    layout_note,
    split_problem,
    stage_layer_counts,
    uses_megatron_split,
)


def divisors(x: int) -> list[int]:
    """Positive divisors of ``x``, ascending."""
    return [i for i in range(1, x + 1) if x % i == 0]


def _common_divisors(*xs: int) -> list[int]:
    return [i for i in divisors(min(xs)) if all(x % i == 0 for x in xs)]


def tp_widths(arch: Arch) -> tuple[int, ...]:
    """The widths a training TP degree must divide (:func:`check_layout`'s rule, Megatron-LM's
    split): the query and key/value heads and the FFN widths (a MoE model's expert and shared
    expert widths, its dense layers' FFN where it has some)."""
    out = [int(arch.n_heads), int(arch.n_kv_heads)]
    if not arch.is_moe or arch.first_dense_layers:
        out.append(int(arch.d_ff))
    if arch.is_moe:
        out.append(int(arch.d_expert))
        if arch.n_shared_experts:
            out.append(int(arch.d_shared_expert))
    return tuple(out)


def _show(xs: list[int], limit: int = 8) -> str:
    return ", ".join(map(str, xs[:limit])) + (", ..." if len(xs) > limit else "")


KV_SUBSHARD_COMMIT = "f7dfb99795"
"""Megatron-core's commit that lets a training TP degree be a multiple of the KV heads
(NVIDIA/Megatron-LM f7dfb99795, "Support TP greater than num_kv_heads by supporting QKV
activation sub-sharding (#2565)", 2025-12-06; first release core_v0.16.0): ``TransformerConfig.
__post_init__`` accepts ``num_query_groups`` a multiple or a divisor of the TP size, and
``SelfAttention.get_query_key_value_tensors`` (megatron/core/transformer/attention.py, the same
at d98e8a64dd) all-gathers ``mixed_qkv`` over the TP group when ``num_query_groups`` < TP
(:func:`rlmcost.parallel.comm.qkv_gather_elements_per_token`)."""


def what_tp(tp: int, layout: Layout) -> str:
    """``tp=N``, or the attention TP of SGLang's data-parallel attention."""
    return f"tp={tp}" if tp == layout.tp else \
        f"attention tp={tp} (tp {layout.tp} / data-parallel attention {layout.attention_dp})"


def kv_subsharded(arch: Arch, tp: int) -> bool:
    """Whether a Megatron-core trainer at TP ``tp`` sub-shards the QKV activations of
    ``arch`` (:data:`KV_SUBSHARD_COMMIT`): more TP ranks than KV heads, a multiple of them.

    >>> from rlmcost.specs import get_model
    >>> a = get_model("llama-3.1-70b").arch()
    >>> kv_subsharded(a, 8), kv_subsharded(a, 16), kv_subsharded(a, 12)
    (False, True, False)
    """
    h_kv = int(arch.n_kv_heads)
    return tp > h_kv and tp % h_kv == 0


def subshard_note(tp: int, h: int, h_kv: int) -> str:
    """The note of a training TP ``tp`` above the ``h_kv`` KV heads (:func:`kv_subsharded`)."""
    return (f"tp={tp} > kv heads={h_kv}: Megatron-core's QKV activation sub-sharding "
            f"(Megatron-LM {KV_SUBSHARD_COMMIT}, core 0.16+): the fused QKV projection stays "
            "split over the TP ranks, each attention layer all-gathers its output over the TP "
            "group (a reduce-scatter backward; rlmcost.perf.qkv_subshard) and each rank "
            f"attends with one KV head and {h // tp} query heads")


def attention_tp(layout: Layout) -> int:
    """The ranks that split each attention layer's heads: P_t / P_a under SGLang's
    data-parallel attention (``compute_dp_attention_world_info``, python/sglang/srt/layers/
    dp_attention.py: ``attn_tp_size = tp_size // dp_size``), else P_t; a SpecError when P_a
    does not divide P_t (rlmcost takes only the even split).

    >>> attention_tp(Layout(tp=8, attention_dp=8)), attention_tp(Layout(tp=8))
    (1, 8)
    """
    n = layout.attention_dp
    if not isinstance(n, int) or n < 1 or layout.tp % n:
        raise SpecError(f"data-parallel attention {n} must be a positive divisor of the "
                        f"engine's tp={layout.tp} (SGLang's attention TP is tp_size // dp_size)")
    return layout.tp // n


def check_layout(
    arch: Arch, layout: Layout, n_gpus: int | None = None, replicate_kv: bool = False,
    subshard_kv: bool = True,
) -> list[str]:
    """Raise :class:`SpecError` for a layout that cannot run ``arch``; return notes (e.g. an
    uneven pipeline split) for one that can.

    Rules: degrees are positive integers and P_d P_t P_p P_c is the GPU count (EP is folded
    inside it, :mod:`rlmcost.parallel.layout`); TP divides the query
    heads and the FFN widths and divides the key/value heads (Megatron-LM's split) or is a
    multiple of them: an inference engine (``replicate_kv``) then holds one replicated KV head
    per rank (vLLM), a trainer is Megatron-core's, which since :data:`KV_SUBSHARD_COMMIT`
    sub-shards the QKV activations (rlmcost models Megatron-core at d98e8a64dd; a Hugging Face /
    FSDP trainer keeps the rule that TP divides the KV heads:
    :func:`rlmcost.placement.kv_subshard.check_kv_subshard`); ``subshard_kv`` False keeps that
    rule here too (``placement.inputs.auto_tp``'s preference); PP stages each get a layer
    (an uneven split is allowed and stated); interleaving needs L divisible by P_p v;
    Megatron-core's split options have their own rules (``pipeline_split.split_problem``); EP needs
    a MoE model and divides its experts; expert TP divides the expert width, and ETP P_e
    divides P_t P_c P_d (Megatron-core, ``parallel_state.initialize_model_parallel``).
    """
    notes: list[str] = []
    degrees = {"dp": layout.dp, "tp": layout.tp, "pp": layout.pp, "cp": layout.cp}
    others = {"ep": layout.ep, "etp": layout.expert_tp, "micro_batch": layout.micro_batch}
    for name, value in {**degrees, **others}.items():
        if not isinstance(value, int) or value < 1:
            raise SpecError(f"{name}={value} must be a positive integer (1 = off)")
    if layout.virtual_stages < 1:
        raise SpecError(f"virtual_stages={layout.virtual_stages} must be >= 1")
    if n_gpus is not None and layout.n_gpus != n_gpus:
        product = "*".join(str(v) for v in degrees.values())
        rest = layout.tp * layout.pp * layout.cp
        fix = (
            f"try --dp {n_gpus // rest}"
            if n_gpus % rest == 0
            else f"tp*pp*cp={rest} must divide {n_gpus}"
        )
        raise SpecError(
            f"dp*tp*pp*cp = {product} = {layout.n_gpus} but --gpus is {n_gpus} "
            f"(EP is folded inside dp*tp*cp); {fix}"
        )
    h, h_kv = int(arch.n_heads), int(arch.n_kv_heads)
    tp = attention_tp(layout)  # SGLang's DP attention: the heads split over tp / P_a
    beyond = kv_subsharded(arch, tp) and (replicate_kv or subshard_kv)
    if h % tp or (h_kv % tp and not beyond):
        why = (
            f"without Megatron-core's QKV sub-sharding ({KV_SUBSHARD_COMMIT}) training TP "
            f"splits the kv heads, so tp must divide kv heads={h_kv}; "
            if h % layout.tp == 0 and layout.tp % h_kv == 0
            else ""
        )
        what = f"tp={tp}" if tp == layout.tp else \
            f"attention tp={tp} (tp {layout.tp} / data-parallel attention {layout.attention_dp})"
        raise SpecError(
            f"{what} must divide heads={h} and kv heads={h_kv}; {why}"
            f"try one of {_show(_common_divisors(h, h_kv))}"
        )
    full_kv = int(arch.full_kv_heads) if int(arch.full_head_dim) else h_kv  # Gemma 4's full ones
    if full_kv % tp and tp % full_kv:
        raise SpecError(f"{what_tp(tp, layout)} must divide the full-attention layers' kv "
                        f"heads={full_kv} or be a multiple of them; try one of "
                        f"{_show(_common_divisors(h, h_kv, full_kv))}")
    if beyond and replicate_kv:
        notes.append(
            f"tp={tp} > kv heads={h_kv}: each rank holds one KV head, every head "
            f"replicated on {tp // h_kv} ranks (vLLM), so the KV cache per rank does not "
            "shrink below one head"
        )
    elif beyond:
        notes.append(subshard_note(tp, h, h_kv))
    widths = {"d_ff": int(arch.d_ff)} if not arch.is_moe or arch.first_dense_layers else {}
    if arch.is_moe:
        widths["d_expert"] = int(arch.d_expert)
        if arch.n_shared_experts:
            widths["d_shared_expert"] = int(arch.d_shared_expert)
    for name, width in widths.items():
        if width % layout.tp:
            raise SpecError(
                f"tp={layout.tp} must divide {name}={width}; "
                f"try one of {_show(_common_divisors(h, h_kv, width))}"
            )
    n_layers = int(arch.n_layers)
    if layout.pp > n_layers:
        raise SpecError(
            f"pp={layout.pp} exceeds the {n_layers} layers; use pp <= {n_layers}, "
            f"e.g. one of {_show([x for x in divisors(n_layers) if x > 1])}"
        )
    megatron_split = uses_megatron_split(layout)  # Megatron-core's uneven split options
    problem = split_problem(n_layers, layout)
    if problem:
        raise SpecError(problem)
    if megatron_split and layout.pp > 1:
        counts = stage_layer_counts(n_layers, layout)
        notes.append(f"Megatron-core's pipeline split{layout_note(layout)}: {counts} layers "
                     "per rank, the embedding on the first, the loss on the last")  # fmt: skip
    if n_layers % layout.pp and not megatron_split:
        base, extra = divmod(n_layers, layout.pp)
        notes.append(
            f"uneven pipeline split: {n_layers} layers over pp={layout.pp} gives {extra} "
            f"stage(s) of {base + 1} and {layout.pp - extra} of {base} layers"
        )
    v = layout.virtual_stages
    if v > 1:
        if layout.schedule is not PipelineSchedule.INTERLEAVED:
            raise SpecError(
                f"virtual_stages={v} needs --schedule interleaved (got {layout.schedule}; "
                "a deployment file's train.schedule: interleaved, or the RL commands' "
                "--virtual-stages, which sets it)"
            )
        if layout.pp == 1:  # Megatron-core's initialize_model_parallel refuses it
            raise SpecError(f"virtual_stages={v} needs pp > 1 (a virtual pipeline splits "
                            "each pipeline rank's layers); use --pp 2 or more, or v=1")  # fmt: skip
        if n_layers % (layout.pp * v) and not megatron_split:
            ok = (
                [x for x in divisors(n_layers // layout.pp) if x > 1]
                if not n_layers % layout.pp
                else []
            )
            raise SpecError(
                f"interleaving needs layers={n_layers} divisible by pp*v={layout.pp}*{v}; "
                + (f"try v in {_show(ok)}" if ok else "choose pp dividing the layers")
            )
    if layout.ep > 1:
        if not arch.is_moe:
            raise SpecError(f"ep={layout.ep} needs a MoE model, {arch.name} is dense; use ep=1")
        n_exp = int(arch.n_experts)
        if n_exp % layout.ep:
            raise SpecError(
                f"ep={layout.ep} must divide the {n_exp} experts; "
                f"try one of {_show(divisors(n_exp))}"
            )
    check_expert_grid(arch, layout)
    check_capacity(layout)  # its note: perf.moe_notes (train_step_time's notes)
    check_zero_shard(layout)
    return notes


def check_zero_shard(layout: Layout) -> None:
    """SpecError unless hybrid sharding's P_z (``Layout.zero_shard``) is at least P_d P_c
    (full sharding) or a divisor of the P_d P_c ranks that replicate the dense parameters
    (FSDP's 2-D mesh (replicas, P_z), verl ``create_device_mesh``) that leaves each routed
    expert's expert-DP group a whole number of ranks per shard group. Under ZeRO 0 nothing
    is sharded and P_z has no effect."""
    z = layout.zero_shard
    if z is None or layout.zero is ZeroStage.NONE:
        return
    ranks = layout.dp * layout.cp
    if not isinstance(z, int) or z < 1 or (z < ranks and ranks % z):
        raise SpecError(
            f"zero_shard={z} must divide dp*cp = {layout.dp}*{layout.cp} = {ranks} (the ranks "
            f"that replicate the parameters); use one of {_show(divisors(ranks), 12)}"
        )
    if layout.expert_dp % layout.zero_replicas:
        ok = [x for x in divisors(ranks) if layout.expert_dp % (ranks // x) == 0]
        raise SpecError(
            f"zero_shard={z} leaves {layout.zero_replicas} replicas, which must divide the "
            f"expert-DP group of {layout.expert_dp} ranks; use one of {_show(ok, 12)}"
        )


def check_expert_grid(arch: Arch, layout: Layout) -> None:
    """SpecError unless expert TP divides the expert width and ETP * EP divides the
    tp*cp*dp ranks of a pipeline stage (Megatron-core: ``world_size`` divisible by
    ``expert_tensor_parallel_size * expert_model_parallel_size * pipeline_model_parallel_size``,
    ``parallel_state.initialize_model_parallel``)."""
    etp, ep = layout.expert_tp, layout.ep
    if not arch.is_moe:
        return
    width = int(arch.d_expert)
    if width % etp:
        raise SpecError(
            f"etp={etp} (expert TP{'; unset, it is tp' if layout.etp is None else ''}) must "
            f"divide d_expert={width}; set --etp to one of {_show(divisors(width))}"
        )
    ranks = layout.tp * layout.cp * layout.dp
    if ranks % (etp * ep):
        unit = layout.dp_unit
        hint = "; or --etp 1 (NeMo RL, slime)" if etp > 1 and ranks % ep == 0 else ""
        raise SpecError(
            f"etp*ep = {etp}*{ep} must divide tp*cp*dp = {layout.tp}*{layout.cp}*{layout.dp} "
            f"= {ranks} (Megatron folds EP inside DP x TP x CP"
            f"{'; etp defaults to tp' if layout.etp is None else ''}); "
            f"use dp a multiple of {unit}{hint}"
        )
