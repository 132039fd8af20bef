"""A multi-turn sample's observations in the engine's KV pool (rlmcost.placement.turn_kv):
vLLM's block admission and preemption and SGLang's token admission hold them, memory alone.

Independent sources: vLLM V1's block accounting (``vllm/v1/core/kv_cache_manager.py``
``allocate_slots``: a request's blocks cover its computed tokens, a cached prefix included;
it fails when more blocks are needed than are free, the rules rlmcost.placement.paged's
docstring cites), SGLang's token slots (``mem_cache/memory_pool.py``, page size 1, as
rlmcost.placement.sglang_admit's docstring cites); the examples below are counted by hand
from those rules."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rlmcost.placement.group_jobs as group_jobs
from rlmcost.algorithms.kinds import Kind
from rlmcost.evaluation import evaluate
from rlmcost.memo import plain
from rlmcost.placement.group_realhf import areal_server_lengths
from rlmcost.placement.paged import Paged, paged_admit
from rlmcost.placement.sglang_admit import TokenPool, sglang_admit
from rlmcost.placement.turn_kv import held_tokens, replica_held
from rlmcost.placement.turns import decoded_lengths
from rlmcost.run import Run

# S 2K, T 8K of which 4 observations of 1,500 tokens (5 turns): each sample decodes 2,192
# tokens and holds 2,048 + 6,000 + decoded; 256 samples on 8 GPUs, the engine reserving 0.4
# of each: its KV pool binds (the probe behind this test: 18 samples at once against 32)
AGENT = {"algorithm": {"name": "grpo"}, "models": {"actor": "8b"}, "cluster": {"gpus": 8},
         "workload": {"prompts": 64, "samples_per_prompt": 4, "prompt_len": 2048,
                      "response_len": 8192, "turns": 5, "observation_tokens": 1500}}  # fmt: skip


def _generation(engine: str, kv: bool = True, **workload: object):
    """The actor's rollout job of :data:`AGENT` on ``engine`` at 0.4 of the device; ``kv``
    False: the observations left out of the KV pool (as before rlmcost.placement.turn_kv),
    the same decoded lengths."""
    data = {**AGENT, "workload": {**AGENT["workload"], **workload},
            "deployment": {"engine": {"kind": engine, "gpu_memory_utilization": 0.4}}}
    saved = group_jobs.observed_pool
    if not kv:
        group_jobs.observed_pool = lambda g, task, pool, replicas: pool
    try:
        with plain():  # nothing kept between the two evaluations
            e = evaluate(Run.from_data(data))
    finally:
        group_jobs.observed_pool = saved
    assert e.evaluation is not None
    jobs = [j for g in e.evaluation.groups for j in g.jobs if j.task.kind is Kind.GENERATE]
    assert len(jobs) == 1
    return jobs[0]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_observations_bind_the_kv_pool(engine: str):
    """With the observations in the KV the engine admits fewer samples at once (a sample
    holds up to 2,048 + 6,000 + 2,192 tokens, not 2,048 + 2,192), over the same decoded
    lengths; generation takes longer, bound and prediction, and the bound stays below the
    prediction. The engine's reservation is the same (sized for S + T per sequence)."""
    held, left = _generation(engine), _generation(engine, kv=False)
    assert held.timeline.lengths == left.timeline.lengths  # the same decoded tokens
    assert set(held.timeline.lengths) == {8192 - 4 * 1500}
    assert held.timeline.slots < left.timeline.slots
    assert held.time.bound_s > left.time.bound_s
    assert held.predicted_s > left.predicted_s
    assert held.time.bound_s <= held.predicted_s
    assert held.memory.total == left.memory.total  # the reservation: the pool, not its use
    # the compute side stays: the rollout's work past its re-prefills (preemptions) and
    # shared prompts is the same FLOPs, the decode steps' over the decoded lengths and the
    # observations' prefills (exact ints)

    def own(j) -> int:
        return j.work_flops - j.layout.dp * (j.timeline.recompute_flops - j.timeline.shared_flops)

    assert own(held) == own(left)


def test_no_observations_no_change():
    """O = 0 (N = 4): nothing is held, the rollout is the one without the KV account, to the
    bit; N = 1 likewise."""
    for kw in ({"turns": 4, "observation_tokens": 0}, {"turns": 1, "observation_tokens": 0}):
        a, b = _generation("vllm", **kw), _generation("vllm", kv=False, **kw)
        assert (a.time, a.predicted_s, a.timeline.slots, a.work_flops) == (
            b.time, b.predicted_s, b.timeline.slots, b.work_flops)


