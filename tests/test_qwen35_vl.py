"""Qwen3-VL (``qwen3_vl``, ``qwen3_vl_moe``) and Qwen3.5 (``qwen3_5``, ``qwen3_5_moe`` and the
text-only ``qwen3_5_text``, ``qwen3_5_moe_text``) configs, against transformers 5.24.

Independent side: the transformers classes built from the same config dict on the meta device
(``sum(p.numel())``, the vision tower's apart), ``FlopCounterMode`` over the tower's forward and
over a decode step of a small CPU model, and the parameter totals of the published checkpoints'
safetensors headers.
"""

from __future__ import annotations

from typing import Any

import pytest
from config_errors import assert_refused_in_one_line

from rlmcost import blocks as bl
from rlmcost.compiled import blocks as cb
from rlmcost.specs.hf_config import spec_from_config
from rlmcost.specs.hf_vision import vision_flops_per_patch, vision_params, vision_shape

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

#: A small tower: 2 blocks, both feeding a deepstack merger in Qwen3-VL (Qwen3.5 has none).
VISION = dict(depth=2, hidden_size=64, intermediate_size=80, num_heads=4, out_hidden_size=96,
              num_position_embeddings=64, deepstack_visual_indexes=[0, 1])  # fmt: skip
TEXT3 = dict(hidden_size=96, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=16, vocab_size=1000)  # fmt: skip
MOE3 = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32)
#: A small Qwen3.5 decoder: 2 Gated DeltaNet and 2 full-attention layers, H_v = 2 H_k.
TEXT35 = dict(TEXT3, num_hidden_layers=4, linear_num_key_heads=2, linear_num_value_heads=4,
              linear_key_head_dim=8, linear_value_head_dim=12, linear_conv_kernel_dim=4,
              full_attention_interval=2)  # fmt: skip
MOE35 = dict(MOE3, shared_expert_intermediate_size=48)

SMALL: dict[str, dict[str, Any]] = {
    "qwen3_vl": dict(model_type="qwen3_vl", text_config=TEXT3, vision_config=VISION),
    "qwen3_vl tied": dict(model_type="qwen3_vl", text_config=TEXT3, vision_config=VISION,
                          tie_word_embeddings=True),
    # transformers 5 writes tie_word_embeddings into text_config too; the top-level one rules
    "qwen3_vl text tie ignored": dict(model_type="qwen3_vl", vision_config=VISION,
                                      text_config={**TEXT3, "tie_word_embeddings": True}),
    "qwen3_vl no deepstack": dict(model_type="qwen3_vl", text_config=TEXT3,
                                  vision_config={**VISION, "deepstack_visual_indexes": []}),
    "qwen3_vl_moe": dict(model_type="qwen3_vl_moe", text_config={**TEXT3, **MOE3},
                         vision_config=VISION),
    "qwen3_vl_moe dense layer": dict(model_type="qwen3_vl_moe", vision_config=VISION,
                                     text_config={**TEXT3, **MOE3, "mlp_only_layers": []}),
    "qwen3_5": dict(model_type="qwen3_5", text_config=TEXT35, vision_config=VISION),
    "qwen3_5 tied": dict(model_type="qwen3_5", text_config=TEXT35, vision_config=VISION,
                         tie_word_embeddings=True),
    "qwen3_5 layer_types": dict(model_type="qwen3_5", vision_config=VISION, text_config={
        **TEXT35, "layer_types": ["full_attention"] + ["linear_attention"] * 3}),
    "qwen3_5 gated attention bias": dict(model_type="qwen3_5", vision_config=VISION,
                                         text_config={**TEXT35, "attention_bias": True}),
    "qwen3_5_moe": dict(model_type="qwen3_5_moe", text_config={**TEXT35, **MOE35},
                        vision_config=VISION),
}  # fmt: skip
TEXT_ONLY: dict[str, dict[str, Any]] = {
    "qwen3_5_text": dict(model_type="qwen3_5_text", **TEXT35),
    "qwen3_5_text tied": dict(model_type="qwen3_5_text", **TEXT35, tie_word_embeddings=True),
    "qwen3_5_moe_text": dict(model_type="qwen3_5_moe_text", **TEXT35, **MOE35),
}


def _config(cfg: dict[str, Any]) -> Any:
    kwargs = {k: v for k, v in cfg.items() if k != "model_type"}
    return transformers.AutoConfig.for_model(cfg["model_type"], **kwargs)


