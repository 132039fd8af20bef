"""Issue 18 item 4: every predicted time carries a low-high range; the training step's too.

The spread is the teacher-forced one of the RL iteration's forwards and updates
(rlmcost.perf.interval.TEACHER_FORCED: 0.85 = sustained / burst MAMF from Bekman's ML
Engineering benchmarks; 1.35 = the step-time model's largest |error| on published runs, rounded
up), its low end never below the roofline bound (no step beats the datasheet peak). The
validation's training rows carry it in their own metric and count their coverage."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.perf.interval import TEACHER_FORCED
from rlmcost.perf.train_step import train_step_time
from rlmcost.perf.validate import load_table, predict_row
from rlmcost.specs import get_hardware, get_model


@pytest.mark.parametrize(("model", "layout", "batch"), [
    ("llama-3.1-8b", Layout(dp=8, zero=ZeroStage.OS), 64),
    ("llama-3.1-70b", Layout(tp=8, pp=2, dp=4, zero=ZeroStage.OS), 32),
])  # fmt: skip
def test_the_step_interval_brackets_the_step_and_respects_the_bound(model, layout, batch):
    st = train_step_time(get_model(model).arch(), layout, batch, 4096, get_hardware("h100"))
    low, high = st.interval_s
    assert st.roofline_bound_s <= low <= st.step_s <= high
    assert high == pytest.approx(TEACHER_FORCED.high * st.step_s)
    assert low == pytest.approx(max(TEACHER_FORCED.low * st.step_s, st.roofline_bound_s))


def test_a_rate_rows_interval_is_the_rate_over_the_long_and_the_short_step():
    rows = {r["id"]: r for r in load_table()["rows"]}
    row = predict_row(rows["narayanan2021-145.6b"])  # TFLOP/s per GPU (Narayanan et al. Table 1)
    low, high = row.interval
    s_low, s_high = row.step.interval_s
    assert low == pytest.approx(row.predicted * row.step.step_s / s_high)
    assert high == pytest.approx(row.predicted * row.step.step_s / s_low)
    assert low < row.predicted < high
    assert row.inside_interval is (low <= row.published <= high)


def test_train_json_and_validate_summary_carry_the_interval_and_coverage():
    out = CliRunner().invoke(app, ["train", "-m", "8b", "--gpus", "8", "--json"])
    assert out.exit_code == 0, out.output
    step = json.loads(out.output)["step_time"]
    low, high = step["step_time_interval_s"]
    assert low <= step["step_time_s"] <= high
    res = CliRunner().invoke(app, ["validate", "--source", "narayanan2021", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert all("inside_interval" in r and len(r["predicted_interval"]) == 2 for r in data["rows"])
    share = sum(r["inside_interval"] for r in data["rows"]) / len(data["rows"])
    assert data["summary"]["all"]["coverage"] == pytest.approx(share)
