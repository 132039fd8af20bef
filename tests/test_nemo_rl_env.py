"""NeMo RL's environment step (rlmcost.perf.nemo_rl_env): the math verifier scores every
response after generation, the batch cut into env.math.num_workers ordered chunks.

Sources: NVIDIA-NeMo/RL v0.3.0-v0.7.0 nemo_rl/experience/rollouts.py (run_multi_turn_rollout
-> calculate_rewards inside grpo.py's ``generation`` timer), nemo_rl/environments/
math_environment.py (MathEnvironment.step, HFVerifyWorker.verify), nemo_rl/environments/utils.py
(chunk_list_to_workers), examples/configs/grpo_math_1B.yaml (env.math.num_workers: 8); the
per-response constants are measured by benchmarks/bench_math_verify.py."""

from __future__ import annotations

from math import ceil

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour
from rlmcost.perf.nemo_rl_env import (
    MATH_VERIFY_S_PER_RESPONSE,
    MATH_VERIFY_S_PER_TOKEN,
    math_env_s,
)
from rlmcost.perf.rl_constants import RAY_ACTOR_CALL_S


def test_the_largest_chunk_sets_the_time():
    """chunk_list_to_workers gives each of W workers ceil(N / W) responses in order; the
    driver waits for all: 2049 responses on 8 workers take a chunk of 257, as 2056 do."""
    per = MATH_VERIFY_S_PER_RESPONSE.value + MATH_VERIFY_S_PER_TOKEN.value * 800
    assert math_env_s(2048, 800, 8) == pytest.approx(2 * RAY_ACTOR_CALL_S.value + 256 * per)
    assert math_env_s(2049, 800, 8) == pytest.approx(2 * RAY_ACTOR_CALL_S.value + 257 * per)
    assert math_env_s(2049, 800, 8) == math_env_s(2056, 800, 8)
    assert math_env_s(2048, 800, 16) < math_env_s(2048, 800, 8)
    assert math_env_s(0, 800, 8) == 0.0 == math_env_s(2048, 800, 0)


def test_longer_responses_cost_more_and_the_ends_bracket_the_value():
    """math_verify's extraction reads the whole response (the per-token slope); the low and
    high ends of the measured constants bracket the value."""
    assert math_env_s(2048, 12800, 8) > math_env_s(2048, 800, 8)
    for n, t in ((2048, 795), (512, 5700), (2048, 13000)):
        assert math_env_s(n, t, 8, "low") <= math_env_s(n, t, 8) <= math_env_s(n, t, 8, "high")


def test_nemo_rl_prices_the_step_in_its_generation_phase():
    """The v0.3 blog's Llama-3.1-8B run (rl_runs.json): 64 prompts x 32 = 2048 responses on
    grpo_math_1B.yaml's 8 verify actors; the step is a controller transfer timed in the
    generation phase (grpo.py's generation timer holds it); verl's preset has none."""
    assert behaviour("nemo-rl").env_workers == 8
    assert behaviour("verl").env_workers == 0

    def env(framework: str) -> list:
        argv = ["--framework", framework, "--model", "llama-3.1-8b", "--kl", "--batch", "64",
                "--group", "32", "--prompt-len", "130", "--response-len", "3966",
                "--hardware", "h100-sxm", "--gpus", "8",
                "--length-dist", "lognormal:795,0.67,3966"]  # fmt: skip
        est = evaluate_deployment(run_from_argv("rlvr", argv))
        return [t for g in est.groups for t in g.transfers if t.what.startswith("environment")]

    (step,) = env("nemo-rl")
    assert step.kind == "controller" and step.phase == "generation"
    assert "2048 responses" in step.what and "8 verify actors" in step.what
    # the mean of the capped lognormal lies within a token of the published 795 (its cap
    # trims the tail), so the step is 2 calls + 256 responses of ~795 tokens
    per = MATH_VERIFY_S_PER_RESPONSE.value + MATH_VERIFY_S_PER_TOKEN.value * 795
    assert step.predicted == pytest.approx(2 * RAY_ACTOR_CALL_S.value + ceil(2048 / 8) * per,
                                           rel=0.02)  # fmt: skip
    assert env("verl") == []


