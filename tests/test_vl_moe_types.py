"""GLM-4.5V / GLM-4.6V (``glm4v_moe``) and Kimi K2.5 (``kimi_k25``): an MoE decoder read as
``glm4_moe`` / ``deepseek_v3`` plus a vision tower (rlmcost.specs.hf_vision), against the
transformers 5.24 classes ``Glm4vMoeForConditionalGeneration`` and
``Kimi_K25ForConditionalGeneration`` built from the same small configs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from config_errors import assert_refused_in_one_line

from rlmcost import blocks as bl
from rlmcost.specs.hf_config import spec_from_config
from rlmcost.specs.hf_vision import VISION_DEFAULTS

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

GLM_TEXT = dict(model_type="glm4v_moe_text", hidden_size=96, num_hidden_layers=3,
                num_attention_heads=4, num_key_value_heads=2, head_dim=32, intermediate_size=64,
                moe_intermediate_size=16, n_routed_experts=8, num_experts_per_tok=2,
                vocab_size=1000)  # fmt: skip
GLM_VISION = dict(depth=2, hidden_size=64, intermediate_size=80, num_heads=4,
                  out_hidden_size=96, image_size=56, patch_size=14)  # fmt: skip
KIMI_TEXT = dict(model_type="deepseek_v3", hidden_size=96, num_hidden_layers=3,
                 num_attention_heads=4, num_key_value_heads=4, intermediate_size=64,
                 moe_intermediate_size=16, n_routed_experts=8, num_experts_per_tok=2,
                 n_shared_experts=1, first_k_dense_replace=1, q_lora_rank=32, kv_lora_rank=16,
                 qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16, vocab_size=1000,
                 n_group=1, topk_group=1, tie_word_embeddings=False)  # fmt: skip
#: the published Kimi K2.5 config.json's names (vt_*, init_pos_emb_*)
KIMI_VISION = dict(vt_hidden_size=64, vt_num_hidden_layers=2, vt_num_attention_heads=4,
                   vt_intermediate_size=80, init_pos_emb_height=8, init_pos_emb_width=8,
                   patch_size=14, merge_kernel_size=[2, 2], mm_hidden_size=64)  # fmt: skip
#: the same tower in transformers' own names (Kimi_K25VisionConfig)
KIMI_VISION_TF = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=80, pos_emb_height=8, pos_emb_width=8, patch_size=14,
                      merge_kernel_size=[2, 2])  # fmt: skip


def _built(mt: str, text: dict[str, Any], vision: dict[str, Any], device: str = "meta",
           **top: Any) -> Any:  # fmt: skip
    config = transformers.AutoConfig.for_model(mt, text_config=text, vision_config=vision, **top)
    with torch.device(device):
        return transformers.AutoModelForImageTextToText.from_config(
            config, attn_implementation="eager", experts_implementation="batched_mm"
        )


def _n(module: Any) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize(
    "text, vision",
    [({}, {}), ({"attention_bias": False, "first_k_dense_replace": 2, "use_qk_norm": True},
               {"attention_bias": True, "spatial_merge_size": 1})],
)  # fmt: skip
def test_glm4v_moe_parameters_equal_transformers(text, vision):
    cfg = dict(model_type="glm4v_moe", tie_word_embeddings=False,
               text_config={**GLM_TEXT, **text}, vision_config={**GLM_VISION, **vision})
    model = _built("glm4v_moe", cfg["text_config"], cfg["vision_config"],
                   tie_word_embeddings=False)  # fmt: skip
    spec = spec_from_config(cfg, name="x")
    # independent: sum(p.numel()) of Glm4vMoeForConditionalGeneration (meta): its text
    # attention has no q/k norm whatever use_qk_norm says, q/k/v biases by default
    assert int(bl.params(spec.arch())) == _n(model)
    assert spec.encoder_params == _n(model.model.visual) and not spec.qk_norm


def test_glm4v_moe_text_defaults_are_transformers():
    ref = transformers.Glm4vMoeTextConfig()
    defaults = {k: getattr(ref, k) for k in ("attention_bias", "n_shared_experts",
                                             "first_k_dense_replace")}  # fmt: skip
    from rlmcost.specs.hf_vision import GLM4V_MOE_TEXT_DEFAULTS

    assert defaults == GLM4V_MOE_TEXT_DEFAULTS


@pytest.mark.parametrize("text", [{}, {"q_lora_rank": None, "first_k_dense_replace": 0}])
def test_kimi_k25_parameters_equal_transformers(text):
    cfg = dict(model_type="kimi_k25", tie_word_embeddings=False,
               text_config={**KIMI_TEXT, **text}, vision_config=KIMI_VISION)  # fmt: skip
    # the projector's norm spans projection_hidden_size there (mm_hidden_size published)
    model = _built("kimi_k25", cfg["text_config"], KIMI_VISION_TF, tie_word_embeddings=False,
                   projection_hidden_size=64)  # fmt: skip
    spec = spec_from_config(cfg, name="x")
    # independent: sum(p.numel()) of Kimi_K25ForConditionalGeneration (meta), its tower
    # configured in transformers' names; the published names are aliases of them
    assert int(bl.params(spec.arch())) == _n(model)
    tower = _n(model.model.vision_tower) + _n(model.model.mm_projector)
    assert spec.encoder_params == tower and spec.model_type == "kimi_k25"


def test_kimi_k25_vision_defaults_are_transformers():
    ref = transformers.Kimi_K25VisionConfig()
    mine = VISION_DEFAULTS["kimi_k25"]
    assert {k: getattr(ref, k) for k in mine} == {**mine, "merge_kernel_size": (2, 2)}


def test_kimi_k25_vision_flops_equal_flop_counter():
    from torch.utils.flop_counter import FlopCounterMode

    model = _built("kimi_k25", KIMI_TEXT, KIMI_VISION_TF, device="cpu",
                   tie_word_embeddings=False, projection_hidden_size=64)  # fmt: skip
    grid = torch.tensor([[1, 4, 6]])  # one frame of 4 x 6 patches: 6 image tokens
    n = 24
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model.model.get_image_features(torch.randn(n, 3, 14, 14), grid)
    cfg = dict(model_type="kimi_k25", text_config=KIMI_TEXT, vision_config=KIMI_VISION)
    spec = spec_from_config(cfg, name="x")
    # source: FlopCounterMode (the Conv2d, the blocks' and projector's matmuls, QK^T and AV
    # over the image's 24 patches in each block; the bicubic position resampling is no matmul)
    assert spec.encoder_forward_flops(6) == counter.get_total_flops()


@pytest.mark.parametrize(
    "mt, change, fragment",
    [("kimi_k25", {"merge_kernel_size": [2, 3]}, "merge_kernel_size=[2, 3]"),
     ("kimi_k25", {"vt_num_attention_heads": 5}, "num_attention_heads=5 must divide"),
     ("kimi_k25", {"mm_hidden_size": 32}, "norm width 32"),
     ("kimi_k25", {"vt_hidden_size": -1}, "hidden_size=-1 is implausible"),
     ("glm4v_moe", {"out_hidden_size": 64}, "output width 64 differs")],
)  # fmt: skip
def test_bad_vl_moe_configs_are_one_line_errors(tmp_path, mt, change, fragment):
    text, vision = (KIMI_TEXT, KIMI_VISION) if mt == "kimi_k25" else (GLM_TEXT, GLM_VISION)
    cfg = {"model_type": mt, "text_config": text, "vision_config": {**vision, **change}}
    assert_refused_in_one_line(tmp_path, json.loads(json.dumps(cfg)), fragment)
