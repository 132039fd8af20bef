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

Runs: between two admissions or finishes the same sequences are in flight and every per-step
quantity above is linear in the step (the contexts grow by the number in flight), so the
timeline is kept run by run (:class:`Run`) and each run's sums are closed forms
(:mod:`rlmcost.placement.envelope`); a rollout of 262,144 decode steps in 32 waves is 32 runs.
The runs follow from the admission schedule's step counters before any time is known, so a
long schedule's runs are summed all at once with numpy (:mod:`rlmcost.placement.decode_runs`,
equal to the run-by-run loop to the last bit). Tests check the closed forms against the same
sums step by step and against a brute-force simulation.

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

from collections import Counter
from collections.abc import Sequence
from functools import cache
from itertools import chain, repeat
from math import fsum
from operator import add
from typing import TYPE_CHECKING

from rlmcost.arch import Arch
from rlmcost.compiled import blocks as nb
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.memo import kept_property, memoized
from rlmcost.placement.admission import _admit, admission_order
from rlmcost.placement.decode_runs import Run, Runs, bound_runs, bounds_of, segment_bounds
from rlmcost.placement.group_gate import GroupGate, admit_grouped
from rlmcost.placement.paged import Paged
from rlmcost.placement.prefills import phases, prefills
from rlmcost.placement.prefix_share import PrefixShare
from rlmcost.placement.replay_state import Row
from rlmcost.placement.untimed import UNTIMED
from rlmcost.timing import DECODE, PREFILL, Kernels

if TYPE_CHECKING:
    from rlmcost.perf.generation import Engine
    from rlmcost.placement.sglang_admit import TokenPool
    from rlmcost.timing import PhaseTime, Roofline


@dataclass(frozen=True)
class DecodeCost:
    """What one replica's steps cost: FLOPs per sequence at context c = f0 + f1 c, prefill FLOPs
    per sequence, weight bytes read per step and KV bytes per cached token (per device), and the
    link seconds of a ZeRO-3 parameter gather per forward pass (0 without ZeRO-3).

    Under speculative decoding (:mod:`rlmcost.placement.speculative`) these are one engine
    step's (drafts and verification), which emits ``tokens_per_step`` tokens per sequence in
    expectation; the timeline's steps stay one token each, at 1 / ``tokens_per_step`` of an
    engine step's seconds (every sequence advances at the same rate, so admissions and
    finishes fall as they do one token per step)."""

    f0: int
    f1: int
    prefill_flops: int
    weight_bytes: float
    kv_bytes_per_token: float
    gather_s: float = 0.0
    tokens_per_step: float = 1.0


@cache
def decode_flops(arch: Arch) -> tuple[int, int]:
    """(f0, f1) with C_f^tok(c) = f0 + f1 c for one decode step at context c (exact,
    ``blocks.work_decode_step`` compiled); under DeepSeek Sparse Attention the per-key part is
    the indexers' alone, a lower bound (:func:`~rlmcost.perf.decode_kernels.
    dsa_bound_per_token`)."""
    one, two = int(nb.work_decode_step(arch, 1)), int(nb.work_decode_step(arch, 2))
    if arch.index_topk is not None:
        from rlmcost.perf.decode_kernels import dsa_bound_per_token

        return one - (two - one), dsa_bound_per_token(arch)[0]
    return one - (two - one), two - one


