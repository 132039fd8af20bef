"""The fit advice tries what users of co-located engines change first: the engine's sleep and a
smaller reservation, each with its framework's own switch (rlmcost.evaluation.engine_advice);
and the layout's and placement's errors say which factors were given and how to mend."""

import json
import re

from typer.testing import CliRunner

from rlmcost.cli import app

runner = CliRunner()

ORLHF = ("ppo", "-m", "8b", "-H", "a100-80gb", "--gpus", "8", "--framework", "openrlhf",
         "--no-sized-defaults", "--groups", "actor+critic+reference+reward=8")  # fmt: skip
"""Every model and OpenRLHF's vLLM engine (0.95 of the device, no sleep: openrlhf/cli/
train_ppo_ray.py defaults, not the Hybrid Engine example the preset takes for an 8 B actor:
--no-sized-defaults) on one group of 8 A100s: --colocate_all_models."""


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def _fixes(out: str) -> list[tuple[str, str, str]]:
    return re.findall(r"fits with (.+?): peak (.+?) per device\.(.*)", out)


def _fits_as_flags(base: tuple[str, ...], flags: str) -> dict:
    r = run(*base, *flags.split(), "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_openrlhf_colocated_is_offered_its_sleep_and_it_fits():
    # no single change fits (217 GiB a device in training, the engine's 75 GiB beside it);
    # OpenRLHF's hybrid-engine recipe (examples/scripts/train_ppo_ray_hybrid_engine.sh @3c3be623:
    # --vllm.enable_sleep --ds.enable_sleep --ds.zero_stage 3) is what fits, named by its flags
    r = run(*ORLHF)
    assert r.exit_code == 0, r.output
    fixes = _fixes(r.stdout)
    assert fixes, r.stdout
    flags, peak, via = fixes[0]
    assert flags.startswith("--sleep ") and "optimizer-idle,grads-idle" in flags
    assert "--vllm_enable_sleep" in via and "--deepspeed_enable_sleep" in via
    assert "train_ppo_ray.py" in via  # the source
    out = _fits_as_flags(ORLHF, flags)
    assert out["fits"] is True


def test_a_smaller_reservation_is_offered_with_the_framework_key():
    # verl's engine sleeps; at 0.9 of an A100 it does not fit beside the actor's states in
    # generation: the largest reservation that fits is offered, as verl's config key
    base = ("ppo", "-m", "8b", "-H", "a100-80gb", "--gpus", "8", "--framework", "verl",
            "--gpu-memory-utilization", "0.9")  # fmt: skip
    r = run(*base)
    fixes = _fixes(r.stdout)
    frac = [f for f in fixes if f[0].startswith("--gpu-memory-utilization ")]
    assert frac, r.stdout
    value = frac[0][0].split()[1]
    assert 0 < float(value) < 0.9
    assert f"actor_rollout_ref.rollout.gpu_memory_utilization={value}" in frac[0][2]
    assert "--sleep" not in " ".join(f[0] for f in fixes)  # it sleeps already
    assert _fits_as_flags(base[:-2], frac[0][0])["fits"] is True  # in place of the 0.9


def test_the_bare_layout_is_offered_sleep_without_a_framework_switch():
    base = ("ppo", "-m", "8b", "-H", "a100-80gb", "--gpus", "8", "--framework", "none",
            "--no-sleep")  # fmt: skip
    fixes = _fixes(run(*base).stdout)
    assert fixes and fixes[0][0].startswith("--sleep")
    assert fixes[0][2] == ""
    assert _fits_as_flags(base[:-1], fixes[0][0])["fits"] is True  # in place of --no-sleep


def test_a_framework_without_sleep_for_its_engine_is_not_offered_it():
    # NeMo RL's generation backends are vLLM and Megatron-core (an SGLang engine has no sleep
    # switch there), and OpenRLHF sleeps only with every model on the engine's GPUs
    # (train_ppo_ray.py sets --vllm.enable_sleep False without --train.colocate_all)
    r = run("grpo", "-m", "8b", "-H", "a100-80gb", "--gpus", "8", "--framework", "nemo-rl",
            "--engine", "sglang", "--no-sleep", "--gpu-memory-utilization", "0.9")  # fmt: skip
    assert r.exit_code == 0, r.output
    fixes = _fixes(r.stdout)
    assert fixes and not any("--sleep" in f[0] for f in fixes), r.stdout
    assert all(f[2] == "" for f in fixes)  # no NeMo RL switch for an SGLang engine
    r = run("ppo", "-m", "8b", "-H", "a100-80gb", "--framework", "openrlhf",
            "--no-sized-defaults", "--groups", "actor+rollout=8,critic+reference+reward=8")
    assert r.exit_code == 0, r.output
    fixes = _fixes(r.stdout)
    assert fixes and not any("--sleep" in f[0] for f in fixes), r.stdout
    assert "--vllm_gpu_memory_utilization" in fixes[0][2]  # its reservation, not its sleep


def test_the_engine_search_is_bounded():
    # the singles and the engine combination's 2 + 2 x state changes; counted, not timed
    from rlmcost.evaluation.advice import suggestions
    from rlmcost.reports.estimate import estimate

    e = estimate("ppo", "8b", hardware="a100-80gb", gpus=8, framework="openrlhf",
                 groups="actor+critic+reference+reward=8")  # fmt: skip
    calls = []

    def counted(**changes):
        calls.append(changes)
        return estimate(base=e.run, **changes)

    assert suggestions(counted, e) and len(calls) <= 35, len(calls)


def test_a_gpu_count_the_degrees_do_not_divide_says_dp_is_derived():
    r = run("ppo", "-m", "8b", "--gpus", "3", "--tp", "2")
    text = " ".join(r.output.split())
    assert r.exit_code != 0
    assert "dp is derived as gpus / (tp*pp*cp) when --dp is not given" in text
    assert "1*2*1*1" not in text and "--tp 1" in text
    r = run("ppo", "-m", "8b", "--gpus", "16", "--tp", "2", "--dp", "4")
    text = " ".join(r.output.split())
    assert "dp given by --dp" in text and "use --dp 8, or leave --dp out" in text


def test_a_reward_model_in_no_group_is_offered_the_rule_verifier():
    # the review's query: no --gpus given, and GRPO's reward can be a rule-based verifier
    args = ("grpo", "-m", "8b", "--groups", "rollout=16@h20[tp=4],actor+reference=8@h100",
            "--framework", "openrlhf")  # fmt: skip
    r = run(*args)
    text = " ".join(r.output.split())
    assert r.exit_code != 0 and "reward forward in assessment is in no group" in text
    assert "where --gpus is given" in text and "--reward rule" in text
    assert run(*args, "--reward", "rule").exit_code == 0


def test_a_megatron_pool_change_names_nemo_rl_s_keys():
    # NeMo RL's Megatron generation: kv_cache_management_mode persist (its default) keeps the
    # pool beside training (rlmcost.deployment.megatron_engine); its keys for the pool's changes
    r = run("grpo", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "16", "--engine", "megatron",
            "--zero", "1", "--kv-buffer-gib", "30")  # fmt: skip
    via = {f[0].split()[0]: f[2] for f in _fixes(r.stdout)}
    assert "kv_cache_management_mode: offload" in via["--sleep"]
    assert "buffer_size_gb: " in via["--kv-buffer-gib"]
