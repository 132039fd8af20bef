"""Multi-head latent attention (DeepSeek-V2/V3/R1): parameters, FLOPs, KV cache, activations.

Independent sources: transformers' DeepseekV3 / DeepseekV2 classes built from config objects
(meta device, no download), ``sum(p.numel())``, ``torch.utils.flop_counter.FlopCounterMode``
(eager attention; experts through "batched_mm" on meta, see tests/FLOP_CONVENTIONS.md), the
tensors of transformers' DynamicCache, a torch implementation of the absorbed decode (checked
numerically against the expanded one), and GEMM shapes written out by hand.
"""

import pytest
import sympy as sp

from rlmcost import blocks as bl
from rlmcost.arch import Arch
from rlmcost.choices import Dtype, MlaDecode
from rlmcost.errors import SpecError
from rlmcost.parallel.activations import saved_bytes_per_token_layer
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.memory import Mode, memory_per_rank
from rlmcost.parallel.shard import tp_shard
from rlmcost.specs import ModelSpec, get_model
from rlmcost.specs.hf_config import spec_from_config

V3 = get_model("deepseek-v3")

# --------------------------------------------------------------------------------------------
# Symbolic identities (no torch)
# --------------------------------------------------------------------------------------------

_s = {
    n: sp.Symbol(n, integer=True, positive=True) for n in "L d h V d_cq d_c d_n d_r d_v c".split()
}
MLA_SYMBOLIC = Arch(
    name="mla",
    n_layers=_s["L"],
    d_model=_s["d"],
    d_ff=_s["d"],
    n_heads=_s["h"],
    n_kv_heads=_s["h"],
    head_dim=_s["d_n"] + _s["d_r"],
    vocab=_s["V"],
    q_lora_rank=_s["d_cq"],
    kv_lora_rank=_s["d_c"],
    qk_nope_head_dim=_s["d_n"],
    qk_rope_head_dim=_s["d_r"],
    v_head_dim=_s["d_v"],
)


def test_reference_minus_absorbed_decode_is_the_cache_expansion_and_the_wider_keys():
    a, c, L, h = MLA_SYMBOLIC, _s["c"], _s["L"], _s["h"]
    d_c, d_n, d_r, d_v = _s["d_c"], _s["d_n"], _s["d_r"], _s["d_v"]
    ref = bl.work_decode_step(a, c, 1, MlaDecode.REFERENCE)
    absorbed = bl.work_decode_step(a, c, 1, MlaDecode.ABSORBED)
    # hand derivation: reference re-expands c - 1 cached latents through kv_b (d_c x h(d_n+d_v))
    # and attends over h heads of width d_n + d_r (keys) and d_v (values); absorbed attends
    # over the latent [c_kv, k_rope] (d_c + d_r) and sums latents (d_c), per head
    expected = (
        L * (2 * d_c * h * (d_n + d_v) * (c - 1) + 2 * h * (d_n + d_r + d_v) * c)
        - L * 2 * h * (2 * d_c + d_r) * c
    )
    assert sp.simplify(ref - absorbed - expected) == 0


@pytest.mark.parametrize("mla", list(MlaDecode))
def test_rollout_closed_form_is_prefill_plus_the_decode_steps(mla):
    a, S, T, t = MLA_SYMBOLIC, *sp.symbols("S T t", integer=True, positive=True)
    steps = sp.summation(bl.work_decode_step(a, S + t, 1, mla), (t, 1, T))
    # exact sympy identity: C_gen^roll = prefill(S) + sum_{t=1}^{T} C_dec(S + t)
    assert sp.simplify(bl.work_rollout(a, S, T, mla=mla) - bl.work_prefill(a, S) - steps) == 0


def test_forward_per_token_of_mla_is_expanded_attention_and_five_projections():
    a, c = MLA_SYMBOLIC, _s["c"]
    L, d, h, V = _s["L"], _s["d"], _s["h"], _s["V"]
    d_cq, d_c, d_n, d_r, d_v = _s["d_cq"], _s["d_c"], _s["d_n"], _s["d_r"], _s["d_v"]
    proj = d * d_cq + d_cq * h * (d_n + d_r) + d * (d_c + d_r) + d_c * h * (d_n + d_v)
    proj += h * d_v * d + 3 * d * d  # o_proj, then the gated FFN with d_ff = d
    # hand derivation (arXiv:2405.04434 eq. 9-19): 2 x weights + 2 h (d_n + d_r + d_v) per key
    expected = 2 * L * proj + 2 * L * h * (d_n + d_r + d_v) * c + 2 * d * V
    assert sp.simplify(bl.work_forward_per_token(a, c) - expected) == 0