def _multimodal(cfg: dict[str, Any], device: str = "meta") -> Any:
    extra = {"experts_implementation": "batched_mm"} if "moe" in cfg["model_type"] else {}
    with torch.device(device):
        return transformers.AutoModelForImageTextToText.from_config(
            _config(cfg), attn_implementation="eager", **extra
        )


@pytest.mark.parametrize("name", sorted(SMALL))
def test_parameters_equal_transformers(name):
    cfg = SMALL[name]
    model = _multimodal(cfg)
    spec = spec_from_config(cfg, name="x")
    total = sum(p.numel() for p in model.parameters())
    tower = sum(p.numel() for p in model.model.visual.parameters())
    # independent: sum(p.numel()) of Qwen3VL(Moe)/Qwen3_5(Moe)ForConditionalGeneration (meta)
    assert spec.encoder_params == tower
    assert int(bl.params(spec.arch())) == total
    assert cb.params(spec) == total  # the compiled twin agrees
    assert int(bl.params_active_per_token(spec.arch())) < total - tower + 1
    assert spec.model_type == cfg["model_type"]


@pytest.mark.parametrize("name", sorted(TEXT_ONLY))
def test_text_only_parameters_equal_transformers(name):
    import torch_models as tm

    cfg = TEXT_ONLY[name]
    # independent: Qwen3_5ForCausalLM / Qwen3_5MoeForCausalLM built on the meta device
    expected = sum(p.numel() for p in tm.build_from_config(_config(cfg)).parameters())
    spec = spec_from_config(cfg, name="x")
    assert int(bl.params(spec.arch())) == cb.params(spec) == expected
    assert spec.encoder_params == 0


def test_text_only_qwen3_5_is_the_multimodal_decoder():
    # the same decoder keys, top-level and text-only, or under text_config with a tower
    text = spec_from_config(TEXT_ONLY["qwen3_5_text"], name="x").arch()
    full = spec_from_config(SMALL["qwen3_5"], name="x")
    assert full.arch() == text.with_(encoder_params=full.encoder_params)


@pytest.mark.parametrize("mt, tower", [("qwen3_vl", "qwen3_vl"), ("qwen3_5", "qwen3_5")])
def test_vision_flops_per_patch_equal_flop_counter(mt, tower):
    from torch.utils.flop_counter import FlopCounterMode

    cfg = SMALL[mt]
    model = _multimodal(cfg, device="cpu")
    grid = torch.tensor([[1, 4, 6]])  # one frame of 4 x 6 patches, p = 16
    n = 24
    pixels = torch.randn(n, 3 * 2 * 16 * 16)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model.model.visual(pixels, grid_thw=grid)
    s = vision_shape(cfg, tower, "config")
    scores = s["depth"] * 4 * n * n * s["d_v"]  # QK^T and AV over all n patches, per block
    # independent: torch's FLOP counter over the tower's forward (eager attention)
    assert counter.get_total_flops() == n * vision_flops_per_patch(s) + scores
    assert vision_params(s) == sum(p.numel() for p in model.model.visual.parameters())
    assert s["deepstack"] == (2 if mt == "qwen3_vl" else 0)


def test_qwen3_5_decode_flops_equal_flop_counter():
    import torch_models as tm

    from rlmcost.blocks.attention import linear_attention_core_flops_per_token

    model = tm.build_from_config(_config(TEXT_ONLY["qwen3_5_text"]), device="cpu")
    a = spec_from_config(TEXT_ONLY["qwen3_5_text"], name="small").arch()
    lin = a.n_linear_layers
    # as for Qwen3-Next (tests/test_model_types.py): FlopCounterMode sees the recurrent delta
    # rule as elementwise and the reference causal_conv1d_update convolves K cached inputs plus
    # the new one into two outputs; the split in_proj_qkv/z/b/a, the gated q_proj, the dense
    # MLP, the scores and the head are ours
    delta_rule = 6 * a.linear_value_heads * a.linear_key_head_dim * a.linear_value_head_dim
    conv = 2 * a.linear_conv_kernel * a.linear_conv_width
    assert int(linear_attention_core_flops_per_token(a)) == conv + delta_rule
    assert lin == 2 and not a.n_experts
    for context in (5, 9):
        ours = int(bl.work_forward_per_token(a, context))
        assert tm.count_decode_step(model, 1, context) == ours - lin * delta_rule + lin * conv


