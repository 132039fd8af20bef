"""SGLang's KV admission (rlmcost.placement.sglang_admit) and the decode timeline on it.

The rules are SGLang's at v0.4.6.post4 (the release AReaL v0.3 pins), by function (the stored
snapshot of sgl-project/sglang was too large to fetch, so no line numbers are checked here):
``python/sglang/srt/managers/schedule_policy.py`` ``PrefillAdder.__init__`` (running requests
reserve ``min(max_new_tokens - len(output_ids), CLIP_MAX_NEW_TOKENS_ESTIMATION) x
new_token_ratio``), ``add_one_req`` (``total_tokens = extend_input_len + min(max_new_tokens,
CLIP...)``; ``if total_tokens >= self.rem_total_tokens: return AddReqResult.NO_TOKEN``),
``_prefill_one_req`` (a request taken reserves its total in full); ``managers/scheduler.py``
``update_running_batch`` (``check_decode_mem`` fails: ``retract_decode``, the ratio set to its
result; else ``max(new_token_ratio - new_token_ratio_decay, min_new_token_ratio)``), ``__init__``
(init 0.7 x conservativeness, min = init x 0.14, decay = (init - min) / 600, sglang
``global_config.py``); ``managers/schedule_batch.py`` ``retract_decode`` (fewest outputs first,
until ``retract_decode_steps`` (20) free slots per remaining request, never the last; ratio
(decoded + 20 n) / sum max_new_tokens, at most 1).

Independent references: hand-worked schedules; a step-by-step replay written out here of those
rules, in the order of SGLang's ``event_loop_normal`` (admission checked at every step while
the batch is not marked full; the mark cleared by a finish or a retraction after that step's
check).
"""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kv_replay import ARCH, COST, H100, segments

from rlmcost.choices import AttnCounting, Dtype
from rlmcost.errors import SpecError
from rlmcost.placement.rollout import timeline
from rlmcost.placement.sglang_admit import (
    CLIP_MAX_NEW_TOKENS_ESTIMATION,
    INIT_NEW_TOKEN_RATIO,
    MIN_NEW_TOKEN_RATIO,
    RETRACT_DECODE_STEPS,
    TokenPool,
    ratio_at,
    sglang_admit,
)
from rlmcost.timing import Roofline


def test_ratio_decays_from_0_7_to_its_floor_in_600_steps():
    # sglang global_config.py: 0.7, factor 0.14, 600 steps; scheduler.py new_token_ratio_decay
    assert (INIT_NEW_TOKEN_RATIO, MIN_NEW_TOKEN_RATIO) == (0.7, pytest.approx(0.098))
    assert ratio_at(0.7, 0, 0) == 0.7
    assert ratio_at(0.7, 0, 300) == pytest.approx(0.7 - 300 * 0.602 / 600)
    assert ratio_at(0.7, 0, 600) == pytest.approx(0.098)
    assert ratio_at(0.7, 0, 5000) == MIN_NEW_TOKEN_RATIO
    assert ratio_at(0.9, 10, 5) == 0.9  # set at a retraction, before its first decayed step


def test_a_new_request_reserves_its_whole_max_new_tokens_within_a_prefill_batch():
    # prompt 10, max_new 20, pool 100, one prefill batch (8192 input tokens): each request
    # taken reserves 10 + 20 = 30 (add_one_req's total_tokens, _prefill_one_req); the k-th
    # (k taken) enters while 30 < 100 - 30 k: k = 1, 2 yes, k = 3 no (30 >= 10)
    s = sglang_admit([5, 5, 5, 5], 10, 8, TokenPool(100, 20))
    assert s.peak == 3 and s.preemptions == 0
    assert segments(s) == [(0, 0, 5, 10), (1, 0, 5, 10), (2, 0, 5, 10), (3, 5, 10, 10)]


