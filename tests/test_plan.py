"""`rlmcost plan train`: the training-layout search, its validity and its reproducibility."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.compiled import arch_numbers
from rlmcost.errors import SpecError
from rlmcost.parallel.validate import check_layout
from rlmcost.plan.kinds import Objective, parse_gpus, parse_objective
from rlmcost.plan.search import pareto, rank
from rlmcost.plan.space import TrainSpace, train_candidates
from rlmcost.plan.train import plan_train
from rlmcost.reports.train import _check_batch
from rlmcost.specs import get_model

runner = CliRunner()


def _cli(args: str) -> dict:
    res = runner.invoke(app, [*args.split()[1:], "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_parse_gpus_range_doubles_and_keeps_the_top() -> None:
    # by hand: 8..64 doubles from 8; 8..48 stops at 32 then adds 48
    assert parse_gpus("8..64") == (8, 16, 32, 64)
    assert parse_gpus("8..48") == (8, 16, 32, 48)
    assert parse_gpus("16,8") == (8, 16)
    with pytest.raises(SpecError, match="range"):
        parse_gpus("64..8")
    with pytest.raises(SpecError, match="one of: time"):
        parse_objective("fast")


def test_rank_and_pareto_by_hand() -> None:
    rows = [
        {"gpus": 8, "time_s": 10.0, "gpu_hours": 80 / 3600, "tokens_per_s_per_gpu": 5.0},
        {"gpus": 16, "time_s": 6.0, "gpu_hours": 96 / 3600, "tokens_per_s_per_gpu": 4.0},
        {"gpus": 32, "time_s": 7.0, "gpu_hours": 224 / 3600, "tokens_per_s_per_gpu": 1.0},
        {"gpus": 16, "time_s": 9.0, "gpu_hours": 144 / 3600, "tokens_per_s_per_gpu": 2.0},
    ]
    # by hand: fastest is 16 GPUs/6 s; fewest GPUs 8; least GPU-hours 8 (80 GPU-s)
    assert rank(rows, Objective.TIME)[0]["time_s"] == 6.0
    assert rank(rows, Objective.GPUS)[0]["gpus"] == 8
    assert rank(rows, Objective.GPU_HOURS)[0]["gpus"] == 8
    assert rank(rows, Objective.THROUGHPUT)[0]["tokens_per_s_per_gpu"] == 5.0
    # by hand: 32 GPUs at 7 s is beaten by 16 GPUs at 6 s, so the front is (8, 10), (16, 6)
    assert [(r["gpus"], r["time_s"]) for r in pareto(rows)] == [(8, 10.0), (16, 6.0)]


@settings(max_examples=25, deadline=None)
@given(
    model=st.sampled_from(["llama-3.2-1b", "llama-3.1-8b", "gpt-3-175b", "qwen2.5-32b"]),
    gpus=st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 32]), min_size=1, max_size=3),
    tp=st.lists(st.integers(1, 8), min_size=1, max_size=3, unique=True),
    pp=st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True),
    mb=st.lists(st.integers(1, 8), min_size=1, max_size=2, unique=True),
    v=st.lists(st.integers(1, 6), min_size=1, max_size=2, unique=True),
    batch=st.integers(1, 96),
    seq=st.sampled_from([1000, 1024, 2048, 4095]),
)
def test_train_space_never_yields_an_invalid_layout(model, gpus, tp, pp, mb, v, batch, seq):
    spec = get_model(model)
    space = TrainSpace(gpus=tuple(gpus), tp=tuple(tp), pp=tuple(pp), micro_batch=tuple(mb),
                       virtual_stages=tuple(v))  # fmt: skip
    c = train_candidates(arch_numbers(spec), space, batch, seq, gpus_per_node=8)
    for i in range(c.size):
        layout = c.layout(i)
        # independent: the project's layout rules and `rlmcost train`'s batch rules raise
        # SpecError for an invalid candidate
        check_layout(spec.arch(), layout, int(c.gpus[i]))
        _check_batch(layout, batch, seq)


def test_train_plan_rows_reproduce_as_single_queries() -> None:
    r = plan_train("llama-3.1-8b", "4..8", seq=4096, batch=64, top=3)
    assert r.rows and all(row["fits"] for row in r.rows)
    assert r.counts.valid > r.counts.evaluated >= len(r.rows)
    for row in r.rows:
        single = _cli(row["command"])
        # independent: `rlmcost train` on the row's command line (parallel.memory, perf)
        assert single["memory_per_rank_bytes"]["total"] == row["memory_bytes_per_device"]
        assert single["step_time_s"] == row["time_s"]
        assert single["fits"] is True
    # the front is on (GPUs, time) and starts at the fewest GPUs that fit
    assert r.front[0]["gpus"] == min(x["gpus"] for x in r.front)


def test_train_plan_sweep_memory_agrees_with_the_exact_report() -> None:
    """The compiled sweep (the prune) and train_report (the rows) agree on memory."""
    import numpy as np

    from rlmcost.plan.train import report_row, sweep_chunk
    from rlmcost.specs import get_hardware

    spec, hw = get_model("gpt-3-175b"), get_hardware("h100-sxm")
    a = arch_numbers(spec)
    c = train_candidates(a, TrainSpace(gpus=(64,)), 128, 2048, 8)
    pick = np.random.default_rng(0).choice(c.size, 12, replace=False)
    s = sweep_chunk((a, hw, 128, 2048, c.take(pick)))
    q = {"model": spec.name, "hardware": hw.name, "batch": 128, "seq": 2048}
    for k, i in enumerate(pick):
        row = report_row((q, c.layout(int(i)), 64, 0.0))
        # independent: parallel.memory (sympy-free twin checked by test_compiled_sweep)
        assert abs(s["memory"][k] - row["memory_bytes_per_device"]) <= 1
        assert bool(s["fits"][k]) == row["fits"]


def test_train_plan_objectives_and_nothing_fits() -> None:
    r = plan_train("llama-3.1-8b", "1..8", seq=4096, batch=64, objective="gpus", top=2)
    assert r.rows[0]["gpus"] == min(row["gpus"] for row in r.front)
    # 405B on one 80 GB GPU: nothing fits; each family says which term binds
    none = plan_train("llama-3.1-405b", 1, seq=4096, batch=8)
    assert none.rows == [] and none.failures
    assert none.failures[0]["binding_term"] in ("weights", "optimizer", "gradients")


def test_plan_cli_errors_are_one_line() -> None:
    for args, needle in (
        ("plan grpo --model 8b --objective fast", "unknown objective"),
        ("plan train --model gpt-3-175b --gpus 4 --tp 8", "no valid layout"),
        ("plan grpo --model 8b --gpus 1 --placements split", "raise --gpus"),
        ("plan grpo --model 8b --gpus 8..4", "range"),
        ("plan grpo --model nosuchmodel --gpus 8", "nosuchmodel"),
    ):
        res = runner.invoke(app, args.split())
        assert res.exit_code == 2, (args, res.output)
        assert needle in res.output and "Traceback" not in res.output
        assert len(res.output.strip().splitlines()) == 1


def test_plan_cli_train_json_and_api_frame() -> None:
    import rlmcost

    out = _cli("rlmcost plan train --model llama-3.1-8b --gpus 8 --batch 64 --seq 4096 "
               "--top 2")  # fmt: skip
    assert out["counts"]["valid"] > 0 and len(out["rows"]) == 2
    df = rlmcost.plan("train", "llama-3.1-8b", 8, batch=64, seq=4096, top=2)
    assert list(df["command"]) == [r["command"] for r in out["rows"]]
