"""What the frameworks' own example launchers needed to import (benchmarks/import_corpus.py
swept them): reward models on built-in decoders, lines that break their continuation, verl's
token-baseline estimator, a group of one, placeholders for the model, verl's split placement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost import blocks as bl
from rlmcost.choices import Head
from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.launch_scripts import import_slime_script, import_verl_script
from rlmcost.frameworks.model_path import model_of_path
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.shell_words import broken_continuations
from rlmcost.frameworks.slime import import_slime
from rlmcost.frameworks.verl import import_verl
from rlmcost.frameworks.verl_split import split_pools
from rlmcost.specs import get_model
from rlmcost.specs.hf_config import spec_from_config

DATA = Path(__file__).parent / "data" / "frameworks"

# Skywork/Skywork-Reward-Llama-3.1-8B config.json (huggingface.co, main), the keys that shape
# the model: Llama-3.1-8B's decoder with one token added (vocab_size 128257, pad 128256).
SKYWORK_8B = {
    "model_type": "llama", "architectures": ["LlamaForSequenceClassification"],
    "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": False,
    "vocab_size": 128257, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}  # fmt: skip

# the launch line verl examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh @b178a3cd breaks: a
# comment after the backslash (line 6), shortened to the keys that matter
PFPPO = """set -x

python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=gae \\
    algorithm.pf_ppo.reweight_method=pow \\  # ["pow", "max_min", "max_random"]
    data.train_batch_size=1024 \\
    actor_rollout_ref.model.path=deepseek-ai/deepseek-llm-7b-chat \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16 \\
    actor_rollout_ref.rollout.n=5 \\
    critic.ppo_micro_batch_size_per_gpu=32 \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes=1 $@
"""

# slime scripts/run-kimi-k2-Instruct.sh @624b824a lines 29-36 and 166-182, shortened: line 172
# (here line 14) lacks its backslash, so bash ends `ray job submit` there and runs line 173
# (`${MODEL_ARGS[@]} \`, `--disable-bias-linear ...`) as a command of its own
KIMI = """MODEL_ARGS=(
   --num-layers 61
   --hidden-size 7168
)
CKPT_ARGS=(
   --hf-checkpoint $BASE_DIR/Kimi-K2-Instruct/
)
ray job submit --address="http://127.0.0.1:8265" \\
   -- python3 train.py \\
   --actor-num-nodes 32 \\
   --actor-num-gpus-per-node 8 \\
   --colocate \\
   --rollout-batch-size 128 \\
   --update-weight-buffer-size $(( 4 * 512 * 1024 * 1024))
   ${MODEL_ARGS[@]} \\
   ${CKPT_ARGS[@]} \\
   --n-samples-per-prompt 8
