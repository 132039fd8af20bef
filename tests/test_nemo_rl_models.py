"""Built-ins for models NeMo RL's recipes name (NVIDIA-NeMo/RL examples/configs at 7ea279abf):
their public config.json shapes (merged into tests/test_registry_configs.py's PUBLIC_CONFIGS,
whose tests build each from the config alone and count the transformers 5.24 class on the meta
device), and the independent totals their publishers state.

* nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16 (recipes/llm/
  dapo-nanov3.5-30BA3B-4n8g-automodel.yaml): "the same architecture as Nemotron 3 Nano, but its
  checkpoint was trained natively with multi-token prediction" (NVIDIA-NeMo/Megatron-Bridge
  examples/models/nemotron/nemotron_3/lightning/README.md @067f987d); the MTP block is one
  attention and one MoE layer (``mtp_layers_block_type: [attention, moe]`` in its config.json,
  Megatron-Bridge recipes/nemotronh/h100/nemotron_3_nano.py @067f987d:
  ``mtp_hybrid_override_pattern = "*E"``, ``mtp_use_repeated_layer = True``), which transformers
  does not build. The model verification card (examples/model_verification_cards/
  nemotron-3.5-lightning/card.yaml @067f987d, revision b3caaabe) states 32,913,266,240
  parameters in the checkpoint's tensors, MTP included.
* mistralai/Mistral-Medium-3.5-128B (recipes/llm/dapo-mistral-medium-3.5-128b-16n8g-fsdp2-
  automodel.yaml): ``Mistral3ForConditionalGeneration``, "88 Ministral-3 decoder layers (hidden
  12288, 96 attention heads, 8 KV heads)" and a Pixtral tower (NVIDIA-NeMo/Automodel
  docs/model-coverage/vlm/mistralai/mistral-medium-3-5.mdx @36044ad3); the text_config and
  vision_config keys as ai-dynamo/aiconfigurator's Mistral-Medium-3.5 config-parsing unit test
  quotes them (head_dim 128, intermediate_size 28672, vocab_size 131072, 262,144 positions; the
  tower 48 blocks of 1664, 16 heads of 104, FFN 8192, patch 14, spatial_merge_size 2), the keys
  it leaves out at ``Ministral3Config`` / ``PixtralVisionConfig`` defaults, untied.
"""

from __future__ import annotations

from typing import Any

import pytest

from rlmcost import blocks as bl
from rlmcost.specs import get_model
from rlmcost.specs.hf_config import spec_from_config

# fmt: off
_BLOCKS = {"M": "mamba", "E": "moe", "*": "attention"}
_NANO3_PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"

#: Nemotron 3.5 Lightning: Nemotron 3 Nano's shape (tests/test_nemotron_h.py NANO3), its blocks
#: listed as transformers 5 writes them (layers_block_type), one MTP block of attention + MoE
LIGHTNING = dict(model_type="nemotron_h", vocab_size=131072, hidden_size=2688,
                 intermediate_size=1856, layers_block_type=[_BLOCKS[c] for c in _NANO3_PATTERN],
                 num_attention_heads=32, num_key_value_heads=2, head_dim=128, mamba_num_heads=64,
                 mamba_head_dim=64, ssm_state_size=128, n_groups=8, conv_kernel=4, chunk_size=128,
                 n_routed_experts=128, num_experts_per_tok=6, moe_intermediate_size=1856,
                 moe_shared_expert_intermediate_size=3712, max_position_embeddings=262144,
                 num_nextn_predict_layers=1, mtp_layers_block_type=["attention", "moe"],
                 tie_word_embeddings=False)

#: Mistral Medium 3.5's decoder (text_config, model_type ministral3), untied
MEDIUM35_TEXT = dict(model_type="ministral3", num_hidden_layers=88, hidden_size=12288,
                     intermediate_size=28672, num_attention_heads=96, num_key_value_heads=8,
                     head_dim=128, vocab_size=131072, max_position_embeddings=262144,
                     tie_word_embeddings=False)
