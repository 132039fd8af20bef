"""Framework launches as their repositories ship them, through `rlmcost import`: each test
names the file (repository path @ commit) whose keys it carries."""

from __future__ import annotations

from rlmcost.frameworks.verl import import_verl

# verl examples/grpo_trainer/run_qwen2_5-3b_gsm8k_grpo_lora.sh @b178a3cd: one mini-batch per
# step (train_batch_size = ppo_mini_batch_size = 16), five responses, 2 GPUs: 40 sequences
# a rank, one micro-batch of 40.
VERL_LORA_3B = [
    "algorithm.adv_estimator=grpo", "data.train_batch_size=16", "data.max_prompt_length=512",
    "data.max_response_length=1024", "actor_rollout_ref.model.path=qwen2.5-3b",
    "actor_rollout_ref.model.lora_rank=64", "actor_rollout_ref.model.lora_alpha=32",
    "actor_rollout_ref.actor.ppo_mini_batch_size=16",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=40",
    "actor_rollout_ref.rollout.n=5", "actor_rollout_ref.rollout.tensor_model_parallel_size=2",
    "trainer.n_gpus_per_node=2", "trainer.nnodes=1",
]


def test_verl_one_mini_batch_per_step_checks_the_micro_batch_split(tmp_path) -> None:
    """One optimizer step per batch leaves --mini-batches at its default, out of the query;
    the micro-batch check still takes the whole batch as the mini-batch: the script's 2 GPUs
    take 40 sequences each, and on 8 GPUs (10 each) a micro-batch of 40 does not divide them,
    as verl's worker asserts (fsdp_workers.py: ppo_mini_batch_size % micro == 0)."""
    import pytest

    from rlmcost.errors import SpecError

    empty = tmp_path / "empty.yaml"
    empty.write_text("{}\n")
    q = import_verl(empty, VERL_LORA_3B)
    assert "--mini-batches" not in dict(q.flags)
    assert dict(q.flags)["--micro-batch"] == 40
    on_8 = [a.replace("n_gpus_per_node=2", "n_gpus_per_node=8") for a in VERL_LORA_3B]
    with pytest.raises(SpecError, match="does not split into micro-batches of 40"):
        import_verl(empty, on_8)


def _openrlhf(name: str) -> list[str]:
    """An OpenRLHF launch's arguments from tests/data/frameworks (one option a line)."""
    import shlex
    from pathlib import Path

    text = (Path(__file__).parent / "data" / "frameworks" / name).read_text()
    return shlex.split(" ".join(ln for ln in text.splitlines() if not ln.startswith("#")))


def test_openrlhf_dotted_arguments_read_as_the_flat_ones() -> None:
    """train_prorlv2_math_hybrid_engine.sh in its dotted form (@3c3be623, OpenRLHF ed62d0e2 on)
    and its flat form (@v0.10.1): the same launch, the same query; before, the dotted one was
    refused for want of --pretrain."""
    from rlmcost.frameworks.openrlhf import import_openrlhf

    dotted = import_openrlhf(_openrlhf("openrlhf_prorlv2_3c3be623.args"))
    flat = import_openrlhf(_openrlhf("openrlhf_prorlv2_v0.10.1.args"))
    assert dotted.flags == flat.flags
    flags = dict(dotted.flags)
    # the script: --rollout.batch_size 512, --rollout.n_samples_per_prompt 16,
    # --train.batch_size 1024, --vllm.num_engines 8, --vllm.gpu_memory_utilization 0.75
    assert (flags["--batch"], flags["--group"], flags["--mini-batches"]) == (512, 16, 8)
    assert (flags["--gpus"], flags["--gpu-memory-utilization"]) == (8, 0.75)
    assert any("dotted arguments" in n for n in dotted.notes)
    assert not any(k.startswith("--ds.") or k.startswith("--actor.") for k in dotted.ignored)
    # colocate_all: the reference's GPUs read and checked against the actor's (train_ppo_ray.py
    # asserts them equal where init_kl_coef > 0), no longer listed as ignored
    assert "--ref.num_nodes" not in dotted.ignored and "--ref_num_nodes" not in flat.ignored


def test_openrlhf_max_len_and_max_new_tokens_set_the_lengths() -> None:
    """Since OpenRLHF d0e088b6 (v0.10.0) --max_len bounds prompt + response and
    --max_new_tokens the response (train_prorlv2_math_hybrid_engine.sh: 9216 and 8192, where it
    gave --prompt_max_len 1024 --generate_max_len 8192 before); they were ignored, the lengths
    left at 1024 each."""
    from rlmcost.frameworks.openrlhf import import_openrlhf

    flags = dict(import_openrlhf(_openrlhf("openrlhf_prorlv2_v0.10.1.args")).flags)
    assert (flags["--prompt-len"], flags["--response-len"]) == (1024, 8192)
    base = [a for a in _openrlhf("openrlhf_prorlv2_v0.10.1.args")]
    i = base.index("--max_new_tokens")
    no_cap = base[:i] + base[i + 2:]  # train_ppo_ray_hybrid_engine.sh @v0.10.1: --max_len only
    q = import_openrlhf(no_cap)
    assert (dict(q.flags)["--prompt-len"], dict(q.flags)["--response-len"]) == (4608, 4608)
    assert any("--max_len 9216 bounds prompt + response" in n for n in q.notes)


