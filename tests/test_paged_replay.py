"""vLLM's paged KV replay (rlmcost.placement.paged.paged_admit, one loop turn per event step)
equals an independent simulation of its module docstring's three rules, one engine step at a
time, written out here: every segment (sequence, start, end, context, slot), the preemptions
and the most in flight, with prefix sharing on and off, calls, and few distinct lengths (many
sequences finishing and crossing a block boundary in one step).

The rules, after vllm-project/vllm ``vllm/v1/core/sched/scheduler.py`` ``Scheduler.schedule``
(V1, no watermark): (1) running requests, oldest first, get the blocks of their next token;
when the pool cannot hold them the most recently admitted running request is preempted
(``self.running.pop()``), its generated tokens kept for a recomputation, prepended to the
waiting queue; (2) only in a step that preempted nothing, waiting requests are admitted first
come first served while ``max_num_seqs`` allows and their blocks fit (the first that does not
fit stops the loop); an empty engine admits one regardless. A sequence at context c holds
ceil(c / B) blocks; with prefix caching a prompt group's whole shared blocks (those of its
first ``prompt - 1`` tokens, ``vllm/v1/core/kv_cache_manager.py`` ``get_computed_blocks``) are
held once while one of its samples runs (``block_pool.py`` reference counts). A slot is the
earliest freed (the lowest on a tie)."""

from __future__ import annotations

import dataclasses
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kv_replay import H100

from rlmcost.choices import AttnCounting, Dtype
from rlmcost.compiled.blocks import work_prefill
from rlmcost.placement.paged import Paged, paged_admit
from rlmcost.placement.prefix_share import PrefixShare


