"""Gemma 4 E2B / E4B: per-layer input embeddings (PLE), layers that reuse earlier keys and values,
E2B's double-wide MLPs.

``E_CONFIGS`` are the text_config keys of google/gemma-4-E2B-it and google/gemma-4-E4B-it
(sources in rlmcost/specs/data/models.json). The numbers below are counted by hand from
transformers 5.24 ``modeling_gemma4.py``: ``Gemma4TextModel`` (embed_tokens_per_layer V_p x L p,
per_layer_model_projection d x L p, per_layer_projection_norm p), ``Gemma4TextDecoderLayer``
(per_layer_input_gate d x p, per_layer_projection p x d, post_per_layer_input_norm d),
``Gemma4TextAttention`` (a shared layer: q_proj, q_norm, o_proj only) and ``Gemma4TextMLP``
(2 d_ff wide in a shared layer with use_double_wide_mlp). The parameter totals are
transformers' own ``Gemma4ForCausalLM`` on the meta device.
"""

from __future__ import annotations

import pytest

from rlmcost import blocks as bl
from rlmcost.choices import AttnCounting
from rlmcost.compiled import blocks as cb
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout
from rlmcost.perf.full_layers import kv_projections, layer_kinds
from rlmcost.specs import get_model
from rlmcost.specs.hf_config import spec_from_config

_E = dict(model_type="gemma4_text", vocab_size=262144, head_dim=256, global_head_dim=512,
          sliding_window=512, max_position_embeddings=131072, attention_k_eq_v=False,
          hidden_size_per_layer_input=256, vocab_size_per_layer_input=262144,
          enable_moe_block=False, tie_word_embeddings=True, final_logit_softcapping=30.0,
          num_attention_heads=8)  # fmt: skip
E_CONFIGS = {
    "gemma-4-e2b": dict(_E, hidden_size=1536, intermediate_size=6144, num_hidden_layers=35,
                        num_key_value_heads=1, num_kv_shared_layers=20, use_double_wide_mlp=True,
                        layer_types=(["sliding_attention"] * 4 + ["full_attention"]) * 7),
    "gemma-4-e4b": dict(_E, hidden_size=2560, intermediate_size=10240, num_hidden_layers=42,
                        num_key_value_heads=2, num_kv_shared_layers=18, use_double_wide_mlp=False,
                        layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 7),
}  # fmt: skip
#: transformers 5.24, Gemma4ForCausalLM(Gemma4TextConfig(**E_CONFIGS[name])) on the meta device
TRANSFORMERS_PARAMS = {"gemma-4-e2b": 4_628_569_344, "gemma-4-e4b": 7_463_013_376}

E2B = get_model("gemma-4-e2b").arch()
E4B = get_model("gemma-4-e4b").arch()


def test_hf_ids_and_built_ins_match_the_configs():
    assert get_model("google/gemma-4-E2B-it").name == "gemma-4-e2b"
    assert get_model("google/gemma-4-E4B-it").name == "gemma-4-e4b"
    for name, cfg in E_CONFIGS.items():
        spec = spec_from_config({"model_type": "gemma4", "text_config": cfg}, name=name)
        assert spec.arch() == get_model(name).arch()
    # E2B: layers 15-34 shared, 4 of them full (19, 24, 29, 34); E4B: 24-41, 3 full
    assert (E2B.kv_shared_layers, E2B.kv_shared_full_layers, E2B.n_full_layers) == (20, 4, 7)
    assert (E4B.kv_shared_layers, E4B.kv_shared_full_layers, E4B.n_full_layers) == (18, 3, 7)


def _by_hand(d, ff, kv, n, shared, shared_full, wide) -> int:
    p, v, dh, df = 256, 262144, 256, 512
    sliding_own = 8 * dh * d + 2 * d * kv * dh + 8 * dh * d + 2 * dh  # q, k, v, o, q/k norms
    full_own = 8 * df * d + 2 * d * kv * df + 8 * df * d + 2 * df
    sliding_shared = 8 * dh * d + 8 * dh * d + dh  # q, o, q norm
    full_shared = 8 * df * d + 8 * df * d + df
    n_full = 7
    attn = ((n - n_full - (shared - shared_full)) * sliding_own + (n_full - shared_full)
            * full_own + (shared - shared_full) * sliding_shared + shared_full * full_shared)
    ffn = 3 * d * ff * n + (3 * d * ff * shared if wide else 0)
    layer_rest = n * (5 * d + 2 * d * p)  # 4 RMSNorms + post_per_layer_input_norm, gate, proj
    ple = v * n * p + d * n * p + p  # table, model projection, its norm
    return attn + ffn + layer_rest + ple + v * d + d  # tied embedding, final norm


@pytest.mark.parametrize("name,arch", [("gemma-4-e2b", E2B), ("gemma-4-e4b", E4B)])
def test_parameters_equal_transformers(name, arch):
    assert int(bl.params(arch)) == TRANSFORMERS_PARAMS[name]
    assert cb.params(arch) == TRANSFORMERS_PARAMS[name]


def test_parameters_by_hand():
    assert int(bl.params(E2B)) == _by_hand(1536, 6144, 1, 35, 20, 4, True)
    assert int(bl.params(E4B)) == _by_hand(2560, 10240, 2, 42, 18, 3, False)
    # the model card's effective sizes: all but the per-layer table (2.3B; 4.5B within 3 %)
    assert round((int(bl.params(E2B)) - 262144 * 35 * 256) / 1e9, 1) == 2.3


