"""`rlmcost plan`'s RL table and help under a large-MoE tier: rows that differ only in the
trainer's EP show it (an `ep` column where any row's EP is not 1, none for a dense plan), and
`--pp` / `--zero` say what the plan searches under a tier (rlmcost/plan/trainers.py: the
tier's Megatron-core trainer, PP up to its example's at ZeRO-1; NeMo RL's DTensor policy,
PP 1 at ZeRO-3) beside the defaults elsewhere."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.plan import _render
from rlmcost.plan.kinds import Objective
from rlmcost.plan.search import Counts, PlanResult

ROW = {"gpus": 128, "family": "async-stream", "placement": "async", "staleness": 1,
       "groups": "rollout=64,actor+reference=64", "tp": 2, "pp": 2, "cp": 2, "sp": True,
       "zero": "1", "ckpt": "full", "micro_batch": 2, "offload": "optimizer", "rollout_tp": 16,
       "gpu_memory_utilization": 0.6, "kv_buffer_gib": None, "time_s": 56.79,
       "time_lower_bound_s": 12.29, "memory_bytes_per_device": 70 * 2**30,
       "tokens_per_s_per_gpu": 144.0, "mfu": 0.036, "gpu_hours": 2.02, "command": "rlmcost"}
"""Two of the top rows of `plan grpo -m qwen3-235b-a22b --framework nemo-rl -H h100 --gpus
128` differ only in EP (8 and 16): its --json rows, trimmed."""


def _table(rows: list[dict], capsys: pytest.CaptureFixture[str]) -> list[list[str]]:
    result = PlanResult(query={"kind": "rl", "algorithm": "grpo", "model": "qwen3-235b-a22b",
                               "hardware": "h100-sxm"}, objective=Objective.TIME, rows=rows,
                        front=rows[:1], counts=Counts(), seconds=1.0)  # fmt: skip
    _render(result)
    out = capsys.readouterr().out
    return [[c.strip() for c in re.split("[│┃]", line)[1:-1]] for line in out.splitlines()
            if line.startswith(("│", "┃"))]  # fmt: skip


def test_rows_that_differ_only_in_ep_show_it(capsys: pytest.CaptureFixture[str]) -> None:
    table = _table([{**ROW, "ep": 8}, {**ROW, "ep": 16}], capsys)
    head = table[0]
    assert head[:9] == ["#", "gpus", "family", "groups", "tp", "pp", "cp", "ep", "zero"]
    rows = [r for r in table[1:] if r[0] in ("1", "2")][:2]
    assert [r[7] for r in rows] == ["8", "16"]
    assert rows[0][:7] == ["1", *rows[1][1:7]]  # the same GPUs, family, groups, tp, pp, cp


def test_a_plan_whose_rows_all_have_ep_1_has_no_ep_column(
        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    table = _table([{**ROW, "ep": 1}], capsys)
    assert "ep" not in table[0] and "zero" in table[0]


def test_plan_help_says_what_pp_and_zero_search_under_a_tier() -> None:
    out = CliRunner().invoke(app, ["plan", "--help"], env={"COLUMNS": "1000"}).output
    text = re.sub(r"[\s│]+", " ", out)
    pp = text[text.index("--pp "):text.index("--zero ")]
    zero = text[text.index("--zero "):text.index("--ckpt ")]
    assert "RL default: 1" in pp and "large-MoE size tier" in pp
    assert "up to its example's PP" in pp and "DTensor policy 1" in pp
    assert "RL default: 3" in zero and "1 for its Megatron-core trainer" in zero
    assert "3 for NeMo RL's DTensor policy" in zero and "--engine megatron" in zero


def test_a_groups_own_ep_and_offload_are_marked(capsys: pytest.CaptureFixture[str]) -> None:
    """A bracket's ``ep=`` shows the ep column though every row's run-wide EP is 1, and its
    ``offload=`` marks the offload cell where it differs from the row's (the kinds in any
    order: ``params,optimizer`` is ``optimizer,params``, not marked)."""
    groups = "rollout=64,actor=32[ep=2;offload=params,optimizer],reference=32"
    table = _table([{**ROW, "groups": groups, "ep": 1},
                    {**ROW, "groups": groups, "ep": 1, "offload": "optimizer,params"}],
                   capsys)  # fmt: skip
    head = table[0]
    cells = [dict(zip(head, r, strict=True)) for r in table[1:] if r[0] in ("1", "2")][:2]
    assert [(c["ep"], c["offload"]) for c in cells] == [("1*", "optimizer*"),
                                                        ("1*", "optimizer,params")]


def test_the_caption_names_only_the_columns_the_table_has() -> None:
    # `plan train` prints no engine, groups nor USD columns; its caption had explained them
    # (the RL table's); an RL plan without prices has no $/iter column either
    res = CliRunner().invoke(app, ["plan", "train", "-m", "7b", "--gpus", "8"],
                             env={"COLUMNS": "400"})  # fmt: skip
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "time = predicted step; bound = roofline lower bound; sched = " in text
    assert "engine mem" not in text and "$/iter" not in text and "brackets" not in text
    rl = CliRunner().invoke(app, ["plan", "grpo", "-m", "8b", "-H", "h20", "--gpus", "8"],
                            env={"COLUMNS": "400"})  # fmt: skip
    assert rl.exit_code == 0, rl.output
    out = " ".join(rl.output.split())
    assert "engine mem = the engine's reservation" in out  # h20: no list price, no $ columns
    assert "$/iter" not in out and "GPU-h = GPU-hours per iteration" in out
