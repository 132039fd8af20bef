"""DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): config reading, parameters, FLOPs, KV cache.

Independent sources: transformers 5.24's ``DeepseekV32ForCausalLM`` and ``GlmMoeDsaForCausalLM``
built from the same config (``sum(p.numel())``, ``torch.utils.flop_counter.FlopCounterMode``,
the tensors its ``DynamicCache`` holds) and their config classes (``indexer_types``).

FlopCounterMode sees transformers' eager path: the lightning indexer's projections and its
dense S x S (prefill) or 1 x c (decode) scores, under ``torch.no_grad`` (no backward), and the
main MLA attention over every key in the expanded form with the unselected keys masked. The
top-k, the scatter into the mask and the gathers are no matrix products and it counts none.
The cost model follows the production kernels instead (FlashMLA sparse: the absorbed form over
min(position, k) keys; rlmcost.blocks.sparse): the tests pin that difference exactly.
"""

from __future__ import annotations

import json

import pytest

import rlmcost.blocks as bl
from rlmcost.blocks import sparse
from rlmcost.blocks.work import _dense
from rlmcost.choices import AttnCounting, MlaDecode
from rlmcost.errors import SpecError
from rlmcost.specs.hf_config import load_config, spec_from_config
from rlmcost.specs.registry import get_model

B, S, TOPK = 2, 20, 8

GLM5_CONFIG = {  # zai-org/GLM-5 config.json keys as transformers' GlmMoeDsaConfig defaults
    "model_type": "glm_moe_dsa", "vocab_size": 154880, "hidden_size": 6144,
    "intermediate_size": 12288, "moe_intermediate_size": 2048, "num_hidden_layers": 78,
    "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1,
    "n_routed_experts": 256, "kv_lora_rank": 512, "q_lora_rank": 2048, "qk_rope_head_dim": 64,
    "v_head_dim": 256, "qk_nope_head_dim": 192, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32,
    "max_position_embeddings": 202752, "num_nextn_predict_layers": 1,
}  # fmt: skip


@pytest.fixture(scope="module")
def tm():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch_models  # tests/ is on sys.path under pytest

    return torch_models


def _config(tm, cls: str, **extra):
    import transformers

    kw = dict(tm._MLA_COMMON, q_lora_rank=96, n_group=2, topk_group=1, index_topk=TOPK,
              index_n_heads=4, index_head_dim=32)  # fmt: skip
    return getattr(transformers, cls)(**{**kw, **extra})


CASES = {  # GLM-5.2-style IndexShare: layers 1 and 3 of 4 reuse the previous top-k
    "deepseek_v32": ("DeepseekV32Config", {}),
    "glm_moe_dsa-shared": ("GlmMoeDsaConfig", {"index_topk_freq": 2, "index_skip_topk_offset": 1,
                                               "num_hidden_layers": 4}),
}  # fmt: skip


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, tm):
    cls, extra = CASES[request.param]
    cfg = _config(tm, cls, **extra)
    model = tm.build_from_config(cfg, device="cpu")
    return cfg, model, spec_from_config(cfg.to_dict(), name="under-test").arch()


def test_indexer_layers_follow_transformers_indexer_types(case):
    cfg, model, arch = case
    # source: the config class's indexer_types (GlmMoeDsaConfig.__post_init__) and the modules
    types = getattr(cfg, "indexer_types", None) or ["full"] * cfg.num_hidden_layers
    built = sum(layer.self_attn.indexer is not None for layer in model.model.layers)
    assert arch.index_layers == types.count("full") == built


def test_param_count_equals_numel_indexers_included(case, tm):
    _, model, arch = case
    # source: sum(p.numel()) of the transformers model, indexers (wq_b, wk, k_norm,
    # weights_proj) included
    assert int(bl.params(arch)) == tm.param_count(model)
    indexer = sum(p.numel() for n, p in model.named_parameters() if ".indexer." in n)
    assert int(arch.index_layers * sparse.params_indexer(arch)) == indexer


def test_forward_backward_prefill_equal_the_counter_on_the_dense_reference(case, tm):
    _, model, arch = case
    fwd, bwd = tm.count_forward_backward(model, B, S)
    indexer = int(sparse.indexer_work_forward(arch, B, S, AttnCounting.FULL))
    dense = _dense(arch)
    # source: FlopCounterMode; transformers' eager path attends densely (expanded MLA, masked)
    # and runs the indexer forward only (torch.no_grad): S x S scores, 2 H_I (d_I + 1) a pair
    assert int(bl.work_forward(dense, B, S)) + indexer == fwd
    assert int(bl.work_backward(dense, B, S)) == bwd
    assert int(bl.work_prefill(dense, S, B)) + indexer == tm.count_prefill(model, B, S)


