"""The vLLM release an engine runs (``--vllm-version``, rlmcost.deployment.vllm_release): what
it selects, its errors, and the pins the importers and the validation rows set from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.vllm_release import (
    check_vllm_version,
    modelled,
    nemo_rl_vllm,
    vllm_release,
)
from rlmcost.errors import SpecError

ARGS = ["grpo", "-m", "qwen2.5-1.5b", "--gpus", "8", "-H", "h100", "-B", "64", "-K", "8",
        "-T", "2048", "--framework", "nemo-rl", "--max-num-seqs", "1024"]  # fmt: skip


@pytest.mark.parametrize(("version", "triton"), [
    ("0.9.0", False), ("0.11.2", False), ("0.16.9", False), ("0.17.0", True), ("0.17.1", True),
    ("0.20.0", True), ("0.20.3", True),
])  # fmt: skip
def test_the_sampler_changes_at_vllm_0_17_0(version: str, triton: bool) -> None:
    # vLLM 0.17.0 added apply_top_k_top_p_triton (vllm/v1/sample/ops/topk_topp_triton.py);
    # 0.9.0-0.16.x sort in apply_top_k_top_p (topk_topp_sampler.py)
    assert vllm_release(check_vllm_version(version)).triton_sampler is triton


@pytest.mark.parametrize(("given", "shown"), [("0.11", "0.11.0"), ("v0.17.1", "0.17.1"),
                                              ("0.20.0", "0.20.0"), ("0.20.9", "0.20.9")])
def test_versions_are_normalised(given: str, shown: str) -> None:
    assert check_vllm_version(given) == shown


@pytest.mark.parametrize(("given", "words"), [
    ("0.8.5", ("0.9.0 to 0.20.x", "V0", "0.9.0 or later")),
    ("0.21.0", ("0.9.0 to 0.20.x", "CUDA graphs", "PR 30515")),
    ("1.0", ("0.9.0 to 0.20.x",)),
    ("latest", ("X.Y or X.Y.Z",)),
])  # fmt: skip
def test_versions_outside_the_modelled_range_are_refused(given: str, words: tuple) -> None:
    with pytest.raises(SpecError) as exc:
        check_vllm_version(given)
    for w in words:
        assert w in str(exc.value)


def test_framework_pins_without_a_version() -> None:
    # verl setup.py vllm<=0.12.0 (b178a3cd5) sorts; NeMo RL v0.7.0 vllm==0.20.0 does not
    assert vllm_release(None, "verl").text == "0.12.0"
    assert not vllm_release(None, "verl").triton_sampler
    assert vllm_release(None, "nemo-rl").text == "0.20.0"
    assert vllm_release(None, None).text == "0.20.0"


def test_nemo_rl_releases_pin_their_vllm() -> None:
    # NVIDIA-NeMo/RL pyproject.toml at the tags: v0.3.0 vllm==0.9.0, v0.4.0 0.10.0,
    # v0.5.0 0.11.2, v0.6.0 0.17.1, v0.7.0 0.20.0 (the wheel URL of its vllm extra)
    pins = {r: nemo_rl_vllm(r) for r in ("0.3", "v0.4.0", "0.5", "0.6", "0.7", "0.9")}
    assert pins == {"0.3": "0.9.0", "v0.4.0": "0.10.0", "0.5": "0.11.2", "0.6": "0.17.1",
                    "0.7": "0.20.0", "0.9": None}  # fmt: skip
    assert nemo_rl_vllm("0.2") == "0.8.4" and not modelled("0.8.4")  # v0.2.0: vllm==0.8.4


def _kv(*extra: str) -> int:
    res = CliRunner().invoke(app, [*ARGS, *extra, "--json"])
    assert res.exit_code == 0, res.output
    return int(json.loads(res.output)["stages"]["generation"]["memory_breakdown_bytes"]
               ["kv_cache"])  # fmt: skip


def test_the_flag_moves_the_pool_by_the_sampler_bytes() -> None:
    """1024 sampler rows of Qwen2.5's 151,936-token vocabulary: the sort of vLLM 0.16 holds
    38 B a logit, the Triton kernel of 0.17 14 B (tests/test_vllm_sampler_profile.py counts
    both tensor by tensor), so the pool of 0.16.0 is 24 x 1024 x 151,936 B smaller; the
    default (NeMo RL's pin, 0.20.0) is 0.17's."""
    sort, triton, default = _kv("--vllm-version", "0.16.0"), _kv("--vllm-version", "0.17"), _kv()
    assert triton - sort == (38 - 14) * 1024 * 151_936
    assert default == triton


@pytest.mark.parametrize(("extra", "words"), [
    (["--vllm-version", "0.11", "--engine", "sglang"], ("engine sglang", "drop --vllm-version")),
    (["--vllm-version", "0.11", "--engine", "megatron", "--zero", "1"], ("engine megatron",)),
    (["--vllm-version", "0.21"], ("0.9.0 to 0.20.x", "CUDA graphs")),
    (["--vllm-version", "0.8"], ("0.9.0 to 0.20.x",)),
    (["--vllm-version", "x"], ("X.Y or X.Y.Z",)),
])  # fmt: skip
def test_flag_errors_are_clear(extra: list[str], words: tuple) -> None:
    res = CliRunner().invoke(app, [*ARGS, *extra])
    assert res.exit_code != 0 and "Traceback" not in res.output
    for w in words:
        assert w in res.output


def test_group_bracket_takes_the_version() -> None:
    groups = "rollout=4[vllm-version=0.11.2],actor+reference=4"
    res = CliRunner().invoke(app, [*ARGS, "--groups", groups, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["deployment"]["groups"][0]["engine"] == {"vllm_version": "0.11.2"}


def test_verl_code_day_sets_its_setup_pin() -> None:
    """verl's setup.py (volcengine/verl): <=0.9.1 from d255783a0 (2025-07-28), <=0.11.0 from
    ab4c04b0c (2025-10-25), <=0.12.0 from 99a3ed060 (2025-12-29); <=0.8.5 before, outside the
    releases modelled: a note, no flag."""
    from rlmcost.frameworks.verl import import_verl

    cfg = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
    pins = {}
    for day in ("2025-08-13", "2025-11-01", "2026-01-05", "2025-06-06"):
        q = import_verl(cfg, [], day)
        pins[day] = dict(q.flags).get("--vllm-version")
    assert pins == {"2025-08-13": "0.9.1", "2025-11-01": "0.11.0", "2026-01-05": "0.12.0",
                    "2025-06-06": None}  # fmt: skip
    assert any("vLLM <= 0.8.5" in n for n in import_verl(cfg, [], "2025-06-06").notes)


def test_a_nemo_rl_v0_5_row_runs_the_sort() -> None:
    """The validation rows of NeMo RL v0.5 (source nemo_rl_v0.5) run its pinned vLLM 0.11.2,
    which sorts; those of v0.7 run 0.20.0 (Triton)."""
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.reports.rl_runs import recipes
    from rlmcost.reports.rl_runs_rows import build_run

    rows = [r for r in recipes("nemo-rl") if r.query is not None]
    by_source = {}
    for r in rows:
        by_source.setdefault(r.record["source"], set()).add(dict(r.query.flags)
                                                            .get("--vllm-version"))
    assert by_source == {"nemo_rl_v0.3_blog": {"0.9.0"}, "nemo_rl_v0.5": {"0.11.2"},
                         "nemo_rl_v0.6": {"0.17.1"}, "nemo_rl_v0.7": {"0.20.0"}}  # fmt: skip
    v05 = next(r for r in rows if r.record["source"] == "nemo_rl_v0.5")
    run = build_run(v05, run_from_argv)
    engine = run.deployment.engine
    assert engine.vllm_version == "0.11.2"
    assert not vllm_release(engine.vllm_version, run.deployment.framework).triton_sampler


def test_a_deployment_file_gives_the_version(tmp_path: Path) -> None:
    """``engine.vllm_version`` in a deployment file is the flag's field: the same pool as
    ``--vllm-version 0.11.2``; a release past the modelled range is refused there too."""
    dep = tmp_path / "dep.yaml"
    dep.write_text('engine:\n  vllm_version: "0.11.2"\n')
    assert _kv("--deployment", str(dep)) == _kv("--vllm-version", "0.11.2")
    dep.write_text('engine:\n  vllm_version: "0.22"\n')
    res = CliRunner().invoke(app, [*ARGS, "--deployment", str(dep)])
    assert res.exit_code != 0 and "0.9.0 to 0.20.x" in res.output
