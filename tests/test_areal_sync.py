"""Synchronous AReaL's loop: the hand-offs between the weight save and the next update, and the
generation-server manager's whole-group routing.

Sources (inclusionAI/AReaL 23df2682a, the v0.3 release): ``realhf/system/gserver_manager.py``
(``_poll_async`` ends with ``time.sleep(5)``; ``schedule_request`` "qid prompt (n samples) use
the same dst server", round robin), ``realhf/system/rollout_worker.py``
(``ROLLOUT_POLL_WAIT_TIME = 0.4``, one ``allocate_new_rollout`` per poll),
``realhf/system/function_executor.py`` (``load_data``: ``await asyncio.sleep(1)``),
``realhf/experiments/async_exp/async_rl_exp.py`` (``n_rollout_workers or train_world_size``).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.perf.areal_sync import (
    GSERVER_POLL_S,
    HANDOFF_NOTE,
    MASTER_LOAD_POLL_S,
    ROLLOUT_POLL_S,
    submission_ramp_s,
    sync_handoff_s,
)
from rlmcost.perf.disk_refit import disk_refit_s
from rlmcost.placement.group_realhf import spread_lengths

# AReaL's 1.5B synchronous run (blog Table 2): 96 SGLang + 32 training GPUs, 512 x 16
AREAL_1P5B = [
    "rlvr", "--framework", "none", "--model", "deepseek-r1-distill-qwen-1.5b", "--no-kl",
    "--no-recompute-logprobs", "--mini-batches", "4", "--zero", "1", "--packing",
    "--max-tokens-per-gpu", "30720", "--engine", "sglang", "--rollout-tp", "1",
    "--gpu-memory-utilization", "0.8", "--trainer-kernels", "realhf", "--no-sleep",
    "--groups", "rollout=96[tp=1],actor=32[pp=2]", "--batch", "512", "--group", "16",
    "--prompt-len", "1024", "--response-len", "27648", "--hardware", "h800", "--gpus", "128",
    "--length-dist", "lognormal:8252,0.67,27648,0.025", "--json",
]  # fmt: skip


def _run(*extra: str) -> dict:
    res = CliRunner().invoke(app, [*AREAL_1P5B, *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _phase(out: dict, name: str) -> float:
    return sum(p["time_s"] for p in out["phases"] if p["name"] == name)


def test_the_poll_constants_are_areals():
    """gserver_manager ``time.sleep(5)``, rollout worker 0.4 s, master data loop 1 s."""
    assert (GSERVER_POLL_S, ROLLOUT_POLL_S, MASTER_LOAD_POLL_S) == (5.0, 0.4, 1.0)


def test_submission_ramp_is_one_prompt_per_poll_per_worker():
    # 512 prompts over 32 workers (the 1.5B run's training GPUs): 16 each, 15 polls apart
    assert submission_ramp_s(512, 32) == pytest.approx(15 * 0.4)
    # 48 workers (7B, 192 GPUs): ceil(512 / 48) = 11 prompts, 10 polls apart
    assert submission_ramp_s(512, 48) == pytest.approx(10 * 0.4)
    assert submission_ramp_s(32, 32) == 0.0
    # more workers, never a longer ramp
    assert all(submission_ramp_s(512, w + 1) <= submission_ramp_s(512, w) for w in range(1, 600))


def test_handoff_is_the_ramp_plus_the_mean_poll_waits():
    ramp = submission_ramp_s(512, 32)
    assert sync_handoff_s(512, 32) == pytest.approx(ramp + 2.5 + 0.5)
    assert sync_handoff_s(512, 32, "low") == pytest.approx(ramp)
    assert sync_handoff_s(512, 32, "high") == pytest.approx(ramp + 5 + 1)
    with pytest.raises(SpecError):
        sync_handoff_s(0, 32)
    with pytest.raises(SpecError):
        sync_handoff_s(512, 32, "median")


def test_spread_lengths_keeps_the_longest_and_the_count():
    lengths = tuple(range(1, 101))
    for count in (1, 7, 50, 100):
        out = spread_lengths(lengths, count)
        assert len(out) == count and out[0] == 100
        assert list(out) == sorted(out, reverse=True)
    assert spread_lengths(lengths, 100) == tuple(range(100, 0, -1))


def test_synchronous_disk_refit_carries_the_handoffs():
    """The weight sync of the synchronous loop is the disk refit (3.55 GB of bf16 weights)
    plus the hand-offs; the streaming (asynchronous) loop's is the refit alone."""
    sync = _run("--refit", "disk")
    streaming = _run("--refit", "disk", "--placement", "async", "--staleness", "4",
                     "--partial-rollout")  # fmt: skip
    [s] = sync["placement_detail"]["weight_sync"]
    [a] = streaming["placement_detail"]["weight_sync"]
    refit = disk_refit_s(s["bytes"])
    assert a["predicted_s"] == pytest.approx(refit)
    assert s["predicted_s"] == pytest.approx(refit + sync_handoff_s(512, 32))
    assert HANDOFF_NOTE in sync["notes"] and HANDOFF_NOTE not in streaming["notes"]


def test_manager_routes_whole_groups_to_a_server():
    """512 groups round robin over 96 servers: the busiest holds 6 x 16 = 96 samples, not the
    stride share's ceil(8192 / 96) = 86, so AReaL's generation (--refit disk) takes longer
    than the same engines without the manager."""
    with_manager = _phase(_run("--refit", "disk"), "generation")
    without = _phase(_run(), "generation")
    assert with_manager > without * 1.02