# --------------------------------------------------------------------------------------------
# DeepSeek-V3 at full size: hand derivations, sharding, memory
# --------------------------------------------------------------------------------------------


def test_absorbed_decode_flops_of_deepseek_v3_from_gemm_shapes():
    a, c, seqs = V3.arch(), 4096, 3
    d, h, L, V = 7168, 128, 61, 129280
    d_cq, d_c, d_n, d_r, d_v = 1536, 512, 128, 64, 128
    gemms = [  # (M, K, N) of one sequence's new token in one layer: 2 M K N FLOPs each
        (1, d, d_cq),  # q_a_proj
        (1, d_cq, h * (d_n + d_r)),  # q_b_proj
        (1, d, d_c + d_r),  # kv_a_proj_with_mqa
        *[(1, d_n, d_c)] * h,  # q_nope W_UK per head: query into the latent space
        *[(1, d_c + d_r, c)] * h,  # scores against the cached [c_kv, k_rope] per head
        *[(1, c, d_c)] * h,  # probabilities x cached latents per head
        *[(1, d_c, d_v)] * h,  # W_UV per head: latent back to the value width
        (1, h * d_v, d),  # o_proj
    ]
    attention = sum(2 * m * k * n for m, k, n in gemms)
    ffn_dense = 2 * 3 * d * 18432  # first_k_dense_replace = 3 layers
    ffn_moe = 2 * (d * 256 + 8 * 3 * d * 2048 + 3 * d * 2048)  # router, 8 routed, 1 shared
    per_seq = L * attention + 3 * ffn_dense + 58 * ffn_moe + 2 * d * V
    # source: the GEMM shapes above, written out from vLLM's MLA decode path (arXiv:2405.04434)
    assert int(bl.work_decode_step(a, c, seqs)) == seqs * per_seq


