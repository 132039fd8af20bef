"""Megatron's virtual-pipeline size through the importers (rlmcost/frameworks/
virtual_pipeline.py) and the algorithm commands' ``--virtual-stages``.

Reference rules: Megatron-LM @d98e8a64dd ``megatron/training/arguments.py`` lines 927-1008
(v = layers / (pp x layers per virtual stage), the divisibility asserts, pp > 1 with
overlap_p2p_comm and pp > 2 without) and ``megatron/core/parallel_state.py``
``initialize_model_parallel`` (any virtual size needs pp > 1); verl @b178a3cd
``verl/workers/megatron_workers.py:287`` (the actor's size goes to initialize_model_parallel);
NeMo RL @7ea279abf ``nemo_rl/models/megatron/setup.py`` (``model_overrides`` merged onto the
Megatron-Bridge provider). Models: Qwen2.5-7B has 28 layers, Qwen3-4B 36 (their config.json).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.slime import import_slime
from rlmcost.frameworks.verl import import_verl
from rlmcost.frameworks.virtual_pipeline import NOTE, choices
from rlmcost.run import Run

DATA = Path(__file__).parent / "data" / "frameworks"
VERL, NEMO = DATA / "verl_grpo.yaml", DATA / "nemo_rl_grpo_math.yaml"
A = "actor_rollout_ref.actor"
VERL_MEG = [f"{A}.strategy=megatron", f"{A}.megatron.pipeline_model_parallel_size=2"]
VERL_VPP = f"{A}.megatron.virtual_pipeline_model_parallel_size"
NEMO_MEG = ["policy.dtensor_cfg.enabled=false", "policy.megatron_cfg.enabled=true",
            "policy.megatron_cfg.pipeline_model_parallel_size=2"]  # fmt: skip
NEMO_VPP = "policy.megatron_cfg.model_overrides.virtual_pipeline_model_parallel_size"
runner = CliRunner()
_GRPO = ["grpo", "-m", "qwen2.5-0.5b", "--gpus", "8", "--pp", "4", "--json"]  # 24 layers


def _slime(*extra: str) -> list[str]:
    lines = [ln for ln in (DATA / "slime_qwen3-4B.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    return [*shlex.split(" ".join(lines)), "--pipeline-model-parallel-size", "2", *extra]


def test_rl_command_takes_virtual_stages_and_round_trips() -> None:
    res = runner.invoke(app, [*_GRPO, "--virtual-stages", "2"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    train = out["run"]["deployment"]["train"]
    assert (train["schedule"], train["virtual_stages"]) == ("interleaved", 2)
    line = Run.from_data(out["run"]).to_command()
    assert "--virtual-stages 2" in line
    again = json.loads(runner.invoke(app, [*shlex.split(line)[1:], "--json"]).stdout)
    assert again == out
    one = json.loads(runner.invoke(app, [*_GRPO, "--virtual-stages", "1"]).stdout)
    assert one["run"]["deployment"]["train"]["schedule"] == "1f1b"
    # the interleaved schedule is priced: its bubble (p - 1) / (v m) against 1F1B's
    # (p - 1) / m (Narayanan et al. 2021, section 2.2.2) shortens the step
    assert out["iteration"]["time_s"] < one["iteration"]["time_s"]


def test_rl_command_refuses_layers_not_divisible_in_one_line() -> None:
    res = runner.invoke(app, [*_GRPO, "--virtual-stages", "5"])  # 24 layers, pp 4 x v 5
    assert res.exit_code == 2
    assert "divisible by pp*v=4*5" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, [*_GRPO[:-3], "--virtual-stages", "2"])  # pp 1
    assert res.exit_code == 2
    assert "needs --pp > 1" in res.output and "Traceback" not in res.output


def test_verl_reads_the_actor_size() -> None:
    q = import_verl(VERL, [*VERL_MEG, f"{VERL_VPP}=2"])
    f = dict(q.flags)
    assert f["--virtual-stages"] == 2 and f["--pp"] == 2
    assert "--pp-overlap-p2p" not in f  # verl's own on (VPP > 1): the preset's default
    assert [c.given for c in q.conversions if c.flag == "--virtual-stages"] == [f"{VERL_VPP}=2"]
    (line,) = choices(q.notes)
    assert line.startswith(NOTE) and VERL_VPP in line
    assert VERL_VPP not in q.ignored
    # the config's own overlap_p2p_comm overrides verl's (config_converter.py: update)
    off = import_verl(VERL, [*VERL_MEG, f"{VERL_VPP}=2",
                             f"+{A}.megatron.override_transformer_config.overlap_p2p_comm=false"])
    assert "--no-pp-overlap-p2p" in dict(off.flags)


def test_verl_null_and_one_stay_1f1b_and_other_models_are_noted() -> None:
    assert "--virtual-stages" not in dict(import_verl(VERL, [*VERL_MEG, f"{VERL_VPP}=null"]).flags)
    q = import_verl(VERL, [*VERL_MEG, f"{VERL_VPP}=1"])
    assert "--virtual-stages" not in dict(q.flags) and len(choices(q.notes)) == 1
    ref_key = "ref.megatron.virtual_pipeline_model_parallel_size"
    ref = import_verl(VERL, [*VERL_MEG, f"{VERL_VPP}=2", f"+actor_rollout_ref.{ref_key}=7"])
    assert any(n.startswith(f"{ref_key}=7 differs") for n in ref.notes)


@pytest.mark.parametrize("vpp", ["2", "1"])
def test_verl_refuses_a_virtual_size_at_pp_1(vpp: str) -> None:
    with pytest.raises(SpecError, match="needs pipeline_model_parallel_size > 1"):
        import_verl(VERL, [f"{A}.strategy=megatron", f"{VERL_VPP}={vpp}"])


def test_verl_import_cli_prices_it_and_refuses_indivisible_layers() -> None:
    base = ["import", "verl", str(VERL), *VERL_MEG, "--json"]
    res = runner.invoke(app, [*base, f"{VERL_VPP}=7"])  # 28 layers = pp 2 x v 7 x 2
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    train = out["estimate"]["run"]["deployment"]["train"]
    assert (train["schedule"], train["virtual_stages"], train["pp"]) == ("interleaved", 7, 2)
    assert "--virtual-stages 7" in out["query"]["command"]
    bad = runner.invoke(app, [*base, f"{VERL_VPP}=3"])  # 28 / (2 x 3)
    assert bad.exit_code == 2
    assert "divisible by pp*v=2*3" in bad.output and "Traceback" not in bad.output


def test_slime_layers_per_virtual_stage_follow_megatron_lm() -> None:
    # 36 layers / pp 2 = 18 per rank; 6 per virtual stage: v = 3
    q = import_slime(_slime("--num-layers-per-virtual-pipeline-stage", "6"))
    f = dict(q.flags)
    assert (f["--pp"], f["--virtual-stages"]) == (2, 3)
    assert "--num-layers-per-virtual-pipeline-stage 6" in choices(q.notes)[0]
    assert dict(import_slime(_slime("--num-virtual-stages-per-pipeline-rank", "9")).flags)[
        "--virtual-stages"] == 9  # fmt: skip
    # 18 per stage: v = 1, which Megatron-LM turns into None (1F1B)
    assert "--virtual-stages" not in dict(import_slime(
        _slime("--num-layers-per-virtual-pipeline-stage", "18")).flags)  # fmt: skip
    # account-for-embedding + loss: (36 + 2) / 2 = 19 per rank, 19 per stage: v = 1
    slots = ["--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"]
    assert "--virtual-stages" not in dict(import_slime(_slime(
        "--num-layers-per-virtual-pipeline-stage", "19", *slots)).flags)  # fmt: skip


SLIME_BAD = [
    (["--num-layers-per-virtual-pipeline-stage", "5"], "must give a multiple of 5 per rank"),
    (["--num-layers-per-virtual-pipeline-stage", "6", "--num-virtual-stages-per-pipeline-rank",
      "3"], "give one of"),
    (["--num-virtual-stages-per-pipeline-rank", "2", "--no-overlap-p2p-communication"],
     "> 2 without p2p overlap"),
    (["--virtual-pipeline-model-parallel-size", "2"], "no Megatron-LM argument since 2021"),
    (["--num-layers-per-virtual-pipeline-stage", "6", "--decoder-first-pipeline-num-layers",
      "16"], "asks for --num-virtual-stages-per-pipeline-rank"),
]  # fmt: skip


@pytest.mark.parametrize(("extra", "message"), SLIME_BAD)
def test_slime_refuses_what_megatron_lm_refuses(extra: list[str], message: str) -> None:
    with pytest.raises(SpecError, match=message) as err:
        import_slime(_slime(*extra))
    assert "\n" not in str(err.value)


def test_slime_pp_1_is_refused() -> None:
    argv = _slime("--num-virtual-stages-per-pipeline-rank", "2")
    argv[-3] = "1"  # --pipeline-model-parallel-size 1
    with pytest.raises(SpecError, match="> 1"):
        import_slime(argv)


def test_nemo_rl_model_overrides_reach_the_provider() -> None:
    q = import_nemo_rl(NEMO, [*NEMO_MEG, f"+{NEMO_VPP}=2"])
    f = dict(q.flags)
    assert f["--virtual-stages"] == 2
    assert "--pp-overlap-p2p" not in f  # NeMo RL's off (the preset) unless overridden
    assert NEMO_VPP in choices(q.notes)[0]
    on = import_nemo_rl(NEMO, [*NEMO_MEG, f"+{NEMO_VPP}=2",
                               "+policy.megatron_cfg.model_overrides.overlap_p2p_comm=true"])
    assert "--pp-overlap-p2p" in dict(on.flags)


def test_nemo_rl_guard_key_is_not_copied_and_conflicts_are_refused() -> None:
    guard = "+policy.megatron_cfg.virtual_pipeline_model_parallel_size=2"
    q = import_nemo_rl(NEMO, [*NEMO_MEG, guard])
    assert "--virtual-stages" not in dict(q.flags) and not choices(q.notes)
    assert any("copies no such key" in n for n in q.notes)
    with pytest.raises(SpecError, match="conflicts"):
        import_nemo_rl(NEMO, [*NEMO_MEG, guard, f"+{NEMO_VPP}=2"])
    with pytest.raises(SpecError, match="needs pipeline_model_parallel_size > 1"):
        import_nemo_rl(NEMO, [*NEMO_MEG[:2], f"+{NEMO_VPP}=2"])



def test_verl_ref_default_reference_is_the_actors() -> None:
    # verl/trainer/config/ref/megatron_ref.yaml:23: the ref's size is an oc.select of the
    # actor's, which the Reader evaluates as OmegaConf does: no note, no error
    ref = f"${{oc.select:{VERL_VPP},null}}"
    key = "actor_rollout_ref.ref.megatron.virtual_pipeline_model_parallel_size"
    q = import_verl(VERL, [*VERL_MEG, f"{VERL_VPP}=2", f"+{key}='{ref}'"])
    assert dict(q.flags)["--virtual-stages"] == 2
    assert not any(n.startswith("ref.") for n in q.notes)
    assert Reader({key: ref}, "x").integer(key, None) is None  # the actor's unset: null
    assert Reader({key: ref, VERL_VPP: 2}, "x").integer(key, None) == 2  # else the actor's


def test_virtual_stages_given_is_not_overridden_by_a_layout_strings_stages() -> None:
    # review3: `--virtual-stages 1` under a layout of pp x 2 stages ran v = 2 silently (the
    # layout's implied size was taken whenever v stayed at 1); now check_layout's one line
    layout = ["--pp", "2", "--pp-layout", "Et*6|t*6|t*6|t*6L"]
    grpo = ["grpo", "-m", "qwen2.5-0.5b", "--gpus", "8", "--json"]
    bad = runner.invoke(app, [*grpo, *layout, "--virtual-stages", "1"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "4 stages = pp 2 x 2 virtual stages, not 1" in bad.output
    implied = json.loads(runner.invoke(app, [*grpo, *layout]).stdout)
    given = json.loads(runner.invoke(app, [*grpo, *layout, "--virtual-stages", "2"]).stdout)
    assert implied["run"]["deployment"]["train"]["virtual_stages"] == 2
    assert given["iteration"] == implied["iteration"]


def test_a_files_virtual_size_without_its_schedule_names_what_sets_it(tmp_path) -> None:
    # review3: the RL commands have no --schedule; the refusal named only that flag
    dep = tmp_path / "dep.yaml"
    dep.write_text("train: {pp: 2, virtual_stages: 2}\n")
    res = runner.invoke(app, ["grpo", "-m", "qwen2.5-0.5b", "--gpus", "8", "--deployment",
                              str(dep), "--json"])  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "train.schedule: interleaved" in res.output and "--virtual-stages" in res.output
