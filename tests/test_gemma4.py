"""Gemma 4 (gemma-4-31B, gemma-4-26B-A4B): full-attention layers of their own head width and KV
heads, values from the keys' projection (attention_k_eq_v).

``GEMMA4_CONFIGS`` are the text_config keys of google/gemma-4-31B-it and google/gemma-4-26B-A4B-it
(sources in rlmcost/specs/data/models.json); tests/test_registry_configs.py checks them against
the built-ins and against transformers' parameter counts. The numbers below are counted by
hand from transformers 5.24 ``Gemma4TextAttention`` (q_proj h d_h, k_proj h_kv d_h, v_proj
h_kv d_h or none, o_proj h d_h) and ``DynamicCache`` (keys and values per layer).
"""

from __future__ import annotations

import pytest

from rlmcost import blocks as bl
from rlmcost.choices import AttnCounting
from rlmcost.compiled import blocks as cb
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import tp_shard
from rlmcost.parallel.validate import check_layout
from rlmcost.perf.full_layers import full_layer_arch, kv_projections, layer_kinds
from rlmcost.specs import get_model
from rlmcost.specs.hf_config import spec_from_config


def _types(n: int) -> list[str]:
    return ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(n)]


_COMMON = dict(model_type="gemma4_text", vocab_size=262144, head_dim=256, global_head_dim=512,
               sliding_window=1024, max_position_embeddings=262144, attention_k_eq_v=True,
               hidden_size_per_layer_input=0, num_kv_shared_layers=0, use_double_wide_mlp=False,
               tie_word_embeddings=True, final_logit_softcapping=30.0)  # fmt: skip
GEMMA4_CONFIGS = {
    "gemma-4-31b": dict(_COMMON, hidden_size=5376, intermediate_size=21504, num_hidden_layers=60,
                        num_attention_heads=32, num_key_value_heads=16,
                        num_global_key_value_heads=4, enable_moe_block=False,
                        layer_types=_types(60)),  # fmt: skip
    "gemma-4-26b-a4b": dict(_COMMON, hidden_size=2816, intermediate_size=2112,
                            num_hidden_layers=30, num_attention_heads=16, num_key_value_heads=8,
                            num_global_key_value_heads=2, enable_moe_block=True, num_experts=128,
                            top_k_experts=8, moe_intermediate_size=704,
                            layer_types=_types(30)),  # fmt: skip
}

G31 = get_model("gemma-4-31b").arch()
G26 = get_model("gemma-4-26b-a4b").arch()


def test_hf_ids_and_shape():
    assert get_model("google/gemma-4-31B-it").name == "gemma-4-31b"
    assert get_model("google/gemma-4-26B-A4B-it").name == "gemma-4-26b-a4b"
    # 10 of 60 (5 of 30) layers are full: every sixth, transformers' layer_types
    assert (G31.n_full_layers, G31.n_sliding_layers) == (10, 50)
    assert (G26.n_full_layers, G26.n_sliding_layers) == (5, 25)


def test_parameters_by_hand():
    # one sliding layer of the 31B: q 5376 x 8192, k and v 5376 x 4096, o 8192 x 5376, q/k
    # norms 256 each; one full layer: q 5376 x 16384, k 5376 x 2048, no v, o 16384 x 5376,
    # q/k norms 512 each; FFN 3 x 5376 x 21504, 4 RMSNorms of 5376; embedding tied
    d = 5376
    sliding = d * 8192 + 2 * d * 4096 + 8192 * d + 2 * 256
    full = d * 16384 + d * 2048 + 16384 * d + 2 * 512
    rest = 3 * d * 21504 + 4 * d
    assert int(bl.params(G31)) == 50 * sliding + 10 * full + 60 * rest + 262144 * d + d
    assert int(bl.params(G31)) == 30_697_345_280  # transformers 5.24, Gemma4ForCausalLM (meta)
    # the model card's 25.2B total and 3.8B active (the per-expert scales left out)
    assert int(bl.params(G26)) + 30 * 128 == 25_233_141_760
    assert round(int(bl.params_active_per_token(G26)) / 1e9, 1) == 3.8


def test_kv_cache_per_token_by_hand():
    # a sliding layer caches keys and values of 16 heads of 256, a full layer of 4 heads of
    # 512 (both, though its values come from k_proj): 8192 and 4096 elements a position
    assert int(bl.memory_kv_cache(G31, 1)) == 50 * 2 * 16 * 256 + 10 * 2 * 4 * 512
    # past the window a sliding layer keeps W - 1 = 1023 positions, a full layer all of them
    t = 5000
    assert int(bl.memory_kv_cache(G31, t)) == 50 * 8192 * 1023 + 10 * 4096 * t
    assert int(bl.memory_kv_cache_bytes(G31, 1)) == 2 * 450_560  # bf16
    assert cb.memory_kv_cache(G31, t, 3) == int(bl.memory_kv_cache(G31, t, 3))


