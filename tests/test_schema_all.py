"""Every command's --json output starts with ``schema_version`` and ``command`` and validates
against the JSON Schema `rlmcost schema COMMAND` prints; the commands with a --json option are
exactly the commands `rlmcost schema` knows, so a new one cannot skip its schema.

The reference is the CLI itself: outputs are what the commands print (typer's CliRunner), the
schemas what `rlmcost schema` prints, checked with the jsonschema package (draft 2020-12), and
the list of commands with --json comes from the click commands typer builds.
"""

import importlib.util
import json
import shlex
from pathlib import Path

import jsonschema
import pytest
import typer
import typer.main
from typer.testing import CliRunner

import rlmcost
from rlmcost.algorithms.catalog import algorithms
from rlmcost.cli import app
from rlmcost.run.schema import json_schema
from rlmcost.run.schema_envelope import IMPORT_COMMANDS, schema_commands

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "frameworks"
SMALL = ("-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64")
NO_TORCH = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


def _openrlhf_args() -> list[str]:
    lines = (DATA / "openrlhf_ppo_ray.args").read_text().splitlines()
    return shlex.split(" ".join(ln for ln in lines if ln and not ln.startswith("#")))


def _slime_args() -> list[str]:
    lines = (DATA / "slime_qwen3-4B.args").read_text().splitlines()
    return shlex.split(" ".join(ln for ln in lines if ln and not ln.startswith("#")))


# (the command the output names, the arguments with --json); small inputs throughout
CASES = [
    ("ppo", ["ppo", *SMALL, "--json"]),
    ("ppo", ["ppo", "--symbolic", "--json"]),
    ("dpo", ["dpo", "--symbolic", "--json"]),
    ("compare", ["compare", "ppo", "grpo", *SMALL, "--json"]),
    ("placements", ["placements", *SMALL, "--gpus", "4", "--json"]),
    ("placements", ["placements", "--symbolic", "--json"]),
    ("models", ["models", "--family", "qwen3", "--json"]),
    ("hardware", ["hardware", "--json"]),
    ("algorithms", ["algorithms", "--json"]),
    ("frameworks", ["frameworks", "--json"]),
    ("blocks", ["blocks", "-m", "7b", "--json"]),
    ("blocks", ["blocks", "-m", "deepseek-v3", "--seq", "512", "--json"]),
    ("blocks", ["blocks", "--symbolic", "--json"]),
    ("train", ["train", "-m", "7b", "--gpus", "16", "--tp", "2", "--pp", "2", "--json"]),
    ("validate", ["validate", "--json"]),
    ("validate", ["validate", "--memory", "--source", "torchtitan_h200_trainy", "--json"]),
    ("plan", ["plan", "ppo", "-m", "gpt-2", "--gpus", "2", "--json"]),
    ("plan", ["plan", "ppo", "-m", "70b", "--gpus", "8", "--tp", "8", "--json"]),
    ("plan", ["plan", "train", "-m", "gpt-2", "--gpus", "2", "--json"]),
    ("plan", ["plan", "train", "-m", "70b", "--gpus", "8", "--json"]),
    ("plan", ["plan", "grpo", "-m", "gpt-2", "-S", "64", "--gpus", "1", "--max-response-len",
              "--json"]),
    ("import verl", ["import", "verl", str(DATA / "verl_grpo.yaml"), "--json"]),
    ("import openrlhf", ["import", "openrlhf", "--json", "--", *_openrlhf_args()]),
    ("import trl", ["import", "trl", str(DATA / "trl_grpo.yaml"), "--accelerate",
                    str(DATA / "trl_accelerate_zero3.yaml"), "--json"]),
    ("import nemo-rl", ["import", "nemo-rl", str(DATA / "nemo_rl_grpo_math.yaml"), "--json"]),
    ("import slime", ["import", "slime", "--json", "--", *_slime_args()]),
    ("import miles", ["import", "miles", "--json", "--", *_slime_args()]),
    ("calibrate", ["calibrate", "--quick", "--ranks", "1", "--kernel", "gemm", "--json"]),
]  # fmt: skip
PARAMS = [
    pytest.param(case, marks=NO_TORCH if case[0] == "calibrate" else (),
                 id=" ".join(a for a in case[1][:4] if not a.startswith("/")))
    for case in CASES
]  # fmt: skip


def _json(args: list[str]) -> dict:
    res = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{") :])


@pytest.fixture(scope="module", params=PARAMS)
def output(request):
    command, args = request.param
    return command, _json(args)


def _printed_schema(command: str) -> dict:
    res = runner.invoke(app, ["schema", *command.split()])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_every_output_starts_with_its_schema_version_and_command(output):
    command, out = output
    assert list(out)[:2] == ["schema_version", "command"]
    assert out["schema_version"] == rlmcost.SCHEMA_VERSION
    assert out["command"] == command


def test_every_output_validates_against_the_schema_rlmcost_schema_prints(output):
    command, out = output
    schema = _printed_schema(command)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(out, schema, cls=jsonschema.Draft202012Validator)
    # the top level is closed: a key no model declares fails
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**out, "undeclared": 1}, schema)


