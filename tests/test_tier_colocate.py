"""A size tier whose example runs its engines apart, where the split does not hold: the Run
co-locates the models as the framework co-locates them (slime's --colocate)."""

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.run.spec import Run


def _run(gpus: int, **dep: object) -> Run:
    return Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "glm-4.5"},
                          "cluster": {"hardware": "h200", "gpus": gpus},
                          "deployment": {"framework": "slime", **dep}})  # fmt: skip


def test_slime_fallback_sleeps_and_offloads():
    # slime/utils/arguments.py lines 1939-1950 @624b824a: under --colocate offload_rollout and
    # offload_train default to True (the engines sleep, the trainer's states leave the GPUs)
    d = _run(64).deployment
    assert d.groups == ()  # GLM-4.5 on 64 GPUs: the 235 B example's 64 + 64 split does not hold
    assert d.engine.sleep is True
    assert {"params-idle", "grads-idle", "optimizer"} <= {str(o) for o in d.train.offload}


def test_split_that_holds_keeps_the_example():
    # scripts/run-qwen3-235B-A22B.sh @624b824a: no --colocate, engines on --rollout-num-gpus 64
    d = _run(128).deployment
    assert len(d.groups) == 2 and d.engine.sleep is False
    assert [str(o) for o in d.train.offload] == ["optimizer"]


def test_given_fields_stay():
    d = _run(64, engine={"sleep": False}, train={"offload": ["optimizer"]}).deployment
    assert d.engine.sleep is False and [str(o) for o in d.train.offload] == ["optimizer"]


def test_cli_line_and_flag():
    base = ["grpo", "-m", "glm-4.5", "-H", "h200", "--gpus", "64", "--framework", "slime"]
    out = CliRunner().invoke(app, base).output
    assert "co-located, as slime's --colocate runs them" in out
    assert "fits with --sleep" not in out  # already asleep
    awake = CliRunner().invoke(app, [*base, "--no-sleep"]).output
    assert "fits with --sleep" in awake and "--colocate runs them" not in awake
