"""CLI behaviour of the foundation commands: exit codes, JSON, one-line errors."""

import json

import pytest
from typer.testing import CliRunner

from rlmcost import blocks as bl
from rlmcost.cli import app
from rlmcost.specs import get_model

runner = CliRunner()

BLOCKS_KEYS = {
    "params", "forward_flops", "backward_flops", "decode_step_flops", "prefill_flops",
    "rollout_flops", "kv_cache_bytes", "activation_bytes", "logits_bytes", "adam_state_bytes",
    "depth_forward", "depth_backward", "depth_generation",
}  # fmt: skip


def run(*args):
    return runner.invoke(app, list(args))


def test_blocks_json_has_the_documented_keys_and_exact_values():
    r = run("blocks", "--model", "llama-3.1-70b", "--batch", "2", "--seq", "4096",
            "--context", "8192", "--json")  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert BLOCKS_KEYS <= out.keys()
    arch = get_model("llama-3.1-70b").arch()
    assert out["params"] == 70_553_706_496
    assert out["forward_flops"] == int(bl.work_forward(arch, 2, 4096))
    assert out["backward_flops"] == 2 * out["forward_flops"]
    # 8192 cached tokens: the new token attends 8193 positions (its own key too, as
    # FlopCounterMode counts a step after a cache of context - 1 tokens)
    assert out["decode_step_flops"] == int(bl.work_decode_step(arch, 8193, 2))
    # KV cache by hand: 2 (K, V) x 80 layers x 8 kv heads x 128 x 2 bytes x (2 x 8192) tokens
    assert out["kv_cache_bytes"] == 2 * 80 * 8 * 128 * 2 * 2 * 8192
    # logits: 2 x 4096 tokens x 128256 vocab x 4 bytes (fp32)
    assert out["logits_bytes"] == 2 * 4096 * 128256 * 4
    # mixed-precision Adam: 16 bytes per parameter
    assert out["adam_state_bytes"] == 16 * 70_553_706_496
    assert all(isinstance(out[k], int) for k in BLOCKS_KEYS)


def test_blocks_human_output_has_units():
    r = run("blocks", "--model", "8b")
    assert r.exit_code == 0
    for unit in ("FLOP", "GiB", "levels", "bf16"):
        assert unit in r.stdout


def test_blocks_symbolic_and_latex():
    r = run("blocks", "--symbolic", "--json")
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert (
        out["forward_flops"]["explicit"]
        == "8*B*L*d**2*m + 4*B*L*d*d_ff*m + 4*B*L*d*m**2 + 2*B*V*d*m"
    )
    r = run("blocks", "--latex")
    assert r.exit_code == 0 and "\\lceil" in r.stdout


def test_models_json_lists_names_aliases_params():
    r = run("models", "--json")
    rows = json.loads(r.stdout)["models"]
    by = {m["name"]: m for m in rows}
    assert by["llama-3.1-70b"]["params"] == 70_553_706_496
    assert "70b" in by["llama-3.1-70b"]["aliases"]
    assert all({"name", "aliases", "params"} <= m.keys() for m in rows)


def test_hardware_lists_sources():
    r = run("hardware", "--json")
    assert r.exit_code == 0
    assert all(h["source"] for h in json.loads(r.stdout)["hardware"])


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["blocks", "--model", "nonexistent"], "unknown model"),
        (["blocks", "--model", "llama"], "ambiguous"),
        (["blocks", "--model", "8b", "--batch", "0"], "--batch"),
        (["blocks", "--model", "8b", "--seq", "-5"], "--seq"),
        (["blocks", "--model", "8b", "--response-len", "0"], "--response-len"),
        (["blocks", "--model", "8b", "--dtype", "int3"], "--dtype"),
        (["blocks", "--model", "/no/such/config.json"], "cannot read"),
        (["blocks"], "--model"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, fragment):
    r = run(*args)
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1, r.output
    assert lines[0].startswith("error: ") and fragment in lines[0]
    assert "Traceback" not in r.output


def test_malformed_and_unsupported_configs(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{oops")
    r = run("blocks", "--model", str(bad))
    assert r.exit_code == 2 and "not valid JSON" in r.output
    bad.write_text(json.dumps({"model_type": "t5"}))
    r = run("blocks", "--model", str(bad))
    assert r.exit_code == 2 and "supported" in r.output


def test_help_works():
    r = run("--help")
    assert r.exit_code == 0 and "blocks" in r.output


@pytest.mark.parametrize("args", [[], ["import"]])
def test_a_bare_command_group_prints_its_help_and_no_empty_error_line(args):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "rlmcost", *args], capture_output=True, text=True)
    # click's no_args_is_help: the help, exit code 2 (a usage error), and nothing else
    assert out.returncode == 2
    assert "Usage:" in out.stdout + out.stderr
    assert "error:" not in out.stdout + out.stderr
