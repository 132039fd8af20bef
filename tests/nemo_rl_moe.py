"""A NeMo RL MoE recipe for the importer's tests: examples/configs/grpo_math_1B.yaml (as
tests/data/frameworks/nemo_rl_grpo_math.yaml) overridden to Qwen3-30B-A3B on the Megatron-core
backend at expert parallelism 8, as NeMo RL's Qwen3-30B-A3B performance recipes run it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

NEMO = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"


def qwen3_moe_overrides(nodes: int) -> list[str]:
    """The overrides of the recipe on ``nodes`` nodes of 8 GPUs."""
    return ["policy.model_name=Qwen/Qwen3-30B-A3B", "cluster.gpus_per_node=8",
            f"cluster.num_nodes={nodes}", "policy.dtensor_cfg.enabled=false",
            "policy.megatron_cfg.enabled=true",
            "policy.megatron_cfg.expert_model_parallel_size=8"]  # fmt: skip


def import_qwen3_moe(nodes: int, *more: str) -> Any:
    """``rlmcost import nemo-rl`` of the recipe on ``nodes`` nodes, with ``more`` overrides."""
    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    return import_nemo_rl(NEMO, [*qwen3_moe_overrides(nodes), *more])