def test_async_grpo_exposes_one_responses_call():
    """Async GRPO's trajectory collector scores each response as it finishes
    (run_async_multi_turn_rollout; async_utils.py at v0.5.0): under a streaming rollout the
    step charges one response's call, not the batch's chunks."""
    argv = ["--framework", "nemo-rl", "--model", "llama-3.1-8b", "--kl", "--batch", "64",
            "--group", "32", "--prompt-len", "130", "--response-len", "3966",
            "--hardware", "h100-sxm", "--gpus", "16", "--placement", "async",
            "--staleness", "1", "--groups", "rollout=8[tp=1],actor+reference=8",
            "--partial-rollout",
            "--offload", "", "--no-sleep", "--length-dist", "lognormal:795,0.67,3966"]
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    (step,) = [t for g in est.groups for t in g.transfers if t.what.startswith("environment")]
    assert "last response" in step.what
    assert step.predicted == pytest.approx(math_env_s(1, 795, 8), rel=0.02)
    assert step.predicted < math_env_s(2048, 795, 8) / 100


def test_a_reward_model_replaces_the_verifier():
    """With a reward model (PPO's, its forward priced as its own job) no verifier runs: NeMo
    RL's reward-model environment is that forward (docs/guides/rm.md)."""
    argv = ["--framework", "nemo-rl", "--model", "llama-3.1-8b", "--batch", "8",
            "--prompt-len", "256", "--response-len", "512", "--hardware", "h100-sxm",
            "--gpus", "8"]  # fmt: skip
    est = evaluate_deployment(run_from_argv("ppo", argv))
    assert any(j.task.role == "reward" for g in est.groups for j in g.jobs)
    assert not [t for g in est.groups for t in g.transfers if t.what.startswith("environment")]


def _env_step(*extra: str):  # noqa: ANN202
    argv = ["--framework", "nemo-rl", "--model", "llama-3.1-8b", "--kl", "--batch", "64",
            "--group", "32", "--prompt-len", "130", "--response-len", "3966",
            "--hardware", "h100-sxm", "--gpus", "8",
            "--length-dist", "lognormal:795,0.67,3966", *extra]  # fmt: skip
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    (step,) = [t for g in est.groups for t in g.transfers if t.what.startswith("environment")]
    return step


def test_env_workers_set_the_verify_actors():
    """--env-workers (Deployment.env_workers) replaces the preset's 8: 2048 responses on 16
    actors are chunks of 128 (math_environment.py MathEnvironment.step, chunk_list_to_workers)."""
    step = _env_step("--env-workers", "16")
    assert "16 verify actors" in step.what
    assert step.predicted == pytest.approx(math_env_s(2048, 795, 16), rel=0.02)
    assert step.predicted < _env_step().predicted


def test_env_workers_need_a_framework_with_an_environment():
    from typer.testing import CliRunner

    from rlmcost.cli import app

    out = CliRunner().invoke(app, ["rlvr", "-m", "gpt-2", "--framework", "verl",
                                   "--env-workers", "16"])  # fmt: skip
    assert out.exit_code == 2 and "--env-workers" in out.output
    assert "Traceback" not in out.output


def test_the_importer_reads_env_math_num_workers():
    """NeMo RL's config key env.math.num_workers (grpo_math_1B.yaml: 8, the DAPO recipe
    dapo-qwen2.5-7b.v2.yaml at v0.7.0: 16) becomes --env-workers where it is not the preset's 8."""
    from pathlib import Path

    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    path = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"
    base = import_nemo_rl(path, [])
    dapo = import_nemo_rl(path, ["env.math.num_workers=16"])
    assert "--env-workers" not in dict(base.flags)
    assert dict(dapo.flags)["--env-workers"] == 16
    assert any(c.flag == "--env-workers" and c.value == 16 for c in dapo.conversions)
