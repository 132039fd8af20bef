"""`rlmcost models` / `rlmcost hardware` listings and name errors through the CLI."""

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def test_models_lists_at_least_40_with_hf_ids_and_notes():
    rows = json.loads(run("models", "--json").stdout)["models"]
    assert len(rows) >= 40
    by = {r["name"]: r for r in rows}
    assert "Qwen/Qwen2.5-7B-Instruct" in by["qwen2.5-7b"]["hf_ids"]
    assert by["gemma-2-9b"]["notes"] and by["qwen3-8b"]["notes"] == []


def test_models_family_filter():
    rows = json.loads(run("models", "--family", "qwen3", "--json").stdout)["models"]
    names = {r["name"] for r in rows}
    assert {"qwen3-0.6b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b"} <= names
    assert all(r["family"] == "qwen3" or r["model_type"] == "qwen3" for r in rows)
    r = runner.invoke(app, ["models", "--family", "qwen3"], env={"COLUMNS": "250"})
    assert r.exit_code == 0 and "qwen3-8b" in r.stdout and "llama-3.1-8b" not in r.stdout


def test_unknown_family_is_a_one_line_error():
    r = run("models", "--family", "bert")
    assert r.exit_code == 2 and "no built-in model of family 'bert'" in r.output
    assert "Traceback" not in r.output


def test_hardware_lists_at_least_14_with_usable_memory_and_host_link():
    rows = json.loads(run("hardware", "--json").stdout)["hardware"]
    assert len(rows) >= 14
    for h in rows:
        assert h["source"] and h["hbm_usable_source"] and h["host_link_source"]
        assert h["hbm_capacity_bytes"] == h["hbm_usable_bytes"]
    table = run("hardware")
    assert table.exit_code == 0 and "usable" in table.stdout and "host" in table.stdout


@pytest.mark.parametrize(
    "args, fragment",
    [(["train", "-m", "llama-3.1-8b", "--hardware", "a100"], "a100-40gb or a100-80gb?"),
     (["blocks", "--model", "30b"], "qwen3-30b-a3b or nemotron-3-nano-30b-a3b?")],
)  # fmt: skip
def test_partial_names_are_errors(args, fragment):
    r = run(*args)
    assert r.exit_code == 2 and fragment in r.output and "Traceback" not in r.output


def test_absurd_config_is_a_one_line_error(tmp_path):
    p = tmp_path / "config.json"
    cfg = dict(model_type="llama", hidden_size=1e40, intermediate_size=8, num_hidden_layers=2,
               num_attention_heads=2, vocab_size=10)  # fmt: skip
    p.write_text(json.dumps(cfg))
    r = run("blocks", "--model", str(p))
    assert r.exit_code == 2 and "implausible" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_hf_id_runs_on_the_builtin_shape():
    a = json.loads(run("blocks", "--model", "Qwen/Qwen2.5-7B-Instruct", "--json").stdout)
    b = json.loads(run("blocks", "--model", "qwen2.5-7b", "--json").stdout)
    assert a["params"] == b["params"]