def test_held_blocks_by_hand():
    """vLLM's rule (rlmcost.placement.paged's docstring): two sequences of 4 decoded tokens,
    prompt 2, 1-token blocks, a pool of 10. Without observations both run to step 3 (2 x 5
    blocks), the newer is preempted before step 4 (paged_admit's doctest). The first holding
    3 observation tokens: at step 1 it holds 2 + 3 + 1 = 6 blocks and the second 2 + 1 = 3
    (9 <= 10: both admitted); step 2 needs 7 + 4 = 11 > 10, so the newer is preempted after 1
    token and readmitted when the first finishes at step 4, its context 2 + 1 (a re-prefill of
    prompt + decoded: the observations are memory, not its compute)."""
    s = paged_admit([4, 4], 2, 2, Paged(10, 1), None, (3, 0))
    assert [tuple(r[:4]) for r in s.rows] == [(0, 0, 4, 2), (1, 0, 1, 2), (1, 4, 7, 3)]
    assert (s.preemptions, s.peak) == (1, 2)
    # 6 observation tokens: 2 + 6 + 1 = 9 blocks, the second's 3 do not fit beside: one at once
    s = paged_admit([4, 4], 2, 2, Paged(10, 1), None, (6, 0))
    assert s.peak == 1 and s.preemptions == 0
    # SGLang, a pool of 200 token slots, 10-token prompts, 100 decoded each (sglang_admit's
    # doctest: the second admitted, 10 + 100 < 200 - 10 - 0.7 x 100); with 60 observation
    # tokens the first holds 70: 10 + 100 >= 200 - 70 - 70, the second waits for it
    s = sglang_admit([100, 100], 10, 2, TokenPool(200, 100, round_tokens=1), None, (60, 0))
    assert s.peak == 1 and [r[1] for r in s.rows] == [0, 100]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=10), st.integers(1, 30),
       st.sampled_from([1, 4, 16]), st.integers(0, 40), st.data())
def test_more_observations_never_admit_more_at_once(lengths, prompt, b, o, data):
    """At fixed decoded tokens, more observation tokens per sample never admit more samples
    at once into a fresh replica (vLLM: first come first served while the next step's blocks
    fit, each sample asking for more; SGLang in one prefill batch: each sample's input and
    slots larger). A later peak can differ either way (a preemption's timing reshuffles the
    replay: lengths 35, 22, 57, 15, 18, 55, prompt 30, 16-token blocks, a pool of 144 and 4
    at most, 22, 33, 33, 22, 11, 0 observation tokens peak at 2, 33, 33, 44, 22, 11, 0 at 3)."""
    n = len(lengths)
    held = [o * data.draw(st.integers(0, 3)) for _ in range(n)]
    more = [h + o * data.draw(st.integers(0, 2)) for h in held]
    size = (prompt + max(lengths) + max(more)) * data.draw(st.integers(1, 6))
    size = -(-size // b) * b
    cap = data.draw(st.integers(1, n))

    def first(rows) -> int:
        return sum(1 for r in rows if r[1] == 0)

    few, many = (paged_admit(lengths, prompt, cap, Paged(size, b), None, h) for h in (more,
                                                                                       held))
    assert first(few.rows) <= first(many.rows)
    pool = TokenPool(size, max(lengths), round_tokens=10**9)
    few, many = (sglang_admit(lengths, prompt, cap, pool, None, h) for h in (more, held))
    assert first(few.rows) <= first(many.rows)
    # no observations: the replays as before, to the bit
    assert paged_admit(lengths, prompt, cap, Paged(size, b), None, [0] * n) == paged_admit(
        lengths, prompt, cap, Paged(size, b))


def test_replica_held_follows_the_decoded_pick():
    """A replica's observation tokens follow its decoded lengths (the stride pick over the
    sorted samples): k = min(N - 1, (l - 1) // (O + 1)) per sample (rlmcost.placement.turns),
    101 and 201 tokens both decode 101 (k = 0 and 1), the pair with more observations first
    among the equal."""
    lengths, turns, o = (101, 201, 2048, 300, 202, 150), 4, 100
    assert held_tokens(lengths, turns, o) == (0, 100, 300, 200, 100, 100)
    decoded = decoded_lengths(lengths, turns, o)
    assert decoded == (101, 101, 1748, 100, 102, 50)
    g = SimpleNamespace(s=SimpleNamespace(workload=SimpleNamespace(turns=turns,
                                                                   observation_tokens=o),
                                          deployment=SimpleNamespace(ideal=True)))
    for replicas in (1, 2, 3):
        picked = areal_server_lengths(g, decoded, replicas)  # type: ignore[arg-type]
        held = replica_held(g, lengths, decoded, replicas)  # type: ignore[arg-type]
        pairs = sorted(zip(decoded, held_tokens(lengths, turns, o), strict=True))
        assert held == tuple(h for _, h in pairs[::-1][::replicas])
        assert len(held) == len(picked)
    assert replica_held(g, lengths, decoded, 1) == (300, 100, 100, 0, 200, 100)
