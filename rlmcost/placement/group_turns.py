"""A multi-turn rollout's generation job on its group: the observations' prefills, the later
turns' longer contexts and the tool latency, composed by the schedule
(:mod:`rlmcost.placement.turns` for what the frameworks do).

The rollout timeline (:mod:`rlmcost.placement.rollout`) runs each sample's decoded tokens
(``decoded``: l - k O) after its prompt, with the sample in flight from its first turn to its
last (a sample waiting for its tool keeps its KV blocks: vLLM's freed blocks stay as
prefix-cache entries, SGLang's radix cache keeps them; rlmcost keeps it in flight, the
conservative reading). On top of it, per replica (its share of the samples, the query's mean
per sample):

* observation prefill (``observation_prefill_s``): the exact FLOPs of the observations'
  tails after the cached context and the bytes of one phase per chunk of the engine's
  ``max_num_batched_tokens`` (the weights once per chunk, the KV of the contexts they attend
  to), priced alone as the timeline prices a prompt's prefill; predicted as chunked prefill
  (``Engine.prefill_s``) of the tokens at the observations' mean context, as a cached
  prompt's tail is (:mod:`rlmcost.placement.prefills`), at least the bound;
* observation context (``observation_context_s``): the later turns' decode steps attend to
  the i O observation tokens before turn i: f1 FLOPs and the KV bytes of a cached token per
  step and token (``DecodeCost``), one decode-kernel phase; predicted at the engine's
  seconds per context token at the timeline's concurrency (``Engine.decode_step_parts``);
* tool wait (``tool_wait_s``), by :class:`~rlmcost.choices.TurnSchedule`:

  - ``per-sample``: the engine keeps busy with other samples while one waits, so the rollout
    takes the longer of the engine's work (the timeline and the two terms above) and the
    longest sample's own chain: one wave's prefill, its decoded tokens at the mean decode
    step a sample sees (:func:`sample_step_s`: steps weighted by the samples in them, so a
    KV-bound timeline's lightly loaded tail does not shorten it), and its k L of waits (k its
    observations);
  - ``turn-synchronous``: N rounds, each a generation batch of every active sample's turn,
    then one environment step for all: with turns split evenly per sample the longest
    sample's turn is every round's longest, so the rounds' decode steps are the timeline's;
    the k L of waits add in full (each env step waits for its batch).

  The exposed wait is the part of the rollout beyond the engine's work. The bound and the
  prediction take the same composition of their own seconds, so the prediction stays at
  least the bound. The environment step after the last turn is the reward's, as for one turn.

The KV pool (vLLM's blocks, SGLang's token slots) holds each sample's k O observation tokens
beside prompt + decoded ones from its admission on, memory alone (:mod:`rlmcost.placement.
turn_kv`: the conservative form, more than the engine holds before the last turn); the
engine's reservation is sized for S + T per sequence, which holds them.

Deviations: every replica's share priced at the query's mean sample; the generation depth
stays the timeline's over the decoded tokens; the longest sample's chain leaves out a
preempted sample's wait for readmission."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from math import fsum
from operator import mul

from rlmcost.algorithms.kinds import Kind
from rlmcost.choices import TurnSchedule
from rlmcost.compiled.invocation import work_poly_in_t
from rlmcost.perf.generation import CHUNK_TOKENS, Engine
from rlmcost.placement.decode_runs import Runs
from rlmcost.placement.device_groups import Task
from rlmcost.placement.group_cost import GroupModel
from rlmcost.placement.group_decode import decode_cost
from rlmcost.placement.jobs import GroupEstimate, Job
from rlmcost.placement.task_work import frozen_values
from rlmcost.placement.turns import decoded_lengths, turn_sums
from rlmcost.specs import Workload
from rlmcost.timing import DECODE, PREFILL, PhaseTime


def multi_turn(g: GroupModel, task: Task) -> bool:
    """Whether ``task`` is a multi-turn rollout: the run's N > 1 and a generation of the
    response T (a judge's fixed-length generation stays one turn)."""
    return (g.s.workload.turns > 1 and task.kind is Kind.GENERATE
            and task.invocation.response == "T")  # fmt: skip


def decoded(g: GroupModel, task: Task, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """The lengths ``task``'s timeline decodes: each sample's l - k O under multi-turn."""
    if not multi_turn(g, task):
        return lengths
    wl = g.s.workload
    return decoded_lengths(lengths, wl.turns, wl.observation_tokens)


def with_turns(g: GroupModel, task: Task, job: Job,
               engine_of: Callable[[GroupModel, Task], Engine]) -> Job:  # fmt: skip
    """``job`` (a generation over :func:`decoded` lengths) with the observations' prefills
    and contexts in its work, bound and prediction, and the tool wait by the schedule
    (module docstring); ``job`` itself where the rollout has one turn."""
    tl = job.timeline
    if not multi_turn(g, task) or tl is None:
        return job
    wl, arch, layout = g.s.workload, g.s.arch(task.role), job.layout
    lengths = g.lengths(task)
    prompt = g._int_at(task.invocation.prompt, g.longest(task))
    coeffs = work_poly_in_t(task.invocation, arch, frozen_values(g.s.values), g.s.counting)
    sums = turn_sums(arch, coeffs, prompt, lengths, wl.turns, wl.observation_tokens,
                     g.s.counting)  # fmt: skip
    cost = decode_cost(g, task, arch, layout, prompt)
    roofline = g.roofline(layout.n_gpus // layout.dp, task)
    engine = None if g.s.deployment.ideal else engine_of(g, task)
    share = tl.sequences / len(lengths)  # of the samples, on the replica timed
    tokens = sums.observation_tokens * share
    chunk = engine.options.chunk_tokens if engine is not None else CHUNK_TOKENS
    chunks = -(-round(tokens) // chunk) if tokens else 0
    kv = cost.kv_bytes_per_token
    prefill = roofline.phase(sums.prefill_flops * share,
                             chunks * cost.weight_bytes + kv * sums.context_tokens * share,
                             PREFILL) if chunks else PhaseTime()  # fmt: skip
    shifted = sums.shift_tokens * share
    context = roofline.phase(cost.f1 * shifted, kv * shifted, DECODE)
    prefill_s, context_s = prefill.bound_s, context.bound_s
    if engine is not None:
        if chunks:
            mean = max(1, round(sums.context_tokens / max(sums.observations, 1)))
            prefill_s = max(engine.prefill_s(round(tokens), mean), prefill.bound_s)
        context_s = max(engine.decode_step_parts(tl.slots)[1] * shifted, context.bound_s)
    time = job.time + prefill + context
    pred = job.predicted_s + prefill_s + context_s
    waits = sums.most_observations * wl.tool_latency_s
    decode_bound = fsum(tl.run_columns.bound_s)
    parts = job.predicted_parts_s
    step = sample_step_s(tl.run_columns)  # a sample's mean decode step (bound)
    decode_pred = parts.get("decode_s", tl.predicted_decode_s)
    chain = (sums.most_decoded * step
             + (tl.time.bound_s - decode_bound) / max(tl.waves, 1) + waits)  # fmt: skip
    chain_pred = (sums.most_decoded * step * (decode_pred / decode_bound if decode_bound else 1)
                  + parts.get("prefill_s", tl.predicted_prefill_s) / max(tl.waves, 1)
                  + waits)  # fmt: skip
    if wl.turn_schedule is TurnSchedule.TURN_SYNC:
        bound_s, total = time.bound_s + waits, pred + waits
    else:
        bound_s, total = max(time.bound_s, chain), max(pred, chain_pred)
    if bound_s > time.bound_s:  # the tool wait: seconds no roofline gives
        time = PhaseTime(time.compute_s, time.memory_s, bound_s, time.compute_bound_s)
    total = max(total, time.bound_s)
    return replace(
        job,
        work_flops=job.work_flops + sums.prefill_flops - sums.replaced_flops,
        time=time,
        ideal_s=time.bound_s,
        predicted_s=total,
        predicted_ideal_s=total,
        predicted_parts_s={**parts, "observation_prefill_s": prefill_s,
                           "observation_context_s": context_s, "tool_wait_s": total - pred},
        tokens=len(lengths) * prompt + sum(lengths),
    )  # fmt: skip


def sample_step_s(runs: Runs) -> float:
    """The mean bound seconds of a decode step as the samples see it: each run's steps
    weighted by the samples in flight, sum(bound x active) / sum(steps x active). A
    timeline whose samples run together (one wave of one length) gives its plain mean step;
    a KV-bound one's lightly loaded steps (a preempted sample's tail, the last finishes)
    weigh as little as the samples in them.

    Ten steps of 4 samples at 0.8 s, then ten of 1 at 0.2 s: 34 / 50, not 10 / 20:

    >>> sample_step_s(Runs((1, 11), (10, 20), (4, 1), (0, 0), (8.0, 2.0), (0, 0), (8, 10)))
    0.68
    """
    steps = fsum(a * (last - first + 1)
                 for first, last, a in zip(runs.first, runs.last, runs.active, strict=True))
    return fsum(map(mul, runs.bound_s, runs.active)) / steps if steps else 0.0


_SCHEDULE_SOURCE = {
    TurnSchedule.PER_SAMPLE: "a task per sample: verl's agent loop, NeMo RL's async engine, "
    "slime's generate",
    TurnSchedule.TURN_SYNC: "every sample's turn one batch, then one environment step: NeMo "
    "RL's run_multi_turn_rollout",
}


def turns_note(wl: Workload, groups: Sequence[GroupEstimate]) -> str | None:
    """The note on a multi-turn rollout: N, O, L, the schedule and the generation's terms
    (the first generation job's, seconds on its replica); None for one turn."""
    if wl.turns == 1:
        return None
    parts = next((j.predicted_parts_s for g in groups for j in g.jobs
                  if "tool_wait_s" in j.predicted_parts_s), {})  # fmt: skip
    terms = ", ".join(f"{k.removesuffix('_s').replace('_', ' ')} {parts[k]:.2f} s"
                      for k in ("observation_prefill_s", "observation_context_s", "tool_wait_s")
                      if k in parts)  # fmt: skip
    return (f"multi-turn rollout: {wl.turns} turns, {wl.observation_tokens} observation "
            f"tokens after each but the last (part of T, prefilled on the cached context), "
            f"{wl.tool_latency_s:g} s of tool latency each; schedule {wl.turn_schedule} "
            f"({_SCHEDULE_SOURCE[wl.turn_schedule]})" + (f"; generation: {terms}" if terms
                                                        else "")  # fmt: skip
            + "; the KV pool holds each sample's observations from its admission on "
            "(rlmcost.placement.turn_kv); trained sequences stay S + T "
            "(rlmcost.placement.group_turns)")
