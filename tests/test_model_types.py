"""Model types beyond the plain decoders: Qwen2-VL / Qwen2.5-VL (a Qwen2 decoder plus a vision
tower), against transformers.

Independent side: the transformers classes built from the same config dict on the meta device
(``sum(p.numel())``), ``FlopCounterMode`` over the vision tower's forward on a small CPU model,
and the published totals on the Hugging Face model pages (safetensors metadata).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

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
