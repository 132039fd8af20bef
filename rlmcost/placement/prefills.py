"""The prefill phases of a rollout timeline: one per engine step that admits sequences.

Split from :mod:`rlmcost.placement.rollout` by purpose. Each admission step runs the prefill
of the sequences it admits before its first decode step (``rollout`` module docstring): a new
sequence prefills its prompt, a readmitted (preempted) one recomputes its context
(:mod:`rlmcost.placement.paged`), and with prefix caching a sequence whose group's prompt is
cached prefills only its own tail (:mod:`rlmcost.placement.prefix_share`). Per phase: FLOPs
(exact ints summed as floats for the roofline), bytes per device (the weights read once plus
the KV cache of the phase's tokens: a tail writes its own tokens' KV and reads the cached
prefix's, the same bytes as a whole prompt), and with an engine the predicted seconds.

Many segments (a replay under KV pressure: 10^4 - 10^5 per timeline) are classified and summed
per step with numpy (:func:`_numpy_prefills`, :func:`~rlmcost.placement.prefix_share.
hits_numpy`): the FLOPs of a phase are its segments' exact integers summed in int64, then
rounded once, which is their ``fsum`` (:data:`EXACT_FLOAT`; else the Python form).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from math import fsum
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.frozen import dataclass
from rlmcost.placement.decode_runs import INT64_SAFE, use_numpy
from rlmcost.placement.paged import prefill_flops
from rlmcost.placement.prefix_share import PrefixShare, hits, hits_numpy, tail_flops
from rlmcost.placement.replay_state import Row

if TYPE_CHECKING:
    from rlmcost.perf.generation import Engine
    from rlmcost.placement.paged import Paged
    from rlmcost.placement.rollout import DecodeCost
    from rlmcost.placement.sglang_admit import TokenPool

EXACT_FLOAT = 2**53
"""Integers below which float64 holds every one exactly (IEEE 754 binary64, 53-bit
significand): the ``fsum`` of such FLOP counts, correctly rounded (``math.fsum``), is ``float``
of their exact integer sum (Python rounds an int to the nearest float, ties to even)."""


@dataclass(frozen=True)
class Prefills:
    """The phases, by admission step (``steps``, ascending), per step: new sequences
    prefilling their whole prompt (``fresh``), the own tokens of tails after a cached prefix
    (``tail_tokens``), readmitted ones recomputing their contexts (``again_tokens`` in
    ``again_count`` contexts); FLOPs and bytes per phase; the FLOPs of the recomputations and
    those the cached prefixes spared new sequences; the prompt tokens a group shares (0:
    none)."""

    steps: list[int]
    fresh: list[int]
    tail_tokens: list[int]
    again_tokens: list[int]
    again_count: list[int]
    flops: list[float]
    memory: list[float]
    recompute_flops: int
    shared_flops: int
    shared_tokens: int

    def predicted_s(self, engine: Engine, prompt: int, bounds: Sequence[float]) -> list[float]:
        """Predicted seconds per phase: one chunked prefill of the whole prompts and the
        tails (the engine runs them in the same steps; a tail shorter than a prompt is priced
        as a chunk of a prompt, attending to its prefix: ``Engine.chunk_s``), one of the
        recomputed contexts at their mean length (the engine prefills them together,
        ``Engine.prefill_s``); at least the phase's bound. (``prefill_s`` of each distinct
        (tokens, prompt) once: a replay under KV pressure repeats a few sizes many times.)"""
        seen: dict[tuple[int, int], float] = {}

        def prefill_s(tokens: int, prompt: int) -> float:
            out = seen.get((tokens, prompt))
            if out is None:
                out = seen[tokens, prompt] = engine.prefill_s(tokens, prompt)
            return out

        return [
            max(prefill_s(f * prompt + t, prompt)
                + (prefill_s(a, -(-a // k)) if k else 0.0), b)
            for f, t, a, k, b in zip(self.fresh, self.tail_tokens, self.again_tokens,
                                     self.again_count, bounds, strict=True)
        ]  # fmt: skip


def prefills(
    arch: Arch, prompt: int, segs: Sequence[Row], cost: DecodeCost,
    paged: Paged | TokenPool | None, stream_share: PrefixShare | None = None,
) -> Prefills:  # fmt: skip
    """The prefill phases of ``segs`` (module docstring; :class:`~rlmcost.placement.
    replay_state.Segment`'s fields, as plain tuples); ``paged`` carries the attention
    convention of the recomputations and the engine's prefix sharing (None: neither);
    ``stream_share``: the sharing of an engine without a paged pool (a stream's slots)."""
    share = paged.share if paged is not None else stream_share
    if share is not None and share.group == 1:
        share = None  # nothing shared: ``hits``' zeros
    if use_numpy(len(segs)):
        out = _numpy_prefills(arch, prompt, segs, cost, paged, share)
        if out is not None:
            return out
    again: dict[int, list[int]] = {}
    tails: dict[int, list[tuple[int, int]]] = {}  # step -> (context, cached tokens)
    fresh_at: list[int] = []  # the admission step of each whole prompt
    cached = hits(segs, prompt, share) if share is not None else [0] * len(segs)
    for (_, start, _, context, _), hit in zip(segs, cached, strict=True):
        if hit:
            tails.setdefault(start, []).append((context, hit))
        elif context == prompt:
            fresh_at.append(start)
        else:
            again.setdefault(start, []).append(context)
    return phases(arch, prompt, cost, paged, share, Counter(fresh_at), again, tails)


def phases(
    arch: Arch, prompt: int, cost: DecodeCost, paged: Paged | TokenPool | None,
    share: PrefixShare | None, fresh: Counter[int], again: dict[int, list[int]],
    tails: dict[int, list[tuple[int, int]]],
) -> Prefills:  # fmt: skip
    """:func:`prefills` from its admissions by step: ``fresh`` whole prompts, ``again``
    recomputed contexts and ``tails`` (context, cached tokens) after a shared prefix."""
    steps = sorted(fresh.keys() | again.keys() | tails.keys())
    flops_of = prefill_flops(arch, prompt, cost.prefill_flops,
                             paged.counting if paged else None)  # fmt: skip
    tail_of = {c_h: tail_flops(arch, *c_h, share.counting)
               for c_h in {c_h for ts in tails.values() for c_h in ts}
               } if share is not None else {}  # fmt: skip
    counts = [fresh.get(p, 0) for p in steps]
    flops = [float(f) * cost.prefill_flops
             + fsum([float(flops_of(c)) for c in again.get(p, ())]
                    + [float(tail_of[t]) for t in tails.get(p, ())])
             for p, f in zip(steps, counts, strict=True)]  # fmt: skip
    kv = cost.kv_bytes_per_token
    memory = [cost.weight_bytes + kv * prompt * f
              + kv * sum(again.get(p, []) + [c for c, _ in tails.get(p, [])])
              for p, f in zip(steps, counts, strict=True)]  # fmt: skip
    redone = [t for ts in tails.values() for t in ts if t[0] != prompt]
    spared = sum(cost.prefill_flops - tail_of[t] for ts in tails.values() for t in ts
                 if t[0] == prompt)  # fmt: skip
    return Prefills(
        steps, counts, [sum(c - h for c, h in tails.get(p, ())) for p in steps],
        [sum(again.get(p, ())) for p in steps], [len(again.get(p, ())) for p in steps],
        flops, memory, sum(flops_of(c) for cs in again.values() for c in cs)
        + sum(tail_of[t] for t in redone), spared,
        share.hit(prompt) if share is not None and share.group > 1 else 0,
    )  # fmt: skip


def _numpy_prefills(
    arch: Arch, prompt: int, segs: Sequence[Row], cost: DecodeCost,
    paged: Paged | TokenPool | None, share: PrefixShare | None,
) -> Prefills | None:  # fmt: skip
    """:func:`prefills` with numpy (module docstring): each segment's kind (a whole prompt, a
    tail after its group's cached prompt, a recomputed context) and exact FLOPs (of each
    distinct context once), summed per admission step in int64. None where a segment's FLOPs
    reach 2^53 or a step's sum could leave int64 (the Python form then)."""
    import numpy as np

    table = np.array(segs, dtype=np.int64).reshape(len(segs), 5)
    seq, start, end, context = table[:, 0], table[:, 1], table[:, 2], table[:, 3]
    hit = (hits_numpy(seq, start, end, share.hit(prompt), share.group, share.same_step)
           if share is not None else np.zeros(len(segs), dtype=np.int64))  # fmt: skip
    tail, whole = hit > 0, context == prompt
    fresh, again = ~tail & whole, ~tail & ~whole
    flops_of = prefill_flops(arch, prompt, cost.prefill_flops,
                             paged.counting if paged else None)  # fmt: skip
    cached = share.hit(prompt) if share is not None else 0

    def tail_of(c: int) -> int:
        assert share is not None
        return tail_flops(arch, c, cached, share.counting)

    # each segment's FLOPs beside whole prompts': recomputed contexts and tails, each
    # distinct context's once
    work = np.zeros(len(segs), dtype=np.int64)
    for kind, of in ((again, flops_of), (tail, tail_of)):
        if kind.any():
            values, where = np.unique(context[kind], return_inverse=True)
            each = [of(c) for c in values.tolist()]
            if max(each) >= EXACT_FLOAT:
                return None
            work[kind] = np.array(each, dtype=np.int64)[where]
    steps, at = np.unique(start, return_inverse=True)
    rough = np.zeros(len(steps))
    np.add.at(rough, at, work.astype(np.float64))  # each step's sum within 1e-12
    if len(steps) and rough.max() >= INT64_SAFE:  # a step's sum may leave int64
        return None

    def per_step(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = np.zeros(len(steps), dtype=np.int64)
        np.add.at(out, at[mask], values[mask])
        return out

    n_fresh, summed = per_step(np.ones_like(start), fresh), per_step(work, tail | again)
    # a step's exact sum rounded once: its fsum (each term exact below 2^53)
    flops = [float(f) * cost.prefill_flops + float(x)
             for f, x in zip(n_fresh.tolist(), summed.tolist(), strict=True)]  # fmt: skip
    kv = cost.kv_bytes_per_token
    memory = (cost.weight_bytes + kv * prompt * n_fresh.astype(np.float64)
              + kv * per_step(context, tail | again).astype(np.float64))  # fmt: skip
    redone = tail & ~whole
    whole_tails = int((tail & whole).sum())
    spared = whole_tails * (cost.prefill_flops - tail_of(prompt)) if whole_tails else 0
    return Prefills(
        steps.tolist(), n_fresh.tolist(), per_step(context - hit, tail).tolist(),
        per_step(context, again).tolist(), per_step(np.ones_like(start), again).tolist(),
        flops, memory.tolist(), sum(per_step(work, again | redone).tolist()), spared,
        cached,
    )  # fmt: skip
