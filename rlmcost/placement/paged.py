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
whole blocks exactly (:class:`~rlmcost.placement.replay_state._Blocks`: the blocks held at a
step are a closed form of the step, so the step at which the pool runs out is a search).
Between two events (a finish, an admission, a preemption) the running set is fixed, which keeps
the decode timeline's run-by-run sums (:class:`~rlmcost.placement.rollout.Run`). A readmission
needs room that only a finish frees (the blocks held only grow between finishes), so
admissions happen at finishes only.

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

from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import cache
from heapq import heappop, heappush
from itertools import accumulate
from operator import itemgetter

from rlmcost.arch import Arch
from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.placement.prefix_share import PrefixShare
from rlmcost.placement.replay_state import (  # noqa: F401 - Segment: the replays' segment
    Handout,
    Row,
    Schedule,
    Segment,
    fits_until,
    shared_prompt,
)


@dataclass(frozen=True)
class Paged:
    """A replica's paged KV pool: ``pool_tokens`` (its blocks x ``block_tokens``) and the
    tokens of a sequence one block holds across the replica (``block_size`` x CP degree: each
    device holds 1/CP of a sequence's tokens); ``counting``: the attention FLOP convention
    of the re-prefills; ``share``: prefix caching of a prompt group (None: off); ``held``:
    per sequence (the timeline's order), the KV tokens it holds beside prompt + decoded ones
    (a multi-turn sample's observations, :mod:`rlmcost.placement.turn_kv`; empty: none)."""

    pool_tokens: int
    block_tokens: int
    counting: AttnCounting = AttnCounting.FULL
    share: PrefixShare | None = None
    held: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.block_tokens < 1 or self.pool_tokens < 0:
            raise SpecError(
                f"a paged KV pool needs a block of >= 1 token and a pool of >= 0 tokens, "
                f"got {self.block_tokens} and {self.pool_tokens}"
            )

    def admit(self, lengths: list[int], prompt: int, cap: int, call: int | None = None,
              held: Sequence[int] = ()) -> Schedule:  # fmt: skip
        """:func:`paged_admit` of ``lengths`` on this pool (as SGLang's
        :meth:`~rlmcost.placement.sglang_admit.TokenPool.admit`); ``held``: :attr:`held` in
        the order of ``lengths``."""
        return paged_admit(lengths, prompt, cap, self, call, held)


