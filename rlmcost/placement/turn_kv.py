"""A multi-turn sample's observations in the engine's KV pool: the memory side of the rollout
timeline's admission and preemption (:mod:`rlmcost.placement.turns` for the split: a sample of
l response tokens has k = min(N - 1, (l - 1) // (O + 1)) observations of O tokens and decodes
l - k O).

What the engines hold: each turn is a new request on the whole context, whose cached prefix
(vLLM V1's automatic prefix caching, SGLang's radix cache) holds prompt + earlier turns +
earlier observations, so before turn i (0-based) a sample holds prompt + i O + its decoded
tokens so far in the pool (vLLM: ``vllm/v1/core/kv_cache_manager.py`` ``allocate_slots``
counts a request's blocks over ``num_computed_tokens`` + its new tokens, a cached prefix
included (``get_computed_blocks``); SGLang: ``mem_cache/radix_cache.py`` keeps a request's
tokens in the tree, locked while it runs). A sample waiting for its tool keeps its blocks in
rlmcost (in flight from its first turn to its last: :mod:`rlmcost.placement.group_turns`).

What rlmcost accounts (the conservative form): a multi-turn sample holds its whole k O
observation tokens from its admission on, beside prompt + decoded tokens so far (``held``:
:attr:`~rlmcost.placement.paged.Paged.held`, :attr:`~rlmcost.placement.sglang_admit.
TokenPool.held`), in vLLM's block admission and preemption (:func:`~rlmcost.placement.paged.
paged_admit`) and SGLang's token admission and retraction (:func:`~rlmcost.placement.
sglang_admit.sglang_admit`, its admission's input tokens too). That reserves (k - i) O tokens
more than the engine holds before turn i: the pool binds at least as early as in the engine, so
the timeline admits at most as many samples at once, preempts at least as often and its decode
takes at least as long as an exact turn-by-turn account would give (a per-sequence KV schedule
in the replays: not modelled). Memory alone: the segments' contexts, which the decode steps'
FLOPs and KV reads and the re-prefills price, stay prompt + decoded (the observations' reads
are ``observation_context_s``, :mod:`rlmcost.placement.group_turns`), so the roofline bound
stays a lower bound of the schedule it runs. A preempted sample's re-prefill recomputes
prompt + decoded tokens, not its observations (a lower bound on that re-prefill).

Pools of slots sized for S + T per sequence (static batchers, a streaming rollout's slots,
Megatron-core's and the engine's reservation: ``engine_memory``, ``engine_slots`` over
``seq_len``) already hold every observation: T is the whole trajectory after the prompt.
With N = 1 or O = 0 nothing is held and the replays run as before, to the bit."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rlmcost.placement.group_realhf import areal_server_lengths
from rlmcost.placement.group_turns import decoded, multi_turn
from rlmcost.placement.turns import observations

if TYPE_CHECKING:
    from rlmcost.placement.device_groups import Task
    from rlmcost.placement.group_cost import GroupModel
    from rlmcost.placement.paged import Paged
    from rlmcost.placement.sglang_admit import TokenPool


def held_tokens(lengths: tuple[int, ...], turns: int, observation_tokens: int
                ) -> tuple[int, ...]:  # fmt: skip
    """Each sample's observation tokens, k O, for samples of ``lengths`` response tokens.

    >>> held_tokens((2048, 101, 201), 4, 100)
    (300, 0, 100)
    """
    o = observation_tokens
    return tuple(observations(n, turns, o) * o for n in lengths)


def replica_held(
    g: GroupModel, lengths: tuple[int, ...], decoded: tuple[int, ...], replicas: int
) -> tuple[int, ...]:
    """The observation tokens of the generation replica's samples, in the order of its decoded
    lengths ``areal_server_lengths(g, decoded, replicas)`` (what the timeline runs): the same
    pick over (decoded, held) pairs sorted together, so a replica's decoded lengths are the
    timeline's exactly and ties among equal decoded lengths take the larger observations
    first. ``lengths``: every sample's response tokens, ``decoded`` theirs less k O."""
    wl = g.s.workload
    held = held_tokens(lengths, wl.turns, wl.observation_tokens)
    base = max(held) + 1  # pairs as ints: decoded x base + held sorts by decoded, then held
    picked = areal_server_lengths(g, tuple(d * base + h for d, h in zip(decoded, held,
                                                                         strict=True)),
                                  replicas)  # fmt: skip
    return tuple(p % base for p in picked)


def observed_pool(g: GroupModel, task: Task, pool: Paged | TokenPool | None, replicas: int
                  ) -> Paged | TokenPool | None:  # fmt: skip
    """``pool`` with the replica's samples' observations held (module docstring) where
    ``task`` is a multi-turn rollout with observations; ``pool`` itself otherwise."""
    if pool is None or not multi_turn(g, task) or not g.s.workload.observation_tokens:
        return pool
    lengths = g.lengths(task)
    held = replica_held(g, lengths, decoded(g, task, lengths), replicas)
    return replace(pool, held=held) if any(held) else pool
