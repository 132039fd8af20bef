"""`rlmcost train`'s two compute floors say which attention they count: "work per rank" and
"compute time at bf16 peak" count attention full (S x S, the work table's caption), the
step's "roofline bound" the causal half with recomputation (``StepTime.roofline_bound_s``,
rlmcost.perf.train_step), so the bound can sit below the compute time at peak. The bound's
label had said only "(peak, no comm)": Llama-3.1-70B on 64 H100 (TP 8, PP 2) printed a
942.91 ms compute time at peak above a 909.58 ms bound with nothing to tell them apart."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.cli import app

ARGS = ["train", "-m", "70b", "--gpus", "64", "--tp", "8", "--pp", "2", "--zero", "1"]


def test_the_bound_label_names_causal_attention() -> None:
    res = CliRunner().invoke(app, ARGS)
    assert res.exit_code == 0, res.output
    assert "roofline bound (peak, causal attention, no comm)" in res.output
    out = json.loads(CliRunner().invoke(app, [*ARGS, "--json"]).output)
    # the figures the labels separate: full attention at peak above the causal bound
    assert out["step_time"]["roofline_bound_s"] < out["compute_time_at_peak_s"]
