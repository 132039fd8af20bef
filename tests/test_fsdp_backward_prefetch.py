"""FSDP1's backward_prefetch (rlmcost.perf.fsdp_prefetch): Composer's BACKWARD_POST on the
llm-foundry rows, priced as BACKWARD_PRE; ``none`` serial and exposed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.perf.fsdp_prefetch import PREFETCH_NOTES, BackwardPrefetch, zero3_backward_extra_s
from rlmcost.perf.overlap_contention import overlapped_extra_s
from rlmcost.perf.validate import load_table, predict_row

runner = CliRunner()
S = 0.189  # OVERLAP_COMPUTE_SLOWDOWN, Lee et al. 2025


def _foundry_rows() -> list[dict]:
    return [r for r in load_table()["rows"] if r["source"].startswith("llm_foundry")]


def _with(row: dict, prefetch: str) -> dict:
    return {**row, "options": {**row["options"], "fsdp_backward_prefetch": prefetch}}


def test_llm_foundry_rows_run_composers_backward_post():
    # Composer v0.16.4 composer/trainer/dist_strategy.py:135 set_fsdp_default:
    # fsdp_config.setdefault('backward_prefetch', 'BACKWARD_POST'); llm-foundry @061f2c7ce's
    # yamls / sweep.sh / submit_benchmarks.py leave it unset
    rows = _foundry_rows()
    assert len(rows) == 20
    assert all(r["options"]["fsdp_backward_prefetch"] == "post" for r in rows)
    sources = load_table()["sources"]
    for s in ("llm_foundry_h100", "llm_foundry_a100"):
        text = " ".join(sources[s]["assumptions"])
        assert "BACKWARD_POST" in text and "dist_strategy.py" in text and "line 135" in text


def test_post_prices_as_pre_and_none_exposes_both_collectives():
    # torch 2.0 _runtime_utils.py: under BACKWARD_POST the next all-gather is issued from the
    # unshard stream (no wait on the compute stream) before the current reduce-scatter, so on
    # the GPU it runs beside the current layer's backward as under BACKWARD_PRE
    row = next(r for r in _foundry_rows() if r["id"] == "llm-foundry-h100-mpt-13b-s2048-8gpu")
    post, pre, none = (predict_row(_with(row, p)) for p in ("post", "pre", "none"))
    assert post.step.step_s == pre.step.step_s
    # none: every layer's all-gather waits behind the previous reduce-scatter (issue 64803)
    assert none.step.step_s > pre.step.step_s
    assert none.step.exposed_comm_s["dp"] > pre.step.exposed_comm_s["dp"]
    assert post.step.compute_s == none.step.compute_s  # only the exposed communication moves
    assert PREFETCH_NOTES[BackwardPrefetch.POST] in post.step.notes
    assert not any("backward_prefetch" in n for n in pre.step.notes)


def test_backward_extra_seconds():
    # serial: a + r, no compute beside them, so no contention term
    assert zero3_backward_extra_s(2.0, 3.0, 10.0, BackwardPrefetch.NONE, S) == 5.0
    for p in (BackwardPrefetch.PRE, BackwardPrefetch.POST):
        hidden = zero3_backward_extra_s(2.0, 3.0, 10.0, p, S)
        assert hidden == overlapped_extra_s(5.0, 10.0, S) == pytest.approx(5.0 * S / (1 + S))
        # collectives longer than the compute: the excess is exposed
        assert zero3_backward_extra_s(8.0, 7.0, 10.0, p, S) == 5.0


def test_none_is_fsdp1_only():
    row = next(r for r in load_table()["rows"] if r["options"].get("fsdp2_reduce_bytes"))
    with pytest.raises(SpecError, match="FSDP2"):
        predict_row(_with(row, "none"))
    assert predict_row(_with(row, "post")).step.step_s == predict_row(row).step.step_s


def test_cli_flag_and_its_errors():
    base = ["train", "-m", "llama-3.1-8b", "--gpus", "8", "--zero", "3", "--json"]
    out = {}
    for p in ("pre", "post", "none"):
        result = runner.invoke(app, [*base, "--fsdp-backward-prefetch", p])
        assert result.exit_code == 0, result.output
        out[p] = json.loads(result.stdout)
    assert out["post"]["step_time_s"] == out["pre"]["step_time_s"] < out["none"]["step_time_s"]
    assert PREFETCH_NOTES[BackwardPrefetch.NONE] in out["none"]["notes"]
    bad = runner.invoke(app, [*base, "--fsdp-backward-prefetch", "early"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert bad.output.strip().startswith("error: --fsdp-backward-prefetch")
    assert len(bad.output.strip().splitlines()) == 1


def test_default_options_keep_pre():
    from rlmcost.perf.step_pass import StepOptions

    assert StepOptions().fsdp_backward_prefetch is BackwardPrefetch.PRE
    assert replace(StepOptions(), fsdp_backward_prefetch=BackwardPrefetch.POST) != StepOptions()


def test_help_and_readme_name_the_sources():
    from pathlib import Path

    import typer.main

    cmd = typer.main.get_command(app).get_command(None, "train")  # type: ignore[attr-defined]
    text = next(p.help or "" for p in cmd.params if "--fsdp-backward-prefetch" in p.opts)
    for word in ("BACKWARD_POST", "Composer", "dist_strategy.py", "_runtime_utils.py", "none"):
        assert word in text
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start = readme.index("| term (phase) | model | source |")
    table = readme[start:readme.index("\n\n", start)]
    assert "FSDP1 backward prefetch" in table and "issue 64803" in table
