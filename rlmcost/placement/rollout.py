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
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers
from rlmcost.timing import DECODE, PREFILL, Kernels

if TYPE_CHECKING:
    import numpy as np

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


def generation_depths(arch: Arch, prompt: int, max_response: int) -> np.ndarray:
    """D_gen(S, T) for T = 0 .. max_response (index T), exact integers.

    D_gen(S, T) = D_prefill(S) + sum_{c=S+1}^{S+T} (rest + n_attn ceil(log2 c)).
    """
    import numpy as np

    rest, n_attn = _decode_depth_parts(arch)
    contexts = np.arange(prompt + 1, prompt + max_response + 1, dtype=np.int64)
    clog = np.frexp((contexts - 1).astype(np.float64))[1].astype(np.int64)  # exact bit_length
    steps = rest + n_attn * clog
    out = np.zeros(max_response + 1, dtype=np.int64)
    out[1:] = np.cumsum(steps)
    return out + int(g.depth_prefill(arch_numbers(arch), prompt))


def replica_lengths(lengths: tuple[int, ...], replicas: int) -> tuple[int, ...]:
    """The most loaded replica's lengths (module docstring), longest first.

    >>> replica_lengths((1, 2, 3, 4, 5, 6, 7), 3)
    (7, 4, 1)
    """
    ordered = sorted(lengths)
    return tuple(ordered[i] for i in range(len(ordered) - 1, -1, -replicas))


def admission_order(n: int) -> list[int]:
    """A fixed shuffle of ``n`` sequences (numpy, seed 0): engines admit requests in arrival
    order, which does not know the lengths."""
    import numpy as np

    return [int(i) for i in np.random.default_rng(0).permutation(n)]


@dataclass(frozen=True)
class Timeline:
    """One replica's decode of its sequences (module docstring)."""

    slots: int  # concurrent sequences (KV capacity), at most the replica's share
    sequences: int  # the replica's share
    waves: int  # ceil(sequences / slots): rounds of admissions
    steps: int  # decode steps until the last sequence finishes
    time: PhaseTime
    depth: int
    finish_s: np.ndarray  # per sequence (admission order): time its last token is out
    step_end_s: np.ndarray  # per decode step: its end time
    step_bound_s: np.ndarray  # per decode step: its roofline time
    step_idle_s: np.ndarray  # per decode step: bound - compute (unused compute seconds)
    lengths: tuple[int, ...]  # response lengths, admission order
    predicted_s: float = 0.0  # predicted seconds (engine model; the bound without one)
    predicted_decode_s: float = 0.0  # of which decode steps
    predicted_prefill_s: float = 0.0  # of which prefills

    @property
    def time_s(self) -> float:
        return self.time.bound_s


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
    ``engine`` when given. Deterministic."""
    import numpy as np

    from rlmcost.timing import PhaseTime

    n = len(lengths)
    slots = max(1, min(slots, n))
    order = admission_order(n)
    resp = np.array([lengths[i] for i in order], dtype=np.int64)
    # continuous batching: admit in order into the first free slot
    free = [(0, s) for s in range(slots)]
    start = np.zeros(n, dtype=np.int64)
    slot_of = np.zeros(n, dtype=np.int64)
    for j in range(n):
        t0, s = heapq.heappop(free)
        start[j], slot_of[j] = t0, s
        heapq.heappush(free, (t0 + int(resp[j]), s))
    end = start + resp
    steps = int(end.max())
    # per global step t = 1..steps: in-flight count and sum of contexts (difference arrays)
    count = np.zeros(steps + 2, dtype=np.int64)
    const = np.zeros(steps + 2, dtype=np.int64)
    slope = np.zeros(steps + 2, dtype=np.int64)
    np.add.at(count, start + 1, 1)
    np.add.at(count, end + 1, -1)
    np.add.at(const, start + 1, prompt - start)
    np.add.at(const, end + 1, -(prompt - start))
    np.add.at(slope, start + 1, 1)
    np.add.at(slope, end + 1, -1)
    t = np.arange(steps + 2, dtype=np.int64)
    active = np.cumsum(count)[1 : steps + 1]
    contexts = (np.cumsum(const) + np.cumsum(slope) * t)[1 : steps + 1]
    flops = active.astype(np.float64) * cost.f0 + cost.f1 * contexts.astype(np.float64)
    mem = cost.weight_bytes + cost.kv_bytes_per_token * contexts.astype(np.float64)
    link = cost.gather_s
    compute, bound = _phases(roofline, flops, mem, link)
    # prefills: one phase per admission step, before that step's decode
    admits = np.bincount(start, minlength=steps + 1)[: steps + 1]
    pre_steps = np.nonzero(admits)[0]
    pre_flops = admits[pre_steps].astype(np.float64) * cost.prefill_flops
    pre_mem = cost.weight_bytes + cost.kv_bytes_per_token * prompt * admits[pre_steps]
    pre_compute, pre_bound = _phases(roofline, pre_flops, pre_mem.astype(np.float64), link, PREFILL)
    durations = bound.copy()
    prefill_before = np.zeros(steps, dtype=np.float64)
    prefill_before[pre_steps[pre_steps < steps]] = pre_bound[pre_steps < steps]
    step_end = np.cumsum(durations + prefill_before)
    finish = step_end[end - 1]
    depth_of = generation_depths(arch, prompt, int(resp.max()))
    chains = np.zeros(slots, dtype=np.int64)
    np.add.at(chains, slot_of, depth_of[resp])
    memory_s = float(
        roofline.seconds(np.zeros_like(mem, dtype=np.float64), mem)[1].sum()
        + roofline.seconds(np.zeros(len(pre_mem)), pre_mem, PREFILL)[1].sum()
    )
    total_compute = float(compute.sum() + pre_compute.sum())
    total = float(bound.sum() + pre_bound.sum())
    compute_bound = float(bound[compute >= bound].sum() + pre_bound[pre_compute >= pre_bound].sum())
    if engine is not None:
        decode = np.maximum(engine.decode_s(active, contexts), bound)
        prefill = np.array(
            [engine.prefill_s(int(admits[t]) * prompt, prompt) for t in pre_steps], dtype=np.float64
        )
        prefill = np.maximum(prefill, pre_bound)
        predicted = (float(decode.sum()), float(prefill.sum()))
    else:
        predicted = (float(bound.sum()), float(pre_bound.sum()))
    return Timeline(
        slots=slots,
        sequences=n,
        waves=-(-n // slots),
        steps=steps,
        time=PhaseTime(total_compute, memory_s, total, compute_bound),
        depth=int(chains.max()),
        finish_s=finish,
        step_end_s=step_end,
        step_bound_s=bound,
        step_idle_s=bound - compute,
        lengths=tuple(int(x) for x in resp),
        predicted_s=sum(predicted),
        predicted_decode_s=predicted[0],
        predicted_prefill_s=predicted[1],
    )


def _phases(
    roofline: Roofline,
    flops: np.ndarray,
    bytes_per_device: np.ndarray,
    link_s: float,
    kernels: Kernels = DECODE,
) -> tuple[np.ndarray, np.ndarray]:
    """Per phase (compute seconds, bound seconds): the roofline of FLOPs over the replica's
    devices and bytes per device, and at least the link time."""
    import numpy as np

    compute, memory = roofline.seconds(flops, bytes_per_device, kernels)
    return compute, np.maximum(np.maximum(compute, memory), link_s)
