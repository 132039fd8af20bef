"""A small GRPO query on device groups, shared by the per-group settings tests
(tests/test_group_train_fields.py, tests/test_group_engine.py), and the group models an
evaluation builds (tests/test_group_states.py, tests/test_reference_swap.py)."""

from __future__ import annotations

from typing import Any

from rlmcost import memo
from rlmcost.run import Run


def grpo_on_groups(model: str, deployment: dict[str, Any]) -> Run:
    """GRPO with a rule reward, 16 prompts x 4 samples of 512 + 1,024 tokens (lognormal mean
    700) on H100s, deployed as ``deployment`` (its groups give the GPUs)."""
    return Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True},
        "models": {"actor": model},
        "workload": {"prompts": 16, "samples_per_prompt": 4, "prompt_len": 512,
                     "response_len": 1024, "length_dist": "lognormal:700,0.6,1024"},
        "deployment": deployment,
        "cluster": {"hardware": "h100-sxm"},
    })  # fmt: skip


def built_groups(algorithm: str, argv: str) -> list[Any]:
    """The group models that ``rlmcost ALGORITHM ARGV`` builds, each after its estimate (a spy
    on :func:`rlmcost.placement.group_jobs.estimate`; no result kept, so every group is built)."""
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.placement import group_jobs

    seen: list[Any] = []
    original = group_jobs.estimate

    def spy(g: Any) -> Any:
        out = original(g)
        seen.append(g)
        return out

    group_jobs.estimate = spy
    try:
        with memo.plain():
            evaluate_deployment(run_from_argv(algorithm, argv.split()))
    finally:
        group_jobs.estimate = original
    return seen