def test_tp_shard_replicates_the_down_projections_and_splits_the_heads():
    a, tp = V3.arch(), 8
    d, h, d_cq, d_c, d_n, d_r, d_v = 7168, 128, 1536, 512, 128, 64, 128
    replicated = d * d_cq + d_cq + d * (d_c + d_r) + d_c  # q_a, its norm, kv_a, its norm
    split = (h // tp) * (d_cq * (d_n + d_r) + d_c * (d_n + d_v) + d_v * d)  # q_b, kv_b, o
    # Megatron-Core MLASelfAttention / vLLM DeepseekV2MLAAttention: q_a_proj and
    # kv_a_proj_with_mqa replicated, q_b_proj / kv_b_proj column-parallel, o_proj row-parallel
    assert int(bl.params_attention_per_layer(tp_shard(a, tp))) == replicated + split


def test_kv_cache_is_the_latent_and_is_not_split_over_tp():
    a, tokens = V3.arch(), 2 * 5000
    # 61 layers x (512 latent + 64 RoPE key) x bf16 per token (arXiv:2405.04434 Table 1)
    assert int(bl.memory_kv_cache_bytes(a, tokens)) == 61 * 576 * 2 * tokens
    kv = [memory_per_rank(a, Layout(tp=t), Mode.GENERATE, 2, 5000).kv_cache for t in (1, 8)]
    # vLLM keeps the one-"head" latent whole on every TP rank
    assert kv == [61 * 576 * 2 * tokens] * 2


def test_mla_activation_bytes_are_positive_scale_with_tokens_and_shrink_with_tp():
    a = V3.arch()
    one = bl.memory_activations_bytes(a, 1000)
    assert one > 0
    # linear in tokens, exactly
    assert bl.memory_activations_bytes(a, 3000) == 3 * one
    per_tp = [saved_bytes_per_token_layer(a, t, moe=True) for t in (1, 2, 8)]
    assert per_tp[0] > per_tp[1] > per_tp[2] > 0
    # the latents (2 d_cq + 2 d_c) stay whole on every TP rank: at tp = h they are what is left
    latents = 2 * (2 * 1536 + 2 * 512)
    assert saved_bytes_per_token_layer(a, 128, moe=False) > latents


def test_deepseek_v3_training_memory_has_weights_and_activations():
    m = memory_per_rank(V3.arch(), Layout(tp=8, dp=8), Mode.TRAIN, 64, 2048)
    assert m.weights > 0 and m.activations > 0 and m.total > m.weights


def test_r1_has_v3_shape_and_builtin_names_resolve():
    assert bl.params(get_model("DeepSeek-R1").arch()) == bl.params(V3.arch())
    assert get_model("deepseek-v2").name == "deepseek-v2"
    # DeepSeek-V3 report (arXiv:2412.19437): "671B total parameters, 37B activated"
    active = int(bl.params_active_per_token(V3.arch()))
    assert abs(active - 37e9) / 37e9 < 0.02


@pytest.mark.parametrize(
    "changes, fragment",
    [
        (dict(head_dim=128), "head_dim=128 must equal"),
        (dict(n_kv_heads=1), "n_kv_heads=128"),
        (dict(v_head_dim=0), "v_head_dim > 0"),
        (dict(kv_lora_rank=None), "without kv_lora_rank"),
    ],
)
def test_inconsistent_mla_specs_are_rejected(changes, fragment):
    with pytest.raises(Exception) as exc:  # pydantic wraps the SpecError
        ModelSpec(**{**V3.model_dump(), **changes})
    assert fragment in str(exc.value)


def test_deepseek_config_with_bad_values_is_one_line_error():
    cfg = dict(model_type="deepseek_v3", hidden_size=64, intermediate_size=128,
               num_hidden_layers=2, num_attention_heads=4, vocab_size=100, kv_lora_rank=16,
               qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, moe_layer_freq=2)  # fmt: skip
    with pytest.raises(SpecError, match="moe_layer_freq"):
        spec_from_config(cfg, "x")
    cfg.pop("moe_layer_freq")
    spec = spec_from_config(cfg, "x")  # no routed experts: a dense MLA model
    assert spec.is_mla and not spec.is_moe and spec.head_dim == 12


# --------------------------------------------------------------------------------------------
# Against transformers' DeepseekV3 / DeepseekV2 classes
# --------------------------------------------------------------------------------------------

BATCH, SEQ = 2, 256


@pytest.fixture(scope="module")
def tm():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch_models  # tests/ is on sys.path under pytest

    return torch_models


@pytest.fixture(scope="module", params=["deepseek_v3", "deepseek_v3-noqlora", "deepseek_v2"])
def mla_model(request, tm):
    return tm.build(request.param, device="meta")


def arch_of(model):
    return spec_from_config(model.config.to_dict(), name="under-test").arch()


def test_mla_param_count_equals_numel(mla_model, tm):
    # source: sum(p.numel()) of the transformers model
    assert int(bl.params(arch_of(mla_model))) == tm.param_count(mla_model)


def test_mla_attention_bias_param_count(tm):
    model = tm.build("deepseek_v3", attention_bias=True)
    # source: numel with biases on q_a_proj, kv_a_proj_with_mqa and o_proj
    assert int(bl.params(arch_of(model))) == tm.param_count(model)


def test_mla_forward_backward_prefill_equal_flop_counter(mla_model, tm):
    arch = arch_of(mla_model)
    fwd, bwd = tm.count_forward_backward(mla_model, BATCH, SEQ)
    # source: FlopCounterMode, full S x S attention; kv_b_proj on every token (expanded form)
    assert int(bl.work_forward(arch, BATCH, SEQ)) == fwd
    assert int(bl.work_backward(arch, BATCH, SEQ)) == bwd
    # source: FlopCounterMode on model(ids, logits_to_keep=1)
    assert int(bl.work_prefill(arch, SEQ, BATCH)) == tm.count_prefill(mla_model, BATCH, SEQ)


@pytest.mark.parametrize("context", [2, 77, 300])
def test_mla_reference_decode_step_equals_flop_counter(mla_model, tm, context):
    # source: FlopCounterMode on one token after a latent cache of context - 1 tokens; the
    # eager code re-expands every cached latent through kv_b_proj (the reference convention)
    counted = tm.count_decode_step(mla_model, BATCH, context)
    arch = arch_of(mla_model)
    assert int(bl.work_decode_step(arch, context, BATCH, MlaDecode.REFERENCE)) == counted


def _attention_cores(torch, attn, q, kv_c, k_rope):
    """(expanded output, absorbed output, FLOPs of each) for one new token per sequence.

    q: (B, h, 1, d_n + d_r) after RoPE; kv_c: (B, c, d_c) normalized latents; k_rope: (B, c, d_r)
    after RoPE. Expanded: kv_b_proj on all c latents, per-head keys/values, softmax attention.
    Absorbed (vLLM MLA decode): q_nope W_UK, scores against [kv_c, k_rope], probabilities
    times the latents, then W_UV. Both return (B, 1, h d_v), the input of o_proj.
    """
    from torch.utils.flop_counter import FlopCounterMode

    h, d_n, d_v = attn.num_heads, attn.qk_nope_head_dim, attn.v_head_dim
    batch, c, d_c = kv_c.shape
    w = attn.kv_b_proj.weight.view(h, d_n + d_v, d_c)
    w_uk, w_uv = w[:, :d_n, :], w[:, d_n:, :]  # (h, d_n, d_c), (h, d_v, d_c)
    q_nope, q_rope = q[..., :d_n], q[..., d_n:]

    def expanded():
        kv = attn.kv_b_proj(kv_c).view(batch, c, h, d_n + d_v).transpose(1, 2)
        k = torch.cat([kv[..., :d_n], k_rope[:, None].expand(-1, h, -1, -1)], dim=-1)
        p = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * attn.scaling, dim=-1)
        return torch.matmul(p, kv[..., d_n:]).transpose(1, 2).reshape(batch, 1, h * d_v)

    def absorbed():
        q_lat = torch.matmul(q_nope, w_uk)  # (B, h, 1, d_c)
        q_cat = torch.cat([q_lat, q_rope], dim=-1)  # (B, h, 1, d_c + d_r)
        cache = torch.cat([kv_c, k_rope], dim=-1)[:, None]  # (B, 1, c, d_c + d_r), one "head"
        p = torch.softmax(torch.matmul(q_cat, cache.transpose(2, 3)) * attn.scaling, dim=-1)
        o_lat = torch.matmul(p, kv_c[:, None])  # (B, h, 1, d_c)
        o = torch.matmul(o_lat, w_uv.transpose(1, 2))  # (B, h, 1, d_v)
        return o.transpose(1, 2).reshape(batch, 1, h * d_v)

    out = []
    for fn in (expanded, absorbed):
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            y = fn()
        out.append((y, counter.get_total_flops()))
    return out[0][0], out[1][0], out[0][1], out[1][1]


