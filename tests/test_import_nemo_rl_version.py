"""`rlmcost import nemo-rl --nemo-rl-version X.Y`: the NeMo RL release a config runs on sets
the vLLM its engine runs (rlmcost.frameworks.nemo_rl_vllm ``nemo_rl_release``, ``release_vllm``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.nemo_rl_vllm import nemo_rl_release

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "tests/data/frameworks/nemo_rl_grpo_math.yaml")
runner = CliRunner()


def _vllm(q) -> str | None:
    return dict(q.flags).get("--vllm-version")


@pytest.mark.parametrize(("release", "pin"), [
    ("0.5", "0.11.2"), ("v0.5.0", "0.11.2"), ("0.3.1", "0.9.0"), ("0.6", "0.17.1"),
    ("0.7", "0.20.0"),
])  # fmt: skip
def test_the_release_sets_its_pinned_vllm(release: str, pin: str) -> None:
    # NVIDIA-NeMo/RL pyproject.toml at the tags (git show v0.5.0:pyproject.toml: vllm==0.11.2;
    # v0.3.0/v0.3.1 0.9.0, v0.6.0 0.17.1, v0.7.0 0.20.0)
    q = import_nemo_rl(CONFIG, [], None, release)
    assert _vllm(q) == pin
    row = next(c for c in q.conversions if c.flag == "--vllm-version")
    assert f"vllm=={pin}" in row.given and row.value == pin


def test_without_the_flag_nothing_changes() -> None:
    plain, latest = import_nemo_rl(CONFIG), import_nemo_rl(CONFIG, [], None, "0.7")
    assert _vllm(plain) is None
    assert not any(c.flag == "--vllm-version" for c in plain.conversions)
    # the rest of the query is the same with or without the release
    assert [f for f in latest.flags if f[0] != "--vllm-version"] == plain.flags


def test_a_release_before_the_modelled_vllm_is_a_note() -> None:
    # v0.2.0 pins vllm==0.8.4, before rlmcost's 0.9.0 (deployment.vllm_release.MODELLED)
    q = import_nemo_rl(CONFIG, [], None, "0.2")
    assert _vllm(q) is None
    assert any("pins vLLM 0.8.4" in n for n in q.notes)


@pytest.mark.parametrize(("given", "words"), [
    ("0.9", ("'0.9' is not a release rlmcost knows", "0.5 (vLLM 0.11.2)", "0.7 (vLLM 0.20.0)")),
    ("abc", ("is not X.Y or X.Y.Z", "0.1 (vLLM 0.8.0)")),
])  # fmt: skip
def test_an_unknown_release_is_refused_listing_the_known(given: str, words: tuple) -> None:
    with pytest.raises(SpecError) as exc:
        nemo_rl_release(given)
    for w in words:
        assert w in str(exc.value)
    res = runner.invoke(app, ["import", "nemo-rl", CONFIG, "--nemo-rl-version", given])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert words[0] in res.output


def test_the_megatron_engine_takes_no_vllm() -> None:
    # `rlmcost grpo --engine megatron --vllm-version` is an error (tests/test_vllm_release.py)
    q = import_nemo_rl(CONFIG, ["policy.megatron_cfg.enabled=true",
                                "policy.dtensor_cfg.enabled=false",
                                "policy.generation.backend=megatron"], None, "0.5")  # fmt: skip
    assert dict(q.flags)["--engine"] == "megatron" and _vllm(q) is None
    assert any("Megatron-core engine generates" in n for n in q.notes)


def _import_json(*extra: str) -> dict:
    res = runner.invoke(app, ["import", "nemo-rl", CONFIG, *extra, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _kv(out: dict) -> int:
    return int(out["estimate"]["stages"]["generation"]["memory_breakdown_bytes"]["kv_cache"])


def test_the_cli_runs_the_pinned_vllm() -> None:
    """v0.5's vLLM 0.11.2 sorts the vocabulary in its start-up profile (38 B a logit), v0.7's
    0.20.0 masks in place (14 B; tests/test_vllm_sampler_profile.py counts both): the pool of
    v0.5 is 24 B x 1024 sampler rows (the nemo-rl preset's max_num_seqs on H100) x Qwen2.5-7B's
    vocabulary of 152,064 (its config.json vocab_size) smaller than the default's."""
    v05, default = _import_json("--nemo-rl-version", "0.5"), _import_json()
    assert "--vllm-version 0.11.2" in v05["query"]["command"]
    assert v05["deployment"]["engine"]["vllm_version"] == "0.11.2"
    assert _kv(default) - _kv(v05) == (38 - 14) * 1024 * 152_064


def test_the_help_says_what_the_flag_sets() -> None:
    import typer.main

    group = typer.main.get_command(app)
    sub = group.get_command(None, "import").get_command(None, "nemo-rl")  # type: ignore[attr-defined]
    text = next(p.help or "" for p in sub.params if "--nemo-rl-version" in p.opts)
    for word in ("--vllm-version", "pyproject.toml", "v0.5 0.11.2", "error"):
        assert word in text
