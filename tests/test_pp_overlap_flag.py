"""The interleaved schedule's ``overlap_p2p_comm`` per framework, and the RL commands' flag.

Sources of the defaults (``Behaviour.megatron_overlap_p2p``, rlmcost.perf.megatron_pipe):
NeMo RL v0.3.0-v0.7.0 and main @7ea279abf never set ``overlap_p2p_comm`` nor a ``comm_overlap``
(git grep over nemo_rl/ at each tag), so Megatron-core's ``ModelParallelConfig`` False; verl
sets it with VPP > 1 (verl/models/mcore/config_converter.py line 49 @b178a3cd); slime passes
Megatron-LM's arguments, whose ``--no-overlap-p2p-communication`` no slime script gives
(THUDM/slime @624b824a8), so on.
"""

from __future__ import annotations

import json
import shlex

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
from rlmcost.placement.pass_options import step_options
from rlmcost.reports.estimate import estimate
from rlmcost.run import Run

runner = CliRunner()
_GRPO = ["grpo", "-m", "qwen2.5-0.5b", "--gpus", "8", "--json"]


def _overlap(framework: str | None, given: bool | None = None) -> bool:
    dep = Deployment(framework=framework, train={"pp_overlap_p2p": given})
    opts = step_options(dep)
    return True if opts is None else opts.pp_overlap_p2p


def test_each_framework_default_and_the_given_value_wins() -> None:
    # defaults: module docstring (NeMo RL off; verl, slime and rlmcost's own on)
    assert _overlap("nemo-rl") is False
    assert _overlap("verl") is True
    assert _overlap("slime") is True
    assert _overlap(None) is True
    # a value in the trainer's layout overrides the framework's, both ways
    assert _overlap("nemo-rl", True) is True
    assert _overlap("verl", False) is False
    assert _overlap("slime", False) is False
    assert _overlap(None, False) is False


def test_interleaved_rl_step_is_slower_without_overlap() -> None:
    # the sends exposed in every slot (perf.megatron_pipe) add time, never remove it
    train = {"tp": 1, "pp": 4, "zero": "0", "schedule": "interleaved", "virtual_stages": 2}
    base = estimate("grpo", "qwen2.5-0.5b", gpus=8).run

    def train_s(given: bool | None) -> float:
        run = base.replace(deployment={"train": {**train, "pp_overlap_p2p": given}})
        out = json.loads(json.dumps(Run.from_data(run.to_json()).to_json()))
        assert out["deployment"]["train"]["pp_overlap_p2p"] == given
        from rlmcost import evaluate

        ev = evaluate(run)
        return sum(j.predicted_s for g in ev.evaluation.groups for j in g.jobs
                   if j.task.kind.value == "train")  # fmt: skip

    # estimate's default preset is NeMo RL's: off unless given
    assert base.deployment.framework == "nemo-rl"
    on, off = train_s(True), train_s(None)
    assert off > on
    assert train_s(False) == off


def test_flag_round_trips_through_the_command_line() -> None:
    for flag in ("--no-pp-overlap-p2p", "--pp-overlap-p2p"):
        res = runner.invoke(app, [*_GRPO, flag])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        assert out["run"]["deployment"]["train"]["pp_overlap_p2p"] is (flag == "--pp-overlap-p2p")
        line = Run.from_data(out["run"]).to_command()
        assert flag in shlex.split(line)
        again = json.loads(runner.invoke(app, [*shlex.split(line)[1:], "--json"]).stdout)
        assert again == out
    plain = json.loads(runner.invoke(app, _GRPO).stdout)
    assert plain["run"]["deployment"]["train"]["pp_overlap_p2p"] is None
    assert "pp-overlap-p2p" not in Run.from_data(plain["run"]).to_command()


def test_a_forward_layout_cannot_set_it() -> None:
    # the forwards run with the trainer's pass options (deployment.trainer_only)
    dep = {"train": {"pp_overlap_p2p": True}, "forward": {"pp_overlap_p2p": False}}
    try:
        Deployment.model_validate(dep)
    except ValueError as e:
        assert "forward.pp_overlap_p2p" in str(e) and "give it in train" in str(e)
    else:
        raise AssertionError("a forward layout's pp_overlap_p2p was accepted")


def test_importers_read_the_explicit_keys() -> None:
    # slime: Megatron-LM's store_false --no-overlap-p2p-communication (p2p_overlap docstring);
    # the script (THUDM/slime scripts/run-qwen3-4B.sh @624b824a) leaves it, so no flag
    from pathlib import Path

    from rlmcost.frameworks.slime import import_slime
    from rlmcost.frameworks.verl import import_verl

    data = Path(__file__).parent / "data" / "frameworks"
    lines = [ln for ln in (data / "slime_qwen3-4B.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    argv = shlex.split(" ".join(lines))
    assert "--no-pp-overlap-p2p" not in dict(import_slime(argv).flags)
    off = dict(import_slime([*argv, "--no-overlap-p2p-communication"]).flags)
    assert "--no-pp-overlap-p2p" in off and "--pp-overlap-p2p" not in off
    # verl: override_transformer_config updates verl's own overlap_p2p_comm
    # (verl/models/mcore/config_converter.py @b178a3cd)
    verl = data / "verl_grpo.yaml"
    meg = ["actor_rollout_ref.actor.strategy=megatron"]
    key = "actor_rollout_ref.actor.megatron.override_transformer_config.overlap_p2p_comm"
    plain = dict(import_verl(verl, meg).flags)
    assert "--no-pp-overlap-p2p" not in plain and "--pp-overlap-p2p" not in plain
    assert "--no-pp-overlap-p2p" in dict(import_verl(verl, [*meg, f"{key}=false"]).flags)
    assert "--pp-overlap-p2p" in dict(import_verl(verl, [*meg, f"{key}=true"]).flags)


def test_an_imported_slime_switch_reaches_the_deployment() -> None:
    from pathlib import Path

    data = Path(__file__).parent / "data" / "frameworks"
    lines = [ln for ln in (data / "slime_qwen3-4B.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    argv = [*shlex.split(" ".join(lines)), "--no-overlap-p2p-communication"]
    res = runner.invoke(app, ["import", "slime", "--json", "--", *argv])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout[res.stdout.index("{"):])
    assert out["deployment"]["train"]["pp_overlap_p2p"] is False