def test_kv_cache_shared_layers_hold_none():
    # E2B: of 28 sliding layers 12 own a cache (1 KV head of 256, keys and values: 512 a
    # position), of 7 full layers 3 (1 head of 512: 1024 a position)
    assert int(bl.memory_kv_cache(E2B, 1)) == 12 * 512 + 3 * 1024
    t = 5000  # past the 512 window: a sliding layer keeps 511 positions
    assert int(bl.memory_kv_cache(E2B, t)) == 12 * 512 * 511 + 3 * 1024 * t
    # E4B: 35 - 15 = 20 sliding, 7 - 3 = 4 full layers with 2 KV heads
    assert int(bl.memory_kv_cache(E4B, t)) == 20 * 1024 * 511 + 4 * 2048 * t
    assert cb.memory_kv_cache(E4B, t, 3) == int(bl.memory_kv_cache(E4B, t, 3))


def test_projection_flops_by_hand():
    # one token: 2 x every weight it multiplies; a shared layer has q and o only, E2B's a
    # 2 x 6144-wide FFN; the PLE path 3 x 35 x 1536 x 256 (model projection + gate + proj)
    d, n = 1536, 35
    sliding = 8 * 256 * d * 2 + 2 * d * 256
    full = 8 * 512 * d * 2 + 2 * d * 512
    s_shared, f_shared = 8 * 256 * d * 2, 8 * 512 * d * 2
    ffn = 3 * d * 6144 * (n + 20)
    weights = 12 * sliding + 3 * full + 16 * s_shared + 4 * f_shared + ffn + 3 * n * d * 256
    assert int(bl.work_linear_per_token(E2B)) == 2 * weights
    # attention is unchanged: a shared layer's queries still attend (to the shared keys)
    c = 3000
    assert int(bl.work_attention_per_token(E2B, c)) == \
        28 * 4 * 8 * 256 * 512 + 7 * 4 * 8 * 512 * c  # fmt: skip


def test_compiled_blocks_agree():
    for arch in (E2B, E4B):
        assert cb.work_rollout(arch, 700, 300) == int(bl.work_rollout(arch, 700, 300))
        assert cb.work_train(arch, 2, 900) == int(bl.work_train(arch, 2, 900))


def test_other_models_unchanged():
    g31 = get_model("gemma-4-31b").arch()
    assert (g31.ple_dim, g31.kv_shared_layers, g31.kv_shared_wide_ffn) == (0, 0, False)
    assert int(bl.params(g31)) == 30_697_345_280  # transformers 5.24 (tests/test_gemma4.py)
    assert layer_kinds(g31, 60)[0][1] == 50


def test_step_model_kinds_and_flops():
    # four kinds: own sliding / full, shared sliding / full (no k/v projection, E2B's wide FFN)
    kinds = layer_kinds(E2B, 35)
    assert [n for _, n in kinds] == [12, 3, 16, 4]
    assert [kv_projections(k) for k, _ in kinds] == [2, 2, 0, 0]
    assert [int(k.d_ff) for k, _ in kinds] == [6144, 6144, 12288, 12288]
    from dataclasses import replace

    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.step_options import StepOptions
    from rlmcost.perf.step_pass import StepContext, _layer
    from rlmcost.perf.train_step import model_flops_train
    from rlmcost.specs import get_hardware
    from rlmcost.specs.workload import Workload

    s, hw = 2048, get_hardware("h100-sxm")
    c = StepContext(arch=E2B, layout=Layout(), seq=s, micro_batch=1, tokens=s, positions=s,
                    device=Device(hw), options=StepOptions(), workload=Workload(),
                    gpus_per_node=hw.gpus_per_node)  # fmt: skip
    flops = sum(n * _layer(replace(c, arch=k), False).flops for k, n in kinds)
    body = bl.work_train(E2B, 1, s, AttnCounting.CAUSAL) - 3 * s * bl.work_head_per_token(E2B)
    assert flops == int(body)
    for arch in (E2B, E4B):
        assert model_flops_train(arch, 3, 1500) == \
            int(bl.work_train(arch, 3, 1500, AttnCounting.FULL))  # fmt: skip


def test_bad_sharing_is_refused():
    bad = dict(E_CONFIGS["gemma-4-e2b"], num_kv_shared_layers=35)
    with pytest.raises(SpecError, match="num_kv_shared_layers=35"):
        spec_from_config(bad, name="bad")
    # the shared tail holds full layers but no earlier full layer precedes it
    types = ["sliding_attention"] * 30 + ["full_attention"] * 5
    with pytest.raises(SpecError, match="no earlier layer"):
        spec_from_config(dict(bad, num_kv_shared_layers=5, layer_types=types), name="bad")


def test_memory_models_hold_the_shared_layers_weights_and_caches():
    # one rank holding the whole E2B: its parameters are transformers' (the 7 full layers at
    # their own widths included); both memory models agree
    from rlmcost.choices import Head
    from rlmcost.parallel import breakdown as bd
    from rlmcost.parallel import memory as pm
    from rlmcost.parallel.shard import stages

    stage = stages(E2B, Layout())[0]
    p = pm.stage_params(E2B, Layout(), stage, Head.LM)
    assert p.dense + p.expert == TRANSFORMERS_PARAMS["gemma-4-e2b"]
    assert bd.stage_params(E2B, Layout(), stage, Head.LM) == p
    # the engine's cache of one sequence: 12 sliding layers at 511 kept positions (vLLM frees
    # the window's blocks: parallel.kv_shared) and 3 full ones, the shared layers none
    from rlmcost.parallel.kv_shared import stage_shared_kv

    shared = stage_shared_kv(E2B, E2B, 35, (5000, 28, 0), 1)
    assert shared == 16 * 511 * 512 + 4 * 5000 * 1024
