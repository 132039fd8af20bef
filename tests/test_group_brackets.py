"""A device group's own engine and trainer fields in ``--groups`` brackets
(rlmcost.deployment.group_brackets): ``rollout=8[gmu=0.7;max-num-seqs=64]`` gives the rollout
group's engine, ``actor=8[padded]`` its trainer's padding, as the same run written as a
deployment file (``groups[].engine``, ``groups[].train``) does; a key is given even at its
default; bad keys and values are one-line errors; ``Run.to_command`` writes the keys back and
the command re-run gives the same JSON. The references are the run's own numbers with the same
field given run-wide (one group generates, one trains: the field reaches the same jobs) and the
deployment file, both read through the CLI."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.given import PASS_FIELDS
from rlmcost.deployment.group_brackets import Brackets
from rlmcost.errors import SpecError
from rlmcost.evaluation.query import groups_from_text

QUERY = ("grpo", "-m", "llama-3.2-1b", "--reward", "rule", "--framework", "verl", "-B", "16",
         "-K", "4", "-S", "512", "-T", "1024",
         "--length-dist", "lognormal:700,0.6,1024")  # fmt: skip
"""verl GRPO with a rule reward (no reference: verl's GRPO preset drops the KL); verl's preset
trains under ZeRO-3 with full checkpointing, which a trainer key must keep."""


def _cli(*flags: str, code: int = 0) -> Any:
    r = CliRunner().invoke(app, [*QUERY, *flags])
    assert r.exit_code == code, r.output
    return r


def _out(*flags: str) -> dict[str, Any]:
    return json.loads(_cli(*flags, "--json").stdout)


def _times(out: dict[str, Any]) -> tuple[Any, ...]:
    return out["iteration"]["time_s"], out["phases"], out["hbm_bytes_per_device"]


def _file(tmp_path, groups: list[dict[str, Any]]) -> str:  # noqa: ANN001
    path = tmp_path / "dep.json"
    path.write_text(json.dumps({"framework": "verl", "groups": groups}))
    return str(path)


# -- parsing --------------------------------------------------------------------------------


def test_keys_split_into_layout_engine_and_trainer_fields() -> None:
    b = Brackets("tp=4;gmu=0.85;max-num-seqs=512;eager;prefix-caching=off;kind=SGLang;"
                 "max_tokens_per_gpu=16384;padded=false;trainer-kernels=realhf", "t")  # fmt: skip
    assert b.layout == {"tp": 4}
    assert b.engine == {"gpu_memory_utilization": 0.85, "max_num_seqs": 512, "eager": True,
                        "prefix_caching": False, "kind": "sglang"}  # fmt: skip
    assert b.train == {"max_tokens_per_gpu": 16384, "padded": False, "kernels": "realhf"}


@pytest.mark.parametrize(("text", "says"), [
    ("rollout=8[gpu=0.8],actor=8", "not a group setting"),
    ("rollout=8[eager=maybe],actor=8", "eager takes true or false"),
    ("rollout=8[max-num-seqs=0],actor=8", "positive whole number"),
    ("rollout=8[gmu=1.5],actor=8", "gpu_memory_utilization=1.5 must be in (0, 1]"),
    ("rollout=8[engine=tgi],actor=8", "engine 'tgi'"),  # the field's error names its key
    ("rollout=8[padded],actor=8", "only generates"),
    ("rollout=8,critic=8[eager]", "runs no generation"),
    ("rollout=8,actor=8[gmu=0.5]", "runs no generation"),  # rollout claims the actor's
    ("rollout=8[context-length=4096],actor=8", "add --engine sglang"),
])  # fmt: skip
def test_bad_keys_and_values_are_one_line_errors(text: str, says: str) -> None:
    with pytest.raises(SpecError) as err:
        groups_from_text(text)
    msg = str(err.value)
    assert "\n" not in msg and text in msg
    assert says in msg, msg
    r = _cli("--groups", text, code=2)
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) <= 3


def test_an_unknown_key_lists_the_valid_ones() -> None:
    with pytest.raises(SpecError, match="max-num-seqs.*max-tokens-per-gpu"):
        groups_from_text("rollout=8[seqs=4],actor=8")


# -- the same run as a deployment file ---------------------------------------------------------


def test_an_engine_key_equals_the_deployment_files_group_engine(tmp_path) -> None:  # noqa: ANN001
    brackets = _out("--groups", "rollout=8[gmu=0.7;max-num-seqs=4],actor=8")
    engine = {"gpu_memory_utilization": 0.7, "max_num_seqs": 4}
    file = _out("--deployment", _file(tmp_path, [{"members": "rollout", "gpus": 8,
                                                  "engine": engine},
                                                 {"members": "actor", "gpus": 8}]))  # fmt: skip
    assert brackets["run"]["deployment"]["groups"] == file["run"]["deployment"]["groups"]
    assert brackets["run"]["deployment"]["groups"][0]["engine"] == engine
    assert _times(brackets) == _times(file)
    # the only generating group: the numbers of the same fields run-wide
    wide = _out("--groups", "rollout=8,actor=8", "--gpu-memory-utilization", "0.7",
                "--max-num-seqs", "4")  # fmt: skip
    plain = _out("--groups", "rollout=8,actor=8")
    assert _times(brackets) == _times(wide) != _times(plain)


def test_a_trainer_key_equals_the_deployment_files_group_train(tmp_path) -> None:  # noqa: ANN001
    plain = _out("--groups", "rollout=8,actor=8")
    brackets = _out("--groups", "rollout=8,actor=8[padded]")
    # the file's group trainer layout: the run's (verl's ZeRO-3, full checkpointing) padded
    train = {k: v for k, v in plain["run"]["deployment"]["train"].items()
             if k not in (*PASS_FIELDS, "offload")}  # what the brackets leave the run's
    assert (train["zero"], train["ckpt"]) == ("3", "full")
    actor = {"members": "actor", "gpus": 8, "train": {**train, "padded": True}}
    file = _out("--deployment", _file(tmp_path, [{"members": "rollout", "gpus": 8}, actor]))
    assert brackets["run"]["deployment"]["groups"] == file["run"]["deployment"]["groups"]
    assert _times(brackets) == _times(file)
    wide = _out("--groups", "rollout=8,actor=8", "--padded")
    assert _times(brackets) == _times(wide) != _times(plain)


def test_a_trainer_key_keeps_the_runs_layout() -> None:
    # padded=false is verl's own value: the group's ZeRO-3 and checkpointing stay the run's,
    # so the numbers are those of no key at all
    plain = _out("--groups", "rollout=8,actor=8")
    same = _out("--groups", "rollout=8,actor=8[padded=false]")
    assert _times(same) == _times(plain)
    assert same["run"]["deployment"]["groups"][1]["train"]["padded"] is False


def test_a_key_at_its_default_is_given() -> None:
    # eager=false under a run-wide --enforce-eager: the numbers of CUDA graphs run-wide
    graphs = _out("--groups", "rollout=8,actor=8")
    back = _out("--groups", "rollout=8[eager=false],actor=8", "--enforce-eager")
    eager = _out("--groups", "rollout=8,actor=8", "--enforce-eager")
    assert _times(back) == _times(graphs) != _times(eager)
    # padded=false under a run-wide --padded: the numbers of no padding run-wide
    unpadded = _out("--groups", "rollout=8,actor=8[padded=false]", "--padded")
    padded = _out("--groups", "rollout=8,actor=8", "--padded")
    assert _times(unpadded) == _times(graphs) != _times(padded)


def test_brackets_over_a_files_group_refine_it_field_by_field(tmp_path) -> None:  # noqa: ANN001
    path = _file(tmp_path, [{"members": "rollout", "gpus": 8, "engine": {"eager": True}},
                            {"members": "actor", "gpus": 8}])  # fmt: skip
    out = _out("--deployment", path, "--groups", "rollout=8[max-num-seqs=64],actor=8")
    assert out["run"]["deployment"]["groups"][0]["engine"] == {"eager": True, "max_num_seqs": 64}


# -- the reproducing command ----------------------------------------------------------------


@pytest.mark.parametrize("groups", [
    "rollout=8[tp=2;gmu=0.7;max-num-seqs=64;eager;prefix-caching=false],actor=8[zero=2;padded]",
    "rollout=8[sleep=false;engine=sglang],actor=8[max-tokens-per-gpu=4096;packing]",
])  # fmt: skip
def test_the_command_writes_the_keys_back(groups: str) -> None:
    out = _out("--groups", groups)
    from rlmcost.run import Run

    line = Run.from_data(out["run"]).to_command()
    assert "--groups" in line
    again = json.loads(CliRunner().invoke(app, [*shlex.split(line)[1:], "--json"]).stdout)
    assert again == out


def test_a_group_field_without_a_key_has_no_command(tmp_path) -> None:  # noqa: ANN001
    from rlmcost.run import Run

    path = _file(tmp_path, [{"members": "rollout", "gpus": 8, "engine": {"block_size": 32}},
                            {"members": "actor", "gpus": 8, "train": {"tp": 2}}])  # fmt: skip
    run = Run.from_data(_out("--deployment", path)["run"])
    with pytest.raises(SpecError, match="block_size: no --groups key"):
        run.to_command()
    layout_only = run.replace(deployment={"groups": [{"members": "rollout", "gpus": 8},
                                                     {"members": "actor", "gpus": 8,
                                                      "train": {"tp": 2}}]})  # fmt: skip
    with pytest.raises(SpecError, match="trainer layout"):
        layout_only.to_command()


# -- the planner ----------------------------------------------------------------------------


def test_plan_searches_counts_of_groups_with_keys() -> None:
    # `plan --groups` with '?' counts: every row keeps the keys, its trainer layout the
    # candidate's with the key over it, and its command reproduces the row as a single query
    r = CliRunner().invoke(app, [
        "plan", "grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4",
        "--gpus", "4", "--tp", "1,2", "--rollout-tp", "1", "--micro-batch", "1", "--ckpt",
        "full", "--top", "4", "--json",
        "--groups", "rollout=?[gmu=0.8;max-num-seqs=8],actor+reference=?[padded]"])  # fmt: skip
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    assert rows
    for row in rows:
        rollout, actor = row["run"]["deployment"]["groups"]
        assert rollout["engine"] == {"gpu_memory_utilization": 0.8, "max_num_seqs": 8}
        train = row["run"]["deployment"]["train"]
        assert actor["train"]["padded"] is True
        assert (actor["train"]["tp"], actor["train"]["zero"]) == (train["tp"], train["zero"])
        single = json.loads(CliRunner().invoke(app, [*shlex.split(row["command"])[1:],
                                                     "--json"]).stdout)  # fmt: skip
        assert single["run"] == row["run"]
        assert single["iteration"]["time_s"] == row["time_s"]


def test_plan_refuses_a_bad_key_up_front() -> None:
    r = CliRunner().invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "4",
                                 "--groups", "rollout=?[seqs=8],actor+reference=?"])  # fmt: skip
    assert r.exit_code == 2 and "not a group setting" in r.output and "Traceback" not in r.output


def test_the_api_builds_the_same_groups_as_the_cli() -> None:
    # rlmcost.run_of(groups=TEXT): the trainer keys go over the Run's own trainer layout,
    # verl's preset included, as on the command line
    from rlmcost import run_of

    text = "rollout=8[gmu=0.7;max-num-seqs=4],actor=8[padded]"
    run = run_of("grpo", "llama-3.2-1b", framework="verl", reward="rule", batch=16, group=4,
                 prompt_len=512, response_len=1024, length_dist="lognormal:700,0.6,1024",
                 groups=text)  # fmt: skip
    cli = _out("--groups", text)["run"]["deployment"]["groups"]
    assert [g.model_dump(mode="json") for g in run.deployment.groups] == cli
    with pytest.raises(SpecError, match="give tp="):
        run_of("grpo", "llama-3.2-1b", tp=None, groups="rollout=8,actor=8[padded]")


def test_placements_needs_tp_for_trainer_keys() -> None:
    r = CliRunner().invoke(app, ["placements", "-m", "llama-3.2-1b", "--groups",
                                 "rollout=8,actor+reference=8[padded]"])  # fmt: skip
    assert r.exit_code == 2 and "give --tp" in r.output and "Traceback" not in r.output


# -- the MoE capacity, permutation and virtual pipeline keys -----------------------------------

MOE = ("-m", "qwen3-30b-a3b", "--reward", "rule", "--framework", "none", "-B", "8", "-K", "4",
       "-S", "256", "-T", "512", "--gpus", "16", "--tp", "2", "--pp", "2", "--ep", "4")  # fmt: skip
"""A MoE actor trained by Megatron-core's layout (rlmcost's bare framework: no Hugging Face
trainer, which has no capacity), on a pipeline of 2 (48 layers: v = 2 divides them)."""


@pytest.mark.parametrize(("bracket", "run_wide", "field", "value"), [
    ("moe-capacity-factor=1.25", (), "moe_capacity_factor", 1.25),
    ("moe-capacity-factor=1.25;moe-pad-to-capacity", (), "moe_pad_to_capacity", True),
    ("moe-capacity-factor=none", ("--moe-capacity-factor", "1.5"), "moe_capacity_factor", None),
    ("moe-permute-fusion=false", (), "moe_permute_fusion", False),
    ("virtual-stages=2", (), "virtual_stages", 2),
    ("virtual-stages=1", ("--virtual-stages", "2"), "schedule", "1f1b"),
])  # fmt: skip
def test_a_groups_moe_and_virtual_pipeline_fields_round_trip(
    bracket: str, run_wide: tuple[str, ...], field: str, value: object
) -> None:
    # Run -> to_command -> the command's Run: the same Run, the group's trainer layout giving
    # the same fields (before, these keys did not exist and to_command refused such a group)
    from rlmcost.cli.validate import run_from_argv

    run = run_from_argv("grpo", [*MOE, *run_wide, "--groups", f"rollout=8,actor=8[{bracket}]"])
    own = run.deployment.groups[1].train
    assert own is not None and getattr(own, field) == value
    assert getattr(run.deployment.train, field) != value  # the group's own, not the run's
    line = run.to_command()
    assert bracket.split(";")[-1].split("=")[0] in line, line
    again = run_from_argv("grpo", shlex.split(line)[2:])
    assert again == run
    back = again.deployment.groups[1].train
    assert back is not None and back.model_fields_set == own.model_fields_set


def test_a_files_group_capacity_reaches_the_command(tmp_path) -> None:  # noqa: ANN001
    # a Run file's group giving only its capacity and padding: the command says them in the
    # group's bracket, and the command's group trains with the same layout over the run's
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.deployment.given import layered
    from rlmcost.run import Run

    run = run_from_argv("grpo", [*MOE, "--groups", "rollout=8,actor=8"]).replace(deployment={
        "groups": [{"members": "rollout", "gpus": 8},
                   {"members": "actor", "gpus": 8, "train": {
                       "moe_capacity_factor": 1.25, "moe_pad_to_capacity": True}}]})  # fmt: skip
    assert isinstance(run, Run)
    line = run.to_command()
    assert "actor=8[moe-capacity-factor=1.25;moe-pad-to-capacity]" in line, line
    again = run_from_argv("grpo", shlex.split(line)[2:])
    mine, back = run.deployment.groups[1].train, again.deployment.groups[1].train
    assert layered(back, again.deployment.train) == layered(mine, run.deployment.train)


@pytest.mark.parametrize(("text", "says"), [
    ("rollout=8,actor=8[moe-capacity-factor=0]", "a number > 0 or none"),
    ("rollout=8,actor=8[moe-pad-to-capacity=maybe]", "true or false"),
    ("rollout=8,actor=8[virtual-stages=0]", "positive whole number"),
])  # fmt: skip
def test_bad_moe_and_pipeline_values_are_one_line_errors(text: str, says: str) -> None:
    with pytest.raises(SpecError, match=says):
        groups_from_text(text)
