"""verl's rollout running cap by the verl code a config runs on (rlmcost.frameworks.verl_versions).

Sources (volcengine/verl history): PR 2960 (beb624610, 2025-08-08) passes
``max_num_seqs=config.max_num_seqs`` to vllm.LLM (vllm_rollout_spmd.py) and the async server's
AsyncEngineArgs (vllm_async_server.py); PR 3134 (de0b31cee, 2025-08-20) passes it to SGLang's
Engine as ``max_running_requests`` (sglang_rollout.py); PR 4280 (e9405d70b, 2026-01-23) changes
rollout.yaml's ``max_num_seqs`` from 1024 to 256. ``git tag --contains``: v0.6.0 is the first
release with the first two; no stored release (to v0.7.0) has the third.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from verl_rows import CONFIG, R

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.verl import import_verl
from rlmcost.frameworks.verl_versions import parse_verl_version

runner = CliRunner()


def _cap(tmp_path: Path, version: str | None, **keys: object) -> object:
    """The ``--max-num-seqs`` the import sets (None: the preset's 256)."""
    f = tmp_path / "run.yaml"
    f.write_text(json.dumps({**CONFIG, **{f"{R}.{k}": v for k, v in keys.items()}}))
    return dict(import_verl(f, [], version).flags).get("--max-num-seqs")


@pytest.mark.parametrize(("text", "day"), [
    (None, None), ("current", None), ("0.5.0", "2025-07-23"), ("v0.6.1", "2025-10-15"),
    ("0.3.0.post1", "2025-03-26"), ("v0.7.0", "2026-01-05"), ("2025-08-01", "2025-08-01"),
])  # fmt: skip
def test_versions_read_as_the_day_of_the_code(text: str | None, day: str | None) -> None:
    # release lines by their first tag's day (UTC): v0.3.0.rc0 2025-03-26, v0.6.0 2025-10-15
    assert parse_verl_version(text) == day


@pytest.mark.parametrize("text", ["abc", "0.0.5", "v1", "2025-13-01"])
def test_a_bad_version_is_one_clear_error(text: str) -> None:
    with pytest.raises(SpecError, match="verl"):
        parse_verl_version(text)


def test_current_verl_runs_the_presets_256_on_either_engine(tmp_path: Path) -> None:
    # rollout.yaml @b178a3cd5 max_num_seqs 256, sent to vLLM and to SGLang alike
    assert _cap(tmp_path, None) is None
    assert _cap(tmp_path, None, name="sglang") is None
    assert _cap(tmp_path, None, max_num_seqs=512) == 512


def test_verl_060_to_070_sends_1024_to_either_engine(tmp_path: Path) -> None:
    assert _cap(tmp_path, "0.6.0") == 1024
    assert _cap(tmp_path, "v0.7.0", name="sglang") == 1024
    assert _cap(tmp_path, "2025-10-01", max_num_seqs=64) == 64


def test_verl_before_pr_2960_builds_vllm_without_the_key(tmp_path: Path) -> None:
    # sync mode: vllm.LLM, vLLM's LLM_CLASS 1024 (large GPUs), whatever the config says;
    # async mode: AsyncEngineArgs without a usage context, SchedulerConfig's 128
    assert _cap(tmp_path, "0.5.0", max_num_seqs=64) == 1024
    assert _cap(tmp_path, "2025-08-01", mode="async") == 128
    assert _cap(tmp_path, "2025-08-09", mode="async") == 1024  # PR 2960 merged the day before
    assert _cap(tmp_path, "2025-08-09", mode="async", max_num_seqs=64) == 64


def test_verl_before_pr_3134_runs_sglangs_own_cap(tmp_path: Path) -> None:
    # SGLang's Engine without max_running_requests: --max-num-seqs 0, the engine's own
    assert _cap(tmp_path, "2025-08-19", name="sglang") == 0
    assert _cap(tmp_path, "2025-08-20", name="sglang") == 1024


def _engine(*args: str) -> dict:
    out = runner.invoke(app, ["grpo", "--model", "gpt-2", "--gpus", "8", "--hardware",
                              "h100-sxm", "--batch", "64", "--group", "32", "--prompt-len",
                              "256", "--response-len", "768", "--json", *args])  # fmt: skip
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["deployment"]["engine"]


def test_zero_gives_the_engine_its_own_default_over_the_preset() -> None:
    assert _engine("--framework", "verl", "--engine", "sglang")["max_num_seqs"] == 256
    assert _engine("--framework", "verl", "--engine", "sglang",
                   "--max-num-seqs", "0")["max_num_seqs"] is None  # fmt: skip


def test_the_command_of_a_run_states_the_engines_own_default() -> None:
    from rlmcost.run.command import to_command
    from rlmcost.run.spec import Run

    run = Run.model_validate({"deployment": {"framework": "verl", "engine": {
        "kind": "sglang", "max_num_seqs": None}}})  # fmt: skip
    assert "--max-num-seqs 0" in to_command(run)
    run = Run.model_validate({"deployment": {"framework": None, "engine": {
        "kind": "sglang", "max_num_seqs": None}}})  # fmt: skip
    assert "--max-num-seqs" not in to_command(run)


def test_import_cli_reads_the_version_and_rejects_a_bad_one(tmp_path: Path) -> None:
    f = tmp_path / "run.yaml"
    f.write_text(json.dumps({**CONFIG, f"{R}.name": "sglang"}))
    for version, cap in (("0.5.0", None), ("0.6.0", 1024), ("current", 256)):
        out = runner.invoke(app, ["import", "verl", str(f), "--verl-version", version, "--json"])
        assert out.exit_code == 0, out.output
        engine = json.loads(out.stdout)["deployment"]["engine"]
        # rollout.name sglang: SGLang's engine, with its own cap before PR 3134
        assert (engine["kind"], engine["max_num_seqs"]) == ("sglang", cap), version
    bad = runner.invoke(app, ["import", "verl", str(f), "--verl-version", "x1"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
