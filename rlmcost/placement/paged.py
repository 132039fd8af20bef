"""Paged KV admission with recompute preemption: how a vLLM replica schedules its sequences.

PagedAttention (Kwon et al. 2023, arXiv:2309.06180 §4) gives a sequence blocks of
``block_size`` tokens as it grows, so a sequence holds ceil(context / block_size) blocks, not
its maximum length. vLLM V1's scheduler (vllm-project/vllm ``vllm/v1/core/sched/scheduler.py``
``Scheduler.schedule`` at 00024d31; the same three rules stand in the first V1 scheduler,
``vllm/v1/core/scheduler.py`` of late 2024, and V1 is the default engine from v0.8.0, which
the vLLM runs here use or postdate) does per engine step:

1. running requests, oldest first, each get the block(s) for the token(s) of this step
   (``kv_cache_manager.allocate_slots``, which fails only when ``num_blocks_to_allocate >
   block_pool.get_num_free_blocks()``: V1 keeps no watermark); when one cannot, the most
   recently admitted running request is preempted (``self.running.pop()``; ``_preempt_request``
   frees its blocks, sets ``num_computed_tokens = 0`` and ``waiting.prepend_request``), until
   it can or it preempted itself;
2. only if nothing was preempted in this step (``if not preempted_reqs``), waiting requests are
   admitted first come first served while ``len(self.running) < max_num_seqs`` and their
   blocks fit (a request that does not fit stops the loop: ``break``); a preempted request's
   context (prompt + tokens generated so far) is recomputed by a prefill when it is readmitted.

:func:`paged_admit` replays that rule for one replica's sequences, event by event, counting
whole blocks exactly (:class:`_Blocks`: the blocks held at a step are a closed form of the step,
so the step at which the pool runs out is a binary search). Between two events (a finish, an
admission, a preemption) the running set is fixed, which keeps the decode timeline's run-by-run
sums (:class:`~rlmcost.placement.rollout.Run`). A readmission needs room that only a finish
frees (the blocks held only grow between finishes), so admissions happen at finishes only.

Prefix caching (on by default in V1, ``Paged.share``): a preempted sample readmitted while a
sibling of its prompt group runs finds the prompt's full blocks cached and recomputes the rest
of its context (:mod:`rlmcost.placement.prefix_share`); otherwise, and without prefix
caching, the re-prefill is priced in full (vLLM may still hold its freed blocks: an upper
bound). vLLM's V0 engine
(before v0.8) also preempted the newest by recomputation but admitted only above a watermark of
1 % of the blocks (``BlockSpaceManager`` ``watermark=0.01``): not modelled. The chunked-prefill
token budget (``max_num_batched_tokens``) spreads a large admission over steps: not modelled
(its prefills are one phase).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from functools import cache
from heapq import heappop, heappush
from operator import attrgetter
from typing import NamedTuple

from rlmcost.arch import Arch
from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.placement.prefix_share import GroupHolders, PrefixShare


@dataclass(frozen=True)
class Paged:
    """A replica's paged KV pool: ``pool_tokens`` (its blocks x ``block_tokens``) and the
    tokens of a sequence one block holds across the replica (``block_size`` x CP degree: each
    device holds 1/CP of a sequence's tokens); ``counting``: the attention FLOP convention
    of the re-prefills; ``share``: prefix caching of a prompt group (None: off)."""

    pool_tokens: int
    block_tokens: int
    counting: AttnCounting = AttnCounting.FULL
    share: PrefixShare | None = None

    def __post_init__(self) -> None:
        if self.block_tokens < 1 or self.pool_tokens < 0:
            raise SpecError(
                f"a paged KV pool needs a block of >= 1 token and a pool of >= 0 tokens, "
                f"got {self.block_tokens} and {self.pool_tokens}"
            )

    def admit(self, lengths: list[int], prompt: int, cap: int, call: int | None = None
              ) -> Schedule:  # fmt: skip
        """:func:`paged_admit` of ``lengths`` on this pool (as SGLang's
        :meth:`~rlmcost.placement.sglang_admit.TokenPool.admit`)."""
        return paged_admit(lengths, prompt, cap, self, call)


class Segment(NamedTuple):
    """Sequence ``seq`` (admission order) decodes steps ``start`` + 1 .. ``end`` on ``slot``,
    from context ``context`` (prompt + tokens generated before ``start``); it was admitted at
    ``start`` (a prefill of ``context`` tokens before step ``start`` + 1). A named tuple: a
    replay under KV pressure makes one per admission (0.7 us each, a frozen dataclass 1.6 us)."""

    seq: int
    start: int
    end: int
    context: int
    slot: int


@dataclass(frozen=True)
class Schedule:
    """The segments in the order they start, the preemptions and the most in flight at once."""

    segments: tuple[Segment, ...]
    preemptions: int
    peak: int


class _Blocks:
    """The blocks the running sequences hold at a step u: sum_j ceil((a_j + u) / B), sequence j
    at context a_j + u (a_j = prompt + generated - start). With a_j + B - 1 = q_j B + r_j and
    u = m B + v that is sum_j q_j + n m + #{j: r_j >= B - v}: a histogram of the r_j keeps it
    exact in O(1) per event and one sum over at most B counts per step asked."""

    def __init__(self, block: int) -> None:
        self.b, self.q, self.n, self.count = block, 0, 0, [0] * block

    def add(self, a: int, sign: int = 1) -> None:
        q, r = divmod(a + self.b - 1, self.b)
        self.q, self.n = self.q + sign * q, self.n + sign
        self.count[r] += sign

    def at(self, u: int) -> int:
        m, v = divmod(u, self.b)
        return self.q + self.n * m + (sum(self.count[self.b - v:]) if v else 0)

    def last_within(self, limit: int) -> int:
        """The last step u at which at most ``limit`` blocks are held, for n >= 1 (they only
        grow with u): the last block index m with sum q + n m <= ``limit``, then the most of
        its steps the histogram leaves room for; what :func:`fits_until`'s binary search
        finds, in O(B)."""
        b, count = self.b, self.count
        m = (limit - self.q) // self.n
        room, v, held = limit - self.q - self.n * m, 0, 0
        while v + 1 < b and held + count[b - v - 1] <= room:
            held, v = held + count[b - v - 1], v + 1
        return m * b + v


def shared_prompt(share: PrefixShare | None, prompt: int) -> tuple[int, int, GroupHolders]:
    """(shared, own, holders) of a replay (:func:`paged_admit`, :func:`rlmcost.placement.
    sglang_admit.sglang_admit`): the prompt tokens a group's samples share (none without
    prefix caching or for groups of one), each sample's own prompt tokens, and the groups'
    reference counts (:class:`~rlmcost.placement.prefix_share.GroupHolders`)."""
    active = share if share is not None and share.group > 1 else None
    shared = active.hit(prompt) if active is not None else 0
    return shared, prompt - shared, (active or PrefixShare(1, 1)).holders()


class Handout:
    """The sequences handed to a replica: all at once, or ``call`` at a time (the next call
    when the replica empties); ``waiting`` holds (sequence, tokens generated)."""

    def __init__(self, n: int, call: int | None) -> None:
        self.n, self.call, self.handed = n, call, 0
        self.waiting: deque[tuple[int, int]] = deque()

    def hand(self) -> None:
        """Hand over the next call's sequences (all that are left without calls)."""
        more = self.n - self.handed if not self.call else min(self.call, self.n - self.handed)
        self.waiting.extend((i, 0) for i in range(self.handed, self.handed + more))
        self.handed += more