@dataclass(frozen=True)
class Timeline:
    """One replica's decode of its sequences (module docstring)."""

    slots: int  # concurrent sequences (KV capacity; paged: the most in flight), <= the share
    sequences: int  # the replica's share
    waves: int  # ceil(sequences / slots): rounds of admissions
    steps: int  # decode steps until the last sequence finishes
    time: PhaseTime
    depth: int
    finish_s: tuple[float, ...]  # per sequence (admission order): time its last token is out
    finish_run: tuple[int, ...]  # per sequence: the index of the run its last step ends
    run_columns: Runs  # the decode steps, run by run, column by column
    lengths: tuple[int, ...]  # response lengths, admission order
    predicted_s: float = 0.0  # predicted seconds (engine model; the bound without one)
    predicted_decode_s: float = 0.0  # of which decode steps
    predicted_prefill_s: float = 0.0  # of which prefills
    preemptions: int = 0  # sequences preempted and recomputed (``paged``)
    recompute_flops: int = 0  # FLOPs of their re-prefills (in the prefill phases above)
    shared_flops: int = 0  # prefill FLOPs a group's cached prompt spared (``prefix_share``)
    shared_tokens: int = 0  # prompt tokens a group's samples share (0: no prefix caching)
    paged: bool = False  # admitted by KV blocks / tokens (:mod:`.paged`, :mod:`.sglang_admit`)
    capped: str = ""  # paged, ``slots`` bound: "running" (its cap), "call", or "sglang-pool" /
    # "megatron-pool" (a cap the KV pool sets: ``engine_budget.cap_source``)

    @property
    def time_s(self) -> float:
        return self.time.bound_s

    @kept_property
    def runs(self) -> tuple[Run, ...]:
        """The decode steps, run by run (:class:`Run`), made when first read."""
        return tuple(self.run_columns.rows())


