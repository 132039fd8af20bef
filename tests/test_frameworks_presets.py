"""`--framework`: each preset's defaults, explicit flags over them, and the options they imply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.cli import app
from rlmcost.cli._deploy_build import base_deployment
from rlmcost.errors import SpecError
from rlmcost.frameworks.presets import PRESETS, Framework, get_preset, preset_options
from rlmcost.run.defaults import DEFAULT_ACTOR, actor_params

runner = CliRunner()
BASE = ["grpo", "--model", "8b", "--gpus", "8", "--json"]


def _run(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("framework", list(Framework))
def test_preset_builds_a_deployment_with_sources(framework: Framework) -> None:
    # The preset for the default actor (Llama-3.1-8B: NeMo RL's sized defaults apply).
    preset = get_preset(framework).for_params(actor_params(DEFAULT_ACTOR))
    dep = base_deployment({"framework": framework.value})
    for d in preset.defaults:
        assert d.source and (d.flag.startswith("--") or d.flag.startswith("("))
        if d.engines and "vllm" not in d.engines:
            continue  # another engine's default (NeMo RL's Megatron engine does not sleep)
        if "." in d.field or d.field in ("offload_idle", "logits"):
            node = dep.to_json()
            for part in d.field.split("."):
                node = node[part]
            # The preset's value is what the deployment holds (tuples as JSON lists).
            assert node == (list(d.value) if isinstance(d.value, tuple) else d.value)


def test_verl_preset_values_and_explicit_flags_override() -> None:
    dep = _run([*BASE, "--framework", "verl"])["deployment"]
    # verl ppo_trainer.yaml: FSDP, checkpointing, rollout TP 2 at 0.5, free_cache_engine;
    # rollout/rollout.yaml @b178a3cd5: max_num_seqs 256 (1024 before PR 4280, e9405d70b).
    assert (dep["train"]["zero"], dep["train"]["ckpt"]) == ("3", "full")
    assert dep["engine"] == {**dep["engine"], "tp": 2, "gpu_memory_utilization": 0.5,
                             "max_num_seqs": 256, "sleep": True}  # fmt: skip
    over = _run([*BASE, "--framework", "verl", "--zero", "2", "--gpu-memory-utilization", "0.8",
                 "--no-sleep", "--ckpt", "none", "--rollout-tp", "1"])["deployment"]  # fmt: skip
    assert (over["train"]["zero"], over["train"]["ckpt"]) == ("2", "none")
    assert (over["engine"]["tp"], over["engine"]["gpu_memory_utilization"]) == (1, 0.8)
    assert over["engine"]["sleep"] is False


def test_deployment_file_over_preset(tmp_path: Path) -> None:
    f = tmp_path / "dep.yaml"
    f.write_text("engine:\n  gpu_memory_utilization: 0.7\n")
    dep = _run([*BASE, "--framework", "verl", "--deployment", str(f)])["deployment"]
    # The file's field wins over the preset's; the preset's other fields stay.
    assert dep["engine"]["gpu_memory_utilization"] == 0.7 and dep["engine"]["tp"] == 2


def test_verl_preset_swaps_reference_for_recomputed_logprobs() -> None:
    plain = _run([*BASE, "--framework", "none", "--reward", "rule"])
    plain = plain["stages"]["assessment"]["work_flops"]
    verl = _run([*BASE, "--framework", "verl"])
    # verl scores with a reward function, recomputes old log-probs (one actor forward over
    # B K sequences) and, without a KL term, loads no reference (one forward less of the same
    # model): Assessment = actor forward = reference forward, exactly the plain GRPO
    # Assessment with a verifier.
    assert verl["stages"]["assessment"]["work_flops"] == plain
    assert verl["options"] == {"recompute_logprobs": True, "kl": False, "rule_reward": True}
    kept = _run([*BASE, "--framework", "verl", "--kl"])
    assert kept["options"] == {"recompute_logprobs": True, "rule_reward": True}
    assert kept["stages"]["assessment"]["work_flops"] > plain


def test_recompute_adds_one_forward_and_leaves_training_alone() -> None:
    bare = [*BASE, "--framework", "none"]
    plain = _run(bare)["stages"]
    rec = _run([*bare, "--recompute-logprobs"])["stages"]
    nokl = _run([*bare, "--no-kl"])["stages"]
    # Hand derivation: recompute adds the actor's forward over the B K sequences to
    # Assessment (= the reference's forward, same model); Training is unchanged.
    ref_forward = plain["assessment"]["work_flops"] - nokl["assessment"]["work_flops"]
    assert rec["assessment"]["work_flops"] == plain["assessment"]["work_flops"] + ref_forward
    assert rec["training"]["work_flops"] == plain["training"]["work_flops"]


def test_preset_options_apply_only_where_they_mean_something() -> None:
    dpo, dapo, grpo = (get_algorithm(n) for n in ("dpo", "dapo", "grpo"))
    # DPO has no rollouts to recompute and needs its reference: verl's preset leaves it.
    assert preset_options("verl", dpo) == {"recompute_logprobs": False, "kl": True,
                                           "rule_reward": False, "global_batch": None}
    # DAPO has no reference to drop; its reward is a verifier anyway.
    assert preset_options("verl", dapo) == {"recompute_logprobs": True, "kl": True,
                                            "rule_reward": False, "global_batch": None}
    # critic-free GRPO takes the framework's verifier; PPO keeps its reward model (RLHF).
    assert preset_options("trl", grpo) == {"recompute_logprobs": False, "kl": False,
                                           "rule_reward": True, "global_batch": None}
    assert preset_options("verl", get_algorithm("ppo"))["rule_reward"] is False
    assert preset_options(None, grpo) == {"recompute_logprobs": False, "kl": True,
                                          "rule_reward": False, "global_batch": None}
    # NeMo RL's examples: policy.train_global_batch_size 512 for GRPO, none for DPO's rows.
    assert preset_options("nemo-rl", grpo)["global_batch"] == 512
    assert preset_options("nemo-rl", dpo)["global_batch"] is None
    result = runner.invoke(app, ["dpo", "--model", "8b", "--framework", "verl", "--json"])
    assert result.exit_code == 0, result.output


def test_frameworks_listing_and_bad_name() -> None:
    rows = _run(["frameworks", "--json"])["frameworks"]
    assert [r["framework"] for r in rows] == [f.value for f in Framework]
    assert all(d["source"] for r in rows for d in r["defaults"])
    assert len(PRESETS) == 5
    with pytest.raises(SpecError, match="unknown framework"):
        get_preset("deepspeed-chat")
    result = runner.invoke(app, [*BASE, "--framework", "nope"])
    assert result.exit_code == 2 and "Traceback" not in result.output