def test_running_requests_reserve_only_the_ratio_of_their_remaining_tokens():
    # the same with prefill batches of one request: the ones taken before run and reserve
    # 0.7 x 20 = 14 plus the 10 slots they hold: the k-th enters while 30 < 100 - 24 k:
    # k = 1, 2 yes, 3 no (30 >= 28)
    s = sglang_admit([5, 5, 5, 5], 10, 8, TokenPool(100, 20, round_tokens=1))
    assert s.peak == 3
    # a larger max_new is clipped at 4096 (CLIP_MAX_NEW_TOKENS_ESTIMATION): 10 + 4096 each
    big = 10**6
    pool = 3 * (10 + CLIP_MAX_NEW_TOKENS_ESTIMATION) + 1
    assert sglang_admit([5] * 4, 10, 8, TokenPool(pool, big)).peak == 3


def test_a_waiting_request_enters_at_a_finish_once_the_ratio_has_decayed():
    # prompt 10, max_new 1000, pool 1800, batches of one. t = 0: 0 and 1 enter (1,010 <
    # 1,800 - 10 - 0.7 x 1,000 = 1,090), 2 does not (1,010 >= 1,800 - 20 - 1,400). 0 finishes
    # after step 300; update_running_batch clears the full mark after that step's admission
    # check, so 2 is tried after step 301: 1 holds 311 and reserves ratio(301) x 699 =
    # 0.398 x 699 = 278.3: 1,010 < 1,800 - 311 - 278.3 = 1,210.7, so 2 enters; at the initial
    # 0.7 (489.3) it would not.
    s = sglang_admit([300, 1000, 1000], 10, 8, TokenPool(1800, 1000, round_tokens=1))
    assert segments(s) == [(0, 0, 300, 10), (1, 0, 1000, 10), (2, 301, 1301, 10)]
    assert 1010 < 1800 - 311 - ratio_at(0.7, 0, 301) * 699
    assert not 1010 < 1800 - 311 - 0.7 * 699


def test_retraction_takes_the_fewest_outputs_and_readmits_with_a_reprefill():
    # prompt 10, max_new 100, pool 200, batches of one: 1 enters beside 0 (110 < 200 - 10 -
    # 70); step 91 needs 2 x 101 > 200 slots: check_decode_mem fails and retract_decode takes
    # the one with the fewest outputs, the later in the batch among equals (1, after 90
    # tokens), readmitted when 0 finishes with prompt + outputs = 100 re-prefilled.
    s = sglang_admit([100, 100], 10, 2, TokenPool(200, 100, round_tokens=1))
    assert segments(s) == [(0, 0, 100, 10), (1, 0, 90, 10), (1, 100, 110, 100)]
    assert s.preemptions == 1
    # a larger pool by one token per request for the whole run: no retraction
    assert sglang_admit([100, 100], 10, 2, TokenPool(220, 100, round_tokens=1)).preemptions == 0


