"""The version gate of a streaming rollout: a batch's groups start at the weights its step allows.

NeMo RL's async GRPO tags each batch of prompt groups with the training step that will consume
it (its target weight version) and lets the engines generate for a target only once the weights
in them are recent enough (NVIDIA-NeMo/RL nemo_rl/algorithms/async_utils.py at v0.5.0-v0.6.0,
nemo_rl/algorithms/async_utils/trajectory_collector.py at v0.7.0):

* ``_calculate_target_weights(v)``: at generation weight version ``v`` the collector may
  generate for targets ``v + 1 .. v + max_trajectory_age_steps`` only; when every one of them
  is generated or in progress it pauses (``_should_pause_for_generation_limits``) until
  ``set_weight_version`` announces the next version;
* nemo_rl/algorithms/grpo.py ``async_grpo_train`` (v0.7.0): training step ``v`` samples the
  groups whose target is the current ``weight_version`` (replay_buffer.py ``sample``: "Only
  returns trajectories with target_weight_version == current_weight_version"), trains, refits
  the engines (``refit_policy_generation``) and only then sets ``weight_version = v + 1``.

So with a trajectory age ``a`` (rlmcost's staleness) the groups of the batch for step ``k``
may enter the engines only once step ``k - a - 1`` has trained and refit them: at the last
return of batch ``k - a - 1`` plus the trainer's and the refit's time (``hold``). Batches in a
stream overlap (a batch's groups take the places its predecessor's groups free, the
``_inflight_sema`` of :mod:`rlmcost.placement.group_gate`), so the gate delays only the groups
that would have entered before it opens: when the trainer is short the engines never wait;
as it nears the engines' time per batch, the groups enter later and the engines run emptier.

:func:`stretch` replays the replica's stream (:class:`GateStream`, its share of each batch, its
slots and its group gate) admission by admission in decode steps, each batch's groups held to
``E[j - a - 1] + hold`` (``E``: a batch's last return), and returns the steady-state steps per
batch over those of the same stream without the hold. The generation unit's weight (the
stream's time per batch, :mod:`rlmcost.placement.streaming`) is multiplied by it, with
``hold`` the other units' weights on the schedule's cycle of shift ``a + 1`` through the
generation (the stage chain through the trainer and the refit, :mod:`.schedule`) in the
stream's steps (the weight's steps per second). Assumption (stated in the note): every decode
step costs the same, idle or emptier steps too; an emptier step of a decode that reads the
weights every step costs a little less, so the stretch is slightly high. No fitted constant:
``STEADY_BATCHES`` is a resolution of the replay.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from math import ceil
from typing import Any

from rlmcost.placement.group_gate import GroupGate
from rlmcost.placement.rollout import admission_order
from rlmcost.placement.schedule_template import Template

STEADY_BATCHES = 8
"""Batches replayed after the ramp (the first 2(a + 1), whose floors are not yet set by the
gate) over which the steps per batch are averaged: a resolution, not a fitted constant."""

GATE_VERSION_NOTE = (
    "version gate: the prompt groups for step k enter the engines only once step k - {b} has "
    "trained and refit them (NeMo RL's target weight versions, max_trajectory_age_steps {a}); "
    "the stream replayed with that hold ({hold_s:.1f} s, the trainer and the refit) runs "
    "{factor:.3f} x its steps per batch (every decode step priced alike)"
)


@dataclass(frozen=True)
class GateStream:
    """One replica's stream as :func:`stretch` replays it: its share of one batch
    (``lengths``), ``slots`` in flight, the prompt-group ``gate`` (None: sample by sample) and
    ``depth`` batches admitted at once (the semaphore)."""

    lengths: tuple[int, ...]
    slots: int
    gate: GroupGate | None
    depth: int


def batch_returns(s: GateStream, age: int, hold: int, batches: int) -> tuple[int, ...]:
    """The step at which each of ``batches`` batches' last sample returns, when batch j's
    groups enter at the earliest at batch j - age - 1's return + ``hold`` (module docstring).
    Admission as :func:`rlmcost.placement.group_gate.admit_grouped` (the same arrival order as
    the stream's timeline, :func:`rlmcost.placement.rollout.admission_order`).

    >>> batch_returns(GateStream((4, 4), 2, None, 1), 0, 0, 3)  # back to back, no hold
    (4, 8, 12)
    >>> batch_returns(GateStream((4, 4), 2, None, 1), 0, 3, 3)  # 3 steps between batches
    (4, 11, 18)
    """
    n0 = len(s.lengths)
    gate = s.gate or GroupGate(1, s.depth * n0, 0)
    every = s.lengths * batches
    resp = [every[i] for i in admission_order(len(every))]
    free = [(0, k) for k in range(max(1, min(s.slots, len(resp))))]
    frees: list[int] = []
    last = [0] * batches
    floor = 0
    for u0 in range(0, len(resp), gate.unit):
        b = u0 // n0
        if len(frees) >= gate.in_flight:
            floor = max(floor, heapq.heappop(frees))
        start = max(floor, last[b - age - 1] + hold) if b > age else floor
        done = start + gate.hold
        for length in resp[u0 : u0 + gate.unit]:
            t0, k = heapq.heappop(free)
            t0 = max(t0, start)
            heapq.heappush(free, (t0 + length, k))
            done = max(done, t0 + length)
            last[b] = max(last[b], t0 + length)
        heapq.heappush(frees, done)
    return tuple(last)


@cache
def steps_per_batch(s: GateStream, age: int, hold: int) -> float:
    """Steady-state decode steps per batch of :func:`batch_returns` after the ramp."""
    lo = 2 * (age + 1)
    hi = lo + STEADY_BATCHES
    last = batch_returns(s, age, hold, hi + 1)
    return (max(last[: hi + 1]) - max(last[: lo + 1])) / (hi - lo)


def stretch(s: GateStream, age: int, hold_per_batch: float) -> tuple[float, int]:
    """The gated stream's steps per batch over the ungated stream's, and the hold in steps, for
    a hold of ``hold_per_batch`` times the ungated stream's time per batch."""
    free = steps_per_batch(s, age, 0)
    hold = ceil(free * hold_per_batch)
    return steps_per_batch(s, age, hold) / free, hold


def gate_cycles(plan: Template, key: str, staleness: int) -> tuple[int, ...]:
    """The indices of ``plan``'s cycles of shift ``staleness + 1`` through the generation unit
    ``key`` whose successor on the cycle is not a weight-sync link (the stage chain through the
    trainer and the refit back to the engines; the engines' pause for the refit is their own
    busy time)."""
    out = []
    for i, c in enumerate(plan.cycles):
        if c.shift != staleness + 1 or key not in c.keys:
            continue
        j = c.keys.index(key)
        if not plan.resource_of[c.keys[(j + 1) % len(c.keys)]].startswith("link:"):
            out.append(i)
    return tuple(out)


def gate_weights(plan: Template, jobs: Mapping[int, Any], key_of: Mapping[int, str],
                 staleness: int, weights: Sequence[list[Any] | None]
                 ) -> tuple[list[list[Any] | None], str | None]:  # fmt: skip
    """Each of ``weights`` (the schedule's weights per unit: bound, prediction, the interval's
    ends; None passes) with every gated generation unit's weight stretched (module
    docstring), and the note saying so (None where no generation job streams behind a version
    gate, ``Job.version_gate``, or without staleness)."""
    gated = [(key_of[i], j.version_gate) for i, j in jobs.items()
             if j.version_gate is not None and i in key_of]  # fmt: skip
    if not gated or staleness < 1:
        return list(weights), None
    index = {k: i for i, k in enumerate(plan.keys)}  # a repeated key weighs as its last unit
    out: list[list[Any] | None] = []
    shown: tuple[float, float, int] | None = None
    for n, w in enumerate(weights):
        if w is None:
            out.append(None)
            continue
        w = list(w)
        for key, s in gated:
            m = float(w[index[key]])
            cycles = gate_cycles(plan, key, staleness)
            if m <= 0 or not cycles:
                continue
            held = max(sum(float(w[index[k]]) for k in plan.cycles[c].keys) - m for c in cycles)
            factor, hold = stretch(s, staleness, held / m)
            w[index[key]] = m * factor
            if n == 1 and (shown is None or factor > shown[0]):
                shown = (factor, held, hold)
        out.append(w)
    if shown is None:
        return out, None
    return out, GATE_VERSION_NOTE.format(a=staleness, b=staleness + 1, factor=shown[0],
                                         hold_s=shown[1])  # fmt: skip
