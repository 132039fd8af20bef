"""The decode timeline of one rollout batch: length skew, KV-cache waves, idle compute.

One data-parallel replica of the generation layout decodes its share of the sequences with
continuous batching, as vLLM and SGLang do: at most ``slots`` sequences are in flight (the KV
cache capacity left on the device), each decode step advances every in-flight sequence by one
token, and a finished sequence frees its slot for the next one in admission order. With fixed
lengths this is ceil(n / slots) waves of T steps; with skewed lengths short sequences leave
early and the longest sets the end. The replica holding the longest sequences is simulated
(replica r gets the sorted lengths n-1-r, n-1-r-R, ...: the first gets the longest of each
stride); every replica is assumed to finish its samples at the same times (conservative).

Per decode step t with a_t sequences in flight at contexts c_j (prompt + tokens so far):

* FLOPs: sum_j C_f^tok(c_j) = a_t f0 + f1 sum_j c_j (exact: a decode step's FLOPs are linear
  in its context, ``blocks.work_decode_step``);
* bytes per device: the weights the rank multiplies with, read once, plus the KV cache of the
  in-flight sequences, kv_token x sum_j c_j (a paged cache holds only live tokens);
* link bytes per device: under ZeRO-3 the parameters are gathered for every forward pass
  ((P_z - 1) / P_z of the rank's shard), at the link bandwidth;

and its time is the roofline max of the three (:mod:`rlmcost.timing`). Each admitted batch
first runs its prefill (prompt tokens, LM head on the last position) as one phase.

Depth (critical path): sequences sharing a slot run one after another, so the depth is the
longest slot chain, sum over its sequences of D_gen(S, T_j) (exact, ``blocks.depth_generation``
in closed form); with enough slots, D_gen(S, T_max).

Prediction: with an ``engine`` (:class:`~rlmcost.perf.generation.Engine`) each decode step and
each admission's prefill also gets its predicted seconds (kernels by shape, TP all-reduces,
the engine's per-step overhead, chunked prefill), never below the step's bound; the replica's
predicted time is their sum, so the length tail and the KV-limited waves set it as they set the
bound.

Idle compute (for inter-stage fusion, §IV-C): a step that is bound by memory or the link
leaves (bound - compute) seconds of the replica's compute unused; assessment forwards of
finished samples, compute-bound, can run there (``iteration``).
"""

from __future__ import annotations

import heapq
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from math import fsum
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers
from rlmcost.timing import DECODE, PREFILL, Kernels

if TYPE_CHECKING:
    from rlmcost.perf.generation import Engine
    from rlmcost.timing import PhaseTime, Roofline


@dataclass(frozen=True)
class DecodeCost:
    """What one replica's steps cost: FLOPs per sequence at context c = f0 + f1 c, prefill FLOPs
    per sequence, weight bytes read per step and KV bytes per cached token (per device), and the
    link seconds of a ZeRO-3 parameter gather per forward pass (0 without ZeRO-3)."""

    f0: int
    f1: int
    prefill_flops: int
    weight_bytes: float
    kv_bytes_per_token: float
    gather_s: float = 0.0


@cache
def decode_flops(arch: Arch) -> tuple[int, int]:
    """(f0, f1) with C_f^tok(c) = f0 + f1 c for one decode step at context c (exact,
    ``blocks.work_decode_step`` compiled)."""
    a = arch_numbers(arch)
    one, two = int(g.work_decode_step(a, 1)), int(g.work_decode_step(a, 2))
    return one - (two - one), two - one


@cache
def _decode_depth_parts(arch: Arch) -> tuple[int, int]:
    """D_dec(c) = rest + n_attn clog2(c): the only context-dependent level is the reduction
    over the cached positions (``blocks.depth_layer_forward``). Read from the compiled block at
    c = 1, 2 (ceil(log2 c) = 0, 1) and checked at c = 3, 5."""
    a = arch_numbers(arch)
    rest = int(g.depth_decode_step(a, 1))
    n_attn = int(g.depth_decode_step(a, 2)) - rest
    for c, levels in ((3, 2), (5, 3)):
        if g.depth_decode_step(a, c) != rest + n_attn * levels:
            raise AssertionError(f"D_dec of {arch.name} is not rest + n ceil(log2 c)")
    return rest, n_attn


