"""Model types beyond the plain decoders, against transformers: Qwen2-VL / Qwen2.5-VL (a Qwen2
decoder plus a vision tower) and Qwen3-Next (hybrid Gated DeltaNet / gated full attention, MoE
with a gated shared expert).

Independent side: the transformers classes built from the same config dict on the meta device
(``sum(p.numel())``), ``FlopCounterMode`` over the vision tower's forward on a small CPU model,
and the published totals on the Hugging Face model pages (safetensors metadata).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from config_errors import assert_refused_in_one_line

from rlmcost import blocks as bl
from rlmcost.compiled import blocks as cb
from rlmcost.errors import SpecError
from rlmcost.specs.hf_config import load_config, spec_from_config
from rlmcost.specs.hf_vision import vision_flops_per_patch, vision_params, vision_shape

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _vl_text(
    L: int, d: int, ff: int, h: int, kv: int, V: int, tie: bool, ctx: int = 128000
) -> dict[str, Any]:
    return dict(hidden_size=d, intermediate_size=ff, num_hidden_layers=L, num_attention_heads=h,
                num_key_value_heads=kv, vocab_size=V, tie_word_embeddings=tie,
                max_position_embeddings=ctx,
                sliding_window=32768, use_sliding_window=False, max_window_layers=28,
                rms_norm_eps=1e-6, rope_theta=1e6)  # fmt: skip


def _vision_25(out: int) -> dict[str, Any]:
    return dict(depth=32, hidden_act="silu", hidden_size=1280, intermediate_size=3420,
                num_heads=16, in_chans=3, out_hidden_size=out, patch_size=14,
                spatial_merge_size=2, spatial_patch_size=14, window_size=112,
                fullatt_block_indexes=[7, 15, 23, 31], tokens_per_second=2,
                temporal_patch_size=2)  # fmt: skip


#: Shape keys of the published config.json files (Qwen/Qwen2.5-VL-3B-Instruct,
#: Qwen/Qwen2.5-VL-7B-Instruct, Qwen/Qwen2-VL-7B-Instruct): text keys top-level, as published.
# fmt: off
VL_CONFIGS: dict[str, dict[str, Any]] = {
    "qwen2.5-vl-3b": dict(model_type="qwen2_5_vl", **_vl_text(36, 2048, 11008, 16, 2, 151936, True),
                          vision_config=_vision_25(2048)),
    "qwen2.5-vl-7b": dict(model_type="qwen2_5_vl",
                          **_vl_text(28, 3584, 18944, 28, 4, 152064, False),
                          vision_config=_vision_25(3584)),
    "qwen2-vl-7b": dict(model_type="qwen2_vl",
                        **_vl_text(28, 3584, 18944, 28, 4, 152064, False, ctx=32768),
                        vision_config=dict(depth=32, embed_dim=1280, mlp_ratio=4, num_heads=16,
                                           in_chans=3, hidden_size=3584, patch_size=14,
                                           spatial_merge_size=2, spatial_patch_size=14,
                                           temporal_patch_size=2)),
}
# fmt: on

#: Published totals (Hugging Face model pages, safetensors "Model size"), rounded there to 3
#: significant figures.
PUBLISHED_BILLIONS = {"qwen2.5-vl-3b": 3.75, "qwen2.5-vl-7b": 8.29, "qwen2-vl-7b": 8.29}


def _transformers_vl(cfg: dict[str, Any]) -> torch.nn.Module:
    kwargs = {k: v for k, v in cfg.items() if k != "model_type"}
    config = transformers.AutoConfig.for_model(cfg["model_type"], **kwargs)
    with torch.device("meta"):
        return transformers.AutoModelForImageTextToText.from_config(config)


@pytest.mark.parametrize("name", sorted(VL_CONFIGS))
def test_vl_parameters_equal_transformers(name):
    cfg = VL_CONFIGS[name]
    model = _transformers_vl(cfg)
    spec = spec_from_config(cfg, name=name)
    total = sum(p.numel() for p in model.parameters())
    tower = sum(p.numel() for p in model.model.visual.parameters())
    assert spec.encoder_params == tower
    assert int(bl.params(spec.arch())) == total
    assert cb.params(spec) == total  # the compiled twin, from the spec, agrees
    assert round(total / 1e9, 2) == PUBLISHED_BILLIONS[name]
    # a text token passes through the decoder only
    assert int(bl.params_active_per_token(spec.arch())) == total - tower
    assert any("vision tower" in n for n in spec.notes)


def test_vl_language_model_is_the_qwen2_decoder():
    # the 7B's decoder is Qwen2-7B's shape: the same arch but the tower and the context
    spec = spec_from_config(VL_CONFIGS["qwen2.5-vl-7b"], name="x")
    text = {k: v for k, v in VL_CONFIGS["qwen2.5-vl-7b"].items() if k != "vision_config"}
    plain = spec_from_config({**text, "model_type": "qwen2"}, name="x")
    assert spec.arch() == plain.arch().with_(encoder_params=spec.encoder_params)


def test_vl_text_config_as_transformers_writes_it(tmp_path):
    # transformers 5 serializes the decoder's keys under text_config; both layouts load alike
    model = _transformers_vl(VL_CONFIGS["qwen2.5-vl-7b"])
    p = tmp_path / "qwen2.5-vl-7b" / "config.json"
    p.parent.mkdir()
    p.write_text(model.config.to_json_string())
    loaded = load_config(p)
    assert "text_config" in json.loads(p.read_text())
    assert int(bl.params(loaded.arch())) == sum(q.numel() for q in model.parameters())


SMALL_VISION = {
    "qwen2_vl": dict(depth=2, embed_dim=64, hidden_size=96, mlp_ratio=4, num_heads=4),
    # every block full attention, so the scores are n x n as in Qwen2-VL
    "qwen2_5_vl": dict(depth=2, hidden_size=64, out_hidden_size=96, intermediate_size=80,
                       num_heads=4, fullatt_block_indexes=[0, 1]),
}  # fmt: skip


@pytest.mark.parametrize("mt", sorted(SMALL_VISION))
def test_vision_flops_per_patch_equal_flop_counter(mt):
    from torch.utils.flop_counter import FlopCounterMode

    vc = SMALL_VISION[mt]
    cls = transformers.Qwen2VLConfig if mt == "qwen2_vl" else transformers.Qwen2_5_VLConfig
    text = dict(hidden_size=96, num_hidden_layers=1, num_attention_heads=4,
                num_key_value_heads=2, intermediate_size=64, vocab_size=1000)  # fmt: skip
    model = transformers.AutoModelForImageTextToText.from_config(
        cls(vision_config=vc, text_config=text), attn_implementation="eager"
    )
    grid = torch.tensor([[1, 4, 6]])  # one frame of 4 x 6 patches
    n = 24
    pixels = torch.randn(n, 3 * 2 * 14 * 14)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model.model.visual(pixels, grid_thw=grid)
    s = vision_shape({"vision_config": vc}, mt, "config")
    scores = s["depth"] * 4 * n * n * s["d_v"]  # QK^T and AV over all n patches, per block
    assert counter.get_total_flops() == n * vision_flops_per_patch(s) + scores
    assert vision_params(s) == sum(p.numel() for p in model.model.visual.parameters())


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"vision_config": None}, "needs a vision_config object"),
        ({"vision_config": {"depth": 0}}, "vision_config.depth=0 is implausible"),
        ({"vision_config": {"hidden_size": 1280.5}}, "vision_config.hidden_size=1280.5"),
        ({"vision_config": {"num_heads": 7}}, "vision_config.num_heads=7 must divide"),
        ({"vision_config": {"out_hidden_size": 4096}}, "output width 4096 differs"),
        ({"text_config": [1]}, "text_config of a qwen2_5_vl config must be an object"),
    ],
)
def test_bad_vl_configs_are_one_line_errors(tmp_path, change, fragment):
    base = VL_CONFIGS["qwen2.5-vl-7b"]
    cfg = dict(base)
    for k, v in change.items():
        if k == "vision_config" and isinstance(v, dict):
            cfg[k] = {**base["vision_config"], **v}
        else:
            cfg[k] = v
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    with pytest.raises(SpecError) as exc:
        load_config(p)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


# --------------------------------------------------------------------------------------
# Qwen3-Next
# --------------------------------------------------------------------------------------

#: Shape keys of Qwen/Qwen3-Next-80B-A3B-Instruct's config.json.
QWEN3_NEXT_80B = dict(
    model_type="qwen3_next", hidden_size=2048, num_hidden_layers=48, num_attention_heads=16,
    num_key_value_heads=2, head_dim=256, intermediate_size=5120, moe_intermediate_size=512,
    shared_expert_intermediate_size=512, num_experts=512, num_experts_per_tok=10,
    vocab_size=151936, linear_num_key_heads=16, linear_num_value_heads=32,
    linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4,
    full_attention_interval=4, max_position_embeddings=262144, tie_word_embeddings=False,
    partial_rotary_factor=0.25, decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True,
    mtp_num_hidden_layers=1,
)  # fmt: skip

#: A small Qwen3-Next for CPU runs: 2 linear and 2 full layers, H_v = 2 H_k.
QWEN3_NEXT_SMALL = dict(
    model_type="qwen3_next", hidden_size=64, num_hidden_layers=4, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, intermediate_size=96, moe_intermediate_size=32,
    shared_expert_intermediate_size=48, num_experts=4, num_experts_per_tok=2, vocab_size=200,
    linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
    linear_value_head_dim=12, linear_conv_kernel_dim=4, full_attention_interval=2,
    tie_word_embeddings=False,
)  # fmt: skip


def _transformers_causal(cfg: dict[str, Any], device: str = "meta") -> torch.nn.Module:
    import torch_models as tm

    kwargs = {k: v for k, v in cfg.items() if k != "model_type"}
    return tm.build_from_config(
        transformers.AutoConfig.for_model(cfg["model_type"], **kwargs), device=device
    )


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"full_attention_interval": 2},
        # any order of layer kinds, not only the periodic one
        {"layer_types": ["full_attention"] * 3 + ["linear_attention"] * 45},
        {"attention_bias": True, "tie_word_embeddings": True},
    ],
)
def test_qwen3_next_parameters_equal_transformers(change):
    cfg = {**QWEN3_NEXT_80B, **change}
    expected = sum(p.numel() for p in _transformers_causal(cfg).parameters())
    spec = spec_from_config(cfg, name="qwen3-next")
    assert int(bl.params(spec.arch())) == expected
    assert cb.params(spec) == expected  # the compiled twin agrees
    if not change:
        # model card: "80B total parameters and 3B activated" (A3B; the MTP layer is not
        # built): 79.67B, and 3.25B active outside the embedding and the LM head
        assert expected == 79_674_391_296
        embeddings = 2 * 151936 * 2048
        assert round((int(bl.params_active_per_token(spec.arch())) - embeddings) / 1e9) == 3
        assert any("mtp_num_hidden_layers" in n for n in spec.notes)
        assert spec.linear_layers == 36 and spec.arch().n_full_layers == 12


def test_qwen3_next_decode_flops_equal_flop_counter():
    import torch_models as tm

    from rlmcost.blocks.attention import linear_attention_core_flops_per_token

    model = _transformers_causal(QWEN3_NEXT_SMALL, device="cpu")
    a = spec_from_config(QWEN3_NEXT_SMALL, name="small").arch()
    lin = a.n_linear_layers
    # FlopCounterMode counts matmuls and convolutions: the recurrent delta rule is elementwise
    # there (torch_recurrent_gated_delta_rule), and the reference causal_conv1d_update convolves
    # the K cached inputs plus the new one into two outputs, keeping the last: twice 2 K per
    # conv channel. Everything else (projections, gated q_proj, MoE, scores, head) is ours.
    delta_rule = 6 * a.linear_value_heads * a.linear_key_head_dim * a.linear_value_head_dim
    conv = 2 * a.linear_conv_kernel * a.linear_conv_width
    assert int(linear_attention_core_flops_per_token(a)) == conv + delta_rule
    for context in (5, 9):
        ours = int(bl.work_forward_per_token(a, context))
        assert tm.count_decode_step(model, 1, context) == ours - lin * delta_rule + lin * conv


def test_qwen3_next_cache_is_full_layers_kv_plus_fixed_linear_state():
    model = _transformers_causal(QWEN3_NEXT_SMALL, device="cpu")
    a = spec_from_config(QWEN3_NEXT_SMALL, name="small").arch()
    ids = torch.zeros(1, 7, dtype=torch.long)
    with torch.no_grad():
        cache = model(input_ids=ids, use_cache=True).cache
    kv = sum(t.numel() for layer in cache.layers for t in (getattr(layer, "keys", None),
             getattr(layer, "values", None)) if t is not None)  # fmt: skip
    linear = [i for i, layer in enumerate(cache.layers) if type(layer).__name__.startswith("Lin")]
    recurrent = sum(cache.get_recurrent_state(i).numel() for i in linear)
    conv = sum(cache.get_conv_state(i).numel() for i in linear)
    assert len(linear) == a.n_linear_layers == 2
    # transformers keeps K conv inputs per channel, vLLM (whose shape we count) K - 1
    assert conv == len(linear) * a.linear_conv_width * a.linear_conv_kernel
    ours = int(bl.memory_kv_cache(a, 7))
    assert ours == kv + recurrent + conv - len(linear) * a.linear_conv_width
    # the linear layers' state does not grow with the sequence; the full layers' cache does
    assert int(bl.memory_kv_cache(a, 8)) - ours == a.n_full_layers * a.kv_cache_width


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"layer_types": ["sliding_attention"] * 48}, "layer_types entry 'sliding_attention'"),
        ({"layer_types": ["full_attention"] * 3}, "one entry per layer (48"),
        ({"linear_num_value_heads": 24}, "linear_key_heads=16 must divide"),
        ({"linear_key_head_dim": 0}, "linear_key_head_dim=0 is implausible"),
        ({"mlp_only_layers": [0]}, "mlp_only_layers"),
    ],
)
def test_bad_qwen3_next_configs_are_one_line_errors(tmp_path, change, fragment):
    assert_refused_in_one_line(tmp_path, {**QWEN3_NEXT_80B, **change}, fragment)


@pytest.mark.parametrize("pp", [1, 2, 3, 4])
@pytest.mark.parametrize("name", ["qwen3-next", "qwen2.5-vl-7b"])
def test_pipeline_stages_hold_every_parameter_once(name, pp):
    from rlmcost.choices import Head
    from rlmcost.parallel import memory as symbolic
    from rlmcost.parallel.breakdown import stage_params
    from rlmcost.parallel.layout import Layout
    from rlmcost.parallel.shard import stages

    cfg = QWEN3_NEXT_80B if name == "qwen3-next" else VL_CONFIGS[name]
    spec = spec_from_config(cfg, name=name)
    arch, layout = spec.arch(), Layout(pp=pp)
    held = 0
    for stage in stages(arch, pp):
        numeric = stage_params(arch, layout, stage)
        assert numeric == symbolic.stage_params(arch, layout, stage, Head.LM)
        held += numeric.dense + numeric.expert
    # independent: sum(p.numel()) of the transformers model (the parameter tests above); a
    # stage of 12, 16 or 24 of Qwen3-Next's 48 layers holds whole periods of 3 linear + 1 full
    assert held == int(bl.params(arch))