def _replay(lengths, prompt, cap, pool, max_new, round_tokens, call=None):
    """SGLang's ``event_loop_normal`` step by step (module docstring): per step,
    ``get_new_batch_prefill`` unless the batch is marked full, then ``update_running_batch``
    (``filter_batch`` clears the mark when the batch shrank; an emptied batch leaves the step
    idle: ratio reset; else ``check_decode_mem`` / ``retract_decode`` or the decay) and the
    decode step."""
    clip = min(max_new, CLIP_MAX_NEW_TOKENS_ESTIMATION)
    n = len(lengths)
    handed = min(call or n, n)
    waiting = deque((i, 0) for i in range(handed))
    running: list[list[int]] = []  # [seq, generated, start, context at start], batch order
    segments, retractions, peak, t, done = [], 0, 0, 0, 0
    base, since, full, shrank = INIT_NEW_TOKEN_RATIO, 0, False, False
    while done < n:
        if not running and not waiting:  # the next call, after the emptied batch's idle step
            more = min(call or n, n - handed)
            waiting.extend((i, 0) for i in range(handed, handed + more))
            handed += more
            base, since, full, shrank = INIT_NEW_TOKEN_RATIO, t, False, False
        held = sum(prompt + g for _, g, _, _ in running)
        if not full and waiting:  # get_new_batch_prefill
            ratio = ratio_at(base, since, t)
            free = pool - held
            reserved = ratio * sum(min(max_new - r[1], 4096) for r in running)
            batch: list[tuple[int, int]] = []
            while waiting:
                if len(running) >= cap:
                    full = True
                    break
                seq, g = waiting[0]
                ext = prompt + g
                taken = sum(e + clip for e, _ in batch)
                if running and (ext + clip >= free - reserved - taken
                                or held + len(running) + ext + 1 > pool):  # fmt: skip
                    full = True
                    break
                waiting.popleft()
                running.append([seq, g, t, ext])
                held += ext
                batch.append((ext, g))
                if sum(e for e, _ in batch) >= round_tokens:
                    free -= sum(e for e, _ in batch)
                    reserved += ratio * sum(min(max_new - g, 4096) for _, g in batch)
                    batch = []
            peak = max(peak, len(running))
        # update_running_batch
        if shrank:
            full, shrank = False, False
        if not running:  # emptied: no batch this step, the idle branch resets the ratio
            base, since = INIT_NEW_TOKEN_RATIO, t
            continue
        if len(running) > 1 and held + len(running) > pool:
            order = sorted(running, key=lambda r: r[1], reverse=True)
            first = True
            while len(order) > 1 and (first or pool - held < RETRACT_DECODE_STEPS * len(order)):
                first = False
                r = order.pop()
                running.remove(r)
                held -= prompt + r[1]
                segments.append((r[0], r[2], t, r[3]))
                waiting.append((r[0], r[1]))
                retractions += 1
            base = min(1.0, (sum(r[1] for r in running) + RETRACT_DECODE_STEPS * len(running))
                       / (len(running) * max_new))  # fmt: skip
            since, full = t + 1, False
        t += 1  # the decode step
        for r in running:
            r[1] += 1
        for r in [r for r in running if r[1] == lengths[r[0]]]:
            segments.append((r[0], r[2], t, r[3]))
            running.remove(r)
            done += 1
            shrank = True
    return sorted(segments, key=lambda s: (s[1], s[0])), retractions, peak


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 60), min_size=1, max_size=14),
    prompt=st.integers(1, 30),
    cap=st.integers(1, 16),
    spare=st.integers(0, 500),
    max_new=st.integers(1, 80),
    round_tokens=st.sampled_from([1, 40, 8192]),
    call=st.sampled_from([None, 3, 5]),
)
def test_event_replay_equals_the_step_by_step_scheduler(
    lengths, prompt, cap, spare, max_new, round_tokens, call
):  # fmt: skip
    max_new = max(max_new, max(lengths))  # SGLang stops a request at max_new_tokens
    pool = prompt + max(lengths) + spare  # the engine holds one full-length sequence
    s = sglang_admit(lengths, prompt, cap, TokenPool(pool, max_new, round_tokens=round_tokens),
                     call)  # fmt: skip
    segs, retractions, peak = _replay(lengths, prompt, cap, pool, max_new, round_tokens, call)
    assert segments(s) == segs
    assert (s.preemptions, s.peak) == (retractions, peak)


def _held_at_each_step(s):
    steps = max(x.end for x in s.segments)
    return [sum(x.context + u - x.start for x in s.segments if x.start < u <= x.end)
            for u in range(1, steps + 1)]  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 80), min_size=1, max_size=20),
    prompt=st.integers(1, 40),
    spare=st.integers(0, 2000),
    cap=st.integers(1, 24),
)
def test_admission_never_holds_more_than_the_pool(lengths, prompt, spare, cap):
    pool = prompt + max(lengths) + spare
    s = sglang_admit(lengths, prompt, cap, TokenPool(pool, max(lengths)))
    assert max(_held_at_each_step(s)) <= pool
    # every response is decoded exactly once across its segments
    done = {i: sum(x.end - x.start for x in s.segments if x.seq == i) for i in range(len(lengths))}
    assert done == dict(enumerate(lengths))


@settings(max_examples=120, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 80), min_size=1, max_size=20),
    prompt=st.integers(1, 40),
    spare=st.integers(0, 1500),
    more=st.integers(1, 1500),
)
def test_a_larger_pool_takes_at_most_the_full_marks_lag_more_steps(lengths, prompt, spare,
                                                                    more):  # fmt: skip
    # SGLang's scheduler is not monotone in its pool: a request refused for tokens marks the
    # batch full, and the mark clears only after the check of the step a request finishes
    # (module docstring, 2.); a larger pool that admits one more request can keep the batch
    # running through a finish that would have emptied it (an empty batch checks at once), so
    # the next admission waits one step (the example below). At most a step per request.
    pool = prompt + max(lengths) + spare
    steps = [max(x.end for x in sglang_admit(lengths, prompt, 64, TokenPool(p, max(lengths)))
                 .segments) for p in (pool, pool + more)]  # fmt: skip
    assert steps[1] <= steps[0] + len(lengths)