def test_openrlhf_agent_function_is_the_reward() -> None:
    """train_reinforce_baseline_hybrid_engine.sh @3c3be623 scores with --train.agent_func_path
    and names no reward model: OpenRLHF sets remote_rm_url to 'agent' (train_ppo_ray.py, v0.8.0
    on); the importer asked for --reward_pretrain."""
    from rlmcost.frameworks.openrlhf import import_openrlhf

    argv = [a for a in _openrlhf("openrlhf_prorlv2_3c3be623.args")]
    i = argv.index("--reward.remote_url")
    argv[i:i + 2] = ["--train.agent_func_path", "examples/python/agent_func.py"]
    q = import_openrlhf(argv)
    assert q.algorithm == "rlvr"
    assert "--reward" not in dict(q.flags)
    assert any("--agent_func_path" in n for n in q.notes)


def test_trl_accelerate_keys_that_change_the_cost_are_listed_when_not_read() -> None:
    """TRL's context_parallel_2gpu.yaml (@f2cd5771) runs accelerate's context parallelism
    (parallelism_config_cp_size 2) and FSDP's own activation checkpointing: neither is read,
    and both were dropped without a word; now each is an ignored key. open-r1's zero3.yaml
    (tests/data/frameworks/trl_accelerate_zero3.yaml) leaves none."""
    from pathlib import Path

    from rlmcost.frameworks.trl import import_trl

    data = Path(__file__).parent / "data" / "frameworks"
    q = import_trl(data / "trl_grpo.yaml", ["num_processes=2", "num_generations=8"],
                   data / "trl_accelerate_context_parallel_2gpu.yaml")
    where = "accelerate config trl_accelerate_context_parallel_2gpu.yaml"
    assert f"{where}: parallelism_config.parallelism_config_cp_size=2" in q.ignored
    assert f"{where}: fsdp_config.fsdp_activation_checkpointing=True" in q.ignored
    assert dict(q.flags)["--zero"] == "3"
    zero3 = import_trl(data / "trl_grpo.yaml", [], data / "trl_accelerate_zero3.yaml")
    assert not [k for k in zero3.ignored if k.startswith("accelerate config")]


def test_nemo_rl_v02_fsdp1_config_is_refused_by_name(tmp_path) -> None:
    """NeMo RL v0.2.0's examples/configs/grpo_math_8B.yaml sets dtensor_cfg.enabled False and
    has no megatron_cfg: that release's FSDP1 worker (nemo_reinforcer/models/policy/
    hf_policy.py, fsdp1_policy_worker.py); v0.3.0 on refuses it (lm_policy.py). The error
    names it."""
    import pytest

    from rlmcost.errors import SpecError
    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    cfg = tmp_path / "grpo_math_8B.yaml"
    cfg.write_text(
        "grpo: {num_prompts_per_step: 64, num_generations_per_prompt: 32}\n"
        "policy:\n  model_name: meta-llama/Llama-3.1-8B-Instruct\n"
        "  train_global_batch_size: 512\n  train_micro_batch_size: 1\n"
        "  max_total_sequence_length: 4096\n  dtensor_cfg: {enabled: false}\n"
        "  generation: {backend: vllm, vllm_cfg: {tensor_parallel_size: 1}}\n"
        "cluster: {gpus_per_node: 8, num_nodes: 1}\n"
    )
    with pytest.raises(SpecError, match="FSDP1 worker"):
        import_nemo_rl(cfg, [])


def test_verl_local_checkpoint_path_read_by_its_folder_name(tmp_path) -> None:
    """verl examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh @b178a3cd trains
    actor_rollout_ref.model.path=$HOME/verl/models/Qwen3-235B-A22B: a folder absent here whose
    name is a built-in model, read as slime's importer reads --hf-checkpoint (it was an unknown
    model); a Hugging Face id stays as given, and an unknown folder name keeps the path."""
    from rlmcost.frameworks.verl import import_verl

    empty = tmp_path / "empty.yaml"
    empty.write_text("{}\n")
    base = [a for a in VERL_LORA_3B if "model.path" not in a and "lora" not in a]
    q = import_verl(empty, [*base, "actor_rollout_ref.model.path=/root/models/Qwen3-235B-A22B"])
    assert dict(q.flags)["--model"] == "qwen3-235b-a22b"
    assert any("not on this machine" in n for n in q.notes)
    q = import_verl(empty, [*base, "actor_rollout_ref.model.path=Qwen/Qwen3-8B"])
    assert dict(q.flags)["--model"] == "Qwen/Qwen3-8B"
    q = import_verl(empty, [*base, "actor_rollout_ref.model.path=/m/my-own-finetune"])
    assert dict(q.flags)["--model"] == "/m/my-own-finetune"