def paged_admit(
    lengths: Sequence[int], prompt: int, cap: int, paged: Paged, call: int | None = None,
    held: Sequence[int] = (),
) -> Schedule:
    """vLLM's admission and preemption (module docstring) for ``lengths`` (response tokens,
    admission order) with prompts of ``prompt`` tokens, at most ``cap`` in flight
    (``max_num_seqs``, the replica's share); ``call``: sequences handed over in calls of that
    many, each when the previous one has returned (as ``rollout._admit``); ``held``: per
    sequence, KV tokens it holds beside its prompt and decoded ones from its admission on
    (:mod:`rlmcost.placement.turn_kv`; empty: none), memory alone (its segments' contexts,
    which its re-prefills and decode steps read, stay prompt + decoded).

    Sequence i at its k-th decode step attends prompt + k positions and holds ceil((prompt +
    h_i + k) / B) blocks (B = ``paged.block_tokens``, h_i its ``held``), exactly
    (``_Blocks``). A waiting sequence
    is admitted when its first step's blocks fit beside the running ones' next step (vLLM asks
    for its prefill's blocks one step earlier: at most one block apart). Never preempts the
    last running sequence and always admits into an empty replica (the engine starts only when
    one full-length sequence fits: :func:`~rlmcost.deployment.terms.engine_slots`).

    One loop turn per event step, its admissions, finishes and preemptions in it: the
    :class:`~rlmcost.placement.replay_state._Blocks` histogram, the group holders and the
    running set written out in the loop, the heaps of plain ints, the segments as plain tuples
    (:attr:`Schedule.rows`). A replay under KV pressure has several events per sequence: the
    23 replays of ``grpo -m 8b --gpus 16 -B 512 -K 16 -T 8192 --placement async`` admit
    382,775 times and preempt 316,399 times, 2.4 CPU s with :class:`~rlmcost.placement.
    replay_state.Flight`'s methods and ``Segment`` objects, 1.4 s here (the 2-core development
    machine, December 2026). The step at which the pool runs out is ``_Blocks.last_within`` in
    O(log B): the histogram's suffix sums (``accumulate``) and a bisection.

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
    extra_of = held or [0] * n  # KV tokens beside prompt + decoded (multi-turn observations)
    b1, pool = b - 1, paged.pool_tokens // b
    # prefix caching: a sample holds its blocks past the shared prompt blocks, its group
    # those once while one of its samples runs (prefix_share.GroupHolders, as a list here)
    shared, own, holders = shared_prompt(paged.share, prompt)  # shared: block-aligned tokens
    sb, group = shared // b, holders.group  # the shared prompt's blocks, per running group
    hold = [0] * (n // group + 1)  # running samples per group
    live = 0  # groups with a running sample
    # _Blocks written out: sum of q, running count, histogram of r (a + B - 1 = q B + r)
    count, hq = [0] * b, 0
    handout = Handout(n, call)
    waiting = handout.waiting
    handout.hand()
    # heaps of plain ints (one comparison in C, not a tuple's): the free slots as freed at x
    # cap + slot, the finishes as end x n + seq (stale after a preemption: ``ends`` says)
    free = list(range(cap))
    finishes: list[int] = []
    ends = [-1] * n  # the end of each running sequence's segment (-1: not running)
    # running, admission order (LIFO preemption: popitem): seq -> (start, generated, slot,
    # q, r)
    running: dict[int, tuple[int, int, int, int, int]] = {}
    out: list[Row] = []  # the segments as plain tuples
    t = preemptions = peak = done = nrun = 0
    evicted: list[tuple[int, int]] = []
    nxt = 0  # blocks held at step t + 1, kept by every change below
    while done < n:
        if not running and not waiting:
            handout.hand()
        # admissions (FCFS) into room, not in a step that preempted: the next step must fit
        # (``nxt``, each admission adding its blocks and its group's prompt)
        if not evicted:
            while waiting and nrun < cap:
                i, gen = waiting[0]
                g = i // group
                holding = hold[g]
                mine = own + extra_of[i] + gen  # its KV tokens before its first step
                extra = (mine + b) // b + (0 if holding else sb)
                if nrun and nxt + extra > pool:
                    break
                waiting.popleft()
                q, r = divmod(mine - t + b1, b)
                hq += q
                count[r] += 1
                hold[g] = holding + 1
                if not holding:
                    live += 1
                end = ends[i] = t + lengths[i] - gen
                running[i] = (t, gen, heappop(free) % cap, q, r)
                heappush(finishes, end * n + i)
                nrun += 1
                nxt += extra
            peak = max(peak, nrun)
        # the next event: a finish, or the step before the one the pool cannot hold
        while True:
            t_next, i = divmod(finishes[0], n)
            if ends[i] == t_next:
                break
            heappop(finishes)  # a preempted sequence's stale finish
        finish = t_next
        if nrun > 1:
            m, v = divmod(t_next, b)
            if hq + nrun * m + (sum(count[b - v:]) if v else 0) + live * sb > pool:
                if nxt <= pool:  # _Blocks.last_within(pool - live sb) written out
                    limit = pool - live * sb - hq
                    m = limit // nrun
                    t_next = m * b + bisect_right(list(accumulate(reversed(count))),
                                                  limit - nrun * m, 0, b1)  # fmt: skip
                else:
                    t_next = fits_until(_pool_at(count, hq, nrun, live * sb), t, t_next, pool)
        t = t_next  # > t: the step after an admission or preemption fits
        # finishes at t, then preemption: the newest leave until the next step fits
        while t == finish and finishes and finishes[0] < (t + 1) * n:
            end, i = divmod(heappop(finishes), n)
            if ends[i] == end:
                ends[i] = -1
                start, gen, slot, q, r = running.pop(i)
                hq -= q
                count[r] -= 1
                g = i // group
                hold[g] -= 1
                if not hold[g]:
                    live -= 1
                heappush(free, t * cap + slot)
                out.append((i, start, t, prompt + gen, slot))
                nrun -= 1
                done += 1
        m, v = divmod(t + 1, b)
        nxt = hq + nrun * m + (sum(count[b - v:]) if v else 0) + live * sb
        evicted = []
        while nrun > 1 and nxt > pool:
            i, (start, gen, slot, q, r) = running.popitem()  # the newest
            ends[i] = -1
            nxt -= (q * b + r + t + 1) // b  # its blocks at step t + 1
            hq -= q
            count[r] -= 1
            g = i // group
            hold[g] -= 1
            if not hold[g]:
                live -= 1
                nxt -= sb
            heappush(free, t * cap + slot)
            out.append((i, start, t, prompt + gen, slot))
            nrun -= 1
            evicted.append((i, gen + t - start))
        preemptions += len(evicted)
        waiting.extendleft(evicted)  # prepended one by one: the oldest ends up first
    out.sort(key=itemgetter(1, 0))  # by (start, seq)
    return Schedule(tuple(out), preemptions, peak)


def _pool_at(count: list[int], hq: int, nrun: int, shared: int) -> Callable[[int], int]:
    """The blocks held at a step u (:meth:`_Blocks.at` plus the running groups' ``shared``
    prompt blocks) of a running set, for :func:`fits_until`."""
    b = len(count)

    def pool_at(u: int) -> int:
        m, v = divmod(u, b)
        return hq + nrun * m + (sum(count[b - v:]) if v else 0) + shared

    return pool_at


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
