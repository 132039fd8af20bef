"""NeMo RL's version gate on a streaming rollout (rlmcost.placement.version_gate).

Source of the mechanism: NVIDIA-NeMo/RL nemo_rl/algorithms/async_utils/trajectory_collector.py
at v0.7.0 (async_utils.py at v0.5.0-v0.6.0): ``_calculate_target_weights(v)`` returns the
targets ``v + 1 .. v + max_trajectory_age_steps``, and the collector pauses when all are
generated or in progress; nemo_rl/algorithms/grpo.py ``async_grpo_train`` (v0.7.0) samples the
groups of target ``weight_version``, trains, refits and only then sets ``weight_version += 1``.
So with age 1 the batch for step k starts after step k - 2 has trained and refit.

Independent references: the max-plus cycle written out by hand on a two-group schedule; the
stream's own timeline with every sample at the same length (batches that do not overlap: a
latency of exactly one batch's time); and, on the published rows of
rlmcost/perf/data/rl_runs.json, that the gate moves a row whose trainer is near its engines'
time per batch and no other framework's.
"""

from __future__ import annotations

import pytest

from rlmcost import memo
from rlmcost.algorithms.kinds import Stage
from rlmcost.choices import Dtype
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour
from rlmcost.placement import group_jobs
from rlmcost.placement.group_gate import StreamRules, framework_stream
from rlmcost.placement.rollout import DecodeCost, timeline
from rlmcost.placement.schedule_template import template
from rlmcost.placement.streaming import STREAM_BATCHES, batch_latency_ratio
from rlmcost.placement.version_gate import apply_gate, gate_cycles
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe
from rlmcost.specs import get_hardware, get_model
from rlmcost.timing import Roofline

RECORDS = {r["id"]: r for r in load_runs()["runs"]}

# engines generate (key "g"), the trainer trains ("t"), the refit "r" sends t's weights to g
SHAPE = (("g", "rollout", Stage.GENERATION, True), ("t", "actor", Stage.TRAINING, True),
         ("r", "link:r", None, False))  # fmt: skip
LINKS = (("r", "t", ("g",), ("t",), ("g", "g")),)


@pytest.mark.parametrize(("m", "t", "r", "rho", "expected"), [
    (10.0, 8.0, 1.0, 1.5, (15.0 + 8.0 + 1.0) / 2),  # the gate binds: (rho M + T + R) / 2
    (10.0, 2.0, 1.0, 1.5, None),  # a short trainer: the engines' own cycle sets it
    (10.0, 9.0, 1.0, 1.0, None),  # no overlap between batches: nothing to add
])  # fmt: skip
def test_the_gate_is_the_stage_cycle_with_the_batch_latency(m, t, r, rho, expected):
    plan = template(SHAPE, 1, LINKS)
    weights = [m, t, r]
    plain = plan.value(weights)
    value, bound = apply_gate(plan, weights, plain, {"g": rho}, 1)
    # by hand: the period without the gate is max(M + R (the engines pause for the refit),
    # T + R (the trainer waits for it), (M + T + R) / 2 (the chain over 2 iterations))
    assert plain == max(m + r, t + r, (m + t + r) / 2)
    assert value == (expected if expected is not None else plain)
    assert bound is (expected is not None and expected > plain)


def test_the_engines_pause_for_the_refit_is_not_a_gate_cycle():
    plan = template(SHAPE, 1, LINKS)
    for i in gate_cycles(plan, {"g": 2.0}, 1):
        c = plan.cycles[i]
        assert c.shift == 2 and "t" in c.keys  # through the trainer, over two iterations


def _stream_timeline(lengths: tuple[int, ...], slots: int):  # noqa: ANN202 - Timeline
    """``lengths`` (one replica's batch) repeated over the stream's batches, continuous
    batching in ``slots`` (tests/test_rollout_runs.py's decode cost, Llama-3.1-8B on an H100)."""
    cost = DecodeCost(f0=10**10, f1=10**5, prefill_flops=10**12, weight_bytes=1e10,
                      kv_bytes_per_token=1e5)  # fmt: skip
    batches = 1 + STREAM_BATCHES - 1
    roof = Roofline(get_hardware("h100-sxm"), 1, Dtype.BF16)
    arch = get_model("llama-3.1-8b").arch()
    return timeline(arch, 50, lengths * batches, slots, cost, roof), batches


def test_batches_that_do_not_overlap_have_a_latency_of_one_batch():
    # every sample at the cap and a replica's slots holding exactly one batch: the batches run
    # one after another (the "no effect when every group is held to the length cap" case)
    tl, batches = _stream_timeline((100,) * 8, 8)
    per_batch = tl.time.bound_s / batches
    assert batch_latency_ratio(tl, 8, batches, per_batch) == pytest.approx(1.0, rel=1e-9)


def test_a_length_spread_makes_a_batch_outlast_its_share_of_the_stream():
    tl, batches = _stream_timeline((10, 20, 40, 80, 160, 320, 640, 1280), 8)
    per_batch = tl.time.bound_s / batches
    assert batch_latency_ratio(tl, 8, batches, per_batch) > 1.2


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
    # v0.7 GB200 Qwen3-30B-A3B 1-step off (docs/about/performance-summary.md, 242 s published):
    # generation about 175 s per batch, the trainer's units about 125 s
    row = "nemo-rl-v0.7-gb200-qwen3-30b-a3b-grpo-1off-16gpu"
    gated, plain = _iteration(row, True), _iteration(row, False)
    assert gated.iteration_time_s > 1.05 * plain.iteration_time_s
    assert gated.iteration_interval_s[0] <= gated.iteration_time_s
    assert gated.iteration_time_s <= gated.iteration_interval_s[1]
    assert any(n.startswith("version gate") and "sets the iteration" in n for n in gated.notes)
    assert not any(n.startswith("version gate") for n in plain.notes)
