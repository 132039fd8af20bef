"""The ``bound`` label of a stage: compute, memory, or link where most of the roofline bound is
transfers at link bandwidth (ZeRO-3 parameter gathers of the forwards, weight sync, host
offload), and none for a stage with nothing to run."""

from __future__ import annotations

import pytest

import rlmcost
from rlmcost.algorithms.kinds import Stage
from rlmcost.timing import PhaseTime


def test_label_of_compute_memory_link_and_nothing():
    assert PhaseTime(3.0, 1.0, 3.0, 3.0).bound == "compute"
    assert PhaseTime(1.0, 3.0, 3.0, 0.0).bound == "memory"
    # a stage's transfers alone: PhaseTime(0, 0, transfer_s, 0) (evaluation.stages)
    assert PhaseTime(0.0, 0.0, 5.0, 0.0).bound == "link"
    # a forward raised to its gathers' link time (placement.group_jobs._at_least)
    assert PhaseTime(7.2, 0.005, 22.2, 0.0).bound == "link"
    # half link, half memory-bound decode: HBM time may cover the rest, so memory
    assert PhaseTime(0.5, 2.0, 4.0, 0.0).bound == "memory"
    assert PhaseTime().bound == "none"


@pytest.fixture(scope="module")
def readme_ppo():
    """README's library example: PPO, 70B actor, 8B critic, TP 8 x DP 2 on 16 H100 (ZeRO-3,
    NeMo RL's DTensor defaults: forward micro-batches of one sequence)."""
    run = rlmcost.Run.from_yaml("""
algorithm: {name: ppo}
models: {actor: 70b, critic: 8b}
workload: {prompts: 64, samples_per_prompt: 4, response_len: 2048}
deployment: {train: {tp: 8}}
cluster: {hardware: h100, dp: 2}
""")
    return rlmcost.evaluate(run)


def test_gather_bound_assessment_is_link(readme_ppo):
    # Hand estimate: each 70B forward over 256 sequences of 3,072 tokens is 2 x 70.6e9 x
    # 786,432 = 1.1e17 FLOP, 7.0 s at 16 x 989 TFLOP/s; ZeRO-3 over DP 2 (one rank per node)
    # gathers half of a TP-8 rank's bf16 shard, 70.6e9 x 2 / 8 / 2 = 8.8 GB, at the 50 GB/s
    # NIC per micro-batch of one sequence, 128 per rank: 22.6 s, three times the compute.
    st = readme_ppo.stages[Stage.ASSESSMENT]
    reward = next(i for i in st.invocations if str(i.invocation.role) == "reward")
    assert reward.time.bound_s > 3 * reward.time.compute_s
    assert reward.time.bound_s == pytest.approx(128 * 70_553_706_496 * 2 / 8 / 2 / 50e9,
                                                rel=0.02)
    assert reward.time.bound == "link" and st.time.bound == "link"
    assert readme_ppo.to_json()["stages"]["assessment"]["bound"] == "link"
    assert readme_ppo.stages[Stage.TRAINING].time.bound == "compute"


def test_caption_names_the_transfers_in_the_bound(readme_ppo):
    from rlmcost.cli.algorithms_render import _caption

    text = _caption(readme_ppo)
    assert "no communication." not in text
    assert "ZeRO-3 gathers" in text and "weight sync" in text and "host offload" in text
