"""One Run: the query object every entry point shares (rlmcost.Run, rlmcost.evaluate,
`rlmcost run`, `rlmcost schema`)."""

import json
import shlex

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from typer.testing import CliRunner

import rlmcost
from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.reports.estimate import estimate, run_of
from rlmcost.run.schema import json_schema

runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


QUERIES = [
    ("ppo", "-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64"),
    ("grpo", "-m", "gpt-2", "-B", "4", "-K", "4", "-S", "64", "-T", "64", "--gpus", "2",
     "--zero", "3", "--reward", "rule", "--lora-rank", "8"),
    ("dpo", "-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64", "--ideal"),
    ("dapo", "-m", "gpt-2", "-B", "4", "-S", "64", "-T", "64", "--oversample", "3/2"),
    ("ppo", "-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64", "--gpus", "4", "--placement",
     "async", "--staleness", "1", "--length-dist", "uniform:8,64"),
    ("ppo", "-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64", "--zero", "3",
     "--groups", "rollout=2[tp=1],actor+reference=1,critic+reward=1"),
    ("grpo", "-m", "qwen2.5-7b", "--framework", "verl", "--gpus", "8", "-T", "256"),
    # a KL over a preset whose default is --no-kl (verl, slime, TRL): the command says --kl
    ("grpo", "-m", "qwen2.5-7b", "--framework", "slime", "--kl", "--gpus", "8", "-T", "256"),
    ("compare", "ppo", "grpo", "dpo", "-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64"),
    ("placements", "-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64", "--gpus", "4"),
    ("placements", "-m", "gpt-2", "-B", "8", "-S", "64", "-T", "64", "--gpus", "4",
     "--placement", "hybrid"),
]  # fmt: skip


@pytest.fixture(scope="module", params=QUERIES, ids=[" ".join(q[:1] + q[-2:]) for q in QUERIES])
def output(request):
    res = cli(*request.param, "--json")
    assert res.exit_code == 0, res.output
    return request.param, json.loads(res.stdout)


def test_every_query_output_carries_its_schema_version_command_and_run(output):
    args, out = output
    assert out["schema_version"] == rlmcost.SCHEMA_VERSION
    assert out["command"] == args[0]
    assert rlmcost.Run.from_data(out["run"]).to_json() == out["run"]


def test_rlmcost_run_reproduces_every_query_output_from_its_embedded_run(output, tmp_path):
    _, out = output
    path = tmp_path / "out.json"
    path.write_text(json.dumps(out))
    res = cli("run", str(path), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == out
    text = cli("run", str(path))  # the same view as text
    assert text.exit_code == 0 and "Traceback" not in text.output


def test_every_query_output_validates_against_its_printed_schema(output):
    args, out = output
    res = cli("schema", args[0])
    assert res.exit_code == 0, res.output
    jsonschema.validate(out, json.loads(res.stdout))


def test_the_schema_is_closed_so_a_new_key_must_be_declared():
    out = json.loads(cli("ppo", "-m", "gpt-2", "-B", "8", "--json").stdout)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**out, "iteration_time_lower_bound_s": 1.0}, json_schema("ppo"))


def test_to_command_reproduces_the_output(output):
    args, out = output
    run = rlmcost.Run.from_data(out["run"])
    line = shlex.split(run.to_command(args[0]))
    assert line[:2] == ["rlmcost", args[0]]
    if args[0] == "compare":  # the Run holds the first algorithm; the others are the view's
        line[3:3] = out["compared"][1:]
    again = cli(*line[1:], "--json")
    assert again.exit_code == 0, (line, again.output)
    assert json.loads(again.stdout) == out


