"""Multi-turn (agentic) rollouts: N assistant turns per sample, an environment observation of O
tokens after every turn but the last, L seconds of environment (tool) latency each.

What the frameworks do (and so what is priced):

* **The response budget holds the whole trajectory after the prompt.** verl's agent loop
  appends each turn's tokens (response mask 1) and each tool response's (mask 0) to one
  response of at most ``rollout.response_length`` tokens (``verl/experimental/agent_loop/
  tool_agent_loop.py`` @b178a3cd: ``_handle_generating_state``, ``_handle_processing_tools_state``);
  NeMo RL caps prompt + turns + observations at ``policy.max_total_sequence_length``
  (``nemo_rl/experience/rollouts.py`` @7ea279abf ``run_multi_turn_rollout``: ``max_seq_len``).
  So the trained and forwarded sequences stay S + T tokens (T the response budget, the
  observations in it) and every pass but generation is priced as for one turn.
* **Generation decodes the turns' tokens and prefills the observations.** A sample of ``l``
  response tokens has ``k = min(N - 1, (l - 1) // (O + 1))`` observations (each turn decodes at
  least one token; a short sample under a length distribution takes fewer turns) and decodes
  ``l - k O`` tokens, split evenly over its ``k + 1`` turns (the first turns one more where
  they do not divide). Each turn is a new request on the whole context (verl:
  ``server_manager.generate(prompt_ids=agent_data.prompt_ids)``); the engine's prefix cache
  (vLLM V1's automatic prefix caching, on by default; SGLang's radix cache) holds the context,
  so the request prefills only the observation's O tokens on top of it: FLOPs of a tail after
  a cached prefix (:func:`~rlmcost.placement.prefix_share.tail_flops`: the body on O tokens,
  their attention to the whole context, the LM head), in place of the O decode steps one turn
  would have run there (the invocation's own per-sequence work polynomial, differenced).
  With O = 0 nothing is prefilled and the work is one turn's exactly.
* **The decode steps of later turns attend to the observations too**: turn i's steps read i O
  more cached tokens than one turn's steps at the same count (``shift_tokens`` below).

:func:`turn_sums` gives these per sample, exactly (ints); :mod:`rlmcost.placement.group_turns`
prices them on a replica and composes the tool latency by the schedule
(:class:`~rlmcost.choices.TurnSchedule`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from rlmcost.arch import Arch
from rlmcost.choices import AttnCounting
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.memo import memoized
from rlmcost.placement.prefix_share import tail_flops


def check_turns(turns: int, observation_tokens: int, response_len: int) -> None:
    """SpecError unless N turns of at least one decoded token each and their N - 1
    observations fit the response budget T: (N - 1) O + N <= T."""
    if turns < 1:
        raise SpecError(f"--turns {turns} must be at least 1 (1: one response per sample)")
    if observation_tokens < 0:
        raise SpecError(f"--observation-tokens {observation_tokens} must be 0 or more")
    need = (turns - 1) * observation_tokens + turns
    if need > response_len:
        most = (response_len + observation_tokens) // (observation_tokens + 1)
        raise SpecError(
            f"--turns {turns} with --observation-tokens {observation_tokens} needs a response "
            f"budget of (N - 1) x O + N = {need:,} tokens (observations are part of T); "
            f"give --response-len {need} or more, or --turns {max(most, 1)} or fewer"
        )


def observations(length: int, turns: int, observation_tokens: int) -> int:
    """k, the observations in a sample of ``length`` response tokens (module docstring)."""
    return min(turns - 1, (length - 1) // (observation_tokens + 1))


def turn_lengths(length: int, turns: int, observation_tokens: int) -> tuple[int, ...]:
    """The decoded tokens of each of the sample's k + 1 turns (module docstring).

    >>> turn_lengths(1024, 4, 100)
    (181, 181, 181, 181)
    >>> turn_lengths(10, 4, 0)
    (3, 3, 2, 2)
    """
    k = observations(length, turns, observation_tokens)
    q, r = divmod(length - k * observation_tokens, k + 1)
    return tuple(q + (i < r) for i in range(k + 1))


def least_decoded(length: int, turns: int, observation_tokens: int) -> int:
    """The fewest decoded tokens of a sample of at least ``length`` response tokens (the plan
    screen's bound on the longest sample's decode steps): l - k O over l >= ``length``, which
    dips where k steps up and grows once k = N - 1, so the least is within (N - 1)(O + 1) + 1.

    >>> least_decoded(101, 4, 100), least_decoded(2048, 1, 0)
    (2, 2048)
    """
    span = (turns - 1) * (observation_tokens + 1) + 2
    return min(n - observations(n, turns, observation_tokens) * observation_tokens
               for n in range(length, length + span))  # fmt: skip


def decoded_lengths(lengths: Sequence[int], turns: int, observation_tokens: int
                    ) -> tuple[int, ...]:  # fmt: skip
    """Each sample's decoded tokens, l - k O (the rollout timeline's lengths)."""
    return tuple(n - observations(n, turns, observation_tokens) * observation_tokens
                 for n in lengths)  # fmt: skip


@dataclass(frozen=True)
class TurnSums:
    """Sums over a rollout's samples (exact ints): observations, their tokens, the FLOPs of
    their prefills on the cached context, the FLOPs of the decode steps one turn would have
    run at their positions, the cached tokens the observations add to later decode steps'
    contexts, and the contexts the observation prefills read (their KV); per sample at most:
    observations and decoded tokens."""

    observations: int
    observation_tokens: int
    prefill_flops: int
    replaced_flops: int
    shift_tokens: int
    context_tokens: int
    most_observations: int
    most_decoded: int


@memoized()
def turn_sums(
    arch: Arch, coeffs: tuple[Fraction, ...], prompt: int, lengths: tuple[int, ...],
    turns: int, observation_tokens: int, counting: AttnCounting,
) -> TurnSums:  # fmt: skip
    """:class:`TurnSums` of samples of ``lengths`` response tokens after ``prompt`` tokens;
    ``coeffs``: the generation invocation's work per sequence as a polynomial in T (ascending,
    ``compiled.invocation.work_poly_in_t``), whose differences are the replaced decode steps."""
    o = observation_tokens

    def work(t: int) -> Fraction:
        return sum((c * t**i for i, c in enumerate(coeffs)), Fraction(0))

    sums = [0] * 6
    most_k = most_decoded = 0
    for length, m in Counter(lengths).items():
        parts = turn_lengths(length, turns, o)
        k = len(parts) - 1
        most_k, most_decoded = max(most_k, k), max(most_decoded, sum(parts))
        p, own = 0, [k, k * o, 0, 0, 0, 0]
        for i, g in enumerate(parts):
            own[4] += i * o * g  # turn i's steps see i observations more
            if i == k:
                break
            p += g  # response tokens before observation i
            if o:
                context = prompt + p + o
                own[2] += tail_flops(arch, context, prompt + p, counting)
                steps = work(p + o) - work(p)  # the O decode steps one turn runs here
                if steps.denominator != 1:
                    raise AssertionError(f"non-integral decode work {steps}")
                own[3] += int(steps)
                own[5] += context
            p += o
        sums = [s + m * x for s, x in zip(sums, own, strict=True)]
    observed, tokens, prefill, spared, shift, context = sums
    return TurnSums(observed, tokens, prefill, spared, shift, context, most_k, most_decoded)
