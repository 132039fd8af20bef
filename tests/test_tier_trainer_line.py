"""The deployment line under a large-MoE size tier when the query lays the trainer out itself
(rlmcost.cli.deployment_line.trainer_left): it says which trainer is evaluated, not only the
tier's Megatron layout."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.cli import app

runner = CliRunner()


def _line(*args: str) -> str:
    res = runner.invoke(app, ["grpo", "-m", "qwen3-235b-a22b", "--gpus", "128", *args, "--json"])
    assert res.exit_code == 0, res.output
    (line,) = [n for n in json.loads(res.stdout)["notes"] if n.startswith("deployment: ")]
    return line


def test_zero_3_under_nemo_rls_tier_names_the_dtensor_policy_evaluated() -> None:
    line = _line("--zero", "3")
    # the default deployment is still described (NeMo RL's grpo-qwen3-235b-16n8g.yaml) ...
    assert "grpo-qwen3-235b-16n8g.yaml" in line
    # ... and the trainer evaluated beside it: the bare layout at ZeRO-3, NeMo RL's own trainer
    assert "evaluated with the trainer the query lays out (ZeRO 3, TP 1, PP 1, CP 1, EP 1: " \
        "nemo-rl's own trainer (NeMo RL: DTensor (FSDP2) policy)), not that example's (ZeRO 1, " \
        "TP 2, PP 8, CP 2, EP 16)" in line  # fmt: skip


def test_a_degree_given_says_the_layout_and_the_tiers_own_says_nothing_more() -> None:
    line = _line("--tp", "4")
    assert "the trainer the query lays out (ZeRO 1, TP 4, PP 1, CP 1, EP 1), not that " \
        "example's" in line and "own trainer" not in line  # fmt: skip
    assert "evaluated with" not in _line()  # the tier's layout: the example describes it
    # another framework's tier, left by --zero 3: the same clause (verl's FSDP workers)
    verl = _line("--framework", "verl", "--zero", "3")
    assert "verl's own trainer (verl: FSDP trainer)" in verl and "EP 4)" in verl
