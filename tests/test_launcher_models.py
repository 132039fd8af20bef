"""Built-ins for models the frameworks' own example launchers name: their public config.json
shapes (merged into tests/test_registry_configs.py's PUBLIC_CONFIGS, whose tests build each
from the config alone and count the transformers 5.24 class on the meta device), and the
launchers, which now import.

* Qwen2.5-VL-32B / -72B-Instruct: Qwen2.5-32B / -72B decoders under the Qwen2.5-VL tower of
  32 blocks of 1280 whose SwiGLU MLP is 3456 wide (3420 only under the 28- and 36-layer 7B and
  3B decoders: verl verl/models/mcore/qwen2_5_vl/vision_config.py @b178a3cd,
  Pai-Megatron-Patch megatron_patch/model/qwen2_5_vl/transformer_config.py give the same rule).
  verl examples/grpo_trainer/run_qwen2_5_vl_32b_npu.sh trains the 32B.
* Qwen3.5-0.8B / 2B / 4B / 122B-A10B: torchtitan torchtitan/models/qwen3_5/__init__.py
  @b5bcd76c (_0_8b, _2b, _4b, _122b_a10b: decoder widths, heads, DeltaNet heads, FFN or
  experts, and the tower: 12 blocks of 768 for 0.8B, 24 of 1024 for 2B and 4B, 27 of 1152 for
  122B; the small three tie their embeddings in the published config). OpenRLHF
  examples/scripts/train_vlm_math_hybrid_engine.sh trains the 2B.
* allenai/Llama-3.1-Tulu-3-8B-SFT: Llama-3.1-8B's decoder with 128,264 vocabulary rows, not
  128,256: open-instruct adds a ``<pad>`` token to Llama 3's tokenizer, which has none
  (open_instruct/dataset_transformation.py @00440da3, get_tokenizer_tulu_v2_1:
  ``add_special_tokens({"pad_token": "<pad>"})`` on a PreTrainedTokenizerFast), and resizes
  the embeddings to the tokenizer's 128,257 entries padded to a multiple of 8
  (open_instruct/finetune.py @00f6b60c: ``resize_token_embeddings(len(tokenizer),
  pad_to_multiple_of=8)``). NeMo RL examples/configs/recipes/llm/
  dpo-llama3.1-8b-tulu3-1n8g-fsdp2tp1.yaml trains it.
"""

from __future__ import annotations

from typing import Any

import pytest

from rlmcost import blocks as bl
from rlmcost.specs import get_model

# fmt: off


def _qwen25_vl(L: int, d: int, ff: int, h: int, kv: int) -> dict[str, Any]:
    # Qwen/Qwen2.5-VL-{32B,72B}-Instruct config.json: the Qwen2 decoder top-level (152,064
    # rows, untied, 128,000 positions), the windowed tower with its 3456-wide MLP
    return dict(model_type="qwen2_5_vl", num_hidden_layers=L, hidden_size=d,
                intermediate_size=ff, num_attention_heads=h, num_key_value_heads=kv,
                vocab_size=152064, max_position_embeddings=128000, tie_word_embeddings=False,
                sliding_window=32768, use_sliding_window=False, max_window_layers=L,
                vision_config=dict(depth=32, hidden_size=1280, intermediate_size=3456,
                                   num_heads=16, in_chans=3, out_hidden_size=d, patch_size=14,
                                   spatial_merge_size=2, temporal_patch_size=2, window_size=112,
                                   fullatt_block_indexes=[7, 15, 23, 31]))


def _tower(depth: int, width: int, ffn: int, heads: int, out: int) -> dict[str, Any]:
    return dict(depth=depth, hidden_size=width, intermediate_size=ffn, num_heads=heads,
                in_channels=3, patch_size=16, spatial_merge_size=2, temporal_patch_size=2,
                num_position_embeddings=2304, out_hidden_size=out, deepstack_visual_indexes=[])


def _qwen35(L: int, d: int, ff: int, h: int, kv: int, v_heads: int, tower: dict[str, Any],
            tie: bool, **moe: Any) -> dict[str, Any]:
    # Qwen/Qwen3.5-* config.json (as tests/test_registry_configs.py's qwen35): the hybrid
    # decoder under text_config, 3 Gated DeltaNet + 1 gated attention layer, 16 q/k DeltaNet
    # heads of 128, head_dim 256, one MTP layer, 262,144 positions
    mt = "qwen3_5_moe" if moe else "qwen3_5"
    text = dict(model_type=f"{mt}_text", num_hidden_layers=L, hidden_size=d,
                intermediate_size=ff, num_attention_heads=h, num_key_value_heads=kv,
                vocab_size=248320, max_position_embeddings=262144, head_dim=256,
                linear_num_key_heads=16, linear_num_value_heads=v_heads,
                linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4,
                full_attention_interval=4, mtp_num_hidden_layers=1, tie_word_embeddings=tie,
                **moe)
    return dict(model_type=mt, tie_word_embeddings=tie, text_config=text, vision_config=tower)