def test_full_layer_attention_uses_its_own_head_width():
    # a query at context c: 4 h d_h per key, 256-wide heads over min(c, W) keys in a sliding
    # layer, 512-wide over all c in a full one
    c = 3000
    expected = 50 * 4 * 32 * 256 * 1024 + 10 * 4 * 32 * 512 * c
    assert int(bl.work_attention_per_token(G31, c)) == expected
    # teacher-forced and rollout sums hold the same split
    s = 2048
    causal = 50 * 4 * 32 * 256 * (1024 * 1025 // 2 + (s - 1024) * 1024) \
        + 10 * 4 * 32 * 512 * s * (s + 1) // 2  # fmt: skip
    linear = int(bl.work_linear_per_token(G31)) + int(bl.work_head_per_token(G31))
    assert int(bl.work_forward(G31, 1, s, AttnCounting.CAUSAL)) == s * linear + causal
    steps = int(sum(bl.work_forward_per_token(G31, 100 + t) for t in range(1, 6)))
    prefill = int(bl.work_prefill(G31, 100))
    assert int(bl.work_rollout(G31, 100, 5)) == prefill + steps


def test_projection_flops_drop_v_in_full_layers():
    d = 5376
    sliding = d * 8192 + 2 * d * 4096 + 8192 * d
    full = d * 16384 + d * 2048 + 16384 * d
    ffn = 3 * d * 21504
    assert int(bl.work_linear_per_token(G31)) == 2 * (50 * sliding + 10 * full + 60 * ffn)


def test_compiled_blocks_agree():
    for arch in (G31, G26):
        assert cb.params(arch) == int(bl.params(arch))
        assert cb.work_rollout(arch, 700, 300) == int(bl.work_rollout(arch, 700, 300))


def test_existing_models_unchanged_when_full_layers_share_the_shape():
    # the new fields default off; setting them to the sliding layers' shape changes nothing
    g3 = get_model("gemma-3-27b").arch()
    assert (g3.full_head_dim, g3.full_kv_heads, g3.full_k_eq_v) == (0, 0, False)
    same = g3.with_(full_head_dim=g3.head_dim, full_kv_heads=g3.n_kv_heads)
    assert bl.params(same) == bl.params(g3)
    assert bl.work_rollout(same, 500, 700) == bl.work_rollout(g3, 500, 700)
    assert bl.memory_kv_cache(same, 4000) == bl.memory_kv_cache(g3, 4000)


def test_tp_shards_and_replicates_the_full_layers_kv_heads():
    sh = tp_shard(G31, 8)  # 16 sliding KV heads split, 4 full ones: one replicated per rank
    assert (sh.n_kv_heads, sh.full_kv_heads) == (2, 1)
    assert check_layout(G31, Layout(tp=8), replicate_kv=True) is not None
    # a TP degree that neither divides the full layers' KV heads nor is a multiple of them
    with pytest.raises(SpecError, match="full-attention layers' kv heads=3"):
        check_layout(G31.with_(full_kv_heads=3), Layout(tp=2), replicate_kv=True)


def test_step_model_prices_the_full_layers_as_their_own_kind():
    kinds = layer_kinds(G31, 60)
    assert [n for _, n in kinds] == [50, 10]
    full = full_layer_arch(G31)
    assert (int(full.q_width), int(full.kv_width), kv_projections(full)) == (16384, 2048, 1)
    assert kv_projections(kinds[0][0]) == 2 and kinds[0][0].sliding_window == 1024


def test_multimodal_config_loads_its_language_model():
    # the published checkpoints are gemma4 configs whose text_config is the language model
    cfg = {"model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"],
           "text_config": GEMMA4_CONFIGS["gemma-4-31b"], "vision_config": {"hidden_size": 1152}}
    spec = spec_from_config(cfg, name="gemma-4-31b")
    assert spec.arch() == G31
    assert any("vision" in n for n in spec.notes)


def test_nemo_rl_v2_worker_runs_automodels_gemma4_class_for_the_moe_only():
    # NeMo Automodel @24b47e85 registers Gemma4ForConditionalGeneration (gemma4_moe/model.py,
    # an MoEFSDPSyncMixin): expert parallelism is accepted for the 26B-A4B; the dense 31B keeps
    # transformers' layers ("Dense Gemma4 - keep vanilla HF model"), checkpointed as theirs
    from pathlib import Path

    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    ep16 = Path(__file__).parent / "data" / "frameworks" / \
        "nemo_rl_qwen3.5-35ba3b-automodel-ep16.yaml"  # fmt: skip
    q = import_nemo_rl(ep16, ["policy.model_name=google/gemma-4-26B-A4B-it"], 2048)
    assert dict(q.flags)["--ep"] == 16 and "--recompute-early-stop" in dict(q.flags)
    assert any("8 of 128 experts" in n for n in q.notes)
    q = import_nemo_rl(ep16, ["policy.model_name=google/gemma-4-31B-it",
                              "policy.dtensor_cfg.expert_parallel_size=1"], 2048)  # fmt: skip
    assert "--no-recompute-early-stop" in dict(q.flags)
    assert any("keeps transformers' dense layers" in n for n in q.notes)