class Flight:
    """The running set of a replay (:func:`paged_admit`, :func:`rlmcost.placement.sglang_admit.
    sglang_admit`): ``running`` sequence -> (start, generated, slot), ``finishes`` (end step,
    sequence), ``free_slots`` (freed at, slot: the earliest freed first),
    ``held`` (the KV units of the running sequences, :class:`_Blocks`) and the groups' holders."""

    def __init__(self, cap: int, lengths: Sequence[int], prompt: int, own: int, unit: int,
                 groups: GroupHolders) -> None:  # fmt: skip
        self.lengths, self.prompt, self.own, self.groups = lengths, prompt, own, groups
        self.running: dict[int, tuple[int, int, int]] = {}
        self.finishes: list[tuple[int, int]] = []
        self.free_slots = [(0, s) for s in range(cap)]
        self.held = _Blocks(unit)

    def start(self, i: int, gen: int, t: int) -> int:
        """Sequence ``i`` (``gen`` tokens generated so far) enters at step ``t`` on the
        earliest freed slot; returns how many run. (:meth:`_Blocks.add` and
        :meth:`GroupHolders.add` written out: the replay's most frequent event.)"""
        slot = heappop(self.free_slots)[1]
        running = self.running
        running[i] = (t, gen, slot)
        held = self.held
        q, r = divmod(self.own + gen - t + held.b - 1, held.b)
        held.q, held.n = held.q + q, held.n + 1
        held.count[r] += 1
        groups = self.groups
        g = i // groups.group
        before = groups.count.get(g, 0)
        groups.count[g] = before + 1
        if not before:
            groups.live += 1
        heappush(self.finishes, (t + self.lengths[i] - gen, i))
        return len(running)

    def finish(self, t: int, segments: list[Segment]) -> int:
        """The sequences that end by step ``t`` leave (their segments closed into
        ``segments``, their slots freed at ``t``); returns how many (stale finishes of
        preempted or retracted sequences skipped)."""
        done = 0
        finishes, running, lengths = self.finishes, self.running, self.lengths
        while finishes and finishes[0][0] <= t:
            end, i = heappop(finishes)
            if i in running and running[i][0] + lengths[i] - running[i][1] == end:  # is_live
                segments.append(self._leave(i, t))
                done += 1
        return done

    def evict(self, i: int, t: int, segments: list[Segment]) -> tuple[int, int]:
        """Sequence ``i`` leaves at step ``t`` unfinished (vLLM's preemption, SGLang's
        retraction): its KV units and group holding released, its segment closed into
        ``segments``, its slot freed at ``t``; returns (``i``, its tokens generated so far)."""
        seg = self._leave(i, t)
        segments.append(seg)
        return i, seg.context - self.prompt + t - seg.start

    def _leave(self, i: int, t: int) -> Segment:
        """Sequence ``i`` leaves the running set at step ``t``: its KV units and group holding
        released, its slot freed at ``t``; its segment."""
        start, gen, slot = self.running.pop(i)
        held = self.held
        q, r = divmod(self.own + gen - start + held.b - 1, held.b)
        held.q, held.n = held.q - q, held.n - 1
        held.count[r] -= 1
        groups = self.groups
        g = i // groups.group
        before = groups.count[g]
        groups.count[g] = before - 1
        if before == 1:
            groups.live -= 1
        heappush(self.free_slots, (t, slot))
        return Segment(i, start, t, self.prompt + gen, slot)


