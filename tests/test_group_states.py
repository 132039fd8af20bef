"""A group's resident states as int tuples (``GroupMemory.states``, ``phase_offloaded``,
``present``) against the MemoryBreakdowns they stand for and the between-phases offload they
model.

Reference for the offload: verl ``fsdp_config.param_offload`` / ``optimizer_offload``
(``verl/workers/fsdp_workers.py``: ``offload_fsdp_model_to_cpu`` / ``load_fsdp_model_to_gpu``
around each phase, ``offload_fsdp_optimizer`` / ``load_fsdp_optimizer`` around
``update_actor``), NeMo RL ``offload_before_refit`` / ``offload_after_refit``: the optimizer
states wait in host memory outside the model's update; its parameter shard outside its own
forwards and update (its generation runs in the engine's copy).
"""

from __future__ import annotations

from typing import Any

import pytest
from group_runs import built_groups

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.placement.breakdown_ops import STATES, TERMS

# the NeMo RL v0.3 Llama-3.1-70B row of tests/test_forward_gathers.py (rl_runs.json's command)
ROW = ("--framework nemo-rl --model llama-3.1-70b --kl --mini-batches 4 --param-dtype fp32 "
       "--no-expandable-segments --tp 8 --sp --zero 3 --ckpt none --max-tokens-per-gpu 4096 "
       "--forward-micro-batch 2 --forward-max-tokens-per-gpu 8192 --logits materialized "
       "--rollout-tp 4 --gpu-memory-utilization 0.6 --sleep --offload optimizer-idle,params-idle "
       "--batch 64 --group 32 --prompt-len 130 --response-len 3966 --hardware h100-sxm "
       "--gpus 64 --length-dist lognormal:395,0.67,3966")


@pytest.fixture(scope="module")
def groups() -> list[Any]:
    """The group models the row's evaluation built (each after its estimate)."""
    seen = built_groups("rlvr", ROW)
    assert seen
    return seen


def test_resident_breakdown_is_the_states_tuple(groups: list[Any]) -> None:
    for g in groups:
        for role in g.roles:
            m = g.resident(role)
            assert (m.weights, m.gradients, m.optimizer) == g.states(role)
            assert all(getattr(m, n) == 0 for n in TERMS if n not in STATES)
            train = g.trains_here(role)
            own = g.own(train if train is not None else
                        next(t for t in g.tasks if t.role is role))  # fmt: skip
            want = (own.weights, own.gradients, own.optimizer) if train is not None else \
                (own.weights, 0, 0)  # fmt: skip
            assert g.states(role) == want
            assert isinstance(g.states(role)[0], int)


def test_between_phases_offload_keeps_what_each_phase_needs(groups: list[Any]) -> None:
    g = next(g for g in groups if g.trains_here(Role.ACTOR) is not None)
    train = g.trains_here(Role.ACTOR)
    w, grads, opt = g.states(Role.ACTOR)
    assert w > 0 and opt > 0
    assert g.phase_offloaded(Role.ACTOR, train) is None  # the update holds everything
    assert grads > 0 and g.present(Role.ACTOR, train) == (w, grads, opt)
    kinds = {t.kind for t in g.tasks if t.role is Role.ACTOR}
    assert {Kind.GENERATE, Kind.FORWARD} <= kinds  # both cases below are exercised
    for task in g.tasks:
        if task.role is Role.ACTOR and task.kind is Kind.GENERATE:
            # generation runs in the engine's copy: the training shard waits on the host too;
            # NeMo RL's DTensor policy set its gradients to None after the update
            # (tests/test_nemo_rl_grads_freed.py)
            assert g.phase_offloaded(Role.ACTOR, task) == (w, 0, opt)
            assert g.present(Role.ACTOR, task) == (0, 0, 0) and g.grads_freed(Role.ACTOR, task)
        elif task.role is Role.ACTOR and task.kind is Kind.FORWARD:
            # the actor's own log-prob forward needs its parameters, not its Adam states
            assert g.phase_offloaded(Role.ACTOR, task) == (0, 0, opt)
            assert g.present(Role.ACTOR, task) == (w, 0, 0)
    # host memory of a task counts each away state once, beside the trainers' kept states
    gen = next(t for t in g.tasks if t.kind is Kind.GENERATE)
    away = sum(sum(g.phase_offloaded(r, gen) or (0,)) for r in g.roles)
    assert g.host_bytes(gen) >= away >= w + opt
