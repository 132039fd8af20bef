"""Issue 20: `--placement async|combined` never returns a split that does not fit when a fitting
one exists. The independent reference is a deployment of the same configuration typed by hand
(the flags the output's own fit hint names), evaluated alone: when it fits, the built-in
configuration the search sizes must fit too.

The two cases below were once answered "nothing fits" (the search kept the run's ZeRO stage,
and its TP whenever the Run does not take TP per model, which an algorithm command's Run does
not, although the note said "any TP"); `rlmcost.plan.sizing.fitting_space` widens the search
to every TP within a node and the trainer's sharded stage when nothing fits as given:

* GRPO Llama-3.1-70B, combined, 16 A100-80GB (141 GiB per device as given; fits at TP 2 with
  ZeRO-3, full checkpointing and the states in host memory), which `rlmcost placements -a grpo
  -m 70b -H a100-80gb --gpus 16` (TP per model, every TP searched) sizes to fit as well;
* PPO Llama-3.1-8B, async, 8 A100-80GB, --framework none (ZeRO 0), 2,048-token reasoning
  lengths (266 GiB as given; ZeRO-3 with the idle offloads fits at 72.2 GiB).
"""

from __future__ import annotations

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.query import evaluate
from rlmcost.plan.sizing import sized

CASES = [
    ("grpo", ["-m", "70b", "-H", "a100-80gb", "--gpus", "16", "--placement", "combined"],
     ["--tp", "2", "--offload", "optimizer-idle,params-idle,optimizer,params"]),
    ("ppo", ["-m", "8b", "-H", "a100-80gb", "--gpus", "8", "--placement", "async",
             "--framework", "none", "-B", "64", "-T", "2048", "--length-dist", "reasoning"],
     ["--zero", "3", "--offload-idle"]),
]  # fmt: skip
IDS = ["grpo-70b-combined-16", "ppo-8b-async-8-none"]


@pytest.mark.parametrize(("alg", "flags", "savers"), CASES, ids=IDS)
def test_the_typed_deployment_fits(alg: str, flags: list[str], savers: list[str]) -> None:
    # the reference itself: the fit hint's flags, evaluated as given (the evaluation's split
    # search sizes its groups)
    e = evaluate(run_from_argv(alg, [*flags, *savers]))
    assert e.fits and e.shortfall_bytes == 0


@pytest.mark.parametrize(("alg", "flags", "savers"), CASES, ids=IDS)
def test_the_built_in_configuration_is_sized_to_fit(alg: str, flags: list[str],
                                                    savers: list[str]) -> None:  # fmt: skip
    _, e = sized(run_from_argv(alg, flags))
    assert e.fits, [n for n in e.notes if "nothing fits" in n]


@pytest.mark.parametrize("cfg", ["async", "combined"])
def test_placements_and_the_placement_flag_agree_on_the_fit(cfg: str) -> None:
    # one query, two commands: `placements` (every configuration side by side) and
    # `grpo --placement CFG` (that one in detail); the same search sizes both
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    query = ["-m", "70b", "-H", "a100-80gb", "--gpus", "16", "--json"]
    runner = CliRunner()
    side = json.loads(runner.invoke(app, ["placements", "-a", "grpo", *query]).stdout)
    fits = {p["placement"]: p["fits"] for p in side["placements"]}
    one = json.loads(runner.invoke(app, ["grpo", "--placement", cfg, *query]).stdout)
    assert fits[cfg] is True  # placements sizes it to fit
    assert one["fits"] == fits[cfg]


def test_the_library_sizes_a_built_in_placement_as_the_command_does() -> None:
    # rlmcost.estimate(placement=...) and `ppo --placement combined` answer one query alike:
    # Qwen3-30B-A3B PPO combined on 8 H100 does not fit as given (seven groups of one GPU
    # each holding whole models), and the command sizes it to fit
    import rlmcost

    e = rlmcost.estimate("ppo", "qwen3-30b-a3b", hardware="h100", gpus=8, placement="combined")
    cli = evaluate_sized_cli(["-m", "qwen3-30b-a3b", "-H", "h100", "--gpus", "8",
                              "--placement", "combined"])  # fmt: skip
    assert e.fits and cli.fits
    assert any("the plan's search sized it" in n for n in e.notes)
    assert e.time_s == cli.time_s


def evaluate_sized_cli(flags: list[str]):  # type: ignore[no-untyped-def]
    from rlmcost.plan.sizing import evaluate_sized

    return evaluate_sized(run_from_argv("ppo", flags))