def test_the_cost_model_differs_from_the_counter_by_the_sparse_absorbed_pairs(case, tm):
    _, model, arch = case
    fwd, _ = tm.count_forward_backward(model, B, S)
    h, dc, dr = arch.n_heads, arch.kv_lora_rank, arch.qk_rope_head_dim
    expanded = 2 * h * (arch.head_dim + arch.v_head_dim)  # q.k over d_nope + d_rope, d_v values
    absorbed = 2 * h * (2 * dc + dr)  # FlashMLA sparse: 576-wide keys, 512-wide values
    # production: every query takes min(S, k) indexed keys (full counting); HF: all S keys
    diff = B * arch.n_layers * (S * min(S, TOPK) * absorbed - S * S * expanded)
    assert int(bl.work_forward(arch, B, S)) - fwd == diff
    causal = sum(min(i, TOPK) for i in range(1, S + 1))
    assert int(bl.work_forward(arch, B, S, AttnCounting.CAUSAL)) == int(
        bl.work_forward(arch, B, S) - B * arch.n_layers * (S * TOPK - causal) * absorbed
        - B * arch.index_layers * sparse.indexer_flops_per_key(arch) * (S * S - S * (S + 1) // 2)
    )  # fmt: skip
    # training: the indexer's forward once (no gradient reaches it)
    assert int(bl.work_train(arch, B, S)) == int(
        3 * bl.work_forward(arch, B, S) - 2 * sparse.indexer_work_forward(arch, B, S,
                                                                          AttnCounting.FULL))


@pytest.mark.parametrize("context", [2, TOPK + 1, 30])
def test_decode_reference_equals_the_counter_and_absorbed_takes_top_k(case, tm, context):
    _, model, arch = case
    # source: FlopCounterMode on one token after a cache of context - 1 (indexer over c keys)
    counted = tm.count_decode_step(model, B, context)
    assert int(bl.work_decode_step(arch, context, B, MlaDecode.REFERENCE)) == counted
    keys = arch.n_layers * min(context, TOPK)
    absorbed = int(bl.work_linear_per_token(arch) + bl.work_head_per_token(arch)
                   + bl.attention_flops_per_key_absorbed(arch) * keys
                   + sparse.indexer_work_per_token(arch, context))  # fmt: skip
    assert int(bl.work_decode_step(arch, context, B)) == B * absorbed


@pytest.mark.parametrize("mla", list(MlaDecode))
def test_rollout_is_prefill_plus_the_decode_steps(case, mla):
    _, _, arch = case
    prompt, response = 5, 7
    steps = sum(bl.work_decode_step(arch, prompt + t, 1, mla) for t in range(1, response + 1))
    prefill = bl.work_prefill(_dense(arch) if mla is MlaDecode.REFERENCE else arch, prompt)
    if mla is MlaDecode.REFERENCE:
        prefill += sparse.indexer_work_forward(arch, 1, prompt, AttnCounting.FULL)
    assert int(bl.work_rollout(arch, prompt, response, mla=mla)) == int(prefill + steps)


def test_kv_cache_is_the_latent_and_the_indexer_keys_transformers_holds(tm):
    import torch

    cfg = _config(tm, "DeepseekV32Config")
    model = tm.build_from_config(cfg, device="cpu")
    arch = spec_from_config(cfg.to_dict(), name="t").arch()
    ids = torch.zeros(B, S, dtype=torch.long)
    with torch.no_grad():
        cache = model(input_ids=ids, use_cache=True).cache
    held = sum(t.numel() for layer in cache.layers
               for t in (layer.keys, layer.values, layer.indexer_keys))  # fmt: skip
    # source: DynamicIndexedLayer's keys (d_c), values (d_rope) and indexer_keys (d_I)
    assert int(bl.memory_kv_cache(arch, S, B)) == held
    assert arch.kv_cache_width == 64 + 16 + 32


def test_builtins_match_the_transformers_classes(tm):
    import transformers

    for name, cfg in (("deepseek-v3.2", transformers.DeepseekV32Config()),
                      ("glm-5", transformers.GlmMoeDsaConfig())):  # fmt: skip
        model = tm.build_from_config(cfg, device="meta")
        spec = get_model(name)
        # source: sum(p.numel()) on meta of the config class's defaults (the checkpoints')
        assert int(bl.params(spec.arch())) == tm.param_count(model), name
        assert spec.arch() == spec_from_config(cfg.to_dict(), name=name).arch(), name


def test_glm5_config_reads_as_the_builtin(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(GLM5_CONFIG))
    assert load_config(p).arch().with_(name="glm-5") == get_model("glm-5.1").arch()
    assert get_model("zai-org/GLM-5.1").name == "glm-5"


@pytest.mark.parametrize(("changes", "fragment"), [
    ({"q_lora_rank": None}, "q_lora_rank"),
    ({"indexer_types": ["shared"] * 78}, "first layer"),
    ({"indexer_types": ["full"] * 3}, "each of the 78 layers"),
    ({"mlp_layer_types": ["sparse"] * 78}, "mlp_layer_types"),
])  # fmt: skip
def test_bad_dsa_configs_are_one_line_errors(tmp_path, changes, fragment):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**GLM5_CONFIG, **changes}))
    with pytest.raises(SpecError, match=fragment) as exc:
        load_config(p)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(("changes", "fragment"), [
    ({"index_layers": 79}, "index_layers in 1..78"),
    ({"index_topk": None}, "without index_topk"),
    ({"q_lora_rank": None}, "needs MLA with a query latent"),
])  # fmt: skip
def test_inconsistent_dsa_specs_are_rejected(changes, fragment):
    spec = get_model("glm-5")
    with pytest.raises(Exception) as exc:  # pydantic wraps the SpecError
        type(spec)(**{**spec.model_dump(), **changes})
    assert fragment in str(exc.value)


def test_the_rollout_bound_of_a_dsa_decode_counts_the_indexers_per_key_alone():
    # Past k keys a DSA decode step's sparse attention reads k latents, not c: a roofline
    # line linear in the context keeps only the indexers' per-key scores and fp8 keys (by hand
    # from DeepSeek-V3.2-Exp's config: 61 indexer layers, 64 index heads of 128)
    from rlmcost.perf.decode_kernels import dsa_bound_per_token
    from rlmcost.placement.rollout import decode_flops

    v32 = get_model("deepseek-v3.2").arch()
    assert dsa_bound_per_token(v32) == (61 * 2 * 64 * (128 + 1), 61 * 128)
    assert decode_flops(v32)[1] == 61 * 2 * 64 * 129
    # DeepSeek-V3 (dense MLA) keeps its whole per-key attention in the line
    assert decode_flops(get_model("deepseek-v3").arch())[1] > 61 * 2 * 128 * (512 + 64)
