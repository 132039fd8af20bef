"""The weight update through shared storage (AReaL: the trainer saves, every SGLang server
reloads with ``update_weights_from_disk``): its rate, its place in a run, the flag.

References: areal-project/AReaL pull request 324 (Qwen3-30B-A3B, 30.5e9 parameters = 61.0 GB in
bf16: "accelerates weight updating from ~60s to ~30s"); the parameter count of
DeepSeek-R1-Distill-Qwen-1.5B (1,777,088,000, Hugging Face config: Qwen2 1.5B with untied
embeddings), 2 bytes each in bf16.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.perf.areal_sync import sync_handoff_s
from rlmcost.perf.disk_refit import DISK_REFIT_BYTES_PER_S, disk_refit_s
from rlmcost.perf.refit import Refit, refit_s

QWEN3_30B_A3B_BF16_BYTES = 61_000_000_000  # 30.5e9 parameters x 2 B (AReaL PR 324's model)
R1_DISTILL_1P5B_BF16_BYTES = 1_777_088_000 * 2

RUN = ["rlvr", "--framework", "none", "--model", "deepseek-r1-distill-qwen-1.5b", "--no-kl",
       "--engine", "sglang", "--rollout-tp", "1", "--no-sleep",
       "--groups", "rollout=24[tp=1],actor=8", "--batch", "64", "--group", "8",
       "--prompt-len", "512", "--response-len", "4096", "--hardware", "h800", "--gpus", "32"]


def test_disk_refit_reproduces_areal_pr_324():
    # AReaL PR 324: ~60 s before the multi-threaded load (value), ~30 s with it (low time)
    assert disk_refit_s(QWEN3_30B_A3B_BF16_BYTES) == pytest.approx(60.0, rel=0.02)
    assert disk_refit_s(QWEN3_30B_A3B_BF16_BYTES, "low") == pytest.approx(30.0, rel=0.02)
    assert disk_refit_s(QWEN3_30B_A3B_BF16_BYTES, "high") >= disk_refit_s(
        QWEN3_30B_A3B_BF16_BYTES)
    assert disk_refit_s(0) == 0.0


def test_disk_refit_is_a_refit_mechanism_linear_in_bytes():
    """No fixed part: twice the model, twice the seconds (one rate over the full model)."""
    one = refit_s(Refit.DISK, R1_DISTILL_1P5B_BF16_BYTES)
    assert one == pytest.approx(R1_DISTILL_1P5B_BF16_BYTES / DISK_REFIT_BYTES_PER_S.value)
    assert refit_s(Refit.DISK, 2 * R1_DISTILL_1P5B_BF16_BYTES) == pytest.approx(2 * one)


def _phases(extra: list[str]) -> dict[str, float]:
    res = CliRunner().invoke(app, [*RUN, *extra, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    return {p["name"]: p["time_s"] for p in out["phases"]} | {
        "iteration": out["iteration"]["time_s"]}


def test_refit_disk_prices_the_full_model_and_stalls_the_step():
    """--refit disk: the weight sync is the full bf16 model at DISK_REFIT_BYTES_PER_S (not the
    link copy of a few milliseconds) plus, in the synchronous loop, AReaL's hand-offs (64
    prompts from 8 rollout workers, rlmcost.perf.areal_sync), and a synchronous step grows by
    it."""
    link, disk = _phases([]), _phases(["--refit", "disk"])
    expected = disk_refit_s(R1_DISTILL_1P5B_BF16_BYTES) + sync_handoff_s(64, 8)
    assert disk["weight sync"] == pytest.approx(expected, rel=1e-9)
    assert link["weight sync"] < 0.1 * expected
    grew = disk["iteration"] - link["iteration"]
    # the manager's whole-group routing (placement.group_realhf.areal_server_lengths) also
    # lengthens generation: 3 groups of 8 on the busiest of 24 servers, not 22 samples
    routed = disk["generation"] - link["generation"]
    assert routed > 0
    assert grew == pytest.approx(expected - link["weight sync"] + routed, rel=1e-6)


def test_refit_disk_under_staleness_stalls_both_sides():
    """Asynchronous: the save sits in the trainer's loop and the servers stop to load, so the
    period is the larger side plus the refit (tests/test_async_refit.py's identity)."""
    flags = ["--placement", "async", "--staleness", "2"]
    disk = _phases([*flags, "--refit", "disk"])
    larger = max(disk["generation"], disk["update actor"])
    assert disk["iteration"] == pytest.approx(larger + disk["weight sync"], rel=1e-6)


def test_refit_bad_value_is_one_line():
    res = CliRunner().invoke(app, [*RUN, "--refit", "nfs"])
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    assert "refit" in res.output and "disk" in res.output


def test_refit_round_trips_through_the_command():
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    run = run_from_argv(RUN[0], [*RUN[1:], "--refit", "disk"])
    assert run.deployment.engine.refit == "disk"
    assert "--refit disk" in to_command(run)


def test_the_planners_screen_prices_a_disk_refit_as_the_exact_path():
    """plan/screen.py refit_apart_s: the full model per reload whatever the lanes (as
    placement/weight_syncs.py), not a node's part as a broadcast's."""
    from types import SimpleNamespace

    import numpy as np

    from rlmcost.plan.screen import refit_apart_s
    from rlmcost.specs.registry import get_hardware

    q = SimpleNamespace(refit_apart="disk", refit_bytes=R1_DISTILL_1P5B_BF16_BYTES,
                        hardware=get_hardware("h800"), pool=())  # one accelerator type
    gpus, train, rollout, etp = (np.array([128, 16]), np.array([32, 8]), np.array([96, 8]),
                                 np.array([1, 1]))  # fmt: skip
    out = refit_apart_s(q, gpus, train, rollout, etp)  # type: ignore[arg-type]
    assert out == pytest.approx([disk_refit_s(R1_DISTILL_1P5B_BF16_BYTES)] * 2)


def test_refit_disk_on_a_colocated_engine_says_it_is_unused():
    """A co-located engine takes the weights as its framework refits in place: --refit disk
    prices nothing there, and the output says so instead of ignoring the flag silently."""
    res = CliRunner().invoke(app, ["grpo", "-m", "qwen2.5-7b", "--gpus", "16", "--refit", "disk",
                                   "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    notes = json.loads(res.stdout)["notes"]
    assert any(n.startswith("--refit disk is not used") for n in notes)
    apart = CliRunner().invoke(app, ["grpo", "-m", "qwen2.5-7b", "--gpus", "16", "--refit",
                                     "disk", "--placement", "async", "--json"])  # fmt: skip
    assert apart.exit_code == 0, apart.output
    assert not any(n.startswith("--refit disk is not used")
                   for n in json.loads(apart.stdout)["notes"])  # fmt: skip


def test_refit_disk_on_a_groups_own_engine_is_seen():
    """A group's own engine setting ``refit: disk`` (not the run-wide engine's) counts as the
    flag: on a co-located group the note says it is unused; on a rollout group apart from the
    trainer the weight sync is the disk refit (``placement.run_notes._unused_refit_note``
    reads the groups' own engines as well as the run's)."""
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.run import Run

    def run(groups: list[dict[str, object]]) -> Run:
        return Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "qwen2.5-7b"},
                              "deployment": {"groups": groups}})  # fmt: skip

    together = evaluate_deployment(run([{"members": "actor+reference", "gpus": 16,
                                         "engine": {"refit": "disk"}}]))  # fmt: skip
    assert any(n.startswith("--refit disk is not used") for n in together.notes)
    apart = evaluate_deployment(run([
        {"members": "rollout", "gpus": 8, "engine": {"refit": "disk"}},
        {"members": "actor+reference", "gpus": 8},
    ]))  # fmt: skip
    assert not any(n.startswith("--refit disk is not used") for n in apart.notes)
    assert any(s.what.endswith("(disk refit)") for s in apart.syncs)
    plain = evaluate_deployment(run([{"members": "actor+reference", "gpus": 16}]))
    assert not any(n.startswith("--refit disk is not used") for n in plain.notes)
