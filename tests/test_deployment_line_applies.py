"""The deployment line says what applies to the run at hand: an algorithm that generates
nothing (DPO) names no engine setting as applied, and an example's pipeline split made for
its model's depth is said as the even split for an actor of another depth."""

import pytest

from rlmcost.cli.deployment_line import deployment_line
from rlmcost.run.spec import Run

ENGINE_WORDS = ("vLLM", "SGLang", "--rollout-tp", "--gpu-memory-utilization", "--sleep",
                "--max-num-seqs", "GPUs of its own", "colocated")  # fmt: skip


def _line(algorithm: str, actor: str, framework: str | None, gpus: int = 16) -> str:
    dep = {} if framework is None else {"framework": framework}
    return deployment_line(Run.from_data({
        "algorithm": {"name": algorithm}, "models": {"actor": actor},
        "cluster": {"hardware": "gb200", "gpus": gpus}, "deployment": dep}))  # fmt: skip


@pytest.mark.parametrize("framework", [None, "trl", "openrlhf", "verl", "slime", "nemo-rl"])
@pytest.mark.parametrize("actor", ["llama-3.1-8b", "llama-3.1-70b", "qwen3-235b-a22b"])
def test_dpo_line_names_no_engine_setting_as_applied(framework, actor):
    # DPO runs no generation engine (algorithms.catalog: offline), so an example's vLLM or
    # SGLang settings (TRL's 'vLLM TP 8 served on GPUs of its own') do not apply to it
    line = _line("dpo", actor, framework)
    applied = line.split("not applied to dpo")[0]
    assert not [w for w in ENGINE_WORDS if w in applied], line


def test_grpo_line_keeps_the_engine():
    # the same example under GRPO, which generates: its engine is part of the run
    assert "vLLM TP 8 served on GPUs of its own" in _line("grpo", "llama-3.1-70b", "trl")


def test_split_for_another_depth_is_the_even_split():
    # slime scripts/run-qwen3-next-80B-A3B.sh @624b824a: --decoder-last-pipeline-num-layers 9
    # for Qwen3-Next's 48 layers; GLM-4.5-Air (46 layers) takes Megatron-core's even split
    air = _line("grpo", "glm-4.5-air", "slime", 32)
    assert "(9 layers last for 48 layers)" not in air
    assert "the even split of this actor's 46 layers; the example's 9 layers last is for its 48" \
        in air  # fmt: skip
    assert "(9 layers last for 48 layers)" in _line("grpo", "qwen3-next-80b-a3b", "slime", 32)