#: the whole checkpoint's config: the decoder plus the Pixtral tower (module docstring)
MEDIUM35 = dict(model_type="mistral3", tie_word_embeddings=False, spatial_merge_size=2,
                vision_feature_layer=-1, text_config=MEDIUM35_TEXT,
                vision_config=dict(model_type="pixtral", hidden_size=1664, head_dim=104,
                                   intermediate_size=8192, num_attention_heads=16,
                                   num_hidden_layers=48, patch_size=14))

NEMO_RL_CONFIGS: dict[str, dict[str, Any]] = {
    "nemotron-3.5-lightning-30b-a3b": LIGHTNING,
    "mistral-medium-3.5-128b": MEDIUM35_TEXT,
}
# fmt: on


def test_lightning_is_nano3_with_one_mtp_block():
    nano = get_model("nemotron-3-nano-30b-a3b")
    spec = get_model("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16")
    assert spec.name == "nemotron-3.5-lightning-30b-a3b"
    assert spec.arch().with_(name=nano.name) == nano.arch()
    assert spec.mtp_layers == 1 and nano.mtp_layers == 0


def test_lightning_checkpoint_total_is_the_model_plus_its_mtp_block():
    # independent: the verification card's 32,913,266,240 tensors' parameters. They are the
    # model transformers builds, plus what it keeps as buffers (the routers'
    # e_score_correction_bias, E fp32 values per MoE layer: NemotronHTopkRouter), plus the MTP
    # block Megatron-Core's MultiTokenPredictionLayer holds: enorm, hnorm, eh_proj (2d -> d),
    # one attention and one MoE layer with their norms, a final norm
    a = get_model("nemotron-3.5-lightning-30b-a3b").arch()
    d, E = a.d_model, a.n_experts
    moe_layers = a.n_layers - a.ffn_free_layers
    attn = d * a.n_heads * a.head_dim * 2 + d * a.n_kv_heads * a.head_dim * 2
    moe = E * 2 * d * a.d_expert + 2 * d * a.d_shared_expert + E * d + E
    mtp = 2 * d + 2 * d * d + attn + moe + 2 * d + d
    assert int(bl.params(a)) + moe_layers * E + mtp == 32_913_266_240


def test_medium35_counts_its_decoder_and_says_the_tower_is_left_out():
    spec = get_model("mistralai/Mistral-Medium-3.5-128B")
    loaded = spec_from_config(MEDIUM35, "mistral-medium-3.5-128b")
    # the multimodal config reads to the decoder's shape, with the note that the tower is out
    assert loaded.arch() == spec.arch()
    assert any("Pixtral" in n for n in loaded.notes)


def test_medium35_tower_size_in_the_notes_is_transformers():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = {k: v for k, v in MEDIUM35.items() if k != "model_type"}
    config = transformers.AutoConfig.for_model("mistral3", **cfg)
    with torch.device("meta"):
        model = transformers.AutoModelForImageTextToText.from_config(config)
    spec = get_model("mistral-medium-3.5-128b")
    # independent: Mistral3ForConditionalGeneration on the meta device, the tower included;
    # the model card's "128B" is this whole count
    whole = sum(p.numel() for p in model.parameters())
    assert round(whole / 1e9) == 128
    left_out = whole - int(bl.params(spec.arch()))
    assert any(f"{left_out:,}" in n for n in spec.notes)


@pytest.mark.parametrize("hf_id, name", [("Qwen/Qwen3-Omni-30B-A3B-Instruct", "omni")])
def test_models_left_out_stay_unknown(hf_id, name):
    # the omni models (audio towers, talkers) are not built-ins: their ids stay a one-line
    # unknown-model error (Gemma 4's are: tests/test_gemma4.py, tests/test_gemma4e.py)
    from rlmcost.errors import SpecError

    with pytest.raises(SpecError):
        get_model(hf_id)