def test_verl_checkpoint_folder_with_a_precision_suffix(tmp_path) -> None:
    """A folder name that is a model's name plus a storage-precision word (verl examples/
    grpo_trainer/run_gptoss_20b.sh @b178a3cd saves openai/gpt-oss-20b dequantized to
    $HOME/models/gpt-oss-20b-bf16, and names lmsys/gpt-oss-20b-bf16, the Hub's copy) is that
    model, said in a note; a quantization word is no precision suffix: the path is kept."""
    empty = tmp_path / "empty.yaml"
    empty.write_text("{}\n")
    base = [a for a in VERL_LORA_3B if "model.path" not in a and "lora" not in a]
    q = import_verl(empty, [*base, "actor_rollout_ref.model.path=/m/gpt-oss-20b-bf16"])
    assert dict(q.flags)["--model"] == "gpt-oss-20b"  # the lmsys id, exactly
    q = import_verl(empty, [*base, "actor_rollout_ref.model.path=/m/Qwen3-8B-BF16"])
    assert dict(q.flags)["--model"] == "qwen3-8b"
    assert any("less its precision suffix" in n for n in q.notes)
    q = import_verl(empty, [*base, "actor_rollout_ref.model.path=/m/Qwen3-8B-FP8"])
    assert dict(q.flags)["--model"] == "/m/Qwen3-8B-FP8"


def test_miles_lora_rank_and_targets_are_read() -> None:
    """miles examples/lora/run-qwen3-4B-megatron-lora.sh @31f1ca96 trains a rank-32 LoRA on
    all linear layers (--lora-rank 32 --target-modules all-linear); the importer listed both as
    ignored and priced full fine-tuning. Megatron names map as miles' lora_utils.py maps them."""
    import shlex
    from pathlib import Path

    import pytest

    from rlmcost.errors import SpecError
    from rlmcost.frameworks.slime import import_slime

    text = (Path(__file__).parent / "data" / "frameworks" /
            "slime_miles-qwen3-4B-lora.args").read_text()  # fmt: skip
    argv = shlex.split(" ".join(ln for ln in text.splitlines() if not ln.startswith("#")))
    q = import_slime(argv)
    assert (dict(q.flags)["--lora-rank"], dict(q.flags)["--lora-targets"]) == (32, "all-linear")
    assert not [k for k in q.ignored if "lora" in k or "target" in k]
    i = argv.index("--target-modules")
    q = import_slime([*argv[:i], "--target-modules", "linear_qkv,linear_fc2", *argv[i + 2:]])
    assert dict(q.flags)["--lora-targets"] == "q,k,v,down"
    with pytest.raises(SpecError, match="without --target-modules"):
        import_slime([*argv[:i], *argv[i + 2:]])


def test_nemo_rl_lora_recipe_prices_the_adapter() -> None:
    """NeMo RL recipes/llm/grpo-qwen3-8B-base-1n8g-fsdp2-lora.yaml @7ea279abf enables
    dtensor_cfg.lora_cfg (dim 128; grpo_math_1B.yaml's match_all_linear true): the importer
    listed the keys as ignored and priced full fine-tuning. The Megatron workers' peft block
    (grpo_math_1B_megatron.yaml: target_modules [], every linear layer) is read too; a
    target list keeps its projections (Megatron-Bridge names: linear_qkv is q, k and v)."""
    from pathlib import Path

    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    nemo = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"
    lora = ["policy.dtensor_cfg.lora_cfg.enabled=true", "policy.dtensor_cfg.lora_cfg.dim=128",
            "policy.dtensor_cfg.lora_cfg.match_all_linear=true"]
    flags = dict(import_nemo_rl(nemo, lora).flags)
    assert (flags["--lora-rank"], flags["--lora-targets"]) == (128, "all-linear")
    assert "--lora-rank" not in dict(import_nemo_rl(nemo, []).flags)
    some = [*lora[:2], "policy.dtensor_cfg.lora_cfg.match_all_linear=false",
            "policy.dtensor_cfg.lora_cfg.target_modules=[q_proj,v_proj]"]
    assert dict(import_nemo_rl(nemo, some).flags)["--lora-targets"] == "q,v"
    meg = ["policy.dtensor_cfg.enabled=false", "policy.megatron_cfg.enabled=true",
           "policy.megatron_cfg.peft.enabled=true", "policy.megatron_cfg.peft.dim=16"]
    flags = dict(import_nemo_rl(nemo, meg).flags)
    assert (flags["--lora-rank"], flags["--lora-targets"]) == (16, "all-linear")
    qkv = [*meg, "policy.megatron_cfg.peft.target_modules=[linear_qkv]"]
    assert dict(import_nemo_rl(nemo, qkv).flags)["--lora-targets"] == "q,k,v"
