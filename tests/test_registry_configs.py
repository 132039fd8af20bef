"""Built-in models against their public config.json files and the transformers classes.

``PUBLIC_CONFIGS`` holds, for every built-in model, the shape keys of the config.json the spec
was copied from (values written after the published Hugging Face configs; keys transformers
fills from its defaults are left out where the public file leaves them out). Each test builds
the independent side from that dict alone:

* the config.json loader turns it into the same shape as the built-in spec;
* ``AutoModelForCausalLM.from_config`` on the meta device has exactly as many parameters as
  ``blocks.params`` of the built-in spec.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_dsa import GLM5_CONFIG  # tests/ is on sys.path under pytest
from test_gemma4 import GEMMA4_CONFIGS
from test_gemma4e import E_CONFIGS
from test_latent_moe import SUPER
from test_launcher_models import LAUNCHER_CONFIGS
from test_nemo_rl_models import NEMO_RL_CONFIGS
from test_nemotron_h import NANO3, NANO12

from rlmcost import blocks as bl
from rlmcost.errors import SpecError
from rlmcost.specs import get_model, models
from rlmcost.specs.hf_config import GEMMA3_TEXT_DEFAULTS, SUPPORTED, load_config, spec_from_config
from rlmcost.specs.hf_families import READ_AS, gpt_oss_uncounted

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _cfg(mt: str, L: int, d: int, ff: int, h: int, kv: int, V: int, ctx: int, **kw: Any) -> dict:
    return dict(
        model_type=mt,
        num_hidden_layers=L,
        hidden_size=d,
        intermediate_size=ff,
        num_attention_heads=h,
        num_key_value_heads=kv,
        vocab_size=V,
        max_position_embeddings=ctx,
        **kw,
    )


def llama(L, d, ff, h, kv, V=128256, ctx=131072, tie=False, **kw):
    return _cfg("llama", L, d, ff, h, kv, V, ctx, tie_word_embeddings=tie, **kw)


def qwen2(L, d, ff, h, kv, V, ctx, tie):
    return _cfg("qwen2", L, d, ff, h, kv, V, ctx, tie_word_embeddings=tie,
                sliding_window=ctx, use_sliding_window=False)  # fmt: skip


def qwen3(L, d, ff, h, tie):
    return _cfg("qwen3", L, d, ff, h, 8, 151936, 40960, head_dim=128, tie_word_embeddings=tie,
                attention_bias=False, sliding_window=None, use_sliding_window=False)  # fmt: skip


def qwen3_moe(L, d, ff, h, kv, E, k, d_e, ctx):
    return _cfg("qwen3_moe", L, d, ff, h, kv, 151936, ctx, head_dim=128, num_experts=E,
                num_experts_per_tok=k, moe_intermediate_size=d_e, decoder_sparse_step=1,
                mlp_only_layers=[], tie_word_embeddings=False)  # fmt: skip


def gemma2(L, d, ff, h, kv, hd):
    return _cfg("gemma2", L, d, ff, h, kv, 256000, 8192, head_dim=hd, sliding_window=4096,
                attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                query_pre_attn_scalar=hd)  # fmt: skip


def gemma3_text(L, d, ff, h, kv, hd, V, ctx, window):
    return _cfg("gemma3_text", L, d, ff, h, kv, V, ctx, head_dim=hd, sliding_window=window)


def phi3(L, d, ff, h, kv, V, ctx, tie=False, window=None):
    return _cfg("phi3", L, d, ff, h, kv, V, ctx, tie_word_embeddings=tie, sliding_window=window)


def glm4_moe(L, d, ff, d_e, E, dense, qk_norm):
    return _cfg("glm4_moe", L, d, ff, 96, 8, 151552, 131072, head_dim=128,
                moe_intermediate_size=d_e, n_routed_experts=E, n_shared_experts=1,
                num_experts_per_tok=8, first_k_dense_replace=dense, attention_bias=True,
                use_qk_norm=qk_norm, partial_rotary_factor=0.5, num_nextn_predict_layers=1,
                n_group=1, topk_group=1, routed_scaling_factor=2.5,
                tie_word_embeddings=False)  # fmt: skip


def gpt_oss(L, E):
    # openai/gpt-oss-20b and -120b config.json (verl tests/utils/test_flops_counter.py @b178a3cd
    # carries the 20b's): alternating sliding (128) and full attention, experts of width 2880
    return _cfg("gpt_oss", L, 2880, 2880, 64, 8, 201088, 131072, head_dim=64,
                num_local_experts=E, num_experts_per_tok=4, sliding_window=128,
                layer_types=["sliding_attention", "full_attention"] * (L // 2),
                attention_bias=True, tie_word_embeddings=False)  # fmt: skip


def kimi_k2(ctx):
    # moonshotai/Kimi-K2-Instruct config.json; slime scripts/models/kimi-k2.sh @624b824a gives
    # the same sizes (61 layers, 7168, 384 experts top-8, q_lora 1536, kv_lora 512)
    return _cfg("kimi_k2", 61, 7168, 18432, 64, 64, 163840, ctx, moe_intermediate_size=2048,
                n_shared_experts=1, n_routed_experts=384, num_experts_per_tok=8,
                first_k_dense_replace=1, q_lora_rank=1536, kv_lora_rank=512,
                qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                num_nextn_predict_layers=0, tie_word_embeddings=False)  # fmt: skip


def qwen25_vl(L, d, ff, h, kv, V, tie):
    # Qwen/Qwen2.5-VL-3B-Instruct and -7B-Instruct config.json: a Qwen2 decoder top-level and
    # the 32-block windowed tower (tests/test_model_types.py VL_CONFIGS, the same keys)
    return dict(_cfg("qwen2_5_vl", L, d, ff, h, kv, V, 128000, tie_word_embeddings=tie,
                     sliding_window=32768, use_sliding_window=False, max_window_layers=28),
                vision_config=dict(depth=32, hidden_size=1280, intermediate_size=3420,
                                   num_heads=16, in_chans=3, out_hidden_size=d, patch_size=14,
                                   spatial_merge_size=2, temporal_patch_size=2, window_size=112,
                                   fullatt_block_indexes=[7, 15, 23, 31]))  # fmt: skip


#: the Qwen3-VL / Qwen3.5 vision_config of every size but out_hidden_size (27 blocks of 1152)
QWEN3_VISION = dict(depth=27, hidden_size=1152, intermediate_size=4304, num_heads=16,
                    in_channels=3, patch_size=16, spatial_merge_size=2, temporal_patch_size=2,
                    num_position_embeddings=2304)  # fmt: skip


def qwen3_vl(L, d, ff, h, kv, **moe):
    # Qwen/Qwen3-VL-*-Instruct config.json: the decoder under text_config (rope_theta 5e6,
    # 262144 positions), untied at the top level, deepstack mergers after blocks 8, 16, 24
    mt = "qwen3_vl_moe" if moe else "qwen3_vl"
    text = _cfg(f"{mt}_text", L, d, ff, h, kv, 151936, 262144, head_dim=128, **moe)
    return dict(model_type=mt, tie_word_embeddings=False, text_config=text,
                vision_config=dict(QWEN3_VISION, out_hidden_size=d,
                                   deepstack_visual_indexes=[8, 16, 24]))  # fmt: skip


def qwen35(L, d, ff, h, kv, v_heads, **moe):
    # Qwen/Qwen3.5-* config.json: the hybrid decoder under text_config (3 Gated DeltaNet + 1
    # gated attention layer, 16 q/k heads of 128 in the DeltaNet, head_dim 256, one MTP layer,
    # 262144 positions), untied, the tower without deepstack mergers
    mt = "qwen3_5_moe" if moe else "qwen3_5"
    text = _cfg(f"{mt}_text", L, d, ff, h, kv, 248320, 262144, head_dim=256,
                linear_num_key_heads=16, linear_num_value_heads=v_heads,
                linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4,
                full_attention_interval=4, mtp_num_hidden_layers=1, tie_word_embeddings=False,
                **moe)  # fmt: skip
    return dict(model_type=mt, tie_word_embeddings=False, text_config=text,
                vision_config=dict(QWEN3_VISION, out_hidden_size=d, deepstack_visual_indexes=[]))


def seed_oss():
    # ByteDance-Seed/Seed-OSS-36B-Base config.json (its shape as mlx-swift-lm's Seed-OSS test
    # quotes it); q/k/v biases, none on o_proj, no MLP biases, dropouts of 0.1
    return _cfg("seed_oss", 64, 5120, 27648, 80, 8, 155136, 524288, head_dim=128,
                attention_bias=True, attention_out_bias=False, mlp_bias=False,
                attention_dropout=0.1, residual_dropout=0.1, tie_word_embeddings=False)


def minimax_m2():
    # MiniMaxAI/MiniMax-M2 config.json (M2.1, M2.5 and M2.7 publish the same shape keys; slime
    # scripts/models/minimax-m2.sh @624b824a: 62 layers, 3072, 256 experts top-8 of 1536)
    return _cfg("minimax_m2", 62, 3072, 1536, 48, 8, 200064, 196608, head_dim=128,
                num_local_experts=256, num_experts_per_tok=8, use_qk_norm=True,
                qk_norm_type="per_layer", rotary_dim=64, scoring_func="sigmoid",
                use_routing_bias=True, shared_intermediate_size=0, use_mtp=True,
                num_mtp_modules=3, mtp_transformer_layers=1, attn_type_list=[1] * 62,
                tie_word_embeddings=False)  # fmt: skip


def glm4_moe_lite():
    # zai-org/GLM-4.7-Flash config.json (as vLLM's glm4_moe_lite config test quotes it; slime
    # scripts/models/glm4.7-30B-A3B.sh @624b824a gives the same sizes)
    return _cfg("glm4_moe_lite", 47, 2048, 10240, 20, 20, 154880, 202752,
                moe_intermediate_size=1536, n_routed_experts=64, n_shared_experts=1,
                num_experts_per_tok=4, first_k_dense_replace=1, q_lora_rank=768,
                kv_lora_rank=512, qk_nope_head_dim=192, qk_rope_head_dim=64, v_head_dim=256,
                attention_bias=False, partial_rotary_factor=1.0, routed_scaling_factor=1.8,
                n_group=1, topk_group=1, topk_method="noaux_tc", norm_topk_prob=True,
                num_nextn_predict_layers=1, tie_word_embeddings=False)  # fmt: skip


#: zai-org/GLM-4.1V-9B-Thinking config.json: a GLM-4-9B-0414 decoder (text_config) and a 24-block
#: vision tower (vision_config); keys it leaves out are Glm4vVisionConfig's defaults
GLM41V_9B = dict(
    model_type="glm4v", tie_word_embeddings=False,
    text_config=dict(model_type="glm4v_text", hidden_size=4096, num_hidden_layers=40,
                     num_attention_heads=32, num_key_value_heads=2, intermediate_size=13696,
                     vocab_size=151552, max_position_embeddings=65536, attention_bias=True,
                     partial_rotary_factor=0.5, rms_norm_eps=1e-5),
    vision_config=dict(model_type="glm4v", depth=24, hidden_size=1536, num_heads=12,
                       intermediate_size=13696, out_hidden_size=4096, patch_size=14,
                       spatial_merge_size=2, temporal_patch_size=2, hidden_act="silu",
                       rms_norm_eps=1e-5),
)  # fmt: skip


def olmo2(L, d, ff, h, kv):
    # allenai/OLMo-2-1124-13B config.json (mauer4/Attention-From-Scratch
    # weights/allenai/OLMo-2-1124-13B/config.json @381a295f: 40 layers, 5120, 13824, 40 heads,
    # vocab 100352, 4096 positions, untied); 7B and 32B at OLMo-core's olmo2_7B / olmo2_32B
    # sizes (src/olmo_core/nn/transformer/config.py)
    return _cfg("olmo2", L, d, ff, h, kv, 100352, 4096, attention_bias=False, rope_theta=500000,
                rms_norm_eps=1e-6, tie_word_embeddings=False)  # fmt: skip


def olmo3(L, d, ff, h, kv):
    # allenai/Olmo-3-1025-7B and Olmo-3-1125-32B config.json as rasbt/LLMs-from-scratch
    # ch05/13_olmo3/standalone-olmo3.ipynb @12658fee copies them: vocab 100278, 65536 positions,
    # a 4096-token window in three of every four layers, untied
    return _cfg("olmo3", L, d, ff, h, kv, 100278, 65536, attention_bias=False,
                sliding_window=4096, rms_norm_eps=1e-6, tie_word_embeddings=False,
                layer_types=(["sliding_attention"] * 3 + ["full_attention"]) * (L // 4))


#: zai-org/GLM-4.5V config.json: the keys of Megatron-Bridge's toy copy of it (tests/
#: functional_tests/test_groups/models/glm_vl/test_glm_45v_conversion.py @067f987d: vocab
#: 151552, head_dim 128, q/k/v biases, 65536 positions, no q/k norm, a vision tower of
#: image_size 336, patch 14, merger width 10944) at the sizes of its provider
#: (src/megatron/bridge/models/glm_vl/glm_45v_provider.py: GLM-4.5-Air's 46 layers, 4096,
#: 96 heads, 8 groups, FFN 10944, 128 experts top-8 of 1408, one shared, the first layer dense;
#: the tower Glm4vVisionConfig's 24 blocks of 1536, 12 heads, out 4096)
GLM45V = dict(
    model_type="glm4v_moe", tie_word_embeddings=False,
    text_config=dict(model_type="glm4v_moe_text", vocab_size=151552, head_dim=128,
                     attention_bias=True, first_k_dense_replace=1, hidden_size=4096,
                     intermediate_size=10944, max_position_embeddings=65536,
                     moe_intermediate_size=1408, n_routed_experts=128, n_shared_experts=1,
                     num_attention_heads=96, num_experts_per_tok=8, num_hidden_layers=46,
                     num_key_value_heads=8, partial_rotary_factor=0.5, use_qk_norm=False,
                     n_group=1, topk_group=1, tie_word_embeddings=False),
    vision_config=dict(model_type="glm4v_moe", attention_bias=False, depth=24,
                       hidden_size=1536, image_size=336, in_channels=3,
                       intermediate_size=10944, num_heads=12, out_hidden_size=4096,
                       patch_size=14, spatial_merge_size=2, temporal_patch_size=2),
)  # fmt: skip

#: moonshotai/Kimi-K2.5 config.json (a public model-information report of the checkpoint
#: quotes it with its weight shapes): Kimi K2's decoder (text_config, model_type deepseek_v3,
#: 262144 positions) and MoonViT in the remote code's key names; untied
KIMI_K25 = dict(
    model_type="kimi_k25", tie_word_embeddings=False,
    text_config=dict(model_type="deepseek_v3", attention_bias=False, first_k_dense_replace=1,
                     hidden_size=7168, intermediate_size=18432, kv_lora_rank=512,
                     max_position_embeddings=262144, moe_intermediate_size=2048,
                     moe_layer_freq=1, n_group=1, n_routed_experts=384, n_shared_experts=1,
                     num_attention_heads=64, num_experts_per_tok=8, num_hidden_layers=61,
                     num_key_value_heads=64, num_nextn_predict_layers=0, q_lora_rank=1536,
                     qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                     topk_group=1, vocab_size=163840, tie_word_embeddings=False),
    vision_config=dict(init_pos_emb_height=64, init_pos_emb_time=4, init_pos_emb_width=64,
                       merge_kernel_size=[2, 2], mm_hidden_size=1152, patch_size=14,
                       text_hidden_size=7168, vt_hidden_size=1152, vt_intermediate_size=4304,
                       vt_num_attention_heads=16, vt_num_hidden_layers=27),
)  # fmt: skip


GPT2 = dict(model_type="gpt2", n_layer=12, n_embd=768, n_head=12, n_positions=1024,
            vocab_size=50257)  # fmt: skip

# fmt: off
PUBLIC_CONFIGS: dict[str, dict[str, Any]] = {
    "llama-2-7b": llama(32, 4096, 11008, 32, 32, V=32000, ctx=4096),
    "llama-2-13b": llama(40, 5120, 13824, 40, 40, V=32000, ctx=4096),
    "llama-2-70b": llama(80, 8192, 28672, 64, 8, V=32000, ctx=4096),
    "llama-3.1-8b": llama(32, 4096, 14336, 32, 8),
    "llama-3.1-70b": llama(80, 8192, 28672, 64, 8),
    "llama-3.1-405b": llama(126, 16384, 53248, 128, 8),
    "llama-3.2-1b": llama(16, 2048, 8192, 32, 8, tie=True, head_dim=64),
    "llama-3.2-3b": llama(28, 3072, 8192, 24, 8, tie=True, head_dim=128),
    "mistral-7b": _cfg("mistral", 32, 4096, 14336, 32, 8, 32000, 32768, sliding_window=4096),
    "mistral-7b-v0.2": _cfg("mistral", 32, 4096, 14336, 32, 8, 32000, 32768, sliding_window=None,
                            rope_theta=1e6),
    "mistral-nemo-12b": _cfg("mistral", 40, 5120, 14336, 32, 8, 131072, 1024000, head_dim=128,
                             sliding_window=None),
    "mistral-small-24b": _cfg("mistral", 40, 5120, 32768, 32, 8, 131072, 32768, head_dim=128,
                              sliding_window=None),
    "mixtral-8x7b": _cfg("mixtral", 32, 4096, 14336, 32, 8, 32000, 32768, num_local_experts=8,
                         num_experts_per_tok=2, sliding_window=None),
    "mixtral-8x22b": _cfg("mixtral", 56, 6144, 16384, 48, 8, 32768, 65536, num_local_experts=8,
                          num_experts_per_tok=2, sliding_window=None),
    "qwen2.5-0.5b": qwen2(24, 896, 4864, 14, 2, 151936, 32768, True),
    "qwen2-0.5b": qwen2(24, 896, 4864, 14, 2, 151936, 131072, True),
    "qwen2.5-1.5b": qwen2(28, 1536, 8960, 12, 2, 151936, 32768, True),
    "qwen2.5-3b": qwen2(36, 2048, 11008, 16, 2, 151936, 32768, True),
    "deepseek-r1-distill-qwen-1.5b": qwen2(28, 1536, 8960, 12, 2, 151936, 131072, False),
    "qwen2.5-7b": qwen2(28, 3584, 18944, 28, 4, 152064, 131072, False),
    "qwen2.5-14b": qwen2(48, 5120, 13824, 40, 8, 152064, 131072, False),
    "qwen2.5-32b": qwen2(64, 5120, 27648, 40, 8, 152064, 131072, False),
    "qwen2.5-72b": qwen2(80, 8192, 29568, 64, 8, 152064, 131072, False),
    "qwen3-0.6b": qwen3(28, 1024, 3072, 16, True),
    "qwen3-1.7b": qwen3(28, 2048, 6144, 16, True),
    "qwen3-4b": qwen3(36, 2560, 9728, 32, True),
    # the 2507 releases: the same shapes, 262144 positions (their model cards)
    "qwen3-4b-2507": {**qwen3(36, 2560, 9728, 32, True), "max_position_embeddings": 262144},
    "qwen3-8b": qwen3(36, 4096, 12288, 32, False),
    "qwen3-14b": qwen3(40, 5120, 17408, 40, False),
    "qwen3-32b": qwen3(64, 5120, 25600, 64, False),
    "qwen1.5-moe-a2.7b": _cfg("qwen2_moe", 24, 2048, 5632, 16, 16, 151936, 8192,
                              moe_intermediate_size=1408, shared_expert_intermediate_size=5632,
                              num_experts=60, num_experts_per_tok=4, decoder_sparse_step=1,
                              tie_word_embeddings=False),
    "qwen3-30b-a3b": qwen3_moe(48, 2048, 6144, 32, 4, 128, 8, 768, 40960),
    "qwen3-235b-a22b": qwen3_moe(94, 4096, 12288, 64, 4, 128, 8, 1536, 40960),
    "qwen3-30b-a3b-2507": qwen3_moe(48, 2048, 6144, 32, 4, 128, 8, 768, 262144),
    "qwen3-235b-a22b-2507": qwen3_moe(94, 4096, 12288, 64, 4, 128, 8, 1536, 262144),
    "qwen3-coder-480b-a35b": qwen3_moe(62, 6144, 8192, 96, 8, 160, 8, 2560, 262144),
    "glm-4.5": glm4_moe(92, 5120, 12288, 1536, 160, 3, True),
    "glm-4.5-air": glm4_moe(46, 4096, 10944, 1408, 128, 1, False),
    "glm-4.6": {**glm4_moe(92, 5120, 12288, 1536, 160, 3, True),
                "max_position_embeddings": 202752},
    "glm-4.7-flash": glm4_moe_lite(),
    "glm-4.1v-9b": GLM41V_9B,
    "minimax-m2": minimax_m2(),
    "seed-oss-36b": seed_oss(),
    # hybrid: 36 Gated DeltaNet and 12 gated full-attention layers (tests/test_model_types.py)
    "qwen3-next-80b-a3b": _cfg("qwen3_next", 48, 2048, 5120, 16, 2, 151936, 262144,
                               head_dim=256, moe_intermediate_size=512,
                               shared_expert_intermediate_size=512, num_experts=512,
                               num_experts_per_tok=10, linear_num_key_heads=16,
                               linear_num_value_heads=32, linear_key_head_dim=128,
                               linear_value_head_dim=128, linear_conv_kernel_dim=4,
                               full_attention_interval=4, decoder_sparse_step=1,
                               mlp_only_layers=[], mtp_num_hidden_layers=1,
                               tie_word_embeddings=False),
    "gemma-2-2b": gemma2(26, 2304, 9216, 8, 4, 256),
    "gemma-2-9b": gemma2(42, 3584, 14336, 16, 8, 256),
    "gemma-2-27b": gemma2(46, 4608, 36864, 32, 16, 128),
    "gemma-3-1b": gemma3_text(26, 1152, 6912, 4, 1, 256, 262144, 32768, 512),
    "gemma-3-4b": gemma3_text(34, 2560, 10240, 8, 4, 256, 262208, 131072, 1024),
    "gemma-3-12b": gemma3_text(48, 3840, 15360, 16, 8, 256, 262208, 131072, 1024),
    "gemma-3-27b": gemma3_text(62, 5376, 21504, 32, 16, 128, 262208, 131072, 1024),
    "phi-3-mini": phi3(32, 3072, 8192, 32, 32, 32064, 4096, window=2047),
    "phi-3-mini-128k": phi3(32, 3072, 8192, 32, 32, 32064, 131072, window=262144),
    "phi-3-medium": phi3(40, 5120, 17920, 40, 10, 32064, 4096, window=2047),
    "phi-3-medium-128k": phi3(40, 5120, 17920, 40, 10, 32064, 131072, window=131072),
    "phi-4": phi3(40, 5120, 17920, 40, 10, 100352, 16384),
    "phi-4-mini": phi3(32, 3072, 8192, 24, 8, 200064, 131072, tie=True),
    "gpt-2": GPT2,
    # no public config: GPT-3 is the GPT-2 architecture at Brown et al. 2020 Table 2.1 sizes
    "gpt-3-175b": dict(GPT2, n_layer=96, n_embd=12288, n_head=96, n_positions=2048),
    # deepseek-ai/DeepSeek-V3 (and DeepSeek-R1, the same shape) and DeepSeek-V2(-Lite) configs:
    # multi-head latent attention, DeepSeekMoE with shared experts and leading dense layers
    "deepseek-v3": _cfg("deepseek_v3", 61, 7168, 18432, 128, 128, 129280, 163840,
                        moe_intermediate_size=2048, n_shared_experts=1, n_routed_experts=256,
                        num_experts_per_tok=8, first_k_dense_replace=3, q_lora_rank=1536,
                        kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                        v_head_dim=128, tie_word_embeddings=False),
    "deepseek-r1": _cfg("deepseek_v3", 61, 7168, 18432, 128, 128, 129280, 163840,
                        moe_intermediate_size=2048, n_shared_experts=1, n_routed_experts=256,
                        num_experts_per_tok=8, first_k_dense_replace=3, q_lora_rank=1536,
                        kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                        v_head_dim=128, tie_word_embeddings=False),
    # deepseek-ai/DeepSeek-V3.2-Exp config.json: DeepSeek-V3's shape plus the lightning indexer
    # (transformers 5.24 DeepseekV32Config defaults: 64 index heads of 128, top-2048)
    "deepseek-v3.2": _cfg("deepseek_v32", 61, 7168, 18432, 128, 128, 129280, 163840,
                          moe_intermediate_size=2048, n_shared_experts=1, n_routed_experts=256,
                          num_experts_per_tok=8, first_k_dense_replace=3, q_lora_rank=1536,
                          kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                          v_head_dim=128, tie_word_embeddings=False, index_n_heads=64,
                          index_head_dim=128, index_topk=2048, num_nextn_predict_layers=1),
    # zai-org/GLM-5 config.json (tests/test_dsa.py GLM5_CONFIG: slime scripts/models/
    # glm5-744B-A40B.sh @624b824a, GlmMoeDsaConfig defaults)
    "glm-5": GLM5_CONFIG,
    "deepseek-v2": _cfg("deepseek_v2", 60, 5120, 12288, 128, 128, 102400, 163840,
                        moe_intermediate_size=1536, n_shared_experts=2, n_routed_experts=160,
                        num_experts_per_tok=6, first_k_dense_replace=1, q_lora_rank=1536,
                        kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                        v_head_dim=128, tie_word_embeddings=False),
    "deepseek-v2-lite": _cfg("deepseek_v2", 27, 2048, 10944, 16, 16, 102400, 163840,
                             moe_intermediate_size=1408, n_shared_experts=2, n_routed_experts=64,
                             num_experts_per_tok=6, first_k_dense_replace=1, q_lora_rank=None,
                             kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                             v_head_dim=128, tie_word_embeddings=False),
    # deepseek-ai/deepseek-llm-7b-base/-chat config.json (LlamaForCausalLM)
    "deepseek-llm-7b": llama(30, 4096, 11008, 32, 32, V=102400, ctx=4096),
    # OpenRLHF/Llama-3-8b-sft-mixture config.json: Meta-Llama-3-8B's shape, 8192 positions
    "llama-3-8b-sft-mixture": llama(32, 4096, 14336, 32, 8, ctx=8192, rope_theta=500000.0),
    # Qwen/Qwen2.5-Math-1.5B and -7B config.json: 4096 positions, rope_theta 10000
    "qwen2.5-math-1.5b": {**qwen2(28, 1536, 8960, 12, 2, 151936, 4096, True),
                          "rope_theta": 10000.0, "max_window_layers": 21},
    "qwen2.5-math-7b": {**qwen2(28, 3584, 18944, 28, 4, 152064, 4096, False),
                        "rope_theta": 10000.0},
    # Qwen/Qwen2.5-Coder-7B(-Instruct) and -14B(-Instruct) config.json: 32768 positions
    "qwen2.5-coder-7b": qwen2(28, 3584, 18944, 28, 4, 152064, 32768, False),
    "qwen2.5-coder-14b": qwen2(48, 5120, 13824, 40, 8, 152064, 32768, False),
    # Qwen/Qwen2-72B-Instruct config.json: 32768 positions (Qwen2.5-72B: 131072)
    "qwen2-72b-instruct": qwen2(80, 8192, 29568, 64, 8, 152064, 32768, False),
    # XiaomiMiMo/MiMo-7B-RL config.json (model_type mimo; slime scripts/models/mimo-7B-rl.sh
    # @624b824a: 36 layers, 4096, 11008, 32 heads, 8 groups, vocab 151680, MTP 1)
    "mimo-7b": _cfg("mimo", 36, 4096, 11008, 32, 8, 151680, 32768, attention_bias=True,
                    num_nextn_predict_layers=1, sliding_window=32768, use_sliding_window=False,
                    tie_word_embeddings=False),
    # THUDM/GLM-Z1-9B-0414 config.json (slime scripts/models/glm4-9B.sh @624b824a: 40 layers,
    # 4096, 13696, 32 heads, 2 groups, qkv bias, vocab 151552, post-attn and post-mlp norms)
    "glm-4-9b-0414": _cfg("glm4", 40, 4096, 13696, 32, 2, 151552, 32768, head_dim=128,
                          attention_bias=True, partial_rotary_factor=0.5,
                          tie_word_embeddings=False),
    "gpt-oss-20b": gpt_oss(24, 32),
    "gpt-oss-120b": gpt_oss(36, 128),
    # moonshotai/Moonlight-16B-A3B config.json (DeepSeek-V3 architecture; slime
    # scripts/models/moonlight.sh @624b824a: 27 layers, 2048, 64 experts top-6, 2 shared of
    # 1408, no q_lora, kv_lora 512, vocab 163840)
    "moonlight-16b-a3b": _cfg("deepseek_v3", 27, 2048, 11264, 16, 16, 163840, 8192,
                              moe_intermediate_size=1408, n_shared_experts=2,
                              n_routed_experts=64, num_experts_per_tok=6,
                              first_k_dense_replace=1, q_lora_rank=None, kv_lora_rank=512,
                              qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                              tie_word_embeddings=False),
    "kimi-k2": kimi_k2(131072),
    # moonshotai/Kimi-K2-Thinking: the same sizes, YaRN factor 64 over 4096 positions
    # (slime scripts/models/kimi-k2-thinking.sh @624b824a: --rotary-scaling-factor 64.0)
    "kimi-k2-thinking": kimi_k2(262144),
    "qwen2.5-vl-3b": qwen25_vl(36, 2048, 11008, 16, 2, 151936, True),
    "qwen2.5-vl-7b": qwen25_vl(28, 3584, 18944, 28, 4, 152064, False),
    # verl tests/utils/test_flops_counter.py @b178a3cd (Qwen/Qwen3-VL-8B text_config)
    "qwen3-vl-8b": qwen3_vl(36, 4096, 12288, 32, 8),
    # Qwen/Qwen3-VL-30B-A3B-Instruct and -235B-A22B-Instruct config.json (decoder_sparse_step 1,
    # mlp_only_layers []); Pai-Megatron-Patch and verl run_qwen3_vl-30b-megatron.sh use them
    "qwen3-vl-30b-a3b": qwen3_vl(48, 2048, 6144, 32, 4, num_experts=128, num_experts_per_tok=8,
                                 moe_intermediate_size=768, decoder_sparse_step=1,
                                 mlp_only_layers=[]),
    "qwen3-vl-235b-a22b": qwen3_vl(94, 4096, 12288, 64, 4, num_experts=128,
                                   num_experts_per_tok=8, moe_intermediate_size=1536,
                                   decoder_sparse_step=1, mlp_only_layers=[]),
    # slime scripts/models/qwen3.5-{9B,27B,35B-A3B}.sh @624b824a (layers, widths, heads, experts);
    # DeltaNet value heads: Megatron-Bridge qwen35_vl_provider.py @067f987d (27B: 48, 397B: 64)
    "qwen3.5-9b": qwen35(32, 4096, 12288, 16, 4, 32),
    "qwen3.5-27b": qwen35(64, 5120, 17408, 24, 4, 48),
    "qwen3.5-35b-a3b": qwen35(40, 2048, 512, 16, 2, 32, num_experts=256, num_experts_per_tok=8,
                              moe_intermediate_size=512, shared_expert_intermediate_size=512),
    "qwen3.5-397b-a17b": qwen35(60, 4096, 1024, 32, 2, 64, num_experts=512,
                                num_experts_per_tok=10, moe_intermediate_size=1024,
                                shared_expert_intermediate_size=1024),
    "olmo-2-7b": olmo2(32, 4096, 11008, 32, 32),
    "olmo-2-13b": olmo2(40, 5120, 13824, 40, 40),
    "olmo-2-32b": olmo2(64, 5120, 27648, 40, 8),
    "olmo-3-7b": olmo3(32, 4096, 11008, 32, 32),
    "olmo-3-32b": olmo3(64, 5120, 27648, 40, 8),
    "glm-4.5v": GLM45V,
    "kimi-k2.5": KIMI_K25,
    # Mamba-2 hybrids (sources in tests/test_nemotron_h.py)
    "nemotron-3-nano-30b-a3b": NANO3,
    "nemotron-nano-12b-v2": NANO12,
    "nemotron-3-super-120b-a12b": SUPER,  # sources in tests/test_latent_moe.py
    # models the frameworks' example launchers name (sources in tests/test_launcher_models.py)
    **LAUNCHER_CONFIGS,
    # models NeMo RL's recipes name (sources in tests/test_nemo_rl_models.py)
    **NEMO_RL_CONFIGS,
    # Gemma 4's text_config (sources in rlmcost/specs/data/models.json, tests/test_gemma4.py)
    **GEMMA4_CONFIGS,
    **E_CONFIGS,  # E2B / E4B (tests/test_gemma4e.py)
}

#: Hugging Face ids that resolve to a built-in of another name, with their own public configs:
#: the claim "same shape" is checked, not assumed.
VARIANT_CONFIGS: dict[str, dict[str, Any]] = {
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B": qwen2(28, 3584, 18944, 28, 4, 152064, 131072,
                                                     False),
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B": qwen2(48, 5120, 13824, 40, 8, 152064, 131072,
                                                      False),
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": qwen2(64, 5120, 27648, 40, 8, 152064, 131072,
                                                      False),
    "Qwen/QwQ-32B": qwen2(64, 5120, 27648, 40, 8, 152064, 40960, False),
    "Qwen/Qwen2-7B-Instruct": qwen2(28, 3584, 18944, 28, 4, 152064, 32768, False),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": llama(32, 4096, 14336, 32, 8),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B": llama(80, 8192, 28672, 64, 8),
    "meta-llama/Llama-3.3-70B-Instruct": llama(80, 8192, 28672, 64, 8),
    "microsoft/Phi-3.5-mini-instruct": phi3(32, 3072, 8192, 32, 32, 32064, 131072, window=262144),
    "Qwen/Qwen3-Coder-30B-A3B-Instruct": qwen3_moe(48, 2048, 6144, 32, 4, 128, 8, 768, 262144),
    "Qwen/Qwen2.5-Coder-0.5B": qwen2(24, 896, 4864, 14, 2, 151936, 32768, True),
    "Qwen/Qwen2-0.5B-Instruct": qwen2(24, 896, 4864, 14, 2, 151936, 32768, True),
    "Qwen/Qwen2-1.5B-Instruct": qwen2(28, 1536, 8960, 12, 2, 151936, 32768, True),
    # OpenRLHF's reward models: the sft-mixture decoder (the score head is the role's)
    "OpenRLHF/Llama-3-8b-rm-mixture": llama(32, 4096, 14336, 32, 8, ctx=8192),
}
# fmt: on

#: google/gemma-3-4b-it config.json: multimodal; text_config leaves out what
#: Gemma3TextConfig's defaults give (heads, kv heads, head_dim, vocab).
GEMMA3_4B_MULTIMODAL = {
    "model_type": "gemma3",
    "architectures": ["Gemma3ForConditionalGeneration"],
    "text_config": {
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "num_hidden_layers": 34,
        "sliding_window": 1024,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    },
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152},
}


def _transformers_params(cfg: dict[str, Any]) -> int:
    kwargs = {k: v for k, v in cfg.items() if k != "model_type"}
    # transformers has no kimi_k2 (DeepseekV3ForCausalLM in its config.json) and no mimo (remote
    # code: a Qwen2 decoder plus MTP layers, which every model type's count leaves out)
    model_type = READ_AS.get(cfg["model_type"], cfg["model_type"])
    config = transformers.AutoConfig.for_model(model_type, **kwargs)
    extra = {}
    if any(c.get(k) for c in (cfg, cfg.get("text_config") or {})
           for k in ("num_local_experts", "num_experts", "n_routed_experts")):  # fmt: skip
        extra["experts_implementation"] = "batched_mm"
    # a vision-language checkpoint: its ...ForConditionalGeneration, the tower included (its
    # parameters are the spec's encoder_params)
    auto = transformers.AutoModelForImageTextToText if "vision_config" in cfg else \
        transformers.AutoModelForCausalLM  # fmt: skip
    with torch.device("meta"):
        model = auto.from_config(config, **extra)
    return sum(p.numel() for p in model.parameters())


def test_every_builtin_model_has_a_public_config():
    assert {m.name for m in models()} == set(PUBLIC_CONFIGS)


@pytest.mark.parametrize("name", sorted(PUBLIC_CONFIGS))
def test_config_json_loads_to_the_builtin_shape(name):
    loaded = spec_from_config(PUBLIC_CONFIGS[name], name=name)
    builtin = get_model(name)
    # the loader, reading the public config, gives every field of the built-in's shape
    assert loaded.arch() == builtin.arch()


@pytest.mark.parametrize("name", sorted(PUBLIC_CONFIGS))
def test_parameter_count_equals_transformers(name):
    # independent: sum(p.numel()) of the transformers class built from the public config (meta)
    expected = _transformers_params(PUBLIC_CONFIGS[name])
    spec = get_model(name)
    if spec.model_type == "gpt_oss":
        # less what blocks.params leaves out and the notes say: experts' and router's biases
        # and the attention sinks (GptOssExperts, GptOssTopKRouter, GptOssAttention.sinks)
        a = spec.arch()
        expected -= gpt_oss_uncounted(a.n_layers, a.d_model, a.n_heads, a.n_experts, a.d_expert)
        assert any(f"{_transformers_params(PUBLIC_CONFIGS[name]) - expected:,}" in n
                   for n in spec.notes)  # fmt: skip
    if spec.model_type == "gemma4" and spec.n_experts:  # Gemma4TextRouter.per_expert_scale
        expected -= spec.n_layers * spec.n_experts
        assert any(f"{spec.n_layers * spec.n_experts:,} parameters" in n for n in spec.notes)
    assert int(bl.params(spec.arch())) == expected


@pytest.mark.parametrize("hf_id", sorted(VARIANT_CONFIGS))
def test_variants_resolve_to_a_spec_of_their_own_shape(hf_id):
    loaded = spec_from_config(VARIANT_CONFIGS[hf_id], name="variant")
    # the variant's own public config has the shape of the built-in its id resolves to
    assert loaded.arch() == get_model(hf_id).arch().with_(name="variant")


def test_every_supported_model_type_is_exercised():
    # the vision-language and hybrid types are exercised in tests/test_model_types.py
    types = {c["model_type"] for c in PUBLIC_CONFIGS.values()}
    types |= {"gemma3", "qwen2_vl", "qwen2_5_vl", "qwen3_5_text", "qwen3_5_moe_text",
              "mistral3", "gemma4"}  # mistral3: tests/test_nemo_rl_models.py; gemma4: test_gemma4
    assert set(SUPPORTED) <= types


def test_gemma3_multimodal_config_loads_its_language_model(tmp_path):
    p = tmp_path / "gemma-3-4b-it" / "config.json"
    p.parent.mkdir()
    p.write_text(json.dumps(GEMMA3_4B_MULTIMODAL))
    spec = get_model(str(p.parent))  # a checkpoint folder is read through its config.json
    assert spec.arch().with_(name="gemma-3-4b") == get_model("gemma-3-4b").arch()
    assert any("vision" in n for n in spec.notes)


def test_gemma3_text_defaults_are_transformers_defaults():
    ref = transformers.Gemma3TextConfig()
    # Gemma3TextConfig() is the source of the defaults the multimodal configs rely on
    assert {k: getattr(ref, k) for k in GEMMA3_TEXT_DEFAULTS} == GEMMA3_TEXT_DEFAULTS


@pytest.mark.parametrize("name", sorted(PUBLIC_CONFIGS))
def test_builtin_notes_are_what_the_loader_notes(name):
    # the loader, reading the public config, says what is approximated; the built-in says the
    # same, plus the left-out vision tower where the checkpoint is multimodal (gemma3 with a
    # text_config, tested below)
    loaded = spec_from_config(PUBLIC_CONFIGS[name], name=name)
    extra = [n for n in get_model(name).notes if n not in loaded.notes]
    assert all("vision" in n for n in extra) and set(loaded.notes) <= set(get_model(name).notes)


@pytest.mark.parametrize(
    "name, fragment",
    [("gemma-2-9b", "sliding-window"), ("gemma-2-9b", "soft-capping"),
     ("glm-4.5", "multi-token-prediction"), ("mistral-7b", "sliding-window"),
     ("phi-3-mini", "sliding-window"), ("gemma-3-27b", "vision")],
)  # fmt: skip
def test_approximations_are_noted(name, fragment):
    assert any(fragment in n for n in get_model(name).notes)


def test_exact_models_carry_no_notes():
    for name in ("qwen2.5-7b", "qwen3-8b", "llama-3.1-8b", "mixtral-8x7b", "phi-4"):
        assert spec_from_config(PUBLIC_CONFIGS[name], name=name).notes == ()


BASE = PUBLIC_CONFIGS["qwen3-8b"]


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"hidden_size": 1e40}, "hidden_size=1e+40 is implausible"),
        ({"hidden_size": -4096}, "hidden_size=-4096 is implausible"),
        ({"hidden_size": 4096.5}, "hidden_size=4096.5 is implausible"),
        ({"hidden_size": 4096.0}, "hidden_size=4096 is implausible"),
        ({"hidden_size": True}, "hidden_size=True is implausible"),
        ({"hidden_size": "4096"}, "hidden_size='4096' is implausible"),
        ({"hidden_size": [4096]}, "hidden_size=[4096] is implausible"),
        ({"num_hidden_layers": 10**5}, "num_hidden_layers=100000 is implausible"),
        ({"num_hidden_layers": 0}, "num_hidden_layers=0 is implausible"),
        ({"vocab_size": 10**8}, "vocab_size=100000000 is implausible"),
        ({"num_attention_heads": 0}, "num_attention_heads=0 is implausible"),
        ({"intermediate_size": 2**40}, "intermediate_size=1099511627776 is implausible"),
        ({"head_dim": -1}, "head_dim=-1 is implausible"),
        ({"max_position_embeddings": 1e30}, "max_position_embeddings=1e+30 is implausible"),
        ({"tie_word_embeddings": "yes"}, "tie_word_embeddings='yes' must be true or false"),
        ({"model_type": "glm4_moe", "n_routed_experts": 10**9}, "n_routed_experts"),
        ({"model_type": "gemma3", "text_config": [1]}, "text_config object"),
        ({"model_type": "gpt_oss"}, "gpt_oss config has no 'num_local_experts'"),
        ({"model_type": "kimi_k2"}, "config has no 'qk_nope_head_dim'"),
    ],
)
def test_implausible_configs_are_rejected_in_one_line(tmp_path, change, fragment):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**BASE, **change}))
    with pytest.raises(SpecError) as exc:
        load_config(p)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("name", sorted(set(PUBLIC_CONFIGS) - {"mistral-nemo-12b"}))
def test_builtin_context_is_the_configs(name):
    # max_position_embeddings of the public config is the built-in's max_context (what a
    # prompt + response is checked against); Mistral-Nemo's config says 1024000, its card 128k
    loaded = spec_from_config(PUBLIC_CONFIGS[name], name=name)
    assert get_model(name).max_context == loaded.max_context


@pytest.mark.parametrize(
    "hf_id, name",
    [("deepseek-ai/deepseek-llm-7b-chat", "deepseek-llm-7b"),
     ("Qwen/Qwen2.5-Math-7B", "qwen2.5-math-7b"),
     ("Qwen/Qwen2.5-Math-1.5B-Instruct", "qwen2.5-math-1.5b"),
     ("Qwen/Qwen2-72B-Instruct", "qwen2-72b-instruct"),
     ("Qwen/Qwen2.5-Coder-7B-Instruct", "qwen2.5-coder-7b"),
     ("Qwen/Qwen2.5-Coder-0.5B", "qwen2.5-0.5b"),
     ("Qwen/Qwen2-0.5B", "qwen2-0.5b"),
     ("OpenRLHF/Llama-3-8b-sft-mixture", "llama-3-8b-sft-mixture"),
     ("openai/gpt-oss-20b", "gpt-oss-20b"),
     ("moonshotai/Moonlight-16B-A3B-Instruct", "moonlight-16b-a3b"),
     ("moonshotai/Kimi-K2-Instruct", "kimi-k2"),
     ("XiaomiMiMo/MiMo-7B-RL", "mimo-7b"),
     ("THUDM/GLM-Z1-9B-0414", "glm-4-9b-0414"),
     ("ByteDance-Seed/Seed-OSS-36B-Base", "seed-oss-36b"),
     ("MiniMaxAI/MiniMax-M2.7", "minimax-m2"), ("zai-org/GLM-4.7-Flash", "glm-4.7-flash"),
     ("zai-org/GLM-4.1V-9B-Thinking", "glm-4.1v-9b"),
     # open-instruct scripts/train/olmo3/7b_rlzero_math.sh, 7b_think_rl.sh (Think-DPO)
     ("allenai/Olmo-3-1025-7B", "olmo-3-7b"), ("allenai/Olmo-3-7B-Think-DPO", "olmo-3-7b"),
     ("allenai/OLMo-2-1124-7B-Instruct", "olmo-2-7b")],
)  # fmt: skip
def test_framework_example_models_resolve(hf_id, name):
    # the models of verl, NeMo RL, slime, miles, OpenRLHF and TRL examples (e.g. verl
    # examples/ppo_trainer/run_deepseek7b_llm.sh, slime scripts/run-glm4-9B.sh)
    assert get_model(hf_id).name == name


def test_context_sets_same_layer_models_apart():
    # Qwen2.5-Math-7B has Qwen2.5-7B's layers but 4096 positions (its config.json), so it is a
    # built-in of its own: a 16k response is refused for it, not for Qwen2.5-7B
    assert get_model("qwen2.5-math-7b").arch() == get_model("qwen2.5-7b").arch().with_(
        name="qwen2.5-math-7b"
    )
    assert (get_model("qwen2.5-math-7b").max_context, get_model("qwen2.5-7b").max_context) == (
        4096, 131072)  # fmt: skip


@pytest.mark.parametrize(
    "hf_id, name",
    [("Qwen/Qwen3-4B-Thinking-2507", "qwen3-4b-2507"),
     ("Qwen/Qwen3-30B-A3B-Thinking-2507", "qwen3-30b-a3b-2507"),
     ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-30b-a3b-2507"),
     ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b-2507")],
)  # fmt: skip
def test_qwen3_2507_releases_have_their_own_context(hf_id, name):
    # the 2507 releases keep the first Qwen3 shapes but 262,144 native positions (their model
    # cards: "Context Length: 262,144 natively"; the first releases' config.json 40960), so NeMo
    # RL's swe1 recipe (65,536-token prompts on Qwen3-30B-A3B-Thinking-2507) is not refused
    spec, first = get_model(hf_id), get_model(name.removesuffix("-2507"))
    assert spec.name == name and spec.max_context == 262144 and first.max_context == 40960
    assert spec.arch() == first.arch().with_(name=name)


def test_kimi_k2_reads_as_deepseek_v3():
    # the kimi_k2 config is DeepSeek-V3's architecture (DeepseekV3ForCausalLM): the same
    # config with model_type deepseek_v3 gives the same shape; model_type says what it was
    kimi = spec_from_config(PUBLIC_CONFIGS["kimi-k2"], name="k")
    as_v3 = spec_from_config({**PUBLIC_CONFIGS["kimi-k2"], "model_type": "deepseek_v3"}, name="k")
    assert kimi.arch() == as_v3.arch() and kimi.model_type == "kimi_k2"


def test_mimo_notes_its_left_out_mtp_layer():
    spec = get_model("mimo-7b")
    assert spec.mtp_layers == 1 and any("multi-token-prediction" in n for n in spec.notes)


def test_gpt_oss_default_layer_types_alternate(tmp_path):
    # GptOssConfig: layer_types defaults to sliding when (i + 1) % 2, so half the layers are
    # full attention when config.json leaves the list out
    cfg = {k: v for k, v in PUBLIC_CONFIGS["gpt-oss-20b"].items() if k != "layer_types"}
    spec = spec_from_config(cfg, name="g")
    ref = transformers.GptOssConfig(num_hidden_layers=24)
    assert spec.full_attention_layers == ref.layer_types.count("full_attention") == 12
    assert spec.sliding_window == 128


@pytest.mark.parametrize(
    "hf_id",
    ["Qwen/Qwen2.5-Coder-0.5B", "Qwen/Qwen2-0.5B-Instruct", "Qwen/Qwen2-1.5B-Instruct",
     "OpenRLHF/Llama-3-8b-rm-mixture"],
)  # fmt: skip
def test_variant_has_the_builtins_context(hf_id):
    # these ids share their built-in's max_position_embeddings too (their config.json), so the
    # prompt + response check is theirs
    loaded = spec_from_config(VARIANT_CONFIGS[hf_id], name="variant")
    assert loaded.max_context == get_model(hf_id).max_context


def test_olmo3_default_layer_types_slide_three_of_four():
    # Olmo3Config: layer_types defaults to sliding unless (i + 1) % 4 == 0, window 4096, when
    # config.json leaves them out
    cfg = {k: v for k, v in PUBLIC_CONFIGS["olmo-3-7b"].items()
           if k not in ("layer_types", "sliding_window")}  # fmt: skip
    spec = spec_from_config(cfg, name="o")
    ref = transformers.Olmo3Config(num_hidden_layers=32)
    assert spec.full_attention_layers == ref.layer_types.count("full_attention") == 8
    assert spec.sliding_window == ref.sliding_window == 4096


def test_olmo_q_k_norms_span_all_heads():
    # Olmo2Attention: q_norm = Olmo2RMSNorm(heads x head_dim), k_norm over kv heads x head_dim
    spec = get_model("olmo-2-32b")
    assert spec.qk_norm and spec.qk_norm_full and spec.norms_per_layer == 2