def test_the_full_mark_can_make_a_larger_pool_a_step_slower():
    # found by hypothesis: pool 7 admits requests 0 and 1 (of 1 token), both finish at step 1,
    # the emptied batch admits 2 and 3 at once: 3 steps; pool 10 also admits 2 (2 tokens), so
    # at step 1 the batch still runs, its full mark clears after that step's check and 3 waits
    # for step 2: 4 steps
    spans = {p: [(x.seq, x.start, x.end) for x in
                 sglang_admit([1, 1, 2, 2], 1, 64, TokenPool(p, 2)).segments]
             for p in (7, 10)}  # fmt: skip
    assert spans[7] == [(0, 0, 1), (1, 0, 1), (2, 1, 3), (3, 1, 3)]
    assert spans[10] == [(0, 0, 1), (1, 0, 1), (2, 0, 2), (3, 2, 4)]


@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 300), min_size=1, max_size=30),
    slots=st.integers(1, 40),
    prompt=st.integers(1, 500),
    call=st.sampled_from([None, 7]),
)
def test_a_pool_that_holds_every_reservation_is_the_fixed_slot_timeline(
    lengths, slots, prompt, call
):  # fmt: skip
    # with fewer slots than sequences SGLang refills a slot one step late (next test)
    slots = max(slots, min(len(lengths), call or len(lengths)))
    roof = Roofline(H100, 1, Dtype.BF16)
    fixed = timeline(ARCH, prompt, tuple(lengths), slots, COST, roof, None, call)
    pool = TokenPool(len(lengths) * (prompt + max(lengths)) + 1, max(lengths))
    sg = timeline(ARCH, prompt, tuple(lengths), slots, COST, roof, None, call, pool)
    assert sg.preemptions == 0 and sg.recompute_flops == 0 and sg.paged
    assert sg.runs == fixed.runs and sg.finish_s == fixed.finish_s
    assert sg.time == fixed.time and sg.predicted_s == fixed.predicted_s
    assert (sg.depth, sg.steps) == (fixed.depth, fixed.steps)


def test_a_freed_slot_is_refilled_after_the_next_decode_step():
    # max_running_requests 2: 0 and 1 enter, the batch is marked full (waiting left). 0
    # finishes after step 1; update_running_batch clears the mark after that step's admission
    # check (scheduler.py: batch_is_full = False when batch.batch_size() < initial_bs), so 2
    # enters after step 2 and decodes steps 3-4, not 2-3; when the batch empties instead, the
    # scheduler idles one loop (no decode step) and admits at once.
    s = sglang_admit([1, 3, 2], 10, 2, TokenPool(10**6, 10))
    assert segments(s) == [(0, 0, 1, 10), (1, 0, 3, 10), (2, 2, 4, 10)]
    s = sglang_admit([3, 3], 10, 1, TokenPool(10**6, 10))
    assert segments(s) == [(0, 0, 3, 10), (1, 3, 6, 10)]


def test_a_retraction_recomputes_prompt_and_outputs_in_the_timeline():
    from rlmcost.placement.paged import prefill_flops

    roof = Roofline(H100, 1, Dtype.BF16)
    tl = timeline(ARCH, 10, (100, 100), 2, COST, roof, None, None,
                  TokenPool(200, 100, round_tokens=1))  # fmt: skip
    assert (tl.preemptions, tl.steps) == (1, 110)
    assert tl.recompute_flops == prefill_flops(ARCH, 10, COST.prefill_flops,
                                               AttnCounting.FULL)(100)  # fmt: skip


def test_bad_pool_is_a_spec_error():
    with pytest.raises(SpecError, match="max_new_tokens >= 1"):
        TokenPool(100, 0)
    with pytest.raises(SpecError, match="SGLang KV pool"):
        TokenPool(-1, 10)