def generation_depths(arch: Arch, prompt: int, max_response: int) -> list[int]:
    """D_gen(S, T) for T = 0 .. max_response (index T), exact integers.

    D_gen(S, T) = D_prefill(S) + sum_{c=S+1}^{S+T} (rest + n_attn ceil(log2 c)).
    """
    rest, n_attn = _decode_depth_parts(arch)
    contexts = range(prompt + 1, prompt + max_response + 1)
    steps = (rest + n_attn * (c - 1).bit_length() for c in contexts)  # ceil(log2 c), exact
    return list(accumulate(steps, initial=int(g.depth_prefill(arch_numbers(arch), prompt))))


def replica_lengths(lengths: tuple[int, ...], replicas: int) -> tuple[int, ...]:
    """The most loaded replica's lengths (module docstring), longest first.

    >>> replica_lengths((1, 2, 3, 4, 5, 6, 7), 3)
    (7, 4, 1)
    """
    ordered = sorted(lengths)
    return tuple(ordered[i] for i in range(len(ordered) - 1, -1, -replicas))


def admission_order(n: int) -> list[int]:
    """A fixed shuffle of ``n`` sequences: engines admit requests in arrival order, which does
    not know the lengths. Fisher-Yates driven by ``random.Random(0).random()``, whose sequence
    Python keeps the same across versions.

    >>> sorted(admission_order(5)) == list(range(5))
    True
    """
    rng = random.Random(0)
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


@dataclass(frozen=True)
class Timeline:
    """One replica's decode of its sequences (module docstring)."""

    slots: int  # concurrent sequences (KV capacity), at most the replica's share
    sequences: int  # the replica's share
    waves: int  # ceil(sequences / slots): rounds of admissions
    steps: int  # decode steps until the last sequence finishes
    time: PhaseTime
    depth: int
    finish_s: tuple[float, ...]  # per sequence (admission order): time its last token is out
    step_end_s: tuple[float, ...]  # per decode step: its end time
    step_bound_s: tuple[float, ...]  # per decode step: its roofline time
    step_idle_s: tuple[float, ...]  # per decode step: bound - compute (unused compute seconds)
    lengths: tuple[int, ...]  # response lengths, admission order
    predicted_s: float = 0.0  # predicted seconds (engine model; the bound without one)
    predicted_decode_s: float = 0.0  # of which decode steps
    predicted_prefill_s: float = 0.0  # of which prefills

    @property
    def time_s(self) -> float:
        return self.time.bound_s


def _admit(lengths: list[int], slots: int) -> tuple[list[int], list[int]]:
    """Continuous batching: each sequence, in admission order, takes the first free slot.
    Returns (start step, slot) per sequence."""
    free = [(0, s) for s in range(slots)]
    start, slot_of = [], []
    for length in lengths:
        t0, s = heapq.heappop(free)
        start.append(t0)
        slot_of.append(s)
        heapq.heappush(free, (t0 + length, s))
    return start, slot_of


def _in_flight(
    prompt: int, start: list[int], end: list[int], steps: int
) -> tuple[list[int], list[int]]:
    """Per decode step t = 1 .. steps: the sequences in flight and the sum of their contexts
    (prompt + tokens so far, the new token included), by difference arrays."""
    count = [0] * (steps + 2)
    const = [0] * (steps + 2)
    for s0, e0 in zip(start, end, strict=True):
        count[s0 + 1] += 1
        count[e0 + 1] -= 1
        const[s0 + 1] += prompt - s0
        const[e0 + 1] -= prompt - s0
    active, contexts = [], []
    a = c = 0
    for t in range(1, steps + 1):  # a sequence admitted after s0 steps has context prompt + t - s0
        a += count[t]
        c += const[t]
        active.append(a)
        contexts.append(c + a * t)
    return active, contexts