@memoized()
def timeline(
    arch: Arch,
    prompt: int,
    lengths: tuple[int, ...],
    slots: int,
    cost: DecodeCost,
    roofline: Roofline,
    engine: Engine | None = None,
    call: int | None = None,
    paged: Paged | TokenPool | PrefixShare | None = None,
    gate: GroupGate | None = None,
) -> Timeline:
    """Simulate one replica decoding ``lengths`` (its share) with ``slots`` concurrent
    sequences on ``roofline`` (the replica's devices), with predicted step times from
    ``engine`` when given; ``call``: handed over in calls of that many sequences, one after
    another (:func:`_admit`); ``paged``: admitted by vLLM's blocks (:mod:`.paged`) or SGLang's
    tokens (:mod:`.sglang_admit`); ``gate``: behind a prompt-group gate (:mod:`.group_gate`),
    its ``version``: and behind a version gate (``admit_grouped``'s, :mod:`.version_gate`);
    ``paged`` a :class:`~rlmcost.placement.prefix_share.PrefixShare` alone: prefix sharing
    without a pool (a stream's slots, :mod:`.prefix_share`); a pool's ``held`` (per sequence
    of ``lengths``: a multi-turn sample's observations, :mod:`.turn_kv`) goes to its
    admission in admission order, memory alone. Deterministic; run by run
    (:class:`Run`, :func:`~rlmcost.placement.decode_runs.decode_runs`): the cost of a rollout
    grows with its admissions and finishes, not with its decode steps."""
    from rlmcost.timing import PhaseTime

    if UNTIMED[0] and not isinstance(paged, PrefixShare):  # untimed.untimed(): no KV pool
        paged = None  # to replay: its slots (the running cap) admit
    share = None
    if isinstance(paged, PrefixShare):  # a stream: its own slots, the prompt shared
        share, paged = paged, None
    n = len(lengths)
    if n == 0 or min(lengths) < 1:
        raise SpecError("a rollout needs at least one sequence of at least one response token")
    slots = max(1, min(slots, n))
    same = lengths.count(lengths[0]) == n  # one length: any admission order gives it
    resp = [lengths[0]] * n if same else [lengths[i] for i in admission_order(n)]
    preemptions, peak = 0, slots
    if paged is None and gate is None and share is None and same and not call:
        # one length, plain slots: waves of ``slots`` (``_waves``), summed wave by wave
        waves = [(w * resp[0], min(slots, n - w * slots)) for w in range(-(-n // slots))]
        end = list(chain.from_iterable(repeat(s0 + resp[0], m) for s0, m in waves))
        last_slot = (list(range(slots)) * len(waves))[:n]
        change: Counter[int] = Counter()  # in-flight change after step b
        context_change: Counter[int] = Counter()  # context-sum change after step b
        for s0, m in waves:
            change[s0] += m
            change[s0 + resp[0]] -= m
            context_change[s0] += m * (prompt + 1)
            context_change[s0 + resp[0]] -= m * (prompt + 1 + resp[0])
        pre = phases(arch, prompt, cost, None, None, Counter(dict(waves)), {}, {})
        bounds = bounds_of(change, context_change)
    else:
        rows: Sequence[Row]
        if paged is None:
            start, slot_of = (_admit(resp, slots, call) if gate is None
                              else admit_grouped(resp, slots, gate))  # fmt: skip
            rows = list(zip(range(n), start, map(add, start, resp), repeat(prompt), slot_of))
        else:
            held = paged.held and [paged.held[i] for i in admission_order(n)]
            sched = paged.admit(resp, prompt, slots, call, held)
            rows, preemptions, peak = sched.rows, sched.preemptions, sched.peak
        # the segments column by column; each sequence's last segment (in order)
        seqs, starts, ends, contexts, slot_col = zip(*rows, strict=True)
        last = dict(zip(seqs, range(len(rows)), strict=True))
        at = list(map(last.__getitem__, range(n)))
        end, last_slot = list(map(ends.__getitem__, at)), list(map(slot_col.__getitem__, at))
        # prefills: one phase per admission step, before that step's first decode; a
        # readmitted (preempted) sequence recomputes its context (``paged``), a cached
        # prompt is shared
        pre = prefills(arch, prompt, rows, cost, paged, share)
        # runs: between consecutive admissions/finishes the same sequences are in flight
        bounds = segment_bounds(starts, ends, contexts)
    steps = max(end)
    pre_steps, pre_mem = pre.steps, pre.memory
    pre_compute, pre_bound = _phases(roofline, pre.flops, pre_mem, cost.gather_s, PREFILL)
    prefill_before = dict(zip(pre_steps, pre_bound, strict=True))
    runs, totals = bound_runs(bounds, prefill_before, roofline, cost, engine)
    run_of_end = dict(zip(runs.last, range(len(runs.last)), strict=True))
    finish_run = tuple(map(run_of_end.__getitem__, end))  # per sequence, looked up in C
    # D_gen(S, T) in closed form (blocks.depth_generation, compiled)
    depth_of = {r: int(nb.depth_generation(arch, prompt, r)) for r in set(resp)}
    if same:  # one length: a slot's chain is its sequences' count times one depth
        chains = [m * depth_of[resp[0]] for m in Counter(last_slot).values()]
    else:
        chains = [0] * slots
        for i, r in enumerate(resp):
            chains[last_slot[i]] += depth_of[r]
    pre_memory_s = fsum(roofline.seconds([0.0] * len(pre_mem), pre_mem, PREFILL)[1])
    compute_s, memory_s, bound_s, compute_bound_s, predicted_decode = totals
    pre_compute_bound = fsum(b for c, b in zip(pre_compute, pre_bound, strict=True) if c >= b)
    if engine is not None:
        predicted = (predicted_decode, fsum(pre.predicted_s(engine, prompt, pre_bound)))
    else:
        predicted = (bound_s, fsum(pre_bound))
    return Timeline(
        slots=peak,
        sequences=n,
        waves=-(-n // peak),
        steps=steps,
        time=PhaseTime(
            compute_s + fsum(pre_compute),
            memory_s + pre_memory_s,
            bound_s + fsum(pre_bound),
            compute_bound_s + pre_compute_bound,
        ),
        depth=max(chains),
        finish_s=tuple(map(runs.end_s.__getitem__, finish_run)),
        finish_run=finish_run,
        run_columns=runs,
        lengths=tuple(resp),
        predicted_s=sum(predicted),
        predicted_decode_s=predicted[0],
        predicted_prefill_s=predicted[1],
        preemptions=preemptions,
        recompute_flops=pre.recompute_flops,
        shared_flops=pre.shared_flops,
        shared_tokens=pre.shared_tokens,
        paged=paged is not None,
        capped="" if paged is None or preemptions else "call" if call and peak >= min(call, n)
        else "running" if peak >= slots else "",
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
