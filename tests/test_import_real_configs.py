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