"""


def test_reward_model_is_its_configs_shape():
    # independent: the published config.json, read by the config loader
    loaded = spec_from_config(SKYWORK_8B, name="skywork-reward-llama-3.1-8b")
    spec = get_model("Skywork/Skywork-Reward-Llama-3.1-8B")
    assert spec.arch() == loaded.arch()
    # a d x 1 score head over the decoder: llama-3.1-8b's count plus one embedding row
    base = get_model("llama-3.1-8b").arch()
    assert int(bl.params(spec.arch(), Head.VALUE)) == int(bl.params(base, Head.VALUE)) + 4096


def test_reward_model_whose_config_was_not_read_says_so():
    spec = get_model("Skywork-Reward-V2-Llama-3.2-3B")  # its name part, case aside
    assert spec.arch().with_(name="x") == get_model("llama-3.2-3b").arch().with_(name="x")
    assert any("was not read" in n and "3,072 parameters" in n for n in spec.notes)


def test_reward_model_folder_resolves_with_a_note():
    # verl examples/ppo_trainer/run_qwen2.5-3b_rm_legacy.sh @b178a3cd:
    # reward_model.model.path=$HOME/models/Skywork-Reward-V2-Llama-3.2-3B
    q = ImportedQuery("verl", "x")
    path = "$HOME/models/Skywork-Reward-V2-Llama-3.2-3B"
    assert model_of_path(q, "reward_model.model.path", path) == \
        "Skywork/Skywork-Reward-V2-Llama-3.2-3B"  # fmt: skip
    assert any("not on this machine" in n for n in q.notes)
    assert model_of_path(q, "k", "$HOME/models/Skywork-Reward-V9") == \
        "$HOME/models/Skywork-Reward-V9"  # fmt: skip


def test_comment_after_a_backslash_reads_the_lines_it_means(tmp_path):
    script = tmp_path / "run_pfppo.sh"
    script.write_text(PFPPO)
    q = import_verl_script(script, [], [], None, None)
    # the lines after line 5 are read: the batch and group are the script's
    assert dict(q.flags)["--batch"] == 1024 and dict(q.flags)["--group"] == 5
    assert any("line 5" in n and "does not continue" in n for n in q.notes)


def test_missing_backslash_before_option_lines_reads_the_lines_it_means(tmp_path):
    script = tmp_path / "run-kimi-k2-Instruct.sh"
    script.write_text(KIMI)
    q = import_slime_script(script, [], [], None, None)
    flags = dict(q.flags)
    # the lines after line 14 are read: the model from --hf-checkpoint's folder (Kimi-K2's
    # Hugging Face name, moonshotai/Kimi-K2-Instruct), the group from the last line
    assert flags["--model"] == "kimi-k2" and flags["--group"] == 8
    assert flags["--batch"] == 128 and flags["--gpus"] == 256
    assert any("line 14" in n and "no backslash at its end" in n for n in q.notes)


@pytest.mark.parametrize("text", [
    # the next line is a command of its own (not an option word): bash's reading is kept
    "python3 train.py \\\n   --colocate\n   echo done \\\n   --x\n",
    # the previous line has no backslash: the line is a command of its own
    "python3 train.py --colocate\n   --a 1\n   --b 2 \\\n   --c\n",
    # the option lines after it do not continue with a backslash
    "python3 train.py \\\n   --colocate\n   --b 2\n",
])  # fmt: skip
def test_missing_backslash_is_read_only_when_unambiguous(text):
    assert broken_continuations(text, "x.sh") == (text, [])


def test_optimal_token_baseline_is_priced_as_grpo(tmp_path):
    # verl examples/otb_trainer/run_qwen2_5-7b.sh @b178a3cd; docs/algo/otb.md: no critic, no
    # extra backward, sum(pi^2) from the log-prob forward's logits
    empty = tmp_path / "e.yaml"
    empty.write_text("{}\n")
    q = import_verl(empty, [
        "algorithm.adv_estimator=optimal_token_baseline", "data.train_batch_size=128",
        "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B",
        "actor_rollout_ref.actor.ppo_mini_batch_size=128",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16",
        "actor_rollout_ref.actor.calculate_sum_pi_squared=True", "actor_rollout_ref.rollout.n=8"])
    assert q.algorithm == "rlvr"
    assert any("sum of squared probabilities" in n for n in q.notes)
    assert "actor_rollout_ref.actor.calculate_sum_pi_squared" not in q.ignored


def _empty(tmp_path):
    empty = tmp_path / "e.yaml"
    empty.write_text("{}\n")
    return empty


# verl examples/tuning/0.5b/qwen2-0.5b_grpo-lora_1_h100_fsdp_vllm.sh @b178a3cd: rollout.n=1
GROUP_OF_ONE = ["algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=1",
                "actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct",
                "data.train_batch_size=8", "actor_rollout_ref.actor.ppo_mini_batch_size=8",
                "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
                "trainer.n_gpus_per_node=1",
                "actor_rollout_ref.rollout.tensor_model_parallel_size=1"]  # fmt: skip


def test_group_of_one_is_priced_at_group_one_under_verl(tmp_path):
    q = import_verl(_empty(tmp_path), GROUP_OF_ONE)
    # verl/trainer/ppo/core_algos.py @b178a3cd lines 314-316: a group of one gets mean 0, std 1
    assert q.algorithm == "rlvr" and dict(q.flags)["--group"] == 1
    assert any("rollout.n=1" in n and "mean 0" in n and "--group 1" in n for n in q.notes)
    # the equivalent query runs, saying what verl computes; rlmcost's own group methods refuse
    # a group of one (their baseline needs two responses: rlmcost.algorithms.catalog grpo)
    out = CliRunner().invoke(app, [q.algorithm, *q.argv(), "--json"])
    assert out.exit_code == 0, out.output
    est = json.loads(out.output)
    assert est["run"]["workload"]["samples_per_prompt"] == 1
    assert any(n.startswith("K = 1 under verl") for n in est["notes"])
    for argv in (["grpo", "-K", "1"], ["rlvr", "--framework", "nemo-rl", "-K", "1"],
                 ["dapo", "--framework", "verl", "-K", "1"]):  # fmt: skip
        out = CliRunner().invoke(app, [*argv, "-m", "qwen2.5-0.5b"])
        assert out.exit_code != 0 and "needs --group >= 2" in out.output


@pytest.mark.parametrize("over, match", [
    # verl refuses pass@k on a group of one (core_algos.py line 405 @b178a3cd)
    (["algorithm.adv_estimator=grpo_passk"], "Pass@k requires at least 2"),
    # DAPO's dynamic sampling keeps groups whose rewards differ: a group of one never does
    (["algorithm.filter_groups.enable=true"], "whose rewards differ"),
])  # fmt: skip
def test_group_of_one_is_refused_where_verl_cannot_run_it(tmp_path, over, match):
    with pytest.raises(SpecError, match=match):
        import_verl(_empty(tmp_path), [*GROUP_OF_ONE, *over])


@pytest.mark.parametrize("lines, match", [
    # verl examples/router_replay/run_qwen30_a3b_megatron_vllm.sh @b178a3cd
    ('HF_MODEL_PATH=""\n', "'' is a placeholder for the model"),
    # verl examples/tuning/70b/qwen2-70b_grpo_32_h20_fsdp_vllm.sh @b178a3cd (no $)
    ("model_path=Qwen/Qwen2-72B-Instruct\n", "line 1 .*without its \\$"),
])  # fmt: skip
def test_placeholder_model_is_named_as_one(tmp_path, lines, match):
    value = "$HF_MODEL_PATH" if "HF_MODEL" in lines else "model_path"
    script = tmp_path / "run.sh"
    script.write_text(f"{lines}python3 -m verl.trainer.main_ppo "
                      f"actor_rollout_ref.model.path={value} "
                      "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 "
                      "critic.ppo_micro_batch_size_per_gpu=8 $@\n")
    with pytest.raises(SpecError, match=match):
        import_verl_script(script, [], [], None, None)
    # given after the script, the model is read
    q = import_verl_script(script, ["actor_rollout_ref.model.path=Qwen/Qwen2.5-7B"], [], None,
                           None)  # fmt: skip
    assert dict(q.flags)["--model"] == "Qwen/Qwen2.5-7B"


# verl examples/split_placement/run_deepseek7b_llm.sh @b178a3cd, the keys that shape the cost
SPLIT = """set -x

