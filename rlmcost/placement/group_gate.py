"""Prompt-group admission of a streaming rollout: a group's place frees with its last sample.

NeMo RL's async GRPO with in-flight weight updates streams prompt groups through the engines
(:mod:`rlmcost.placement.streaming`), but it admits them a whole group at a time and frees a
group's place only when every sample of the group has returned:

* NVIDIA-NeMo/RL v0.6.0 nemo_rl/algorithms/async_utils.py ``AsyncTrajectoryCollector``
  (v0.7.0: nemo_rl/algorithms/async_utils/trajectory_collector.py, the same logic):
  ``_process_batch`` starts one thread per prompt group after ``_inflight_sema.acquire()``;
  the thread (``_run_prompt_group_worker``) runs the group's ``num_generations_per_prompt``
  samples through ``run_async_multi_turn_rollout`` (nemo_rl/experience/rollouts.py, which
  awaits all of them with ``asyncio.gather``), pushes the group to the replay buffer and only
  then, in its ``finally``, calls ``_inflight_sema.release()``. The semaphore holds
  ``num_prompts_per_step x max_trajectory_age_steps`` groups.
* Each sample is its own ``generate_async`` call, dealt round-robin over the engines'
  data-parallel shards (nemo_rl/models/generation/vllm/vllm_generation.py
  ``current_generate_dp_shard_idx``), so a group's K samples spread over the R replicas,
  ceil(K / R) of them on the replica simulated.

So the slot of a finished sample stays empty until its whole group is done, unless samples of
groups already admitted wait for it: with the engine's slots to spare (a large KV cache) the
stream runs below its slot count; with a KV-limited engine the admitted groups' waiting
samples fill it and the gate costs little.

The replica simulated (:func:`rlmcost.placement.rollout.timeline`) holds its share of each
group, ``unit`` samples consecutive in arrival order. The group's place also waits for its
samples on the other replicas, which this replica does not see: it frees at the later of the
replica's own last finish and the group's admission plus :func:`expected_longest` of K
samples (the expected maximum of K independent draws from the replica's lengths, exact
integer arithmetic, rounded up).

The same framework keeps the KV caches of the samples in flight across a weight update:
``resume_after_refit`` invalidates them only under ``grpo.async_grpo.
recompute_kv_cache_after_weight_updates`` (false in examples/configs/grpo_math_1B.yaml at
v0.5.0-v0.7.0: "keep using the stale KV caches (Magistral-style implementation)"), and the
refit reaches the running vLLM ``AsyncLLM`` through ``collective_rpc`` between engine steps
(nemo_rl/models/generation/vllm/vllm_worker_async.py ``update_weights_from_collective_async``),
so no sample recomputes its context: :class:`StreamRules` ``reprefill`` false
(``Behaviour.stream_keeps_kv``), where AReaL and verl re-prefill (:mod:`.streaming`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.frameworks.presets import behaviour
from rlmcost.placement.prefix_share import PrefixShare, engine_share

if TYPE_CHECKING:
    from rlmcost.deployment.engine import EngineSpec
    from rlmcost.placement.inputs import Setup


GATE_NOTE = (
    "whole prompt groups admitted, a group's place freed only when its last sample has "
    "returned (NeMo RL's _inflight_sema), so a finished sample's slot stays empty until "
    "its group is done unless admitted samples wait for it"
)
KEEP_KV_NOTE = (
    "; the in-flight samples continue across each weight update with their KV caches "
    "kept, no re-prefill (NeMo RL's default recompute_kv_cache_after_weight_updates "
    "false)"
)


@dataclass(frozen=True)
class GroupGate:
    """How a streaming rollout admits prompt groups on one replica (module docstring)."""

    unit: int  # samples of one group on this replica (ceil(K / R))
    in_flight: int  # groups admitted at once, this replica's share of the semaphore
    hold: int  # decode steps a group keeps its place at least: E[longest of its K samples]
    version: tuple[int, int, int] | None = None  # (batch, age, hold): the version gate's


@cache
def expected_longest(lengths: tuple[int, ...], k: int) -> int:
    """E[max of ``k`` independent draws from ``lengths``] (uniform), rounded up: with the
    lengths sorted x_1 <= .. <= x_n, sum_i x_i ((i / n)^k - ((i - 1) / n)^k), exact.

    >>> expected_longest((1, 3), 1), expected_longest((1, 3), 2)  # 2, then 1/4 + 3 * 3/4
    (2, 3)
    """
    xs = sorted(lengths)
    n = len(xs)
    if n == 0:
        return 0
    total = sum(x * (i**k - (i - 1) ** k) for i, x in enumerate(xs, 1))
    return -(-total // n**k)


def gate_for(lengths: tuple[int, ...], samples_per_prompt: int, replicas: int,
             depth: int) -> GroupGate:  # fmt: skip
    """The gate of a replica holding ``lengths`` (its share of one batch) when groups of
    ``samples_per_prompt`` are dealt round-robin over ``replicas`` and ``depth`` batches'
    groups may be in flight (the semaphore)."""
    unit = max(1, -(-samples_per_prompt // replicas))
    groups = max(1, -(-len(lengths) // unit))
    return GroupGate(unit, groups * depth, expected_longest(lengths, samples_per_prompt))


@dataclass(frozen=True)
class StreamRules:
    """What a framework's streaming rollout does its own way (module docstring): the
    prompt-group ``gate`` (None: sample by sample), ``reprefill``, whether the samples in
    flight recompute their KV caches at a weight update, and ``version_gate``, whether a
    batch's groups wait for the weight version that its target step allows
    (:mod:`rlmcost.placement.version_gate`); ``share``: the engine's prefix sharing of a
    group's samples on a replica (:mod:`rlmcost.placement.prefix_share`)."""

    gate: GroupGate | None = None
    reprefill: bool = True
    version_gate: bool = False
    share: PrefixShare | None = None


