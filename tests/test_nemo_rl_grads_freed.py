"""NeMo RL's DTensor policy frees its gradients after the update: its train() sets them to
None at each global batch and once more after the last, "release gradient memory before
rollouts" (NVIDIA-NeMo/RL PR 1147, 2025-10-02, from v0.4.0;
nemo_rl/models/policy/workers/dtensor_policy_worker_v2.py @7ea279abf, train():
``self.optimizer.zero_grad()``, set_to_none by default since PyTorch 2.0). So generation and
the log-prob forwards of the default deployment hold no gradient; the Megatron-core policy
(--zero 1) keeps its persistent gradient buffer unless an offload frees it."""

from __future__ import annotations

import rlmcost
from rlmcost.algorithms.kinds import Stage


def _grads(**train: object) -> dict[Stage, int]:
    run = rlmcost.Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "8b"},
                                 "cluster": {"gpus": 8}, "deployment": {"train": train}})
    e = rlmcost.evaluate(run)
    return {s: st.peak.memory.gradients for s, st in e.stages.items()}


def test_dtensor_policy_holds_no_gradients_outside_its_update():
    g = _grads()  # NeMo RL's default: DTensor (FSDP2), ZeRO-3 over 8 GPUs, fp32 gradients
    # 8,030,261,248 parameters x 4 B / 8 ranks: the update's gradient shard
    assert g[Stage.TRAINING] == 8_030_261_248 * 4 // 8
    assert g[Stage.GENERATION] == 0 and g[Stage.ASSESSMENT] == 0


def test_megatron_policy_keeps_its_buffer():
    # the Megatron-core policy at ZeRO 1 without grads-idle: its buffer stays on the GPU
    g = _grads(zero="1", tp=2, offload=["optimizer-idle"])
    assert g[Stage.TRAINING] > 0 and g[Stage.GENERATION] == g[Stage.TRAINING]
