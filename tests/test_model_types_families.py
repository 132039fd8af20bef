"""Seed-OSS (``seed_oss``), MiniMax-M2 (``minimax_m2``: q/k RMSNorms over all heads' width) and
GLM-4.7-Flash (``glm4_moe_lite``: DeepSeek-V3's latent attention and MoE) against transformers.

Independent side: the transformers classes (5.24) built from the same config dict on the meta
device: ``sum(p.numel())`` for the parameters and ``FlopCounterMode`` for the forward,
backward and decode FLOPs (tests/torch_models.py; experts through "batched_mm", eager
attention, tests/FLOP_CONVENTIONS.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from config_errors import assert_refused_in_one_line

from rlmcost import blocks as bl
from rlmcost.choices import MlaDecode
from rlmcost.compiled import blocks as cb
from rlmcost.errors import SpecError
from rlmcost.specs.hf_config import load_config, spec_from_config
from rlmcost.specs.hf_families import GLM4_MOE_LITE_DEFAULTS

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tm = pytest.importorskip("torch_models")

BATCH, SEQ = 2, 64

SMALL: dict[str, dict[str, Any]] = {
    "seed_oss": dict(model_type="seed_oss", num_hidden_layers=3, hidden_size=256,
                     intermediate_size=512, num_attention_heads=8, num_key_value_heads=2,
                     head_dim=48, vocab_size=1000),
    "minimax_m2": dict(model_type="minimax_m2", num_hidden_layers=3, hidden_size=256,
                       intermediate_size=96, num_attention_heads=8, num_key_value_heads=2,
                       head_dim=48, vocab_size=1000, num_local_experts=6,
                       num_experts_per_tok=2, bos_token_id=0, eos_token_id=1),
    "glm4_moe_lite": dict(model_type="glm4_moe_lite", num_hidden_layers=4, hidden_size=256,
                          intermediate_size=512, moe_intermediate_size=64,
                          num_attention_heads=4, num_key_value_heads=4, vocab_size=1000,
                          n_routed_experts=8, num_experts_per_tok=2, q_lora_rank=96,
                          kv_lora_rank=64, qk_nope_head_dim=32, qk_rope_head_dim=16,
                          v_head_dim=48, bos_token_id=0, eos_token_id=1),
}  # fmt: skip


def _built(cfg: dict[str, Any]) -> torch.nn.Module:
    kwargs = {k: v for k, v in cfg.items() if k != "model_type"}
    return tm.build_from_config(transformers.AutoConfig.for_model(cfg["model_type"], **kwargs))


@pytest.mark.parametrize(
    "mt, change",
    [
        ("seed_oss", {}),
        ("seed_oss", {"attention_bias": False, "attention_out_bias": True, "mlp_bias": True,
                      "tie_word_embeddings": True}),
        ("seed_oss", {"head_dim": None}),  # SeedOssConfig's default, 128
        ("minimax_m2", {}),
        ("minimax_m2", {"head_dim": None, "num_key_value_heads": 8}),  # default head_dim 128
        ("minimax_m2", {"use_qk_norm": False, "attention_bias": True}),  # transformers ignores both
        ("glm4_moe_lite", {}),
        ("glm4_moe_lite", {"q_lora_rank": None, "attention_bias": True, "n_shared_experts": 2}),
        ("glm4_moe_lite", {"mlp_layer_types": ["dense", "dense", "sparse", "sparse"]}),
        # keys left out: Glm4MoeLiteConfig's defaults (one shared expert, q_lora_rank 768)
        ("glm4_moe_lite", {"q_lora_rank": ..., "n_shared_experts": ...}),
    ],
)  # fmt: skip
def test_parameters_equal_transformers(mt, change):
    cfg = {**SMALL[mt], **change}
    cfg = {k: v for k, v in cfg.items() if v is not ...}
    model = _built({k: v for k, v in cfg.items() if v is not None})
    # independent: sum(p.numel()) of the transformers class built from the same config
    expected = sum(p.numel() for p in model.parameters())
    for source in (cfg, json.loads(model.config.to_json_string())):
        spec = spec_from_config({k: v for k, v in source.items() if v is not None}, name="x")
        assert int(bl.params(spec.arch())) == expected
        assert cb.params(spec) == expected  # the compiled twin agrees


def test_minimax_m2_qk_norms_span_all_heads():
    model = _built(SMALL["minimax_m2"])
    attn = model.model.layers[0].self_attn
    spec = spec_from_config(SMALL["minimax_m2"], name="x")
    # MiniMaxM2Attention.q_norm / k_norm: one weight per element of all heads' q and k
    assert (attn.q_norm.weight.numel(), attn.k_norm.weight.numel()) == (8 * 48, 2 * 48)
    assert spec.qk_norm and spec.qk_norm_full
    per_head = spec.arch().with_(qk_norm_full=False)
    assert int(bl.params(spec.arch()) - bl.params(per_head)) == 3 * (8 * 48 + 2 * 48 - 2 * 48)


def test_minimax_m2_norms_keep_one_rms_per_token():
    from rlmcost.choices import Dtype

    attn = tm.build_from_config(
        transformers.AutoConfig.for_model(**SMALL["minimax_m2"]), device="cpu"
    ).model.layers[0].self_attn
    x = torch.randn(5, 8 * 48, requires_grad=True)
    shapes: list[tuple[int, ...]] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        shapes.append(tuple(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        attn.q_norm(x)
    # source: what autograd saves in MiniMaxM2RMSNorm over 5 tokens: one 1 / rms a token (a
    # per-head norm keeps one a head), beside its full-width input
    assert (5, 1) in shapes and (5, 8 * 48) in shapes
    arch = spec_from_config(SMALL["minimax_m2"], name="x").arch()
    full = bl.activation_bytes_per_token_layer(arch, Dtype.BF16)
    per_head = bl.activation_bytes_per_token_layer(arch.with_(qk_norm_full=False), Dtype.BF16)
    assert int(per_head - full) == 4 * (8 + 2) - 4 * 2  # fp32 1 / rms: h + h_kv rows, or 2


def test_full_width_qk_norm_needs_qk_norm():
    from rlmcost.specs.model import ModelSpec

    shape = dict(name="x", n_layers=2, d_model=64, d_ff=128, n_heads=4, n_kv_heads=2,
                 head_dim=16, vocab=100)  # fmt: skip
    with pytest.raises(SpecError, match="qk_norm_full needs qk_norm"):
        ModelSpec(**shape, qk_norm_full=True)
    assert ModelSpec(**shape, qk_norm=True, qk_norm_full=True).qk_norm_full


@pytest.mark.parametrize("mt", sorted(SMALL))
def test_forward_backward_decode_flops_equal_flop_counter(mt):
    model = _built(SMALL[mt])
    arch = spec_from_config(SMALL[mt], name="x").arch()
    fwd, bwd = tm.count_forward_backward(model, BATCH, SEQ)
    # source: FlopCounterMode, full S x S attention; norms (the full-width q/k ones too) are
    # elementwise and neither side counts them
    assert int(bl.work_forward(arch, BATCH, SEQ)) == fwd
    assert int(bl.work_backward(arch, BATCH, SEQ)) == bwd
    decode = MlaDecode.REFERENCE if arch.is_mla else MlaDecode.ABSORBED
    for context in (2, 33):
        # source: FlopCounterMode on one token after a cache of context - 1 tokens (MLA: the
        # eager code re-expands every cached latent, the reference convention)
        counted = tm.count_decode_step(model, BATCH, context)
        assert int(bl.work_decode_step(arch, context, BATCH, decode)) == counted


def test_glm4_moe_lite_reads_as_deepseek_v3():
    # Glm4MoeLite's attention and MoE are DeepSeek-V3's: the same keys with model_type
    # deepseek_v3 and first_k_dense_replace 1 give the same shape
    lite = {**SMALL["glm4_moe_lite"], **GLM4_MOE_LITE_DEFAULTS}
    v3 = {**lite, "model_type": "deepseek_v3", "first_k_dense_replace": 1}
    assert spec_from_config(lite, name="x").arch() == spec_from_config(v3, name="x").arch()


def test_glm4_moe_lite_defaults_are_transformers_defaults():
    ref = transformers.AutoConfig.for_model("glm4_moe_lite")
    # Glm4MoeLiteConfig() is the source of the defaults a config.json may leave out
    assert {k: getattr(ref, k) for k in GLM4_MOE_LITE_DEFAULTS} == GLM4_MOE_LITE_DEFAULTS


def test_seed_oss_dropouts_are_read():
    spec = spec_from_config(SMALL["seed_oss"], name="x")
    # SeedOssConfig: attention_dropout and residual_dropout default to 0.1
    assert (spec.hidden_dropout, spec.attention_dropout) == (0.1, 0.1)
    off = spec_from_config({**SMALL["seed_oss"], "residual_dropout": 0.0}, name="x")
    assert off.hidden_dropout == 0.0


def test_first_k_dense_replace_that_transformers_ignores_is_noted():
    cfg = {**SMALL["glm4_moe_lite"], "first_k_dense_replace": 2}
    spec = spec_from_config(cfg, name="x")
    # Glm4MoeLiteConfig builds mlp_layer_types = dense + sparse x (L - 1) whatever it says
    assert spec.first_dense_layers == 1
    assert any("first_k_dense_replace=2" in n for n in spec.notes)


@pytest.mark.parametrize(
    "mt, change, fragment",
    [
        ("minimax_m2", {"num_local_experts": None}, "minimax_m2 config has no 'num_local_experts'"),
        ("minimax_m2", {"num_mtp_modules": -1}, "num_mtp_modules=-1 is implausible"),
        ("seed_oss", {"attention_out_bias": "no"}, "attention_out_bias='no' must be true or"),
        ("seed_oss", {"residual_dropout": 1.5}, "residual_dropout 1.5 is not a dropout"),
        ("glm4_moe_lite", {"mlp_layer_types": ["sparse", "dense", "sparse", "sparse"]},
         "dense layer after a sparse one"),
        ("glm4_moe_lite", {"mlp_layer_types": ["dense"]}, "for each of the 4 layers"),
        ("glm4_moe_lite", {"kv_lora_rank": None}, "config has no 'kv_lora_rank'"),
    ],
)  # fmt: skip
def test_bad_configs_are_one_line_errors(tmp_path, mt, change, fragment):
    assert_refused_in_one_line(tmp_path, {**SMALL[mt], **change}, fragment)


# --------------------------------------------------------------------------------------
# GLM-4.1V (glm4v): a GLM-4 decoder plus its own vision tower (rlmcost.specs.hf_vision)
# --------------------------------------------------------------------------------------

GLM4V_VISION = dict(depth=2, hidden_size=64, intermediate_size=80, num_heads=4,
                    out_hidden_size=96, image_size=56, patch_size=14)  # fmt: skip
GLM4V_TEXT = dict(hidden_size=96, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, intermediate_size=64, vocab_size=1000)  # fmt: skip


def _glm4v(vision: dict[str, Any], text: dict[str, Any], device: str = "meta") -> Any:
    config = transformers.Glm4vConfig(vision_config=vision, text_config=text)
    with torch.device(device):
        return transformers.AutoModelForImageTextToText.from_config(
            config, attn_implementation="eager"
        )


@pytest.mark.parametrize(
    "vision, text",
    [({}, {}), ({"attention_bias": True, "spatial_merge_size": 1}, {"head_dim": 16}),
     ({"image_size": 112, "temporal_patch_size": 1}, {"num_key_value_heads": 4})],
)  # fmt: skip
def test_glm4v_parameters_equal_transformers(vision, text):
    model = _glm4v({**GLM4V_VISION, **vision}, {**GLM4V_TEXT, **text})
    spec = spec_from_config(json.loads(model.config.to_json_string()), name="x")
    # independent: sum(p.numel()) of Glm4vForConditionalGeneration (meta); the text attention
    # takes head_dim = hidden // heads whatever the config says, and q/k/v biases always
    assert int(bl.params(spec.arch())) == sum(p.numel() for p in model.parameters())
    assert spec.encoder_params == sum(p.numel() for p in model.model.visual.parameters())
    assert cb.params(spec) == sum(p.numel() for p in model.parameters())


def test_glm4v_vision_flops_equal_flop_counter():
    from torch.utils.flop_counter import FlopCounterMode

    from rlmcost.specs.hf_vision import vision_flops_per_patch, vision_shape

    model = _glm4v(GLM4V_VISION, GLM4V_TEXT, device="cpu")
    grid = torch.tensor([[1, 4, 6]])  # one frame of 4 x 6 patches: 6 image tokens
    n = 24
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model.model.visual(torch.randn(n, 3 * 2 * 14 * 14), grid_thw=grid)
    s = vision_shape({"vision_config": GLM4V_VISION}, "glm4v", "config")
    # source: FlopCounterMode (the Conv3d and Conv2d, the blocks' and merger's matmuls, QK^T
    # and AV over the image's n patches per block; the position table's grid_sample is not
    # a matmul)
    assert counter.get_total_flops() == n * vision_flops_per_patch(s) + 2 * 4 * n * n * 64
    spec = spec_from_config(json.loads(model.config.to_json_string()), name="x")
    assert spec.encoder_forward_flops(6) == counter.get_total_flops()


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"vision_config": {**GLM4V_VISION, "out_hidden_size": 64}}, "output width 64 differs"),
        ({"vision_config": {**GLM4V_VISION, "image_size": [56, 56]}}, "image_size=[56, 56]"),
        ({"vision_config": None}, "a glm4v config needs a vision_config object"),
        ({"text_config": {**GLM4V_TEXT, "num_hidden_layers": 0}}, "num_hidden_layers=0"),
    ],
)  # fmt: skip
def test_bad_glm4v_configs_are_one_line_errors(tmp_path, change, fragment):
    cfg = {"model_type": "glm4v", "vision_config": GLM4V_VISION, "text_config": GLM4V_TEXT,
           **change}  # fmt: skip
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    with pytest.raises(SpecError) as exc:
        load_config(p)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)
