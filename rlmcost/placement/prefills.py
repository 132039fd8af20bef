"""The prefill phases of a rollout timeline: one per engine step that admits sequences.

Split from :mod:`rlmcost.placement.rollout` by purpose. Each admission step runs the prefill
of the sequences it admits before its first decode step (``rollout`` module docstring): a new
sequence prefills its prompt, a readmitted (preempted) one recomputes its context
(:mod:`rlmcost.placement.paged`), and with prefix caching a sequence whose group's prompt is
cached prefills only its own tail (:mod:`rlmcost.placement.prefix_share`). Per phase: FLOPs
(exact ints summed as floats for the roofline), bytes per device (the weights read once plus
the KV cache of the phase's tokens: a tail writes its own tokens' KV and reads the cached
prefix's, the same bytes as a whole prompt), and with an engine the predicted seconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from math import fsum
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.frozen import dataclass
from rlmcost.placement.paged import prefill_flops
from rlmcost.placement.prefix_share import PrefixShare, hits, tail_flops
from rlmcost.placement.replay_state import Row

if TYPE_CHECKING:
    from rlmcost.perf.generation import Engine
    from rlmcost.placement.paged import Paged
    from rlmcost.placement.rollout import DecodeCost
    from rlmcost.placement.sglang_admit import TokenPool


@dataclass(frozen=True)
class Prefills:
    """The phases, by admission step: new sequences prefilling their whole prompt
    (``fresh``), readmitted ones recomputing their contexts (``again``) and tails after a
    cached prefix (``tails``: own tokens); FLOPs and bytes per phase; the FLOPs of the
    recomputations and those the cached prefixes spared new sequences; the prompt tokens a
    group shares (0: none)."""

    steps: list[int]
    fresh: Counter[int]
    again: dict[int, list[int]]
    tails: dict[int, list[int]]
    flops: list[float]
    memory: list[float]
    recompute_flops: int
    shared_flops: int
    shared_tokens: int

    def predicted_s(self, engine: Engine, prompt: int, bounds: Sequence[float]) -> list[float]:
        """Predicted seconds per phase: one chunked prefill of the whole prompts and the
        tails (the engine runs them in the same steps; a tail shorter than a prompt is priced
        as a chunk of a prompt, attending to its prefix: ``Engine.chunk_s``), one of the
        recomputed contexts; at least the phase's bound. (``prefill_s`` of each distinct
        (tokens, prompt) once: a replay under KV pressure repeats a few sizes many times.)"""
        seen: dict[tuple[int, int], float] = {}

        def prefill_s(tokens: int, prompt: int) -> float:
            out = seen.get((tokens, prompt))
            if out is None:
                out = seen[tokens, prompt] = engine.prefill_s(tokens, prompt)
            return out

        return [
            max(prefill_s(self.fresh[p] * prompt + sum(self.tails.get(p, [])), prompt)
                + _batch_s(prefill_s, self.again.get(p)), b)
            for p, b in zip(self.steps, bounds, strict=True)
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
    again: dict[int, list[int]] = {}
    tails: dict[int, list[tuple[int, int]]] = {}  # step -> (context, cached tokens)
    fresh_at: list[int] = []  # the admission step of each whole prompt
    if share is None or share.group == 1:  # nothing shared: ``hits``' zeros
        for _, start, _, context, _ in segs:
            if context == prompt:
                fresh_at.append(start)
            else:
                again.setdefault(start, []).append(context)
    else:
        for (_, start, _, context, _), hit in zip(segs, hits(segs, prompt, share), strict=True):
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
    flops = [float(fresh[p]) * cost.prefill_flops
             + fsum([float(flops_of(c)) for c in again.get(p, ())]
                    + [float(tail_of[t]) for t in tails.get(p, ())])
             for p in steps]  # fmt: skip
    kv = cost.kv_bytes_per_token
    memory = [cost.weight_bytes + kv * prompt * fresh[p]
              + kv * sum(again.get(p, []) + [c for c, _ in tails.get(p, [])]) for p in steps]
    redone = [t for ts in tails.values() for t in ts if t[0] != prompt]
    spared = sum(cost.prefill_flops - tail_of[t] for ts in tails.values() for t in ts
                 if t[0] == prompt)  # fmt: skip
    return Prefills(
        steps, fresh, again, {p: [c - h for c, h in ts] for p, ts in tails.items()}, flops,
        memory, sum(flops_of(c) for cs in again.values() for c in cs)
        + sum(tail_of[t] for t in redone), spared,
        share.hit(prompt) if share is not None and share.group > 1 else 0,
    )  # fmt: skip


def _batch_s(prefill_s: Callable[[int, int], float], contexts: list[int] | None) -> float:
    """Predicted seconds of one step's recomputations (or tails): one chunked prefill of their
    tokens at their mean length (the engine prefills them together, ``Engine.prefill_s``)."""
    if not contexts:
        return 0.0
    tokens = sum(contexts)
    return prefill_s(tokens, -(-tokens // len(contexts)))