#: allenai/Llama-3.1-Tulu-3-8B-SFT config.json: Llama-3.1-8B's (131,072 positions, llama3
#: RoPE scaling, untied) with the 128,264-row vocabulary (see the module docstring)
TULU3_8B = dict(model_type="llama", num_hidden_layers=32, hidden_size=4096,
                intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
                vocab_size=128264, max_position_embeddings=131072, tie_word_embeddings=False,
                rope_scaling=dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                  original_max_position_embeddings=8192, rope_type="llama3"))

LAUNCHER_CONFIGS: dict[str, dict[str, Any]] = {
    "qwen2.5-vl-32b": _qwen25_vl(64, 5120, 27648, 40, 8),
    "qwen2.5-vl-72b": _qwen25_vl(80, 8192, 29568, 64, 8),
    "qwen3.5-0.8b": _qwen35(24, 1024, 3584, 8, 2, 16, _tower(12, 768, 3072, 12, 1024), True),
    "qwen3.5-2b": _qwen35(24, 2048, 6144, 8, 2, 16, _tower(24, 1024, 4096, 16, 2048), True),
    "qwen3.5-4b": _qwen35(32, 2560, 9216, 16, 4, 32, _tower(24, 1024, 4096, 16, 2560), True),
    "qwen3.5-122b-a10b": _qwen35(48, 3072, 1024, 32, 2, 64, _tower(27, 1152, 4304, 16, 3072),
                                 False, num_experts=256, num_experts_per_tok=8,
                                 moe_intermediate_size=1024,
                                 shared_expert_intermediate_size=1024),
    "llama-3.1-tulu-3-8b": TULU3_8B,
}
# fmt: on


