"""A device group's own layouts read by the fields they give (``deployment.given``): the
places that took a group's raw layout (its defaults for the fields it does not give) where
the layout over the run's is meant, and the kept values that must tell apart two layouts of
equal values that give different fields."""

from __future__ import annotations

from typing import Any

from group_runs import grpo_on_groups

from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.run import Run

DENSE = "llama-3.2-1b"


def _packed(own_forward: dict[str, Any] | None) -> Run:
    """NeMo RL GRPO on a rollout and an actor+reference group, packed forwards of micro-batch
    4 run-wide; ``own_forward``: the actor group's own forward layout (None: none)."""
    actor: dict[str, Any] = {"members": "actor+reference", "gpus": 8}
    if own_forward is not None:
        actor["forward"] = own_forward
    return grpo_on_groups(DENSE, {
        "framework": "nemo-rl", "train": {"packing": True, "micro_batch": 2},
        "forward": {"packing": True, "micro_batch": 4},
        "groups": [{"members": "rollout", "gpus": 8}, actor]})  # fmt: skip


def _forwards(run: Run) -> list[tuple[int, float, int]]:
    """Micro-batch, predicted seconds and bytes per device of each forward of the actor group."""
    e = evaluate_deployment(run)
    g = next(g for g in e.groups if g.name.startswith("actor"))
    return [(j.layout.micro_batch, j.predicted_s, j.memory.total) for j in g.jobs
            if str(j.task.kind) == "forward"]  # fmt: skip


def test_a_groups_forward_layout_not_giving_a_micro_batch_keeps_the_runs() -> None:
    # placement.group_train.group_forward took the group's forward micro_batch whenever it had a
    # forward layout: forward: {tp: 1} (the run's value) packed 1 x seq tokens, not 4 x seq
    run_wide = _forwards(_packed(None))
    assert {mb for mb, _, _ in run_wide} == {4}
    assert _forwards(_packed({"tp": 1})) == run_wide
    assert _forwards(_packed({"tp": 1, "micro_batch": 4})) == run_wide
    assert {mb for mb, _, _ in _forwards(_packed({"micro_batch": 1}))} == {1}
