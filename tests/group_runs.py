"""A small GRPO query on device groups, shared by the per-group settings tests
(tests/test_group_train_fields.py, tests/test_group_engine.py)."""

from __future__ import annotations

from typing import Any

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