def _step_by_step(lengths, prompt, cap, pool, block, group, call):  # noqa: ANN001, ANN202, PLR0913
    """The three rules one engine step at a time (module docstring); ``group`` samples per
    prompt share its whole prompt blocks (1: no prefix caching)."""
    n = len(lengths)
    shared = block * ((prompt - 1) // block) if group > 1 else 0  # whole blocks, last token own
    own = prompt - shared
    handed = min(call or n, n)
    waiting = deque((i, 0) for i in range(handed))
    running: list[tuple[int, int, int, int]] = []  # (seq, generated before start, start, slot)
    freed = dict.fromkeys(range(cap), 0)  # free slot -> the step it was freed at
    segs, preemptions, peak, done, t = [], 0, 0, 0, 0

    def blocks_at(rs, u):  # noqa: ANN001, ANN202 - held at decode step u
        mine = sum(-(-(own + g + u - s) // block) for _, g, s, _ in rs)
        return mine + len({seq // group for seq, *_ in rs}) * (shared // block)

    def leave(r):  # noqa: ANN001, ANN202
        seq, g, s, slot = r
        running.remove(r)
        segs.append((seq, s, t, prompt + g, slot))
        freed[slot] = t
        return seq, g + t - s

    while done < n:
        for r in [r for r in running if r[1] + t - r[2] == lengths[r[0]]]:
            leave(r)
            done += 1
        preempted = []
        while len(running) > 1 and blocks_at(running, t + 1) > pool // block:
            preempted.append(leave(running[-1]))
            preemptions += 1
        waiting.extendleft(preempted)
        if not running and not waiting:
            more = min(call or n, n - handed)
            waiting.extend((i, 0) for i in range(handed, handed + more))
            handed += more
        while not preempted and waiting and len(running) < cap:
            seq, g = waiting[0]
            if running and blocks_at([*running, (seq, g, t, -1)], t + 1) > pool // block:
                break
            waiting.popleft()
            slot = min(freed, key=lambda s: (freed[s], s))
            del freed[slot]
            running.append((seq, g, t, slot))
        peak = max(peak, len(running))
        t += 1
    return sorted(segs, key=lambda x: (x[1], x[0])), preemptions, peak


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.one_of(st.lists(st.integers(1, 40), min_size=1, max_size=12),
                      st.lists(st.sampled_from([6, 17, 32]), min_size=1, max_size=14)),
    prompt=st.integers(1, 40),
    cap=st.integers(1, 12),
    pool=st.integers(0, 900),
    block=st.sampled_from([1, 2, 4, 16]),
    group=st.sampled_from([1, 2, 3, 4]),
    call=st.sampled_from([None, 3, 5]),
)  # fmt: skip
def test_replay_equals_the_rules_step_by_step(lengths, prompt, cap, pool, block, group, call):
    share = PrefixShare(group, block) if group > 1 else None
    s = paged_admit(lengths, prompt, cap, Paged(pool, block, share=share), call)
    segs, preemptions, peak = _step_by_step(lengths, prompt, cap, pool, block, group, call)
    assert [tuple(x) for x in s.segments] == segs
    assert list(s.rows) == segs
    assert (s.preemptions, s.peak) == (preemptions, peak)


def test_one_length_under_pressure_preempts_in_waves():
    # 12 samples of 32 tokens, groups of 4, prompt 9 (8 shared tokens), 4-token blocks, a
    # pool of 24 blocks: all admitted at step 0 (1 own block each + 2 per group: 18), they
    # cross block boundaries together, so several leave in one step; the step-by-step rules
    # above give the same schedule
    s = paged_admit([32] * 12, 9, 12, Paged(96, 4, share=PrefixShare(4, 4)))
    segs, preemptions, peak = _step_by_step([32] * 12, 9, 12, 96, 4, 4, None)
    assert list(s.rows) == segs and (s.preemptions, s.peak) == (preemptions, peak)
    assert s.preemptions > 12 and peak == 12
    ends = [x[2] for x in segs if x[2] < 32]
    assert max(ends.count(e) for e in set(ends)) > 1  # a wave: several preempted in one step


@settings(max_examples=80, deadline=None)
@given(
    lengths=st.lists(st.sampled_from([6, 17, 32, 40]), min_size=2, max_size=24),
    prompt=st.integers(1, 40),
    pool=st.integers(0, 900),
    group=st.sampled_from([1, 2, 4]),
    counting=st.sampled_from(list(AttnCounting)),
)  # fmt: skip
def test_prefill_phases_with_numpy_equal_the_python_sums(lengths, prompt, pool, group, counting):
    # the prefill phases of a replay's segments (placement.prefills): classified and summed
    # per step with numpy equal the per-segment Python form exactly (FLOPs as fsum of the
    # exact integers, bytes, recomputed and spared FLOPs, the engine's predicted seconds)
    pytest.importorskip("numpy")
    from kv_replay import ARCH, COST

    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.generation import Engine
    from rlmcost.placement import prefills as pf

    share = PrefixShare(group, 4, counting=counting) if group > 1 else None
    paged = Paged(pool, 4, counting, share)
    rows = paged_admit(lengths, prompt, 8, paged).rows
    cost = dataclasses.replace(COST, prefill_flops=int(work_prefill(ARCH, prompt, 1, counting)))
    fast = pf._numpy_prefills(ARCH, prompt, rows, cost, paged, share)
    assert fast is not None  # every sum far below 2^53 here
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pf, "use_numpy", lambda segments: False)
        slow = pf.prefills(ARCH, prompt, rows, cost, paged)
    assert fast == slow
    engine = Engine(ARCH, Device(H100, Dtype.BF16), tp=1)
    bounds = [0.0] * len(slow.steps)
    assert fast.predicted_s(engine, prompt, bounds) == slow.predicted_s(engine, prompt, bounds)


def test_a_phase_past_2_to_the_53_flops_sums_exactly_with_numpy():
    # 40 recomputed contexts in one step, each of odd FLOPs near 2^49 (a stand-in for the
    # compiled count, whose values are multiples of 1024): their sum passes 2^53, where adding
    # floats one by one rounds; the Python form's fsum (correctly rounded) of the exact
    # integers equals float() of their int64 sum, the numpy form's (prefills.EXACT_FLOAT)
    from kv_replay import ARCH, COST

    from rlmcost.placement import prefills as pf

    rows = [(i, 5, 9, 1000 + 37 * i, i) for i in range(40)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pf, "prefill_flops", lambda *_: lambda c: 2**49 + c * c + 1)
        fast = pf._numpy_prefills(ARCH, 10, rows, COST, Paged(10**9, 4), None)
        assert fast is not None and fast.flops[0] > 2**53
        mp.setattr(pf, "use_numpy", lambda segments: False)
        assert fast == pf.prefills(ARCH, 10, rows, COST, Paged(10**9, 4))
    one_by_one = 0.0
    for c in range(1000, 1000 + 37 * 40, 37):
        one_by_one += float(2**49 + c * c + 1)
    assert fast.flops[0] != one_by_one  # the case this checks: a float loop would round