@pytest.mark.parametrize("arch", [G31, G26], ids=["31b", "26b-a4b"])
def test_training_flop_formula_equals_the_symbolic_count(arch):
    # perf.train_step.model_flops_train (the step model's FLOPs, numeric) against
    # blocks.work_train with full attention: the full layers' shapes in both
    from rlmcost.perf.train_step import model_flops_train

    assert model_flops_train(arch, 3, 1500) == int(bl.work_train(arch, 3, 1500, AttnCounting.FULL))


def test_the_step_models_attention_follows_each_kind():
    # one micro-batch of one 4096-token sequence through the layers: the step model's FLOPs
    # (GEMMs 6 m n k, attention 3 x forward over the causal pairs), its sliding and full
    # layers priced as two kinds (perf.step_pass.stage_pass), equal the causal count of
    # blocks.work_train for the layers alone (no head: the last stage adds it)
    from dataclasses import replace

    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.step_options import StepOptions
    from rlmcost.perf.step_pass import StepContext, _layer
    from rlmcost.specs import get_hardware
    from rlmcost.specs.workload import Workload

    s, hw = 4096, get_hardware("h100-sxm")
    c = StepContext(arch=G31, layout=Layout(), seq=s, micro_batch=1, tokens=s, positions=s,
                    device=Device(hw), options=StepOptions(), workload=Workload(),
                    gpus_per_node=hw.gpus_per_node)  # fmt: skip
    flops = sum(n * _layer(replace(c, arch=kind), False).flops
                for kind, n in layer_kinds(G31, 60))  # fmt: skip
    body = bl.work_train(G31, 1, s, AttnCounting.CAUSAL) - 3 * s * bl.work_head_per_token(G31)
    assert flops == int(body)


@pytest.mark.parametrize("arch", [G31, G26], ids=["31b", "26b-a4b"])
def test_stage_weights_hold_the_full_layers_own_widths(arch):
    # one rank holding the whole model holds transformers' count (tests/test_registry_configs.py:
    # Gemma4ForCausalLM on the meta device, the 26B-A4B's routers' per-expert scales aside);
    # over stages the full layers' extra widths follow their count in proportion (one in six);
    # both memory models agree on every stage
    from rlmcost.blocks.params import params_full_attention_delta
    from rlmcost.choices import Head
    from rlmcost.parallel import breakdown as bd
    from rlmcost.parallel import memory as pm
    from rlmcost.parallel.shard import stages

    whole = stages(arch, Layout())[0]
    p = pm.stage_params(arch, Layout(), whole, Head.LM)
    assert p.dense + p.expert == int(bl.params(arch))
    assert bd.stage_params(arch, Layout(), whole, Head.LM) == p
    for tp, pp in ((2, 2), (4, 5), (8, 3)):
        layout = Layout(tp=tp, pp=pp)
        for stage in stages(arch, layout):
            got = pm.stage_params(arch, layout, stage, Head.LM)
            assert bd.stage_params(arch, layout, stage, Head.LM) == got
            base = pm.stage_params(arch.with_(full_head_dim=0, full_kv_heads=0,
                                              full_k_eq_v=False), layout, stage, Head.LM)
            n_full = int(arch.n_full_layers) * stage.layers // int(arch.n_layers)
            delta = int(params_full_attention_delta(tp_shard(arch, tp)))
            assert got.dense - base.dense == n_full * delta


def test_saved_activations_hold_the_full_layers_own_widths():
    # without recomputation a full layer keeps its wider queries, attention output and its
    # own K/V (parallel.activations of Arch.full_view): 31B, one rank, 10 full layers of 60;
    # the compiled twin agrees.
    # By hand, per token: bf16 q, q-norm input and attention output at 32 x 512 not 32 x 256;
    # k, k-norm input and v at 4 x 512 not 16 x 256; the k-norm's fp32 rstd for 4 heads not 16
    from rlmcost.compiled import memory as cm
    from rlmcost.parallel import memory as pm
    from rlmcost.parallel.activations import saved_bytes_per_token_layer as saved
    from rlmcost.parallel.layout import Checkpointing

    flat = G31.with_(full_head_dim=0, full_kv_heads=0, full_k_eq_v=False)
    per_layer = int(saved(G31.full_view()) - saved(G31))
    assert per_layer == 2 * 3 * (32 * (512 - 256) - (16 * 256 - 4 * 512)) - 4 * (16 - 4)
    # 4,096 tokens: every full layer's extra kept; under full recomputation only the one layer
    # rebuilt during the backward, which a full layer sets
    for ckpt, more in ((Checkpointing.NONE, 4096 * 10 * per_layer),
                       (Checkpointing.FULL, 4096 * per_layer)):
        layout = Layout(ckpt=ckpt)
        got = pm.memory_per_stage(G31, layout, pm.Mode.TRAIN, 1, 4096)[0].activations
        base = pm.memory_per_stage(flat, layout, pm.Mode.TRAIN, 1, 4096)[0].activations
        assert got - base == more
        assert cm.memory_per_stage(G31, layout, "train", 1, 4096)[0].activations == got
