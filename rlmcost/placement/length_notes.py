"""The response-length note of an evaluation: the lengths it assumed, and the term that grows
with the batch when they spread.

Lengths are the midpoint quantiles q_i = (2 i + 1) / (2 n) of ``--length-dist``
(:mod:`rlmcost.placement.lengths`), so the longest of n responses sits at the (2 n - 1) / (2 n)
quantile: a larger batch (n = B x K, and so more GPUs at the same per-GPU batch) draws further
into the tail, as the expected maximum of n draws grows with n (order statistics; seed paper
§IV-C: the longest trajectories set the Generation stage's depth). The tail lengthens
generation and the heaviest rank's share of every pass over the responses (its packed or
padded tokens), which is why those phases can grow with GPUs at a fixed per-GPU batch without
any communication growing (issue 18: 'the output names the term that grew').
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.placement.group_key import per_query
from rlmcost.placement.inputs import Setup
from rlmcost.placement.task_work import count_of, frozen_at


def length_note(setup: Setup, response_len: int, groups: Iterable[Any]) -> str | None:
    """The note on response lengths: with ``fixed`` (the default) that every response is T and
    how to spread them; with a spread, the tail as drawn for this batch (mean and longest of
    the generated responses) and the phases it lengthens (:func:`response_phases` of the
    evaluation's ``groups``: those that generate, score or train on the responses). None for
    an offline algorithm or the paper's idealized iteration."""
    if setup.alg.offline or setup.deployment.ideal:
        return None
    dist = setup.lengths
    if dist.is_fixed:
        return (f"every response is T = {response_len} tokens (--length-dist fixed, the "
                "default); real rollouts spread and the longest sets generation's tail: "
                "--length-dist reasoning (T the cap) or lognormal:MEAN,SIGMA,MAX")  # fmt: skip
    gen = next((t for t in setup.tasks if t.kind is Kind.GENERATE), None)
    if gen is None:
        return None
    n = int(count_of(gen.invocation.sequences, frozen_at(setup.values)))
    # the groups' own lengths of the task, kept per query (GroupSizes.lengths, same key)
    drawn = per_query(setup, ("lengths", n), lambda: dist.lengths(n, setup.response))
    named = ", ".join(dict.fromkeys(response_phases(groups)))
    return (f"length tail: {n:,} responses per iteration at the midpoint quantiles of "
            f"--length-dist {dist.describe(response_len)}, mean {sum(drawn) / n:,.0f} and "
            f"longest {max(drawn):,} tokens; a larger batch (also more GPUs at the same "
            "per-GPU batch) draws further into the tail (the longest of n at the "
            "(2n - 1)/2n quantile), lengthening generation's tail and the heaviest rank's "
            f"share of each pass over the responses: {named} (rlmcost.placement.lengths)"
            + past_caps(setup, response_len, max(drawn)))


def past_caps(setup: Setup, response_len: int, longest: int) -> str:
    """Where a distribution that gives its own lengths (uniform, lognormal, file: not fixed
    or reasoning, whose cap is T) draws responses longer than T or than the actor's trained
    context leaves after the prompt, the sentences that say so: T caps only fixed and
    reasoning lengths, and an engine ends a response at its context (vLLM and SGLang stop a
    request at max_model_len / context_length, the checkpoint's by default), which these
    lengths pass; "" otherwise."""
    if setup.lengths.kind in ("fixed", "reasoning"):
        return ""
    out = ""
    if longest > response_len:
        out += (f"; the longest is past --response-len T = {response_len:,}, which caps the "
                "fixed and reasoning lengths only: a distribution's own cap is lognormal's "
                "MAX, uniform's HI")
    spec = setup.specs[Role.ACTOR]
    limit = spec.n_positions or spec.max_context
    prompt = setup.workload.prompt_len
    if limit and prompt + longest > limit:
        out += (f"; {spec.name}'s trained context of {limit:,} tokens leaves "
                f"{max(0, limit - prompt):,} after the {prompt:,}-token prompt, fewer than "
                "the longest: an engine ends a response at its context, so these lengths "
                "price responses the run cannot generate (cap the distribution there)")
    return out


def response_phases(groups: Iterable[Any]) -> list[str]:
    """The phases of the jobs that generate, score or train on the responses, in order."""
    kinds = (Kind.GENERATE, Kind.FORWARD, Kind.TRAIN)
    return [j.phase for g in groups for j in g.jobs if j.task.kind in kinds]


def over_budget_note(groups: Iterable[Any]) -> str | None:
    """The note for a per-GPU token budget below one sequence under a framework that does
    not refuse it (:data:`~rlmcost.frameworks.buffers.OVER_BUDGET_REFUSED` lists those that
    do): each sequence runs alone in a micro-batch of its own past the budget, so the budget
    batches nothing (``GroupEstimate.over_budget``, set by ``GroupTasks._apply_token_budget``)."""
    over = {phase: (budget, per_gpu, seq) for g in groups
            for phase, budget, per_gpu, seq in g.over_budget}  # fmt: skip
    if not over:
        return None
    budget, per_gpu, seq = max(over.values(), key=lambda v: v[1])
    return (f"--max-tokens-per-gpu {budget} is below one sequence ({per_gpu:,} tokens per GPU "
            f"of a {seq:,}-token sequence) in {', '.join(over)}: each sequence runs alone in a "
            "micro-batch of its own past the budget (micro-batch 1, as slime's "
            "build_dp_schedule runs an over-cap sample); give at least "
            f"{per_gpu} for the budget to batch sequences")
