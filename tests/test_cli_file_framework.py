"""A ``--deployment`` file that names its framework gives the query that framework's preset and
implied algorithm options when no ``--framework`` flag is given, as the API's Run reads the
same file (rlmcost.cli._deploy_build.query_framework). Before, the CLI applied rlmcost's default
framework's preset and options under the file's fields: a verl file kept a KL reference model
that verl's GRPO preset drops (rlmcost.frameworks.preset_data.verl: ``kl`` False for GRPO)."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from rlmcost.cli import app

QUERY = ("grpo", "-m", "llama-3.2-1b", "--reward", "rule", "-B", "16", "-K", "4", "-S", "512",
         "-T", "1024", "--gpus", "8", "--json")  # fmt: skip


def _out(tmp_path, dep: dict[str, Any], *flags: str) -> dict[str, Any]:
    path = tmp_path / "dep.json"
    path.write_text(json.dumps(dep))
    r = CliRunner().invoke(app, [*QUERY, "--deployment", str(path), *flags])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _phases(out: dict[str, Any]) -> list[str]:
    return [p["name"] for p in out["phases"]]


def test_a_files_framework_is_the_querys_without_the_flag(tmp_path) -> None:
    flagged = _out(tmp_path, {"framework": "verl"}, "--framework", "verl")
    from_file = _out(tmp_path, {"framework": "verl"})
    assert from_file["iteration"] == flagged["iteration"]
    assert from_file["phases"] == flagged["phases"]
    assert from_file["deployment"] == flagged["deployment"]
    assert "reference" not in _phases(from_file)  # verl's GRPO: no KL reference


def test_the_flag_wins_over_the_files_framework(tmp_path) -> None:
    over = _out(tmp_path, {"framework": "verl"}, "--framework", "nemo-rl")
    assert "reference" in _phases(over)  # NeMo RL's GRPO keeps its KL reference
    assert over["iteration"] != _out(tmp_path, {"framework": "verl"})["iteration"]


def test_a_file_without_a_framework_follows_the_default(tmp_path) -> None:
    # rlmcost's named default deployment (NeMo RL: rlmcost.frameworks.preset_model)
    assert _out(tmp_path, {})["phases"] == _out(tmp_path, {}, "--framework", "nemo-rl")["phases"]


def test_a_files_null_framework_is_the_bare_layout(tmp_path) -> None:
    bare = _out(tmp_path, {"framework": None})
    assert bare["phases"] == _out(tmp_path, {}, "--framework", "none")["phases"]


def test_the_flags_framework_names_the_deployment_and_the_command_round_trips(tmp_path) -> None:
    # review3: the flag's preset and implied options went under the file's framework name, so
    # the Run said verl (its command `--framework verl`) while it priced NeMo RL's options
    import shlex

    from rlmcost.run import Run

    for flag, name in (("nemo-rl", "nemo-rl"), ("none", None)):
        out = _out(tmp_path, {"framework": "verl"}, "--framework", flag)
        assert out["deployment"]["framework"] == name
        line = Run.from_data(out["run"]).to_command()
        again = CliRunner().invoke(app, [*shlex.split(line)[1:], "--json"])
        assert again.exit_code == 0, again.output
        assert json.loads(again.stdout) == out, line


def test_a_files_framework_in_other_case_is_the_frameworks_name(tmp_path) -> None:
    # review3: `framework: VERL` took verl's preset but kept 'VERL' as the deployment's name,
    # which the framework checks (e.g. deployment.terms' nemo-rl refit) do not match: its
    # memory differed from `framework: verl`'s
    from rlmcost.run import Run

    upper, lower = _out(tmp_path, {"framework": "VERL"}), _out(tmp_path, {"framework": "verl"})
    assert upper == lower
    run = Run.from_data({"models": {"actor": "llama-3.2-1b"}, "deployment": {"framework": "VERL"}})
    assert run.deployment.framework == "verl"


def test_the_help_says_a_files_framework_is_the_default() -> None:
    # review3: --framework's help said "Default: nemo-rl" with a --deployment file naming verl
    out = " ".join(CliRunner().invoke(app, ["grpo", "--help"], terminal_width=80).output.split())
    assert "Default: a --deployment file's framework, else nemo-rl" in out.replace("│ ", "")
