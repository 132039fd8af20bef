"""Issue 20: `--placement async|combined` never returns a split that does not fit when a fitting
one exists. The independent reference is a deployment of the same configuration typed by hand
(the flags the output's own fit hint names), evaluated alone: when it fits, the built-in
configuration the search sizes must fit too.

Known gaps (rlmcost.plan.sizing.sizing_space keeps the run's ZeRO stage, and its TP whenever
the Run does not take TP per model, which an algorithm command's Run does not, although the
"nothing fits" note says "any TP"):

* GRPO Llama-3.1-70B, combined, 16 A100-80GB: "nothing fits on 16 GPUs ... raise --gpus" at
  141 GiB per device; with --tp 2 typed, the same search sizes it to fit at 71.5 GiB (9.9 min:
  TP 2, ckpt full, offload optimizer,params,grads), and `rlmcost placements -a grpo -m 70b
  -H a100-80gb --gpus 16` (TP per model, every TP searched) sizes it so too: two commands,
  two answers for one query;
* PPO Llama-3.1-8B, async, 8 A100-80GB, --framework none (ZeRO 0), 2,048-token reasoning
  lengths: "nothing fits" at 266 GiB, while ZeRO-3 with the idle offloads fits at 72.2 GiB
  (40.8 s), and with --zero 3 typed the search sizes it to fit (78.7 GiB).
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


@pytest.mark.xfail(strict=True, reason="sizing_space keeps the run's ZeRO stage and TP "
                   "(rlmcost/plan/sizing.py); reported, not fixed here")
@pytest.mark.parametrize(("alg", "flags", "savers"), CASES, ids=IDS)
def test_the_built_in_configuration_is_sized_to_fit(alg: str, flags: list[str],
                                                    savers: list[str]) -> None:  # fmt: skip
    _, e = sized(run_from_argv(alg, flags))
    assert e.fits, [n for n in e.notes if "nothing fits" in n]


AGREE_GAP = pytest.mark.xfail(strict=True, reason="the algorithm command's Run fixes TP, "
                              "placements' does not (rlmcost/plan/sizing.py sizing_space); "
                              "reported, not fixed here")  # fmt: skip


@pytest.mark.parametrize("cfg", ["async", pytest.param("combined", marks=AGREE_GAP)])
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