def test_notes_say_what_is_left_out():
    notes = spec_from_config({**SMALL["qwen3_vl"]}, name="x").notes
    assert any("vision tower" in n for n in notes) and any("deepstack" in n for n in notes)
    mtp = {**SMALL["qwen3_5"], "text_config": {**TEXT35, "mtp_num_hidden_layers": 1}}
    spec = spec_from_config(mtp, name="x")
    assert spec.mtp_layers == 1 and any("mtp_num_hidden_layers" in n for n in spec.notes)
    bare = {k: v for k, v in SMALL["qwen3_5_moe"].items() if k != "vision_config"}
    spec = spec_from_config(bare, name="x")
    assert spec.encoder_params == 0 and any("language model only" in n for n in spec.notes)


@pytest.mark.parametrize(
    "name, change, fragment",
    [
        ("qwen3_vl", {"text_config": [1]}, "text_config of a qwen3_vl config must be an object"),
        ("qwen3_vl", {"vision_config": [1]}, "needs a vision_config object"),
        ("qwen3_vl", {"vision_config": {**VISION, "out_hidden_size": 64}}, "output width 64"),
        ("qwen3_vl", {"vision_config": {**VISION, "deepstack_visual_indexes": [5]}},
         "deepstack_visual_indexes=[5] must list block indexes below depth=2"),
        ("qwen3_vl", {"vision_config": {**VISION, "patch_size": [16, 16]}},
         "vision_config.patch_size=[16, 16] is implausible"),
        ("qwen3_vl", {"vision_config": {**VISION, "num_heads": 7}}, "num_heads=7 must divide"),
        ("qwen3_vl_moe", {"text_config": {**TEXT3, **MOE3, "mlp_only_layers": [0]}},
         "mlp_only_layers"),
        ("qwen3_5", {"text_config": {**TEXT35, "layer_types": ["full_attention"]}},
         "one entry per layer (4"),
        ("qwen3_5", {"text_config": {**TEXT35, "linear_num_value_heads": 3}},
         "linear_key_heads=2 must divide"),
        ("qwen3_5", {"text_config": {**TEXT35, "hidden_size": 1e40}}, "hidden_size=1e+40"),
        ("qwen3_5_moe", {"text_config": TEXT35}, "config has no 'num_local_experts'"),
    ],
)  # fmt: skip
def test_bad_configs_are_one_line_errors(tmp_path, name, change, fragment):
    assert_refused_in_one_line(tmp_path, {**SMALL[name], **change}, fragment)


@pytest.mark.parametrize(
    "name, total",
    [("qwen3-vl-30b-a3b", 31_070_754_032), ("qwen3-vl-235b-a22b", 235_670_022_896)],
)
def test_builtins_equal_their_checkpoints_tensor_totals(name, total):
    from rlmcost.specs import get_model

    # independent: the sum of the shapes in the published checkpoints' safetensors headers
    # (Qwen/Qwen3-VL-30B-A3B-Instruct: 13 files, 882 tensors; -235B-A22B-Instruct: 96 files)
    assert int(bl.params(get_model(name).arch())) == total


def test_qwen3_5_27b_decoder_is_the_miles_rows():
    from rlmcost.specs import get_model

    # the language model alone: transformers Qwen3_5ForCausalLM of the miles row's Qwen3.5-27B
    # config, 26,895,998,464 parameters (tests/test_linear_mixer.py); the tower adds the rest
    spec = get_model("qwen3.5-27b")
    assert int(bl.params(spec.arch())) - spec.encoder_params == 26_895_998_464


@pytest.mark.parametrize(
    "hf_id, name",
    [("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl-7b"), ("Qwen/Qwen2.5-VL-3B-Instruct",
      "qwen2.5-vl-3b"), ("Qwen3-VL-8B-Instruct", "qwen3-vl-8b"),
     ("Qwen/Qwen3.5-35B-A3B-Base", "qwen3.5-35b-a3b"), ("Qwen/Qwen3.5-9B-Base", "qwen3.5-9b"),
     ("Qwen/Qwen3.5-397B-A17B", "qwen3.5-397b-a17b")],
)  # fmt: skip
def test_framework_example_models_resolve(hf_id, name):
    from rlmcost.specs import get_model

    # verl examples/grpo_trainer/run_qwen2_5_vl-7b.sh, run_qwen3_vl-8b-megatron.sh; NeMo RL
    # recipes grpo-qwen3.5-35ba3b-*, grpo-qwen3.5-9b-*, grpo-qwen3.5-397ba17b-*
    assert get_model(hf_id).name == name
