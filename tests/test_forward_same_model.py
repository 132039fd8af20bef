"""The old log-prob forward runs in the training module: its own micro-batch is no second model.

NeMo RL's ``get_logprobs`` runs the policy's DTensor model with ``logprob_batch_size`` (2 in
grpo_math_1B.yaml) where training runs ``train_micro_batch_size`` 1
(nemo_rl/models/policy/dtensor_policy_worker_v2.py at 7ea279abf); rlmcost had counted a second
(bf16) weight copy for the forward because its layout differed in the micro-batch alone
(``GroupEngine.same_model``)."""

from __future__ import annotations

import rlmcost
from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.evaluation.deployment import evaluate_deployment

LLAMA_31_8B_PARAMS = 8_030_261_248
"""Llama-3.1-8B's parameters, as LlamaForCausalLM built from its config counts them
(tests/test_compiled_blocks.py checks rlmcost's count against it, test_torch_exact)."""


def test_nemo_rl_old_logprob_forward_holds_the_training_weights_once():
    est = evaluate_deployment(rlmcost.run_from_command("rlmcost grpo -m 8b --gpus 8"))
    jobs = {(j.task.role, j.task.kind): j for j in est.groups[0].jobs}
    fwd, train = jobs[(Role.ACTOR, Kind.FORWARD)], jobs[(Role.ACTOR, Kind.TRAIN)]
    assert fwd.layout.micro_batch != train.layout.micro_batch  # 2 against 1: the case
    shard = LLAMA_31_8B_PARAMS * 4 // 8  # fp32 (NeMo RL loads the policy in float32), FSDP / 8
    assert train.memory.weights == shard
    assert fwd.memory.weights == shard  # was shard + the bf16 copy, 6,022,695,936 B
