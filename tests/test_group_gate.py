"""NeMo RL's prompt-group gate on a streaming rollout (rlmcost.placement.group_gate).

Source of the mechanism: NVIDIA-NeMo/RL v0.6.0 nemo_rl/algorithms/async_utils.py (v0.7.0:
nemo_rl/algorithms/async_utils/trajectory_collector.py), ``_process_batch`` acquires
``_inflight_sema`` once per prompt group and ``_run_prompt_group_worker`` releases it in its
``finally`` only after the whole group (``run_async_multi_turn_rollout``, all samples gathered)
has been pushed to the replay buffer.

Independent references: the expected maximum against enumeration of every draw; a gate that
never binds against plain continuous batching (rollout._admit); and, on the published rows of
rlmcost/perf/data/rl_runs.json, the direction the code implies: the gate slows a GB200 engine
with KV room to spare (its slots hold every admitted sample, so a finished sample's slot stays
empty until its group is done) and barely moves a KV-limited H100 engine (the admitted groups'
waiting samples fill a freed slot at once).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost import memo
from rlmcost.algorithms.kinds import Kind
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour
from rlmcost.placement import group_jobs
from rlmcost.placement.group_gate import (
    GroupGate,
    StreamRules,
    admit_grouped,
    expected_longest,
    gate_for,
)
from rlmcost.placement.rollout import _admit
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe

RECORDS = {r["id"]: r for r in load_runs()["runs"]}


@pytest.mark.parametrize(("lengths", "k"), [((1, 3), 2), ((5, 2, 9), 3), ((4, 4, 7, 1), 2)])
def test_expected_longest_is_the_mean_of_the_max_over_every_draw(lengths, k):
    # reference: enumerate all n^k equally likely draws with replacement
    draws = list(product(lengths, repeat=k))
    exact = Fraction(sum(max(d) for d in draws), len(draws))
    assert expected_longest(lengths, k) == -(-exact.numerator // exact.denominator)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=40), st.integers(1, 8))
def test_a_gate_that_never_binds_is_plain_continuous_batching(lengths, slots):
    # one sample per group, every group in flight at once, no hold: rollout._admit exactly
    gate = GroupGate(1, len(lengths), 0)
    assert admit_grouped(lengths, slots, gate) == _admit(lengths, slots)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=40), st.integers(1, 8),
       st.integers(1, 6), st.integers(1, 4), st.integers(0, 60))  # fmt: skip
def test_the_gate_never_starts_a_sample_earlier(lengths, slots, unit, in_flight, hold):
    free, _ = _admit(lengths, slots)
    gated, _ = admit_grouped(lengths, slots, GroupGate(unit, in_flight, hold))
    assert all(g >= f for g, f in zip(gated, free, strict=True))


def test_gate_for_deals_a_group_round_robin_over_the_replicas():
    # 32 samples over 8 engines: 4 of each group per engine; 64 samples here = 16 groups
    gate = gate_for((10,) * 64, 32, 8, 1)
    assert (gate.unit, gate.in_flight, gate.hold) == (4, 16, 10)
    # more engines than samples: one sample of a group per engine
    assert gate_for((10,) * 8, 16, 32, 2).unit == 1


def test_only_nemo_rl_gates_its_stream_and_keeps_the_kv_caches():
    nemo = behaviour("nemo-rl")
    assert nemo is not None and nemo.stream_group_gate and nemo.stream_keeps_kv
    for name in ("verl", "areal", "openrlhf", "slime"):
        b = behaviour(name)
        assert b is None or not (b.stream_group_gate or b.stream_keeps_kv)


def _generation(row: str, rules: StreamRules | None = None):  # noqa: ANN202 - Job
    """The row's generation job; ``rules`` in place of the framework's (None: its own)."""
    r = recipe(RECORDS[row])
    assert r.query is not None
    run = run_from_argv(r.query.algorithm, list(r.argv))
    run = run.replace(**r.overlay) if r.overlay else run
    with memo.plain(), pytest.MonkeyPatch.context() as mp:
        if rules is not None:
            mp.setattr(group_jobs, "framework_stream", lambda *a: rules)
        ev = evaluate_deployment(run)
    return ev.jobs_of(Kind.GENERATE)[0]


def _generation_s(row: str, gated: bool) -> float:
    """The row's generation seconds without a re-prefill, with or without the gate."""
    own = None if gated else StreamRules(None, reprefill=False)
    return _generation(row, own).predicted_s


def test_the_gate_slows_an_engine_with_room_and_not_a_kv_limited_one():
    # GB200 Qwen3-235B-A22B 1-step off: 8 vLLM TP-8 engines, 64 samples each, all in its slots
    roomy = "nemo-rl-v0.7-gb200-qwen3-235b-a22b-grpo-1off-128gpu"
    # H100 Qwen3-235B-A22B 1-step off: KV-limited engines, samples wait for a slot
    tight = "nemo-rl-v0.6-h100-qwen3-235b-a22b-grpo-1off-256gpu"
    assert _generation_s(roomy, True) > 1.1 * _generation_s(roomy, False)
    assert _generation_s(tight, True) < 1.05 * _generation_s(tight, False)


def test_nemo_rl_charges_no_re_prefill_at_the_refit():
    # resume_after_refit invalidates the KV caches only under
    # recompute_kv_cache_after_weight_updates (false in grpo_math_1B.yaml, v0.5.0-v0.7.0)
    row = "nemo-rl-v0.7-h100-qwen3-30b-a3b-grpo-8off-192gpu"
    own = _generation(row)
    assert own.predicted_parts_s["reprefill_s"] == 0.0
    plain = _generation(row, StreamRules())  # a framework that recomputes them (AReaL, verl)
    assert plain.predicted_parts_s["reprefill_s"] > 0.0
    assert plain.predicted_s > own.predicted_s


def test_partial_rollout_help_names_nemo_rls_own_stream():
    import typer.main

    from rlmcost.cli import app

    cmd = typer.main.get_command(app).get_command(None, "grpo")  # type: ignore[attr-defined]
    (text,) = [p.help or "" for p in cmd.params if "--partial-rollout" in p.opts]
    assert "whole prompt groups" in text and "stale KV caches" in text