def test_an_output_with_a_run_embeds_it_third_and_whole(output):
    _, out = output
    if "run" not in out or out["run"] is None:
        return
    assert list(out)[2] == "run"
    assert rlmcost.Run.from_data(out["run"]).to_json() == out["run"]


def _commands_with_json() -> set[str]:
    """Every command (``import verl`` for a group's) whose options include --json, from the
    click commands typer builds."""
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    found = set()
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        subs = getattr(cmd, "commands", None)
        for sub_name, sub in (subs.items() if subs else [("", cmd)]):
            if any("--json" in p.opts for p in sub.params):
                found.add(f"{name} {sub_name}".strip())
    return found


# `rlmcost run FILE --json` prints the output of the command that printed FILE (its `command`,
# under that command's schema); tests/test_run.py checks it reproduces the file
REPRINTS = {"run"}


def test_the_commands_with_json_are_the_commands_rlmcost_schema_knows():
    known = set(schema_commands())
    assert _commands_with_json() == known | REPRINTS
    for command in known:  # each has a schema (no LookupError, no SpecError)
        assert json_schema(command)["title"].startswith(f"rlmcost {command} --json")


def test_every_command_but_the_algorithms_has_a_case_here():
    # the algorithm commands share one schema; tests/test_run.py runs ppo, grpo, dpo and dapo
    covered = {command for command, _ in CASES}
    assert set(schema_commands()) - set(algorithms()) <= covered


def test_schema_help_lists_every_command_and_import_alone_names_the_shared_schema():
    res = runner.invoke(app, ["schema", "--help"], env={"COLUMNS": "400"})
    assert res.exit_code == 0
    text = " ".join(res.output.replace("│", " ").split())
    for command in schema_commands():
        assert f" {command}," in text or f" {command};" in text, command
    shared = json_schema("import")
    for command in IMPORT_COMMANDS:
        assert {**json_schema(command), "title": ""} == {**shared, "title": ""}


@pytest.mark.parametrize("command", [["tables"], ["import", "deepspeed-chat"], ["ppo", "x"]])
def test_an_unknown_command_is_one_line_naming_the_commands(command):
    res = runner.invoke(app, ["schema", *command])
    assert res.exit_code == 2 and "Traceback" not in res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: no schema for '{' '.join(command)}'")
    assert "models" in lines[0]
    assert "import [FRAMEWORK] (verl, openrlhf, trl, nemo-rl, slime, miles)" in lines[0]


def test_bytes_and_flops_are_exact_integers_in_the_schema():
    out = _json(["train", "-m", "gpt-2", "--json"])
    schema = json_schema("train")
    jsonschema.validate(out, schema)
    for key, bad in (("work_global_flops", out["work_global_flops"] + 0.5),
                     ("hbm_bytes", str(out["hbm_bytes"])),
                     ("memory_per_rank_bytes", {"total": 1.5})):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**out, key: bad}, schema)
    blocks = _json(["blocks", "-m", "gpt-2", "--json"])
    with pytest.raises(jsonschema.ValidationError):  # a quantity left out
        jsonschema.validate({k: v for k, v in blocks.items() if k != "kv_cache_bytes"},
                            json_schema("blocks"))  # fmt: skip


def test_rlmcost_run_shows_an_import_as_its_algorithm_command(tmp_path):
    out = _json(["import", "verl", str(DATA / "verl_grpo.yaml"), "--json"])
    path = tmp_path / "import.json"
    path.write_text(json.dumps(out))
    assert _json(["run", str(path), "--json"]) == out["estimate"]
    res = runner.invoke(app, ["run", str(path), "--command"])
    assert res.exit_code == 0 and res.stdout.startswith("rlmcost rlvr --model qwen2.5-7b")


def test_rlmcost_run_on_an_output_without_a_run_is_one_line(tmp_path):
    path = tmp_path / "train.json"
    path.write_text(json.dumps(_json(["train", "-m", "gpt-2", "--json"])))
    res = runner.invoke(app, ["run", str(path)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert "output of `rlmcost train`, which holds no Run" in res.output


def test_schema_of_run_says_which_schema_its_output_takes():
    # `rlmcost run FILE --json` reprints its command's output (REPRINTS): the error says so
    res = runner.invoke(app, ["schema", "run"])
    assert res.exit_code != 0
    assert "under that command's schema" in res.output and "rlmcost schema ppo" in res.output
    assert "Traceback" not in res.output