def is_live(running: dict[int, tuple[int, int, int]], lengths: Sequence[int], end: int,
            i: int) -> bool:  # fmt: skip
    """Whether a finish event (``end``, sequence ``i``) is still current: ``i`` runs in the
    segment that ends then (a preemption or a retraction restarted it otherwise)."""
    return i in running and running[i][0] + lengths[i] - running[i][1] == end


def fits_until(pool_at: Callable[[int], int], t: int, t_next: int, size: int) -> int:
    """The next event step ``t_next``, or the step before the first one after ``t`` whose pool
    (``pool_at``) exceeds ``size`` where that comes sooner (binary search; step t + 1 fits):
    the next event of the paged and SGLang replays when more than one sequence runs."""
    if pool_at(t_next) <= size:
        return t_next
    lo, hi = t + 1, t_next  # step lo fits, step hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if pool_at(mid) <= size else (lo, mid)
    return hi - 1


def paged_admit(
    lengths: list[int], prompt: int, cap: int, paged: Paged, call: int | None = None
) -> Schedule:
    """vLLM's admission and preemption (module docstring) for ``lengths`` (response tokens,
    admission order) with prompts of ``prompt`` tokens, at most ``cap`` in flight
    (``max_num_seqs``, the replica's share); ``call``: sequences handed over in calls of that
    many, each when the previous one has returned (as ``rollout._admit``).

    Sequence i at its k-th decode step attends prompt + k positions and holds ceil((prompt +
    k) / B) blocks (B = ``paged.block_tokens``), exactly (:class:`_Blocks`). A waiting sequence
    is admitted when its first step's blocks fit beside the running ones' next step (vLLM asks
    for its prefill's blocks one step earlier: at most one block apart). Never preempts the
    last running sequence and always admits into an empty replica (the engine starts only when
    one full-length sequence fits: :func:`~rlmcost.deployment.terms.engine_slots`).

    Two sequences of 4 tokens, prompt 2, 1-token blocks, a pool of 10 tokens: both admitted
    (2 + 1 each for the first step), at step 3 both need 2 + 3 = 5 tokens: 10 fits; at step 4
    they need 12: the newer is preempted after 3 tokens and readmitted when the other finishes
    (a prefill of 2 + 3 tokens):

    >>> s = paged_admit([4, 4], 2, 2, Paged(10, 1))
    >>> [(x.seq, x.start, x.end, x.context) for x in s.segments], s.preemptions, s.peak
    ([(0, 0, 4, 2), (1, 0, 3, 2), (1, 4, 5, 5)], 1, 2)
    """
    n = len(lengths)
    b = paged.block_tokens
    blocks_in_pool = paged.pool_tokens // b
    # prefix caching: a sample holds its blocks past the shared prompt blocks, its group
    # those once while one of its samples runs (prefix_share.GroupHolders)
    shared, own, groups = shared_prompt(paged.share, prompt)  # shared: block-aligned tokens

    sb = shared // b  # the shared prompt's blocks, held once per running group

    def pool_at(u: int) -> int:  # blocks held at step u: own blocks plus shared ones
        m, v = divmod(u, b)  # held.at(u) written out
        return held.q + held.n * m + (sum(count[b - v:]) if v else 0) + groups.live * sb
    handout = Handout(n, call)
    waiting, hand = handout.waiting, handout.hand
    hand()
    flight = Flight(cap, lengths, prompt, own, b, groups)  # running: LIFO order
    running, finishes, held = flight.running, flight.finishes, flight.held
    count, group_count, group = held.count, groups.count, groups.group
    segments: list[Segment] = []
    t = preemptions = peak = done = 0
    evicted: list[tuple[int, int]] = []
    nxt = pool_at(t + 1)  # kept equal to pool_at(t + 1) by every change below
    while done < n:
        if not running and not waiting:
            hand()
        # admissions (FCFS) into room, not in a step that preempted: the next step must fit
        # (``nxt``: pool_at(t + 1), each admission adding its blocks and its group's prompt)
        while waiting and len(running) < cap and not evicted:
            i, gen = waiting[0]
            extra = (0 if group_count.get(i // group) else sb) + -(-(own + gen + 1) // b)
            if running and nxt + extra > blocks_in_pool:
                break
            waiting.popleft()
            peak, nxt = max(peak, flight.start(i, gen, t)), nxt + extra
        # the next event: a finish, or the step before the one the pool cannot hold
        while True:
            t_next, i = finishes[0]
            if i in running and running[i][0] + lengths[i] - running[i][1] == t_next:  # is_live
                break
            heappop(finishes)  # a preempted sequence's stale finish
        if len(running) > 1 and pool_at(t_next) > blocks_in_pool:
            t_next = (held.last_within(blocks_in_pool - groups.live * sb)
                      if nxt <= blocks_in_pool  # as fits_until finds it
                      else fits_until(pool_at, t, t_next, blocks_in_pool))  # fmt: skip
        t = t_next  # > t: the step after an admission or preemption fits
        done += flight.finish(t, segments)  # finishes at t
        # preemption: the newest running sequences leave until the next step fits
        evicted, nxt = [], pool_at(t + 1)  # less each evicted one's blocks and group's prompt
        while len(running) > 1 and nxt > blocks_in_pool:
            i, live_groups = next(reversed(running)), groups.live  # the newest
            nxt -= -(-(own + running[i][1] - running[i][0] + t + 1) // b)
            evicted.append(flight.evict(i, t, segments))
            nxt -= (live_groups - groups.live) * sb
            preemptions += 1
        waiting.extendleft(evicted)  # prepended one by one: the oldest ends up first
    segments.sort(key=attrgetter("start", "seq"))
    return Schedule(tuple(segments), preemptions, peak)


def prefill_flops(
    arch: Arch, prompt: int, prompt_flops: int, counting: AttnCounting | None
) -> Callable[[int], int]:
    """FLOPs of one sequence's prefill at a context: ``prompt_flops`` at the prompt, else
    ``blocks.work_prefill`` (compiled) under ``counting``: a preempted sequence's recomputation.

    ``work_prefill`` is a quadratic in the context (projections linear, attention scores
    quadratic, the LM head on the last position constant), so it is taken through 1, 2, 3 by
    Newton's exact integer form f(1) + (c - 1) d1 + (c - 1)(c - 2) / 2 d2, checked once
    against the compiled form at a fourth context (else called per context)."""
    from rlmcost.compiled.blocks import work_prefill

    if counting is None:
        return lambda context: prompt_flops
    f1, f2, f3 = (int(work_prefill(arch, c, 1, counting)) for c in (1, 2, 3))
    d1, d2 = f2 - f1, f3 - 2 * f2 + f1

    def newton(c: int) -> int:
        return f1 + (c - 1) * d1 + (c - 1) * (c - 2) // 2 * d2

    check = 4099
    exact = newton(check) == int(work_prefill(arch, check, 1, counting))

    @cache
    def flops(context: int) -> int:
        if context == prompt:
            return prompt_flops
        return newton(context) if exact else int(work_prefill(arch, context, 1, counting))

    return flops
