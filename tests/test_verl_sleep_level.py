"""verl puts its colocated vLLM engine to sleep at level 2 (weights discarded, the refit
reloads them): verl/third_party/vllm/__init__.py at volcengine/verl b25bb7d4f sets
VLLM_SLEEP_LEVEL = 2 for vLLM >= 0.8.5 and vllm_rollout_spmd.py ``release`` sleeps at it.
Level 1 (NeMo RL, the default) copies the weights to host memory and back."""

from __future__ import annotations

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.perf.rl_constants import VLLM_WAKE_FIXED_S


def _sleep(framework: str):  # noqa: ANN202 - a Transfer
    argv = ["--framework", framework, "--model", "qwen2.5-7b", "--no-kl", "--batch", "64",
            "--group", "8", "--prompt-len", "256", "--response-len", "2048",
            "--hardware", "h100-sxm", "--gpus", "8", "--rollout-tp", "2", "--sleep"]  # fmt: skip
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    found = [t for g in est.groups for t in g.transfers if t.phase == "engine sleep/wake"]
    assert len(found) == 1
    return found[0]


def test_verl_discards_engine_weights_level_2():
    t = _sleep("verl")
    assert t.bytes == 0 and "level 2" in t.what
    assert t.predicted == pytest.approx(VLLM_WAKE_FIXED_S.value)


def test_level_1_moves_the_weights_both_ways():
    t = _sleep("nemo-rl")
    # Qwen2.5-7B in bf16 over vLLM TP 2: ~7.6 GB per GPU, to the host and back
    assert t.bytes_per_device > 2 * 7e9
    assert t.predicted > 10 * VLLM_WAKE_FIXED_S.value