@pytest.mark.parametrize("context", [5, 130])
def test_absorbed_decode_equals_expanded_numerically_and_in_counted_flops(tm, context):
    import torch

    model = tm.build("deepseek_v3", device="cpu", dtype=torch.float64)
    attn = model.model.layers[0].self_attn
    torch.manual_seed(1)
    cfg = model.config
    h, d_qk = cfg.num_attention_heads, cfg.qk_nope_head_dim + cfg.qk_rope_head_dim
    q = torch.randn(BATCH, h, 1, d_qk, dtype=torch.float64)
    kv_c = torch.randn(BATCH, context, cfg.kv_lora_rank, dtype=torch.float64)
    k_rope = torch.randn(BATCH, context, cfg.qk_rope_head_dim, dtype=torch.float64)
    ref, absorbed, ref_flops, abs_flops = _attention_cores(torch, attn, q, kv_c, k_rope)
    # the absorption is an identity (arXiv:2405.04434 §2.1.2): same output to rounding
    torch.testing.assert_close(absorbed, ref, rtol=1e-10, atol=1e-12)
    arch = arch_of(model)
    ours = bl.work_decode_step(arch, context, BATCH, MlaDecode.REFERENCE) - bl.work_decode_step(
        arch, context, BATCH, MlaDecode.ABSORBED
    )
    # source: FlopCounterMode on both cores; the projections around them are the same GEMMs
    assert int(ours) == arch.n_layers * (ref_flops - abs_flops)


