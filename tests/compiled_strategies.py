"""Hypothesis strategies shared by the compiled-engine tests: models and layouts.

Models are built-in ones (dense, GQA, MoE: Mixtral, Qwen3-MoE, GPT-2 with biases, LayerNorm,
tied and learned positions; sliding windows: Mistral-7B-v0.1, Gemma-2-2B) and synthetic ones
that switch on what no built-in has (shared experts with a gate, leading dense layers, qk-norm
with biases, a plain-FFN MoE, latent attention with experts and a window on some layers).
"""

from __future__ import annotations

from itertools import pairwise

from hypothesis import strategies as st

from rlmcost.choices import FfnKind, NormKind
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage
from rlmcost.specs import ModelSpec, get_model

BUILT_IN = [
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-2-7b",
    "qwen2.5-7b",
    "gpt-2",
    "mixtral-8x7b",
    "qwen3-30b-a3b",
    "mistral-7b",  # sliding window 4096, every layer
    "gemma-2-2b",  # sliding window 4096 on 13 of 26 layers
]

SYNTHETIC = [
    ModelSpec(
        name="moe-shared-gated", n_layers=6, d_model=256, d_ff=1024, n_heads=8, n_kv_heads=4,
        head_dim=32, vocab=1001, n_experts=8, top_k=2, d_expert=128, n_shared_experts=2,
        d_shared_expert=256, shared_expert_gate=True, first_dense_layers=2, qkv_bias=True,
    ),
    ModelSpec(
        name="moe-plain-layernorm", n_layers=5, d_model=192, d_ff=768, n_heads=6, n_kv_heads=6,
        head_dim=32, vocab=777, ffn_kind=FfnKind.PLAIN, norm=NormKind.LAYERNORM, n_experts=4,
        top_k=1, d_expert=96, mlp_bias=True, out_bias=True, tie_embeddings=True,
        n_positions=512, first_dense_layers=1,
    ),
    ModelSpec(
        name="dense-qknorm-tied", n_layers=7, d_model=128, d_ff=384, n_heads=4, n_kv_heads=2,
        head_dim=48, vocab=503, qk_norm=True, qkv_bias=True, tie_embeddings=True,
    ),
    ModelSpec(
        name="mla-moe-window", n_layers=6, d_model=128, d_ff=256, n_heads=4, n_kv_heads=4,
        head_dim=24, vocab=301, q_lora_rank=32, kv_lora_rank=16, qk_nope_head_dim=16,
        qk_rope_head_dim=8, v_head_dim=12, n_experts=4, top_k=2, d_expert=64,
        first_dense_layers=1, sliding_window=37, full_attention_layers=2,
    ),
]  # fmt: skip


def spec(name_or_spec: str | ModelSpec) -> ModelSpec:
    return name_or_spec if isinstance(name_or_spec, ModelSpec) else get_model(name_or_spec)


models = st.sampled_from([*BUILT_IN, *SYNTHETIC]).map(spec)


@st.composite
def layouts(draw: st.DrawFn, model: ModelSpec) -> Layout:
    """A layout drawn from small degrees; may be invalid for ``model`` (filter with
    ``check_layout``)."""
    schedule = draw(st.sampled_from(list(PipelineSchedule)))
    pp = draw(st.sampled_from([1, 1, 2, 3, 4]))
    v = draw(st.sampled_from([1, 2])) if schedule is PipelineSchedule.INTERLEAVED else 1
    return Layout(
        dp=draw(st.sampled_from([1, 2, 3, 8])),
        tp=draw(st.sampled_from([1, 2, 4, 8])),
        pp=pp,
        cp=draw(st.sampled_from([1, 1, 2])),
        ep=draw(st.sampled_from([1, 2, 4])) if model.is_moe else 1,
        etp=draw(st.sampled_from([None, None, 1, 2])) if model.is_moe else None,
        sp=draw(st.booleans()),
        zero=draw(st.sampled_from(list(ZeroStage))),
        ckpt=draw(st.sampled_from(list(Checkpointing))),
        micro_batch=draw(st.sampled_from([1, 2, 3, 8])),
        schedule=schedule,
        virtual_stages=v,
        **draw(pipeline_splits(model.n_layers, pp * v)),
    )


@st.composite
def pipeline_splits(draw: st.DrawFn, n_layers: int = 1, stages: int = 1) -> dict:
    """Megatron-core's split options (``parallel.pipeline_split``), off in most draws; may be
    invalid for the layout (``check_layout`` filters). A layout string places ``n_layers``
    over ``stages`` = pp x v virtual stages at random cut points (empty stages allowed)."""
    kind = draw(st.sampled_from(["even", "even", "even", "slots", "ends", "layout"]))
    if kind == "layout":
        cuts = sorted(draw(st.lists(st.integers(0, n_layers), min_size=stages - 1,
                                    max_size=stages - 1)))  # fmt: skip
        edges = [0, *cuts, n_layers]
        parts = ["t" * (b - a) for a, b in pairwise(edges)]
        mtp = draw(st.booleans()) and stages > 1  # an MTP layer before the loss
        return {"pp_layout": "E" + "|".join(parts) + ("m" if mtp else "") + "L"}
    if kind == "slots":
        embedding, loss = draw(st.sampled_from([(True, False), (False, True), (True, True)]))
        return {"pp_embedding_slot": embedding, "pp_loss_slot": loss}
    if kind == "ends":
        first, last = draw(st.sampled_from([(1, None), (None, 1), (2, 1), (1, 2), (3, 2)]))
        return {"pp_first_layers": first, "pp_last_layers": last}
    return {}