def test_tulu3_vocabulary_is_the_padded_tokenizer():
    # open-instruct: Llama 3's 128,256 entries plus '<pad>', resized to a multiple of 8
    entries = 128256 + 1
    assert get_model("allenai/Llama-3.1-Tulu-3-8B-SFT").vocab == -(-entries // 8) * 8 == 128264
    tulu, llama = get_model("llama-3.1-tulu-3-8b"), get_model("llama-3.1-8b")
    # the same decoder otherwise: 8 more rows in the embedding and in the untied LM head
    assert tulu.arch().with_(vocab=llama.vocab, name=llama.name) == llama.arch()
    assert int(bl.params(tulu.arch())) - int(bl.params(llama.arch())) == 2 * 8 * 4096


def test_qwen25_vl_large_towers_have_the_wider_mlp():
    # verl vision_config.py: 3420 under the 28/36-layer decoders, 3456 otherwise
    assert get_model("qwen2.5-vl-7b").encoder_ffn_width == 3420
    for name in ("Qwen/Qwen2.5-VL-32B-Instruct", "Qwen/Qwen2.5-VL-72B-Instruct"):
        assert get_model(name).encoder_ffn_width == 3456


@pytest.mark.parametrize(
    "hf_id, name",
    [
        ("Qwen/Qwen2.5-VL-32B-Instruct", "qwen2.5-vl-32b"),
        ("Qwen/Qwen3.5-0.8B", "qwen3.5-0.8b"),
        ("Qwen/Qwen3.5-2B", "qwen3.5-2b"),
        ("Qwen/Qwen3.5-4B", "qwen3.5-4b"),
        ("Qwen/Qwen3.5-122B-A10B", "qwen3.5-122b-a10b"),
        ("allenai/Llama-3.1-Tulu-3-8B-SFT", "llama-3.1-tulu-3-8b"),
        ("allenai/Llama-3.1-Tulu-3-8B-DPO", "llama-3.1-tulu-3-8b"),
    ],
)
def test_hf_ids_resolve(hf_id, name):
    assert get_model(hf_id).name == name



# OpenRLHF examples/scripts/train_vlm_math_hybrid_engine.sh @3c3be623 (the cost-bearing
# arguments): --algo.kl.init_coef 0 with --algo.kl.use_loss, the reference's GPUs given
VLM_2B = [
    "--ref.num_nodes", "1", "--ref.num_gpus_per_node", "4", "--actor.num_nodes", "1",
    "--actor.num_gpus_per_node", "4", "--vllm.num_engines", "4",
    "--vllm.tensor_parallel_size", "1", "--train.colocate_all",
    "--vllm.gpu_memory_utilization", "0.7", "--algo.kl.init_coef", "0", "--algo.kl.use_loss",
    "--algo.advantage.estimator", "reinforce_baseline",
    "--actor.model_name_or_path", "Qwen/Qwen3.5-2B", "--reward.remote_url", "reward_func.py",
    "--train.micro_batch_size", "1",
    "--train.batch_size", "1024", "--rollout.batch_size", "128",
    "--rollout.n_samples_per_prompt", "8", "--data.max_len", "4096",
    "--rollout.max_new_tokens", "2048", "--ds.zero_stage", "3",
]  # fmt: skip


def test_openrlhf_without_a_reference_its_gpu_keys_are_read_and_said_unused():
    from rlmcost.frameworks.openrlhf import import_openrlhf

    q = import_openrlhf(VLM_2B)
    # train_ppo_ray.py builds no reference when init_coef is 0: --no-kl, and the ref's GPU
    # keys are neither placed nor listed as keys rlmcost does not read
    assert "--no-kl" in dict(q.flags)
    assert not [k for k in q.ignored if "ref" in k]
    assert any("builds no reference model" in n for n in q.notes)
    with_ref = [("0.01" if a == "0" and VLM_2B[i - 1] == "--algo.kl.init_coef" else a)
                for i, a in enumerate(VLM_2B)]  # fmt: skip
    q = import_openrlhf(with_ref)
    assert "--kl" in dict(q.flags)
    assert not any("builds no reference model" in n for n in q.notes)


# NeMo RL examples/configs/dpo.yaml @7ea279ab (the keys the importer reads) under the
# Tulu 3 recipe's values (recipes/llm/dpo-llama3.1-8b-tulu3-1n8g-fsdp2tp1.yaml)
TULU3_DPO = """\
dpo:
  max_num_steps: 2110
  reference_policy_kl_penalty: 5
  sft_loss_weight: 0
policy:
  model_name: allenai/Llama-3.1-Tulu-3-8B-SFT
  train_global_batch_size: 128
  train_micro_batch_size: 1
  max_total_sequence_length: 2048
  precision: bfloat16
  dtensor_cfg:
    enabled: true
    tensor_parallel_size: 1
    activation_checkpointing: false
  megatron_cfg:
    enabled: false
  dynamic_batching:
    enabled: false
  sequence_packing:
    enabled: false
cluster:
  gpus_per_node: 8
  num_nodes: 1
"""


def test_nemo_rl_dpo_config_is_a_dpo_query(tmp_path):
    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    p = tmp_path / "dpo-tulu3.yaml"
    p.write_text(TULU3_DPO)
    q = import_nemo_rl(p)
    flags = dict(q.flags)
    # dpo.py: a step is train_global_batch_size pairs, micro-batches of 2 x pairs sequences;
    # no generation (before, the config was read as GRPO with grpo.yaml's defaults)
    assert q.algorithm == "dpo"
    assert (flags["--batch"], flags["--micro-batch"]) == (128, 2)
    assert (flags["--prompt-len"], flags["--response-len"]) == (1024, 1024)
    assert not {"--group", "--rollout-tp", "--kl"} & set(flags)
    assert not [k for k in q.ignored if k.startswith("dpo.")]
    q = import_nemo_rl(p, prompt_len=512)
    assert (dict(q.flags)["--prompt-len"], dict(q.flags)["--response-len"]) == (512, 1536)


def test_imported_dpo_shows_no_engine_in_the_resolved_deployment(tmp_path, capsys):
    # DPO generates nothing (nemo_rl/algorithms/dpo.py): the resolved deployment's engine row
    # says so instead of the preset's vLLM settings, which no phase of the run uses
    from rlmcost.cli._import_run import _render_deployment

    dep = {"train": {"tp": 1}, "engine": {"tp": 1, "gpu_memory_utilization": 0.6}}
    _render_deployment(dep, None, offline=True)
    out = capsys.readouterr().out
    assert "offline: nothing generated" in out and "gpu_memory_utilization" not in out
    _render_deployment(dep, None, offline=False)
    assert "gpu_memory_utilization=0.6" in capsys.readouterr().out
