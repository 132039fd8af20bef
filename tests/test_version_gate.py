"""NeMo RL's version gate on a streaming rollout (rlmcost.placement.version_gate).

Source of the mechanism: NVIDIA-NeMo/RL nemo_rl/algorithms/async_utils/trajectory_collector.py
at v0.7.0 (async_utils.py at v0.5.0-v0.6.0): ``_calculate_target_weights(v)`` returns the
targets ``v + 1 .. v + max_trajectory_age_steps``, and the collector pauses when all are
generated or in progress; nemo_rl/algorithms/grpo.py ``async_grpo_train`` (v0.7.0) samples the
groups of target ``weight_version``, trains, refits and only then sets ``weight_version += 1``.
So with age 1 the batch for step k starts after step k - 2 has trained and refit.

Independent references: batches of one length, whose gated steps per batch follow by hand
(max(L, (L + hold) / 2)) and whose time follows its steps; monotonicity in the hold; the
cycles of a hand-built two-group schedule; and, on a published row of
rlmcost/perf/data/rl_runs.json, that the gate moves a 1-step off-policy row whose trainer
nears its engines' time per batch.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost import memo
from rlmcost.algorithms.kinds import Stage
from rlmcost.choices import Dtype
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour
from rlmcost.placement import group_jobs
from rlmcost.placement.group_gate import GroupGate, StreamRules, framework_stream
from rlmcost.placement.rollout import DecodeCost
from rlmcost.placement.schedule_template import template
from rlmcost.placement.version_gate import GateStream, gate_cycles, stretch
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe
from rlmcost.specs import get_hardware, get_model
from rlmcost.timing import Roofline

RECORDS = {r["id"]: r for r in load_runs()["runs"]}

# engines generate (key "g"), the trainer trains ("t"), the refit "r" sends t's weights to g
SHAPE = (("g", "rollout", Stage.GENERATION, True), ("t", "actor", Stage.TRAINING, True),
         ("r", "link:r", None, False))  # fmt: skip
LINKS = (("r", "t", ("g",), ("t",), ("g", "g")),)


def test_the_gate_cycles_run_through_the_trainer_not_the_engines_pause():
    plan = template(SHAPE, 1, LINKS)
    found = [plan.cycles[i] for i in gate_cycles(plan, "g", 1)]
    assert found  # the stage chain g -> t -> r -> g over two iterations
    for c in found:
        assert c.shift == 2 and "t" in c.keys
        j = c.keys.index("g")
        assert c.keys[(j + 1) % len(c.keys)] != "r"  # not the engines' own pause


# tests/test_rollout_runs.py's decode cost and Llama-3.1-8B shape, one H100, no engine model
COST = DecodeCost(f0=10**10, f1=10**5, prefill_flops=10**12, weight_bytes=1e10,
                  kv_bytes_per_token=1e5)  # fmt: skip
ROOF = Roofline(get_hardware("h100-sxm"), 1, Dtype.BF16)
ARCH = get_model("llama-3.1-8b").arch()


def _stream(lengths: tuple[int, ...], slots: int, gate: GroupGate | None = None,
            depth: int = 1) -> GateStream:  # fmt: skip
    return GateStream(ARCH, 50, lengths, slots, COST, ROOF, None, gate, depth)


@pytest.mark.parametrize(("length", "hold"), [(100, 0), (100, 60), (100, 100), (100, 150),
                                               (100, 300)])  # fmt: skip
def test_batches_at_one_length_stretch_only_past_a_batch(length, hold):
    # every sample at the same length and the slots holding one batch: batch j returns at
    # (j + 1) L without the gate; with it batch j starts at max(E[j-1], E[j-2] + hold), so by
    # hand the steps per batch are max(L, (L + hold) / 2): no effect while the trainer takes
    # less than a batch (the "every group held to the length cap" case), then half of the excess
    with memo.plain():
        st = stretch(_stream((length,) * 8, 8), 1, hold / length)
    assert st.hold == hold
    assert st.steps == pytest.approx(max(length, (length + hold) / 2) / length, rel=1e-12)
    # the same full steps (and one prefill per batch) plus idle ones priced at the free rate
    assert st.predicted == pytest.approx(st.steps, rel=0.02)
    assert st.bound == pytest.approx(st.predicted, rel=1e-9)  # no engine model: the bound


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=2, max_size=10), st.integers(1, 10),
       st.floats(0, 2), st.floats(2, 4))  # fmt: skip
def test_a_hold_never_speeds_the_stream_and_a_long_one_slows_it(lengths, slots, f, long_f):
    # The gate only delays admissions. A later admission can still pack the list schedule a
    # little tighter (Graham 1969's anomalies: lengths [1, 2, 1, 1, 2, 1, 1, 1, 1, 1] on one
    # slot take 0.990 x the free steps behind a hold of 0.9 batch), so the stretch is not
    # monotone in the hold; what holds is that no hold beats the free stream, and a hold of
    # two or more batches always slows it.
    s = _stream(tuple(lengths), slots)
    with memo.plain():
        short, long = stretch(s, 1, f), stretch(s, 1, long_f)
    assert 1.0 <= short.predicted and 1.0 <= short.steps and 1.0 <= short.bound
    assert long.predicted > 1.0 and long.steps > 1.0


def test_the_anomaly_case_is_clamped_to_the_free_stream():
    s = _stream((1, 2, 1, 1, 2, 1, 1, 1, 1, 1), 1)
    with memo.plain():
        st_ = stretch(s, 1, 0.9)
    assert (st_.predicted, st_.steps) == (1.0, 1.0)


def test_a_stream_of_spread_lengths_waits_before_the_trainer_reaches_a_batch():
    # lengths spread over two orders of magnitude, groups of 4 samples behind the group gate:
    # batches overlap, so a hold of 0.9 x the time per batch already slows the stream (at one
    # length it would not), but only the groups that would have entered early wait
    lengths = (10, 20, 40, 80, 160, 320, 640, 1280) * 4
    with memo.plain():
        st = stretch(_stream(lengths, 32, GroupGate(4, 8, 0)), 1, 0.9)
    assert 1.0 < st.steps < 1.5 and st.predicted > 1.0


def test_only_nemo_rl_has_the_version_gate():
    nemo = behaviour("nemo-rl")
    assert nemo is not None and nemo.stream_version_gate
    for name in ("verl", "areal", "openrlhf", "slime"):
        b = behaviour(name)
        assert b is None or not b.stream_version_gate


def _iteration(row: str, version_gate: bool):  # noqa: ANN202 - PlacementEstimate
    r = recipe(RECORDS[row])
    assert r.query is not None
    run = run_from_argv(r.query.algorithm, list(r.argv))
    run = run.replace(**r.overlay) if r.overlay else run

    def rules(*a):  # noqa: ANN202 - the framework's own, the version gate set as asked
        own = framework_stream(*a)
        return StreamRules(own.gate, own.reprefill, version_gate)

    with memo.plain(), pytest.MonkeyPatch.context() as mp:
        mp.setattr(group_jobs, "framework_stream", rules)
        return evaluate_deployment(run)


def test_the_gate_lengthens_a_1off_iteration_whose_trainer_nears_its_engines():
    # v0.7 GB200 Qwen3-32B 1-step off (docs/about/performance-summary.md, 140 s published)
    row = "nemo-rl-v0.7-gb200-qwen3-32b-grpo-1off-32gpu"
    gated, plain = _iteration(row, True), _iteration(row, False)
    assert gated.iteration_time_s > 1.1 * plain.iteration_time_s
    assert gated.iteration_interval_s[0] <= gated.iteration_time_s
    assert gated.iteration_time_s <= gated.iteration_interval_s[1]
    assert any(n.startswith("version gate") for n in gated.notes)
    assert not any(n.startswith("version gate") for n in plain.notes)