python3 main_ppo_split.py \\
    algorithm.adv_estimator=gae \\
    data.train_batch_size=1024 \\
    data.max_prompt_length=512 \\
    data.max_response_length=512 \\
    actor_rollout_ref.model.path=deepseek-ai/deepseek-llm-7b-chat \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \\
    actor_rollout_ref.actor.use_kl_loss=False \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \\
    actor_rollout_ref.rollout.tensor_model_parallel_size=4 \\
    actor_rollout_ref.rollout.name=vllm \\
    actor_rollout_ref.rollout.gpu_memory_utilization=0.4 \\
    critic.model.path=deepseek-ai/deepseek-llm-7b-chat \\
    critic.model.enable_gradient_checkpointing=False \\
    critic.ppo_micro_batch_size_per_gpu=8 \\
    algorithm.use_kl_in_reward=False \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes=1 $@
"""


def _split_script(tmp_path):
    # with its config beside it: examples/split_placement/config/ppo_trainer_split.yaml
    # @b178a3cd (a copy in tests/data/frameworks)
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "ppo_trainer_split.yaml").write_text(
        (DATA / "verl_ppo_trainer_split.yaml").read_text())
    script = tmp_path / "run_deepseek7b_llm.sh"
    script.write_text(SPLIT)
    return script


def test_split_placement_is_two_device_groups(tmp_path):
    q = import_verl_script(_split_script(tmp_path), [], [], None, None)
    f = dict(q.flags)
    # main_ppo_split.py lines 158-177 @b178a3cd: one node, half its GPUs per pool; the actor
    # and its rollout on one, the critic on the other (no reward model, no KL: no reference)
    assert q.algorithm == "vapo" and f["--gpus"] == 8
    assert f["--groups"] == "rollout+actor=4,critic=4[ckpt=none]"
    # ppo_trainer_split.yaml is read: use_remove_padding False, enforce_eager True
    assert "--padded" in f and "--enforce-eager" in f and f["--ckpt"] == "full"
    assert any("update_actor and update_critic overlap" in n for n in q.notes)
    out = CliRunner().invoke(app, [q.algorithm, *q.argv(), "--json"])  # the groups resolve
    assert out.exit_code == 0, out.output
    # with a KL loss and a reward model, the reference and the reward join their pools
    q = import_verl_script(_split_script(tmp_path), [
        "actor_rollout_ref.actor.use_kl_loss=True", "reward_model.enable=True",
        "reward_model.model.path=deepseek-ai/deepseek-llm-7b-chat", "trainer.nnodes=3"],
        [], None, None)  # fmt: skip
    f = dict(q.flags)
    assert q.algorithm == "ppo" and f["--gpus"] == 16  # whole nodes: 3 // 2 each, one idle
    assert f["--groups"] == "rollout+actor+reference=8,critic+reward=8[ckpt=none]"


def test_split_placement_needs_its_config_and_two_gpus(tmp_path):
    script = tmp_path / "run_deepseek7b_llm.sh"
    script.write_text(SPLIT)
    with pytest.raises(SpecError, match="split-placement example .*ppo_trainer_split.yaml"):
        import_verl_script(script, [], [], None, None)
    assert split_pools(8, 1, "x") == (4, 1) and split_pools(8, 2, "x") == (8, 1)
    with pytest.raises(SpecError, match="leaves the split's pools no GPU"):
        split_pools(1, 1, "x")


def test_slime_sft_script_is_named_as_sft():
    # slime scripts/run-qwen3-4B-base-sft.sh @624b824a: --loss-type sft_loss with one sample per
    # prompt, which was refused as a group method with K = 1
    argv = ["train.py", "--hf-checkpoint", "/root/Qwen3-4B-Base/", "--rollout-batch-size", "128",
            "--loss-type", "sft_loss", "--debug-train-only"]  # fmt: skip
    with pytest.raises(SpecError, match="sft_loss: supervised fine-tuning"):
        import_slime(argv, None, None)


def test_placeholder_model_name_is_an_error_naming_it():
    # NeMo RL examples/configs/recipes/llm/grpo-dapomath17k-dsv3-megatron.yaml @7ea279ab:
    # policy.model_name "Follow instructions in https://github.com/NVIDIA-NeMo/RL/..."
    with pytest.raises(SpecError, match="is a placeholder"):
        get_model("Follow instructions in https://github.com/NVIDIA-NeMo/RL/blob/main/docs/x.md")
    with pytest.raises(SpecError, match="is a placeholder"):
        get_model("<path_to_dsv3_config>")