def framework_stream(setup: Setup, lengths: tuple[int, ...], replicas: int, depth: int,
                     engine: EngineSpec | None = None) -> StreamRules:  # fmt: skip
    """The :class:`StreamRules` of the deployment's framework (``Behaviour.stream_group_gate``
    with :func:`gate_for` at the workload's samples per prompt, ``Behaviour.stream_keeps_kv``);
    ``Behaviour.stream_version_gate``; the plain stream where the framework has none or the
    iteration is idealized. Prefix sharing (``engine``: the group's, else the run's) among a
    group's samples on a replica: the gate's ``unit`` where groups are dealt round-robin, else
    all K (consecutive requests of one prompt, as AReaL's manager routes them to one
    server)."""
    d = setup.deployment
    k = setup.workload.samples_per_prompt
    beh = None if d.ideal else behaviour(d.framework)
    gate = (gate_for(lengths, k, replicas, depth)
            if beh is not None and beh.stream_group_gate else None)  # fmt: skip
    eng = engine or d.engine  # the group's own (inputs.engine_for), else the run's
    share = None if d.ideal else engine_share(eng, gate.unit if gate else k,
                                              eng.kv_block_tokens, setup.counting)  # fmt: skip
    if beh is None:
        return StreamRules(share=share)
    return StreamRules(gate, not beh.stream_keeps_kv,
                       beh.stream_version_gate and not _colocated(setup), share)  # fmt: skip


def colocated_note(setup: Setup) -> list[str]:
    """The note of an asynchronous run whose actor generates and trains on one group."""
    if not _colocated(setup):
        return []
    return ["asynchronous on shared GPUs (NeMo RL's async GRPO colocated with Megatron "
            "generation, PR 2884): the engine stands down for each training step and wakes "
            "after it (grpo.py async_grpo_train: blocks_training, finish_generation(release_gpu"
            "=True); the wait for it is NeMo RL's exposed_generation), so a step is its "
            "generation, the forwards and the update in sequence on the same GPUs: their sum, "
            "not their max; the samples in flight resume after the step"]  # fmt: skip


def _colocated(setup: Setup) -> bool:
    """The actor generates and trains on one group (NeMo RL's async GRPO colocated with
    Megatron generation, PR 2884): the engine stands down for every training step
    (grpo.py ``async_grpo_train``: ``blocks_training``, ``finish_generation(release_gpu=
    True)``), so the group's own sequence, not a version gate, orders its generation."""
    where = {t.kind: t.group for t in setup.tasks
             if t.role is Role.ACTOR and t.kind in (Kind.GENERATE, Kind.TRAIN)}  # fmt: skip
    return len(where) == 2 and where[Kind.GENERATE] == where[Kind.TRAIN]


def admit_grouped(lengths: list[int], slots: int, gate: GroupGate) -> tuple[list[int], list[int]]:
    """Continuous batching behind the group gate: the sequences, in arrival order, come in
    groups of ``gate.unit``; a group enters when fewer than ``gate.in_flight`` are in flight
    (else when the earliest in flight frees its place), and each of its sequences then takes
    the first free slot. Returns (start step, slot) per sequence, as ``rollout._admit``.
    ``gate.version`` (batch, age, hold): the sequences come in batches of ``batch`` and a group of
    batch j enters no earlier than ``hold`` steps after batch j - age - 1's last sequence has
    finished (a version gate, :mod:`rlmcost.placement.version_gate`).

    >>> admit_grouped([3, 1, 1, 1], 2, GroupGate(2, 1, 0))  # the second group waits for 3
    ([0, 0, 3, 3], [0, 1, 1, 0])
    >>> admit_grouped([3, 1, 1, 1], 2, GroupGate(2, 1, 5))  # or for the group's hold
    ([0, 0, 5, 5], [0, 1, 1, 0])
    """
    free = [(0, s) for s in range(slots)]
    frees: list[int] = []  # steps at which the groups in flight free their places
    start, slot_of = [], []
    floor = 0
    batch, age, hold = gate.version or (len(lengths), len(lengths), 0)
    last = [0] * -(-len(lengths) // batch)  # each batch's last finish so far
    for u0 in range(0, len(lengths), gate.unit):
        if len(frees) >= gate.in_flight:
            floor = max(floor, heapq.heappop(frees))
        b = u0 // batch
        at = max(floor, last[b - age - 1] + hold) if b > age else floor
        done = at + gate.hold
        for length in lengths[u0 : u0 + gate.unit]:
            t0, s = heapq.heappop(free)
            t0 = max(t0, at)
            start.append(t0)
            slot_of.append(s)
            heapq.heappush(free, (t0 + length, s))
            done = max(done, t0 + length)
            last[b] = max(last[b], t0 + length)
        heapq.heappush(frees, done)
    return start, slot_of
