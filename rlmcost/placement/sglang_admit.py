"""SGLang's KV admission: token-level pool, ``new_token_ratio`` reservation, retraction.

SGLang's scheduler (sgl-project/sglang v0.4.6.post4, the release AReaL v0.3 pins; the rules
below stand unchanged in v0.4.9 and later, where only the page overhead and hybrid pools were
added) keeps the KV cache in a pool of ``max_total_num_tokens`` token slots (page size 1:
``mem_cache/memory_pool.py`` ``TokenToKVPoolAllocator``), and per scheduler step:

1. ``Scheduler.get_new_batch_prefill`` (``managers/scheduler.py``), unless the running batch
   is marked full, builds a ``PrefillAdder`` (``managers/schedule_policy.py``) whose budget
   ``rem_total_tokens`` is the free (and evictable) slots less ``rem_total_token_offset``:
   every running request's remaining tokens ``min(max_new_tokens - len(output_ids),
   CLIP_MAX_NEW_TOKENS_ESTIMATION)`` x ``new_token_ratio``, plus, for each request taken in
   this prefill batch, its ``extend_input_len + min(max_new_tokens, CLIP...)`` in full
   (``_prefill_one_req``). Waiting requests are taken in the waiting queue's order
   (``SchedulePolicy.calc_priority``, below) while fewer than ``max_running_requests`` run
   (:mod:`rlmcost.deployment.sglang_limits`: by default from the KV pool); one whose
   ``total_tokens`` >= ``rem_total_tokens`` stops the loop (``AddReqResult.NO_TOKEN``) and
   marks the batch full. A prefill batch closes when its input tokens reach
   ``chunked_prefill_size`` (``rem_chunk_tokens``; 8192 on GPUs of >= 25 GB,
   ``server_args.py``); the next one, at once, counts the previous one's requests as running;
2. ``Scheduler.update_running_batch``: when the next decode step's slots (one per request,
   ``ScheduleBatch.check_decode_mem``) are not free, ``retract_decode`` (``schedule_batch.py``)
   retracts requests, the fewest output tokens first (``sorted_indices.sort(key=(len(
   output_ids), -len(origin_input_ids)), reverse=True)`` then ``pop()``: among equals the
   last in the batch), at least one and until ``RETRACT_DECODE_STEPS`` slots per remaining
   request are free, never the last one; each goes to the back of the waiting queue
   (``_extend_requests_to_queue``) keeping its output, re-prefilled on readmission, and
   ``new_token_ratio`` becomes min(1, (decoded + 20 x n) / sum max_new_tokens) of the
   remaining requests. Otherwise the ratio decays by ``new_token_ratio_decay`` per decode step
   to its floor. A finish or a retraction clears the full mark here (``batch.batch_size() <
   initial_bs``), after this step's admission check: admission is tried again in the next
   step, or at once when the batch emptied, which leaves the scheduler idle for a step and
   resets the ratio (``event_loop_normal``: ``self.new_token_ratio =
   self.init_new_token_ratio`` when no batch runs).

:func:`sglang_admit` replays that event by event as :func:`~rlmcost.placement.paged.
paged_admit` replays vLLM's, with the same machinery (:mod:`rlmcost.placement.replay_state`:
:class:`~rlmcost.placement.replay_state._Blocks` with 1-token blocks, ``Segment``, ``Schedule``),
so the decode timeline runs on it unchanged; a retraction counts as a preemption (its
re-prefill recomputes prompt + output, in full unless a sibling runs: below).

The waiting queue's order (``managers/schedule_policy.py`` ``SchedulePolicy.calc_priority``,
sorted in place at each admission check): ``fcfs``, SGLang's default (``server_args.py``
``schedule_policy = "fcfs"``), keeps arrival order; ``lpm`` (AReaL v0.3's ``SGLangConfig.
schedule_policy``) runs as fcfs while more than 128 requests wait (``_determine_active_policy``)
and otherwise sorts by the prefix each request matches in the radix cache, longest first
(``_sort_by_longest_prefix``, a stable sort), after the in-batch check of
``_compute_prefix_matches``: a request matching at most ``IN_BATCH_PREFIX_CACHING_CHECK_
THRESHOLD`` (32) cached tokens that shares at least ``IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_
THRESHOLD`` (32) tokens with an earlier one in the queue goes to the back: one sample of an
uncached prompt group goes ahead, its siblings after every other request, so they find the
prompt cached in a later batch (:func:`lpm_order`). Without the radix cache, lpm is fcfs
(``_validate_and_adjust_policy``). Assumed: different prompts share fewer than 32 leading
tokens.

The radix cache's sharing of a group's prompt (``TokenPool.share``,
:mod:`rlmcost.placement.prefix_share`): a request holds its tokens past the shared prompt, the
group those once while one of its requests runs; a request whose group ran before this
admission check matches the prompt (``extend_input_len`` less it, in the budget too); a request
retracted and readmitted beside a sibling recomputes its context past the prompt. Not
modelled: a request in a later prefill batch of the same admission check matching the prompts
of the earlier ones (SGLang's overlap scheduler forms batch N + 1 before it inserts batch N's
prompts, ``event_loop_overlap``, and from batch N + 2 on they hit: taken as misses, an upper
bound on the prompt prefill); the tree's keeping of tokens no request holds (evictable
nodes: a group whose requests all left recomputes its prompt, an upper bound); a prefill batch
holds whole requests (SGLang splits the one that crosses ``chunked_prefill_size`` and reserves
its ``max_new_tokens`` with its last chunk); a request that finished in the step of an admission
check is gone from it (SGLang's ``filter_batch`` drops it just after the check, which counts it
toward ``max_running_requests``; only where the batch was not marked full); the
ratio's decay is taken in closed form (SGLang subtracts it once per step in floating point).
An admitted request's first decode step must fit (a guard SGLang's reservation implies unless
``max_new_tokens`` is below the running count).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence

from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.placement.prefix_share import PrefixShare
from rlmcost.placement.replay_state import (
    Flight,
    Handout,
    Schedule,
    Segment,
    fits_until,
    is_live,
    shared_prompt,
)

INIT_NEW_TOKEN_RATIO = 0.7
"""``global_config.default_init_new_token_ratio`` (env ``SGLANG_INIT_NEW_TOKEN_RATIO``, 0.7) x
``--schedule-conservativeness`` (1.0): sglang ``global_config.py`` / ``scheduler.py``
``init_new_token_ratio`` at v0.4.6.post4."""

MIN_NEW_TOKEN_RATIO = INIT_NEW_TOKEN_RATIO * 0.14
"""The ratio's floor: ``init_new_token_ratio`` x ``default_min_new_token_ratio_factor`` (0.14),
0.098 (sglang ``global_config.py`` at v0.4.6.post4)."""

NEW_TOKEN_RATIO_DECAY = (INIT_NEW_TOKEN_RATIO - MIN_NEW_TOKEN_RATIO) / 600
"""Per decode step: (init - min) / ``default_new_token_ratio_decay_steps`` (600), sglang
``scheduler.py`` ``new_token_ratio_decay`` at v0.4.6.post4."""

RETRACT_DECODE_STEPS = 20
"""Free slots per remaining request a retraction makes room for: ``global_config.
retract_decode_steps`` (20) at v0.4.6.post4."""

LPM_QUEUE_LIMIT = 128
"""Most waiting requests lpm sorts; above it the order stays first come first served
(``schedule_policy.py`` ``_determine_active_policy`` at v0.4.6.post4 and later)."""

IN_BATCH_PREFIX_TOKENS = 32
"""``IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD`` and ``IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_
THRESHOLD`` (env variables of the same names, both 32; ``schedule_policy.py``): the in-batch
check runs for a request matching at most that many cached tokens and sends it back when it
shares at least that many with an earlier waiting request."""

CLIP_MAX_NEW_TOKENS_ESTIMATION = 4096
"""The most of a request's ``max_new_tokens`` the admission counts: ``schedule_policy.py``
``CLIP_MAX_NEW_TOKENS_ESTIMATION`` (env ``SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION``, 4096)."""

CHUNKED_PREFILL_SIZE = 8192
"""Input tokens of one prefill batch: ``server_args.py`` ``chunked_prefill_size`` default on
GPUs of >= 25 GB (8192) at v0.4.6.post4. AReaL v0.3 turns chunking off (``SGLangConfig``
``chunked_prefill_size = -1``, ``max_prefill_tokens = 32768``, realhf/api/cli_args.py), so
its prefill batches hold up to 32,768 input tokens: kept at the default here (the AReaL rows
admit every request at once either way)."""


@dataclass(frozen=True)
class TokenPool:
    """An SGLang replica's KV pool: ``pool_tokens`` token slots (``max_total_num_tokens``, x CP
    as :class:`~rlmcost.placement.paged.Paged`), each request's ``max_new_tokens`` (the
    workload's response cap), the input tokens of one prefill batch (``round_tokens``) and the
    attention FLOP convention of the re-prefills; ``share``: the radix cache's sharing of a
    prompt group (None: off); ``lpm``: ``schedule_policy`` lpm (else fcfs; module doc);
    ``held``: as :attr:`Paged.held <rlmcost.placement.paged.Paged.held>`."""

    pool_tokens: int
    max_new_tokens: int
    counting: AttnCounting = AttnCounting.FULL
    round_tokens: int = CHUNKED_PREFILL_SIZE
    share: PrefixShare | None = None
    lpm: bool = False
    held: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.pool_tokens < 0 or self.max_new_tokens < 1 or self.round_tokens < 1:
            raise SpecError(
                f"an SGLang KV pool needs >= 0 tokens, max_new_tokens >= 1 and a prefill batch "
                f"of >= 1 token, got {self.pool_tokens}, {self.max_new_tokens} and "
                f"{self.round_tokens}"
            )

    def admit(self, lengths: list[int], prompt: int, cap: int, call: int | None = None,
              held: Sequence[int] = ()) -> Schedule:  # fmt: skip
        """:func:`sglang_admit` of ``lengths`` on this pool; ``held``: :attr:`held` in the
        order of ``lengths``."""
        return sglang_admit(lengths, prompt, cap, self, call, held)


def ratio_at(base: float, since: int, step: int) -> float:
    """``new_token_ratio`` after decode step ``step``: ``base`` (set at step ``since``: the
    start, an idle reset or a retraction) less one decay per step after it, at least the floor.

    >>> round(ratio_at(INIT_NEW_TOKEN_RATIO, 0, 300), 3), ratio_at(0.7, 0, 10**6)
    (0.399, 0.098)
    """
    return max(base - NEW_TOKEN_RATIO_DECAY * max(0, step - since), MIN_NEW_TOKEN_RATIO)


def sglang_admit(
    lengths: list[int], prompt: int, cap: int, pool: TokenPool, call: int | None = None,
    observed: Sequence[int] = (),
) -> Schedule:
    """SGLang's admission and retraction (module docstring) for ``lengths`` (response tokens,
    arrival order) with prompts of ``prompt`` tokens, at most ``cap`` running
    (``max_running_requests``, the replica's share); ``call``: handed over in calls of that
    many, each when the previous one has returned (the scheduler idles between: ratio reset);
    ``observed``: per request, KV tokens it holds beside prompt and output from its admission on
    (:mod:`rlmcost.placement.turn_kv`; empty: none), in its slots and its admission's input
    tokens, memory alone (its segments' contexts stay prompt + output).

    A request with g tokens generated holds prompt + h + g slots (h its ``observed``). Admission
    as ``PrefillAdder``: total = prompt + h + g + min(max_new, 4096) must be < free - ratio x
    sum over running of min(max_new - output, 4096) - the full totals of the prefill batch so
    far; also its first decode step must fit (which the reservation implies unless max_new is
    tiny). Always admits into an empty replica (the engine holds one full-length sequence:
    :func:`~rlmcost.deployment.terms.engine_slots`).

    Two requests of 100 tokens, prompt 10, max_new 100, prefill batches of one request, a
    pool of 200: the second is admitted beside the first (10 + 100 < 200 - 10 held - 0.7 x 100
    reserved); step 91 would need 2 x 101 > 200 slots: the later in the batch (equal outputs)
    is retracted after 90 tokens and re-prefilled (context 100) when the other finishes:

    >>> s = sglang_admit([100, 100], 10, 2, TokenPool(200, 100, round_tokens=1))
    >>> [(x.seq, x.start, x.end, x.context) for x in s.segments], s.preemptions, s.peak
    ([(0, 0, 100, 10), (1, 0, 90, 10), (1, 100, 110, 100)], 1, 2)
    """
    n = len(lengths)
    size, max_new = pool.pool_tokens, pool.max_new_tokens
    # the radix cache: a sample holds its tokens past the group's shared prompt tokens, the
    # group those once while one of its samples runs (prefix_share.GroupHolders)
    shared, own, groups = shared_prompt(pool.share, prompt)
    extra_of = observed or [0] * n  # KV tokens beside prompt + output (multi-turn observations)

    def pool_at(u: int) -> int:  # slots held at step u: own tokens plus shared ones
        return held.at(u) + groups.live * shared
    clip_new = min(max_new, CLIP_MAX_NEW_TOKENS_ESTIMATION)
    handout = Handout(n, call)
    waiting, hand = handout.waiting, handout.hand

    def live(end: int, i: int) -> bool:
        return is_live(running, lengths, end, i)

    flight = Flight(cap, lengths, prompt, own, 1, groups, observed)  # running: batch order
    running, finishes, held = flight.running, flight.finishes, flight.held
    segments: list[Segment] = []
    t = retractions = peak = done = 0
    base, since = INIT_NEW_TOKEN_RATIO, 0
    pending, after = 0, -1  # steps of the next admission check and of the one after it
    while done < n:
        if not running and not waiting:
            hand()  # the next call, after the emptied batch's idle step: its ratio reset
            base, since, pending, after = INIT_NEW_TOKEN_RATIO, t, t, -1
        if pending == t:  # admission (PrefillAdder), prefill batch after prefill batch
            pending, after = after, -1
            ratio = ratio_at(base, since, t)
            free = size - pool_at(t)
            before = dict(groups.count)  # groups running before this prefill batch
            if pool.lpm and shared:  # lpm: cached prefixes first (without the cache: fcfs)
                lpm_order(waiting, groups.group, before, shared)
            reserved = ratio * sum(min(max_new - g - (t - s0), CLIP_MAX_NEW_TOKENS_ESTIMATION)
                                   for s0, g, _ in running.values())  # fmt: skip
            batch_full = batch_in = 0  # this prefill batch's full totals and input tokens
            batch: list[int] = []  # its requests' outputs
            while waiting and len(running) < cap:
                i, gen = waiting[0]
                # the prefix matched: its group's prompt where a sample ran before this batch
                ext = (prompt + extra_of[i] + gen
                       - (shared if before.get(i // groups.group, 0) else 0))
                extra = 0 if groups.holds(i) else shared  # its group's prompt, held once
                if running and (ext + clip_new >= free - reserved - batch_full
                                or pool_at(t + 1) + extra + own + extra_of[i] + gen + 1
                                > size):  # fmt: skip
                    break
                waiting.popleft()
                peak = max(peak, flight.start(i, gen, t))
                batch.append(gen)
                batch_full, batch_in = batch_full + ext + clip_new, batch_in + ext
                if batch_in >= pool.round_tokens:  # the batch closes: its requests now run
                    free -= batch_in
                    reserved += ratio * sum(min(max_new - g, CLIP_MAX_NEW_TOKENS_ESTIMATION)
                                            for g in batch)  # fmt: skip
                    batch_full = batch_in = 0
                    batch.clear()
        # the next event: a finish, the next admission, or the step before the one the pool
        # cannot hold
        while not live(*finishes[0]):
            heapq.heappop(finishes)  # a retracted sequence's stale finish
        t_next = finishes[0][0] if pending <= t else min(finishes[0][0], pending)
        if len(running) > 1:
            t_next = fits_until(pool_at, t, t_next, size)
        t = t_next  # > t: the step after an admission or a retraction fits
        ended = flight.finish(t, segments)
        done, finished = done + ended, ended > 0
        if finished and pending == t:  # the check here precedes the filter, which clears
            after = t + 1  # the full mark again: another check at the next step
        elif finished and not running:  # the batch emptied: an idle step resets the ratio
            base, since, pending = INIT_NEW_TOKEN_RATIO, t, t
        elif finished:  # update_running_batch clears the full mark after this step's check
            pending = t + 1
        if len(running) > 1 and pool_at(t + 1) > size:
            retractions += _retract(flight, size, t, segments, waiting, shared)
            decoded = sum(g + t - s0 for s0, g, _ in running.values())
            base = min(1.0, (decoded + RETRACT_DECODE_STEPS * len(running))
                       / (len(running) * max_new))  # fmt: skip
            since = pending = t + 1  # that step does not decay; admission is tried after it
            after = -1
    segments.sort(key=lambda s: (s.start, s.seq))
    return Schedule(tuple(segments), retractions, peak)


def lpm_order(waiting: deque[tuple[int, int]], group: int, running: dict[int, int],
              shared: int) -> None:  # fmt: skip
    """Sort ``waiting`` (sequence, generated) in place as lpm does (module docstring): while
    at most :data:`LPM_QUEUE_LIMIT` wait, a request whose group of ``group`` samples has one
    ``running`` matches the ``shared`` prompt tokens and goes first; of the others, the first
    of each group keeps its place and its later siblings (sharing >= 32 tokens with it) go to
    the back; a stable sort, so arrival order holds among equals.

    Groups of two, group 1 running: its waiting sample first, then the first of groups 0 and
    2, then their siblings:

    >>> q = deque([(0, 0), (1, 0), (3, 0), (4, 0), (5, 0)])
    >>> lpm_order(q, 2, {1: 1}, 100); [i for i, _ in q]
    [3, 0, 4, 1, 5]
    """
    if len(waiting) > LPM_QUEUE_LIMIT:
        return
    seen: set[int] = set()
    keys: list[float] = []
    for i, _ in waiting:
        g = i // group
        matched = shared if running.get(g, 0) else 0
        key: float = -matched
        if matched <= IN_BATCH_PREFIX_TOKENS:  # the in-batch check
            if g in seen and shared >= IN_BATCH_PREFIX_TOKENS:
                key = float("inf")
            seen.add(g)
        keys.append(key)
    items = list(waiting)
    waiting.clear()
    waiting.extend(items[k] for k in sorted(range(len(items)), key=keys.__getitem__))


def _retract(flight: Flight, size: int, t: int, segments: list[Segment],
             waiting: deque[tuple[int, int]], shared: int) -> int:  # fmt: skip
    """``retract_decode`` at step ``t`` (module docstring): the fewest outputs first, at least
    one, until ``RETRACT_DECODE_STEPS`` slots per remaining request are free, never the last;
    the retracted go to the back of ``waiting`` with their outputs. Returns how many."""
    running, held, groups = flight.running, flight.held, flight.groups
    order = sorted(running, key=lambda i: running[i][1] + t - running[i][0], reverse=True)
    out: list[tuple[int, int]] = []
    while len(order) > 1 and (not out or size - held.at(t) - groups.live * shared
                              < RETRACT_DECODE_STEPS * len(order)):  # fmt: skip
        out.append(flight.evict(order.pop(), t, segments))
    waiting.extend(out)
    return len(out)