def timeline(
    arch: Arch,
    prompt: int,
    lengths: tuple[int, ...],
    slots: int,
    cost: DecodeCost,
    roofline: Roofline,
    engine: Engine | None = None,
) -> Timeline:
    """Simulate one replica decoding ``lengths`` (its share) with ``slots`` concurrent
    sequences on ``roofline`` (the replica's devices), with predicted step times from
    ``engine`` when given. Deterministic; plain Python (a cold query loads no numpy)."""
    from rlmcost.timing import PhaseTime

    n = len(lengths)
    slots = max(1, min(slots, n))
    resp = [lengths[i] for i in admission_order(n)]
    start, slot_of = _admit(resp, slots)
    end = [s0 + r for s0, r in zip(start, resp, strict=True)]
    steps = max(end)
    active, contexts = _in_flight(prompt, start, end, steps)
    flops = [float(a) * cost.f0 + cost.f1 * float(c) for a, c in zip(active, contexts, strict=True)]
    mem = [cost.weight_bytes + cost.kv_bytes_per_token * float(c) for c in contexts]
    link = cost.gather_s
    compute, bound = _phases(roofline, flops, mem, link)
    # prefills: one phase per admission step, before that step's decode
    admits = Counter(start)
    pre_steps = sorted(admits)
    pre_flops = [float(admits[p]) * cost.prefill_flops for p in pre_steps]
    pre_mem = [cost.weight_bytes + cost.kv_bytes_per_token * prompt * admits[p] for p in pre_steps]
    pre_compute, pre_bound = _phases(roofline, pre_flops, pre_mem, link, PREFILL)
    prefill_before = dict(zip(pre_steps, pre_bound, strict=True))
    step_end = list(accumulate(b + prefill_before.get(i, 0.0) for i, b in enumerate(bound)))
    finish = tuple(step_end[e - 1] for e in end)
    depth_of = generation_depths(arch, prompt, max(resp))
    chains = [0] * slots
    for s, r in zip(slot_of, resp, strict=True):
        chains[s] += depth_of[r]
    memory_s = fsum(roofline.seconds([0.0] * len(mem), mem)[1]) + fsum(
        roofline.seconds([0.0] * len(pre_mem), pre_mem, PREFILL)[1]
    )
    total_compute = fsum(compute) + fsum(pre_compute)
    total = fsum(bound) + fsum(pre_bound)
    compute_bound = fsum(b for c, b in zip(compute, bound, strict=True) if c >= b) + fsum(
        b for c, b in zip(pre_compute, pre_bound, strict=True) if c >= b
    )
    if engine is not None:
        decode = [
            max(engine.decode_step_s(a, c), b)
            for a, c, b in zip(active, contexts, bound, strict=True)
        ]
        prefill = [
            max(engine.prefill_s(admits[p] * prompt, prompt), b)
            for p, b in zip(pre_steps, pre_bound, strict=True)
        ]
        predicted = (fsum(decode), fsum(prefill))
    else:
        predicted = (fsum(bound), fsum(pre_bound))
    return Timeline(
        slots=slots,
        sequences=n,
        waves=-(-n // slots),
        steps=steps,
        time=PhaseTime(total_compute, memory_s, total, compute_bound),
        depth=max(chains),
        finish_s=finish,
        step_end_s=tuple(step_end),
        step_bound_s=tuple(bound),
        step_idle_s=tuple(b - c for c, b in zip(compute, bound, strict=True)),
        lengths=tuple(resp),
        predicted_s=sum(predicted),
        predicted_decode_s=predicted[0],
        predicted_prefill_s=predicted[1],
    )


def _phases(
    roofline: Roofline,
    flops: Sequence[float],
    bytes_per_device: Sequence[float],
    link_s: float,
    kernels: Kernels = DECODE,
) -> tuple[list[float], list[float]]:
    """Per phase (compute seconds, bound seconds): the roofline of FLOPs over the replica's
    devices and bytes per device, and at least the link time."""
    compute, memory = roofline.seconds(flops, bytes_per_device, kernels)
    return compute, [max(c, m, link_s) for c, m in zip(compute, memory, strict=True)]
