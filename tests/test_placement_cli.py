"""`rlmcost placements` as a new user meets it: output, --json schema, one-line errors."""

import json
import re

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.run.schema_envelope import SCHEMA_VERSION

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def test_side_by_side_marks_the_fastest_that_fits():
    r = run("placements", "-m", "gpt-2", "--gpus", "4", "-B", "8", "-S", "64", "-T", "64")
    assert r.exit_code == 0, r.output
    for name in ("baseline", "ac-shared", "disaggregated", "hybrid", "fusion", "async"):
        assert name in r.output
    # "fastest that fits of these configurations:" where a note finds a faster split beyond
    # them (tests/test_placements_headline.py)
    assert re.search(r"fastest that fits( of these configurations)?:", r.output)
    assert " *" in r.output


def test_json_of_one_placement_has_the_documented_keys():
    r = run("placements", "-m", "gpt-2", "--gpus", "4", "-B", "8", "-S", "64", "-T", "64",
            "--placement", "async", "--staleness", "2", "--json")  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["placement"] == "async" and out["staleness"] == 2
    assert {g["name"] for g in out["groups"]} == {"rollout", "trainer"}
    for stage in ("generation", "assessment", "training"):
        keys = set(out["stages"][stage])
        assert {"work_flops", "depth", "peak_memory_bytes_per_device",
                "time_lower_bound_s"} <= keys  # fmt: skip
        assert isinstance(out["stages"][stage]["work_flops"], int)
    assert out["iteration_time_lower_bound_s"] > 0 and out["weight_sync_bytes"] > 0
    # the prediction beside the bound
    assert out["iteration_time_s"] >= out["iteration_time_lower_bound_s"]
    assert out["tokens_per_s_per_gpu"] > 0 and 0 < out["mfu"] < 1
    for stage in ("generation", "assessment", "training"):
        assert out["stages"][stage]["time_s"] >= out["stages"][stage]["time_lower_bound_s"]
    assert "weight sync" in {p["name"] for p in out["phases"]}


def test_json_of_all_placements_names_the_fastest():
    r = run("placements", "-m", "gpt-2", "-a", "grpo", "--gpus", "2", "-B", "4", "-S", "32",
            "-T", "32", "--json")  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    names = [p["placement"] for p in out["placements"]]
    assert "ac-shared" not in names and "ac-shared" in out["not_applicable"]
    assert out["fastest_that_fits"] in names


def test_groups_with_a_length_distribution_in_detail(tmp_path):
    r = run("placements", "-m", "gpt-2", "-B", "8", "-S", "64", "--groups",
            "rollout=2,actor+reference=1,critic+reward=1", "--length-dist",
            "lognormal:128,0.8,512", "--placement", "fusion")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "Device groups" in r.output and "critic+reward" in r.output
    assert "lognormal:128,0.8,512" in r.output


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--groups", "actor=2,critic=2,reward=2,reference=2", "--gpus", "16"], "under-use"),
        (["--groups", "actor=8,critic=8,reward=8,reference=8", "--gpus", "16"], "over-use"),
        (["--groups", "actor+critic=2,reward=2"], "place it, e.g. --groups ...,reference=8"),
        (["--groups", "actor=2,critic=1,reward=1,reference=1,judge=1"], "ppo has no judge"),
        (["--groups", "actor=2,actor=2"], "appears in two groups"),
        (["--groups", "actor=two"], "positive whole number of GPUs"),
        (["--groups", "actor+critic+reward+refrence=4"], "unknown role 'refrence'"),
        (["--placement", "async", "--staleness", "0"], "--staleness k >= 1"),
        (["--placement", "hybrid", "--staleness", "2"], "applies to --placement async or combined"),
        (["--placement", "disaggregated", "--groups", "actor=4"], "combines with"),
        (["--placement", "async", "--groups", "actor+critic+reward+reference=4"], "same group"),
        (["-a", "grpo", "--placement", "ac-shared"], "has no critic"),
        (["-a", "dpo", "--placement", "async"], "offline"),
        (["--placement", "ac-shared", "--critic", "gpt-2", "-m", "llama-2-7b"], "drop --critic"),
        (["--length-dist", "gamma:1,2"], "unknown distribution"),
        (["--length-dist", "uniform:9,3"], "LO <= HI"),
        (["--length-dist", "file:/no/such/file"], "cannot read"),
        (["--placement", "turbo"], "--placement"),
    ],
)
def test_bad_input_is_one_line(args, fragment):
    model = [] if "-m" in args else ["-m", "gpt-2"]  # an option twice is an error of its own
    base = ["placements", *model, "-B", "8", "-S", "32", "-T", "32"]
    r = run(*base, *args)
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1, r.output
    assert lines[0].startswith("error: ") and fragment in lines[0], lines[0]
    assert "Traceback" not in r.output


def test_help_lists_the_group_syntax():
    r = run("placements", "--help")
    assert r.exit_code == 0
    assert "rollout=16" in r.output and "lognormal" in r.output


def test_symbolic_rows_need_no_model():
    r = run("placements", "--symbolic", "--placement", "async", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["schema_version"] == SCHEMA_VERSION and out["symbolic"] is True
    rows = out["rows"]
    assert [x["stage"] for x in rows] == ["generation", "assessment", "training", "iteration"]
    assert (
        rows[-1]["depth"].startswith("max(")
        and "M_sh(pi_theta)" in rows[0]["peak_memory_per_device_group"]
    )


def test_the_algorithm_commands_can_forward_to_a_placement():
    # `rlmcost ppo ... --placement async`: one Run, its placement report in placement_detail
    args = ["ppo", "-m", "gpt-2", "-B", "8", "-S", "32", "-T", "32", "--gpus", "4", "--placement",
            "async", "--staleness", "1", "--length-dist", "uniform:8,64"]  # fmt: skip
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)["placement_detail"]
    assert out["placement"] == "async" and out["gpus"] == 4
    assert out["length_distribution"] == "uniform:8,64"
    text = run(*args)
    assert text.exit_code == 0 and "async" in text.stdout


def test_the_caption_names_the_deployments_model_states():
    # the default NeMo RL preset stores fp32 weights and gradients (FSDP2 mixed precision); the
    # bare layout bf16 ones with Adam's fp32 master copy: the caption said bf16 for both
    default = " ".join(run("placements", "-m", "gpt-2", "--gpus", "2").stdout.split())
    bare = " ".join(run("placements", "-m", "gpt-2", "--gpus", "2", "--framework", "none")
                    .stdout.split())  # fmt: skip
    assert "Trainers: fp32 weights and gradients (bf16 compute copy per unit)" in default
    assert "Trainers: bf16 weights and gradients, fp32 Adam master weights" in bare
    assert "fp32 Adam states (12 B/param)" not in default


def test_the_side_by_side_table_gives_each_placements_cost():
    """README: every report gives USD per iteration; the placements table had it in --json
    only. Each row's $/iter is its --json cost (time x 4 GPUs x 2.0 USD per GPU-hour)."""
    args = ("placements", "-m", "gpt-2", "--gpus", "4", "-B", "8", "-S", "64", "-T", "64",
            "--price", "h100=2")  # fmt: skip
    r = runner.invoke(app, list(args), env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    assert "$/iter" in r.output
    out = json.loads(run(*args, "--json").stdout)
    for p in out["placements"]:
        usd = p["cost"]["per_iteration_usd"]
        assert usd == pytest.approx(p["iteration_time_s"] * 4 * 2.0 / 3600)
        line = next(ln for ln in r.output.splitlines() if ln.startswith(f"│ {p['placement']} "))
        assert f"{usd:,.4f}" in line, line