def test_the_library_and_the_cli_evaluate_one_run():
    out = json.loads(cli("ppo", "-m", "70b", "--tp", "8", "--json").stdout)
    run = rlmcost.Run.from_yaml("models: {actor: 70b}\ndeployment: {train: {tp: 8}}")
    e = rlmcost.evaluate(run)
    kw = estimate("ppo", "70b", tp=8)  # a whole Layout would also say ZeRO-0, micro-batch 1
    assert e.to_json()["iteration"] == out["iteration"] == kw.to_json()["iteration"]
    assert e.to_json()["stages"] == out["stages"]


@settings(max_examples=25, deadline=None)
@given(
    alg=st.sampled_from(["ppo", "grpo", "dpo", "rloo"]),
    tp=st.sampled_from([1, 2, 4]),
    gpus=st.sampled_from([None, 8, 16]),
    batch=st.one_of(st.none(), st.integers(1, 512)),
    offload=st.sampled_from(["", "optimizer", "optimizer,params"]),
    groups=st.sampled_from([None, "rollout=4[tp=2],actor+reference=4[zero=3;mb=2]"]),
    dist=st.sampled_from([None, "lognormal:1024,0.5,4096"]),
)
def test_run_round_trips_through_json_and_yaml(alg, tp, gpus, batch, offload, groups, dist):
    dep = Deployment.model_validate({"train": {"offload": offload}})
    run = run_of(alg, "8b", tp=tp, gpus=gpus, batch=batch, groups=groups, length_dist=dist,
                 deployment=dep)  # fmt: skip
    assert rlmcost.Run.from_json(run.to_json_text()) == run
    assert rlmcost.Run.from_yaml(run.to_yaml()) == run
    assert run.replace() == run


def test_a_run_is_frozen_and_rejects_unknown_fields_in_one_line():
    run = rlmcost.Run()
    with pytest.raises(ValidationError, match="frozen"):
        run.cluster = None  # type: ignore[misc]
    with pytest.raises(SpecError, match="cluster.gpu"):
        rlmcost.Run.from_data({"cluster": {"gpu": 8}})
    with pytest.raises(SpecError, match="batch=0 must be a positive integer"):
        rlmcost.Run.from_data({"workload": {"prompts": 0}})


def test_a_bad_run_file_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("algorithm: {name: ppo}\ncluster: {gpus: -1}\n")
    res = cli("run", str(bad))
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "cluster.gpus" in res.output
    res = cli("run", str(tmp_path / "missing.yaml"))
    assert res.exit_code == 2 and "cannot read run file" in res.output
    res = cli("schema", "tables")
    assert res.exit_code == 2 and "no schema for 'tables'" in res.output


def test_a_saved_yaml_run_evaluates_like_its_command(tmp_path):
    run = run_of("grpo", "gpt-2", batch=4, group=4, prompt_len=64, response_len=64, gpus=2)
    path = tmp_path / "run.yaml"
    run.dump(path)
    a = json.loads(cli("run", str(path), "--json").stdout)
    b = json.loads(cli(*shlex.split(run.to_command())[1:], "--json").stdout)
    assert a == b and a["gpus"] == 2


@pytest.mark.parametrize(("flags", "field"), [
    (["--gpu-memory-utilization", "0.61234567"], "gpu_memory_utilization"),
    (["--engine", "megatron", "--kv-buffer-gib", "10.1234567"], "kv_buffer_gib"),
])  # fmt: skip
def test_an_engine_float_of_many_digits_round_trips_through_the_command(
    flags: list[str], field: str
) -> None:
    """``Run.to_command`` wrote the engine's float flags with ``:g`` (6 significant digits):
    --gpu-memory-utilization 0.61234567 came back as 0.612346, a smaller KV cache than the
    run's (the prices' and cluster floats' fix, a674a76, left the engine's)."""
    from rlmcost.cli.validate import run_from_argv

    run = run_from_argv("grpo", ["-m", "llama-3.1-8b", "--gpus", "8", *flags])
    again = run_from_argv("grpo", shlex.split(run.to_command())[2:])
    assert getattr(again.deployment.engine, field) == getattr(run.deployment.engine, field)
    assert again == run
