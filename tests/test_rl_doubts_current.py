"""The doubts (issue 18) of the under-predicted rows of `rlmcost validate --rl` whose sources do
not add up: AReaL's synchronous 1.5B and 7B rows (blog/AReaL_v0_3.md Table 2, arXiv 2505.24298
Table 1 and Figures 5c and 6b, assets/paper.pdf at inclusionAI/AReaL 4aef98d8) and miles's
Qwen3.8-27B step (radixark/miles docs/models/qwen/qwen3-8.md at bb6f7dbd, sections 4.2 and 5.3).

`validate --rl --json` gives each doubt beside its prediction: the figures a doubt quotes are the
ones rlmcost gives (a change that moves them fails here, and the doubt is revised), and its
arithmetic from the sources' numbers holds."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

import pytest

from rlmcost.reports.rl_runs import load_runs, published_step_s
from rlmcost.reports.rl_runs_areal_checks import (
    FIG5C_TOKENS_PER_S,
    FIG6B_GEN_TOKENS_PER_S,
    FIG6B_NODES,
)
from rlmcost.reports.rl_runs_frameworks import recipe

RUNS = {r["id"]: r for r in load_runs()["runs"]}
SYNC_1P5B = "areal-v0.3-blog-r1-distill-qwen-1.5b-sync-128gpu"
SYNC_7B = "areal-v0.3-blog-r1-distill-qwen-7b-sync-192gpu"
ASYNC_7B = "areal-v0.3-blog-r1-distill-qwen-7b-async-192gpu"
MILES = "miles-docs-qwen3.8-27b-grpo-colocate-8gpu"


def _evaluate(record: Mapping[str, Any]) -> tuple[float, float, dict[str, float]]:
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.reports.rl_runs_rows import evaluate_recipe

    row = evaluate_recipe(recipe(record), run_from_argv)
    assert row.predicted_s is not None and row.error is not None
    return row.predicted_s, row.error, dict(row.predicted_phases_s)


def _doubt(run_id: str) -> str:
    doubts = [a for a in RUNS[run_id]["assumptions"] if a.startswith("doubt (issue 18)")]
    assert len(doubts) == 1, run_id
    return doubts[0]


def _num(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found is not None, pattern
    return float(found[1].replace(",", ""))


@pytest.mark.parametrize("run_id", [SYNC_1P5B, SYNC_7B])
def test_synchronous_areal_doubt_quotes_the_prediction(run_id):
    step, error, phases = _evaluate(RUNS[run_id])
    doubt = _doubt(run_id)
    assert _num(r"rlmcost predicts ([\d.]+) s", doubt) == round(step, 1)
    assert _num(r"s \(([+-][\d.]+) %\): generation", doubt) == round(100 * error, 1)
    gen, update, sync = (phases[k] for k in ("generation", "update actor", "weight sync"))
    assert _num(r"generation ([\d.]+) s", doubt) == round(gen, 1)
    assert _num(r"update ([\d.]+) s", doubt) == round(update, 1)
    assert _num(r"weight sync ([\d.]+) s", doubt) == round(sync, 1)
    # the capped answer's decode steps: the generation over max_response_len steps, and the
    # step that the published time left to generation would need
    cap = int(RUNS[run_id]["max_response_len"])
    assert _num(r"([\d.]+) ms a decode step over", doubt) == round(1e3 * gen / cap, 1)
    left = published_step_s(RUNS[run_id]) - round(update, 1) - round(sync, 1)
    assert _num(r"= ([\d.]+) s left would be", doubt) == round(left, 1)
    assert _num(r"s left would be ([\d.]+) ms a decode step", doubt) == round(1e3 * left / cap, 1)


def test_1p5b_doubt_bounds_come_from_the_papers_figures():
    # Fig. 5c: 128.7k tokens/s at eta = 0 over the published step is the step's tokens; at
    # unbounded staleness 396.8k tokens/s, the slower side's steady rate (the trainer's bound)
    rec = RUNS[SYNC_1P5B]
    step = published_step_s(rec)
    doubt = _doubt(SYNC_1P5B)
    trainer = FIG5C_TOKENS_PER_S[0] * step / FIG5C_TOKENS_PER_S[-1]
    assert f"= {trainer:.1f} s" in doubt
    # Fig. 6b: 207k tokens/s on 4 nodes without interruptible generation, on 12 SGLang nodes
    gen = 8192 * int(rec["mean_response_len"]) / (FIG6B_GEN_TOKENS_PER_S["1.5B"] * 12 / FIG6B_NODES)
    assert f"in {gen:.0f} s" in doubt
    sum_s = round(gen) + round(trainer, 1) + 12.5
    gap = step - sum_s
    assert f"= {sum_s:.0f} s, {gap:.0f} s ({100 * gap / step:.0f} %)" in doubt
    # the synchronous/asynchronous ratio leaves generation at least sync - async - weight sync
    asyn = published_step_s(RUNS[SYNC_1P5B.replace("-sync-", "-async-")])
    assert f"{step:.1f} - {asyn:.1f} - 12.5 = {step - asyn - 12.5:.1f} s" in doubt
    assert f"{(step - asyn - 12.5) / gen:.1f}x Fig. 6b's" in doubt


def test_7b_doubt_gives_the_pair_at_the_1p5b_runs_length():
    # the 7B mean response is not published; at the 1.5B runs' 8,252 tokens both rows of the
    # pair move and the synchronous/asynchronous ratio stays far below the published 2.27
    doubt = _doubt(SYNC_7B)
    rows = {}
    for run_id in (SYNC_7B, ASYNC_7B):
        rec = copy.deepcopy(RUNS[run_id])
        rec["mean_response_len"] = RUNS[SYNC_1P5B]["mean_response_len"]
        rows[run_id] = _evaluate(rec)
    (sync_s, sync_err, _), (async_s, async_err, _) = rows[SYNC_7B], rows[ASYNC_7B]
    assert f"rlmcost predicts {sync_s:.1f} s here ({100 * sync_err:+.1f} %)" in doubt
    assert f"{async_s:.1f} s for the asynchronous row ({100 * async_err:+.1f} %" in doubt
    _, async_now, _ = _evaluate(RUNS[ASYNC_7B])
    assert f"now {100 * async_now:+.1f} %" in doubt
    assert f"a ratio of {sync_s / async_s:.2f}" in doubt
    assert sync_s / async_s < published_step_s(RUNS[SYNC_7B]) / published_step_s(RUNS[ASYNC_7B])


def test_miles_doubt_splits_the_gap_by_phase():
    rec = RUNS[MILES]
    step, error, phases = _evaluate(rec)
    doubt = _doubt(MILES)
    assert f"rlmcost predicts {step:.1f} s ({100 * error:+.1f} %)" in doubt
    pub = rec["published_phases"]
    pairs = {"generation_s": "generation", "ref_logprob_s": "reference",
             "old_logprob_s": "old log-prob", "training_s": "update actor",
             "refit_s": "weight sync"}  # fmt: skip
    for key, phase in pairs.items():
        assert f"{pub[key]:g} against {phases[phase]:.1f} s" in doubt
    unpublished = sum(v for k, v in phases.items() if k not in pairs.values())
    extra = ("engine sleep/wake", "offload", "controller")
    assert set(phases) - set(pairs.values()) == set(extra)
    assert f"({' + '.join(f'{phases[k]:.1f}' for k in extra)} s)" in doubt
    # the phases' gaps add up to the step's
    gaps = sum(pub[k] - phases[p] for k, p in pairs.items()) - unpublished
    assert gaps == pytest.approx(published_step_s(rec) - step)
    assert f"{published_step_s(rec):g} - {step:.1f}" in doubt
    # section 5.3: 1,855 tokens/s an engine at 39 running requests, over the cap's 8,192 steps
    ms = 1e3 * 39 / 1855
    assert f"({ms:.1f} ms a decode step)" in doubt
    assert f"8,192 x {ms:.1f} ms = {8192 * ms / 1e3:.0f} s" in doubt
    assert f"{1e3 * pub['generation_s'] / 8192:.1f} ms a step" in doubt


def test_1p5b_doubt_gives_the_colocated_reading():
    # arXiv 2505.24298 §6.1 gives the 3/4 inference split "for AReaL", §6.2 a "synchronous
    # variant of AReaL" without one: the same run colocated on all its GPUs is further off
    from typer.testing import CliRunner

    from rlmcost.cli import app

    rcp = recipe(RUNS[SYNC_1P5B])
    assert rcp.query is not None
    argv = rcp.query.argv()
    at = argv.index("--groups")
    argv = [rcp.query.algorithm, *argv[:at], "--placement", "hybrid", *argv[at + 2 :], "--json"]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    colocated = json.loads(res.stdout)["iteration"]["time_s"]
    assert f"is predicted at {colocated:.1f} s, further off" in _doubt(SYNC_1P5B)
    assert colocated < _evaluate(RUNS[SYNC_1P5B])[0]
