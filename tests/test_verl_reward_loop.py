"""`rlmcost import verl` of a reward model under verl's reward loop (reward_model.use_reward_loop,
the default config's since volcengine/verl PR 4452; docs/advance/reward_loop.rst): the reward
model is read as before and the engine that serves it is said, not left as ignored keys; the
rollout engine's data / expert parallel sizes likewise."""

from __future__ import annotations

from pathlib import Path

from rlmcost.frameworks.verl import import_verl

CFG = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
RM = ["reward_model.enable=true", "reward_model.model.path=Qwen/Qwen2.5-1.5B"]


def test_the_reward_loop_engine_is_said() -> None:
    # examples/grpo_trainer/run_mistral13b_skyworkrm_hhrlhf.sh's reward_model.rollout keys
    q = import_verl(CFG, [*RM, "reward_model.use_reward_loop=true",
                          "reward_model.rollout.name=vllm",
                          "reward_model.rollout.tensor_model_parallel_size=1",
                          "reward_model.rollout.gpu_memory_utilization=0.8"])  # fmt: skip
    assert dict(q.flags)["--reward"]
    (note,) = [n for n in q.notes if n.startswith("reward_model.use_reward_loop")]
    assert "vllm engine (TP 1, gpu_memory_utilization 0.8)" in note
    assert "woken after the rollouts" in note
    assert not any(k.startswith("reward_model.rollout.") for k in q.ignored)


def test_the_legacy_reward_worker_says_nothing_more() -> None:
    q = import_verl(CFG, [*RM, "reward_model.use_reward_loop=false"])
    assert not any(n.startswith("reward_model.use_reward_loop") for n in q.notes)


def test_engine_data_and_expert_parallel_are_read() -> None:
    # examples/gspo_trainer/run_qwen30b_gspo.sh sets both (at 1); above 1 a note says what
    # is priced (vllm_async_server.py's DP x TP engine with experts over EP)
    rollout = "actor_rollout_ref.rollout"
    ones = import_verl(CFG, [f"{rollout}.data_parallel_size=1",
                             f"{rollout}.expert_parallel_size=1"])
    assert not any("_parallel_size" in k for k in ones.ignored)
    wide = import_verl(CFG, [f"{rollout}.expert_parallel_size=8"])
    assert any("expert_parallel_size 8" in n for n in wide.notes)
