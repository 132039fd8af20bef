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


def _budget_limit(groups_train: dict[str, Any] | None) -> int:
    """The token-budget limit on prompt + response (``evaluation.advice._limits``) of verl GRPO
    on Llama-3.1-8B, CP 2 and a 16,000-token budget run-wide, the actor group's own trainer
    layout ``groups_train`` (None: none)."""
    from types import SimpleNamespace

    from rlmcost.evaluation.advice import _limits

    actor: dict[str, Any] = {"members": "actor", "gpus": 8}
    if groups_train is not None:
        actor["train"] = groups_train
    run = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "8b"},
                         "deployment": {"framework": "verl",
                                        "train": {"cp": 2, "max_tokens_per_gpu": 16000},
                                        "groups": [{"members": "rollout", "gpus": 8}, actor]}})
    estimate = SimpleNamespace(evaluation=None, model="8b", deployment=run.deployment)
    return _limits(estimate)["token budget"]


def test_the_token_budget_limit_reads_a_groups_layout_over_the_runs() -> None:
    # verl refuses a sequence of more than budget tokens per CP rank
    # (verl/utils/seqlen_balancing.py: assert max_token_len >= max_seq_len): 16,000 x CP 2;
    # a group's train: {padded: true} keeps the run's CP 2 (deployment.given.layered), where
    # the raw layout's CP 1 (its default) halved the limit
    assert _budget_limit(None) == 32_000
    assert _budget_limit({"padded": True}) == 32_000
    # a group's own smaller budget is the one its jobs are refused against
    assert _budget_limit({"max_tokens_per_gpu": 8000}) == 16_000
    assert _budget_limit({"cp": 1}) == 16_000


def _forward_beside(forward: dict[str, Any]) -> Any:
    """A deployment whose trainer runs ``pp_overlap_p2p: false``, its actor group's own trainer
    layout giving ``tp`` alone and its own forward layout ``forward``."""
    from rlmcost.deployment.spec import Deployment

    return Deployment.model_validate({"train": {"pp_overlap_p2p": False}, "groups": [
        {"members": "actor", "gpus": 8, "train": {"tp": 2}, "forward": forward}]})  # fmt: skip


def test_a_groups_forward_is_checked_against_its_trainer_over_the_runs() -> None:
    import pytest

    from rlmcost.placement.group_train import group_trainer

    # the group's trainer runs the run's pp_overlap_p2p (false; deployment.given.layered), so a
    # forward giving false is read, and one giving None (the raw layout's default) is not:
    # deployment.trainer_only._beside took the raw layout's value for the fields outside
    # PASS_FIELDS, refusing the first and accepting the second
    dep = _forward_beside({"pp_overlap_p2p": False})
    assert group_trainer(dep, "actor").pp_overlap_p2p is False
    with pytest.raises(ValueError, match=r"groups\[0\]\.forward\.pp_overlap_p2p = None is not"):
        _forward_beside({"pp_overlap_p2p": None})
