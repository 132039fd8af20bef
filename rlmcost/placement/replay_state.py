"""The state of the KV admission replays (:func:`rlmcost.placement.paged.paged_admit`,
:func:`rlmcost.placement.sglang_admit.sglang_admit`): their segments and schedule, the blocks
the running sequences hold (:class:`_Blocks`), the sequences handed over (:class:`Handout`) and
the running set (:class:`Flight`).

Split from :mod:`rlmcost.placement.paged` by purpose: what the two replays share, apart from
vLLM's rule (``paged``) and SGLang's (``sglang_admit``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from typing import NamedTuple

from rlmcost.frozen import dataclass
from rlmcost.memo import kept_property
from rlmcost.placement.prefix_share import GroupHolders, PrefixShare


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


Row = tuple[int, int, int, int, int]
"""A segment as a plain tuple (seq, start, end, context, slot): :class:`Segment`'s fields."""


@dataclass(frozen=True)
class Schedule:
    """The segments in the order they start (by (start, seq)), the preemptions and the most in
    flight at once. ``rows``: the segments as plain tuples (what the timeline reads, column by
    column); ``segments``: as :class:`Segment`, made when first read (a replay under KV
    pressure has 10^5 of them: 0.15 us each that the timeline does not need)."""

    rows: tuple[Row, ...]
    preemptions: int
    peak: int

    @kept_property
    def segments(self) -> tuple[Segment, ...]:
        return tuple(map(Segment._make, self.rows))


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
    ``held`` (the KV units of the running sequences, :class:`_Blocks`, each its own prompt
    tokens, its ``extra`` ones (multi-turn observations; empty: none) and its output) and the
    groups' holders."""

    def __init__(self, cap: int, lengths: Sequence[int], prompt: int, own: int, unit: int,
                 groups: GroupHolders, extra: Sequence[int] = ()) -> None:  # fmt: skip
        self.lengths, self.prompt, self.own, self.groups = lengths, prompt, own, groups
        self.extra = extra or [0] * len(lengths)  # KV units beside prompt + output, per seq
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
        q, r = divmod(self.own + self.extra[i] + gen - t + held.b - 1, held.b)
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
        q, r = divmod(self.own + self.extra[i] + gen - start + held.b - 1, held.b)
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