def test_kv_cache_bytes_equal_the_latent_cache_transformers_allocates(tm):
    import torch

    model = tm.build("deepseek_v3", device="cpu")
    batch, seq = 2, 37
    ids = torch.randint(0, model.config.vocab_size, (batch, seq))
    with torch.no_grad():
        out = model(ids, use_cache=True)
    layers = out.cache.layers
    # transformers caches the latent, not per-head keys/values: (B, 1, S, d_c), (B, 1, S, d_r)
    assert {tuple(lyr.keys.shape) for lyr in layers} == {(batch, 1, seq, 64)}
    assert {tuple(lyr.values.shape) for lyr in layers} == {(batch, 1, seq, 16)}
    counted = sum(t.numel() * t.element_size() for lyr in layers for t in (lyr.keys, lyr.values))
    # source: the tensors of transformers' DynamicCache after a prefill (real CPU tensors)
    assert int(bl.memory_kv_cache_bytes(arch_of(model), batch * seq, Dtype.FP32)) == counted


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_mla_activation_model_is_a_tight_lower_bound_of_what_autograd_saves(tm, dtype):
    # source: tensors autograd saves for backward in transformers' DeepseekV3 layers (real CPU,
    # dense layers so the attention dominates). The eager path materializes the softmax
    # probabilities (fp32, plus a copy in the model dtype), B h S^2 (4 + x) bytes per layer,
    # which our FlashAttention-based model leaves out; the rest is within 30 %.
    import torch
    from test_torch_exact import saved_for_backward_bytes

    torch_dtype = getattr(torch, dtype)
    model = tm.build("deepseek_v3", device="cpu", dtype=torch_dtype, first_k_dense_replace=3)
    model.train()
    batch, seq = 2, 128
    saved = saved_for_backward_bytes(model, batch, seq)
    element = Dtype.FP32 if dtype == "float32" else Dtype.BF16
    cfg = model.config
    probs = batch * cfg.num_attention_heads * seq * seq * (4 + (0 if element is Dtype.FP32 else 2))
    flash_like = saved - cfg.num_hidden_layers * probs
    ours = int(bl.memory_activations_bytes(arch_of(model), batch * seq, element))
    assert ours <= flash_like <= 1.3 * ours


@pytest.fixture(scope="module")
def v3_full(tm):
    return tm.build_full("deepseek-v3")


def test_deepseek_v3_builtin_matches_the_transformers_class(tm, v3_full):
    counted = tm.param_count(v3_full)
    # source: numel of DeepseekV3ForCausalLM from DeepseekV3Config() (DeepSeek-V3's shape)
    assert counted == 671_026_404_352
    assert int(bl.params(V3.arch())) == counted
    assert int(bl.params(arch_of(v3_full))) == counted


def test_deepseek_v2_lite_builtin_matches_the_transformers_class(tm):
    model = tm.build_full("deepseek-v2-lite")
    # source: numel of DeepseekV2ForCausalLM with DeepSeek-V2-Lite's config ("15.7B")
    assert int(bl.params(get_model("deepseek-v2-lite").arch())) == tm.param_count(model)


def test_deepseek_v3_full_size_decode_on_meta(tm, v3_full):
    # one reference decode step of the full model at context 64, routed experts via batched_mm
    counted = tm.count_decode_step(v3_full, 1, 64)
    assert int(bl.work_decode_step(V3.arch(), 64, 1, MlaDecode.REFERENCE)) == counted


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def test_cli_grpo_on_deepseek_v3_answers_and_names_the_decode_convention():
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    args = "grpo -m deepseek-v3 -H h200 --gpus 64 --tp 8 --dp 8 --zero 3".split()
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert any("absorbed" in n and "512" in n for n in out["notes"])
    models = CliRunner().invoke(app, ["models", "--json"])
    assert models.exit_code == 0
    rows = {r["name"]: r for r in json.loads(models.stdout)["models"]}
    assert rows["deepseek-v3"]["params"] == 671_026_404_352
    assert rows["deepseek-v3"]["kv_lora_rank"] == 512


def test_inference_buffer_of_deepseek_v3_holds_the_absorbed_decode_tensors():
    d, h, d_cq, d_c, d_n, d_r, d_v = 7168, 128, 1536, 512, 128, 64, 128
    absorbed = h * (d_n + d_r) + h * (d_c + d_r) + h * d_c + h * d_v  # q, q_cat, o_lat, o
    ffn = 2 * (8 * 2048 + 2048)  # gate and up of 8 routed experts and the shared one
    # hand count: residual d, the latents d_cq and d_c + d_r, the absorbed per-head tensors
    expected = d + d_cq + (d_c + d_r) + absorbed + ffn
    assert int(bl.memory_inference_buffer(V3.arch(), 1)) == expected
