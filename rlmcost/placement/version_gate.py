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

:func:`stretch` replays the replica's stream on its own timeline
(:func:`rlmcost.placement.rollout.timeline` with the same engine, slots and prompt-group gate;
:class:`GateStream`), each batch's groups held to ``E[j - a - 1] + hold`` (``E``: a batch's
last return; the group gate's ``version``), and divides its steady-state time per batch by
the free stream's: the same timeline prices the emptier steps (a decode step of fewer
sequences reads fewer experts and less KV cache), and the steps with nothing in flight, which
the timeline skips, are priced at the free stream's seconds per step. The generation unit's
weight (the stream's time per batch, :mod:`rlmcost.placement.streaming`) is multiplied by it,
with ``hold`` the other units' weights on the schedule's cycle of shift ``a + 1`` through the
generation (the stage chain through the trainer and the refit, :mod:`.schedule`), converted to
the free stream's decode steps. Assumption: the trainer starts a batch as soon as it has
returned (a busier trainer is the schedule's own trainer cycle). No fitted constant:
``STEADY_BATCHES`` is a resolution of the replay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from math import ceil
from typing import TYPE_CHECKING, Any

from rlmcost.frozen import dataclass
from rlmcost.memo import memoized
from rlmcost.placement.group_gate import GroupGate
from rlmcost.placement.prefix_share import PrefixShare
from rlmcost.placement.rollout import DecodeCost, timeline
from rlmcost.placement.schedule_template import Template

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.perf.generation import Engine
    from rlmcost.timing import Roofline

STEADY_BATCHES = 8
"""Batches replayed after the ramp (the first 2(a + 1), whose floors are not yet set by the
gate) over which the time per batch is averaged: a resolution, not a fitted constant."""

GATE_VERSION_NOTE = (
    "version gate: the prompt groups for step k enter the engines only once step k - {b} has "
    "trained and refit them (NeMo RL's target weight versions, max_trajectory_age_steps {a}); "
    "the stream replayed with that hold ({hold_s:.1f} s, the trainer and the refit) takes "
    "{factor:.3f} x its time per batch ({steps:.3f} x its decode steps; idle steps at the "
    "free stream's seconds per step)"
)


@dataclass(frozen=True)
class GateStream:
    """One replica's stream as :func:`stretch` replays it: the arguments of its timeline
    (:func:`rlmcost.placement.rollout.timeline`: its share of one batch ``lengths``, ``slots``
    in flight, the prompt-group ``gate``, None: sample by sample) and ``depth`` batches
    admitted at once (the semaphore)."""

    arch: Arch
    prompt: int
    lengths: tuple[int, ...]
    slots: int
    cost: DecodeCost
    roofline: Roofline
    engine: Engine | None
    gate: GroupGate | None
    depth: int
    share: PrefixShare | None = None


@dataclass(frozen=True)
class Stretch:
    """The gated stream over the free one, per batch in the steady state: ``predicted`` and
    ``bound`` seconds (idle steps at the free stream's seconds per step), ``steps`` decode
    steps; ``hold``: the hold in steps."""

    predicted: float
    bound: float
    steps: float
    hold: int


def _per_batch(s: GateStream, version: tuple[int, int, int] | None,
               age: int) -> tuple[float, float, float, float]:  # fmt: skip
    """(predicted s, bound s, steps, idle steps) per batch over the ``STEADY_BATCHES`` after
    the ramp (the first 2(age + 1) batches), as the difference of two timelines."""
    lo = 2 * (age + 1)
    out = []
    for n in (lo + 1, lo + STEADY_BATCHES + 1):
        gate = s.gate
        if version is not None:  # sample by sample without a group gate: groups of one
            gate = replace(gate or GroupGate(1, len(s.lengths) * n, 0), version=version)
        tl = timeline(s.arch, s.prompt, s.lengths * n, s.slots, s.cost, s.roofline, s.engine,
                      paged=s.share, gate=gate)  # fmt: skip
        busy = sum(r.last - r.first + 1 for r in tl.runs)
        out.append((tl.predicted_s, tl.time.bound_s, float(tl.steps), float(tl.steps - busy)))
    return tuple((b - a) / STEADY_BATCHES for a, b in zip(*out, strict=True))


@memoized()
def stretch(s: GateStream, age: int, hold_per_batch: float) -> Stretch:
    """The stream behind the version gate (``age``, a hold of ``hold_per_batch`` times the free
    stream's time per batch) over the free stream (module docstring)."""
    p0, b0, steps0, _ = _per_batch(s, None, age)
    hold = ceil(steps0 * hold_per_batch)
    p1, b1, steps1, idle = _per_batch(s, (len(s.lengths), age, hold), age)
    # the gate only delays admissions: a ratio under 1 is the window's shuffle, not a gain (a
    # later admission can pack a list schedule tighter, Graham's anomalies: not monotone in hold)
    return Stretch(max(1.0, (p1 + idle * p0 / steps0) / p0),
                   max(1.0, (b1 + idle * b0 / steps0) / b0), max(1.0, steps1 / steps0),
                   hold)  # fmt: skip


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
                 staleness: int, weights: Sequence[Sequence[Any] | None]
                 ) -> tuple[list[Sequence[Any] | None], str | None]:  # fmt: skip
    """Each of ``weights`` (the schedule's weights per unit: bound, prediction, the interval's
    ends; None passes) with every gated generation unit's weight stretched (module docstring:
    the bound by the bound's stretch, the others by the prediction's, the hold taken from the
    prediction's weights), and the note saying so (None where no generation job streams
    behind a version gate, ``Job.version_gate``, or without staleness)."""
    gated = [(key_of[i], j.version_gate) for i, j in jobs.items()
             if j.version_gate is not None and i in key_of]  # fmt: skip
    if not gated or staleness < 1:
        return list(weights), None
    index = {k: i for i, k in enumerate(plan.keys)}  # a repeated key weighs as its last unit
    pred = weights[1]
    assert pred is not None  # the prediction's weights are always given
    out: list[list[Any] | None] = [None if w is None else list(w) for w in weights]
    shown: tuple[Stretch, float] | None = None
    for key, s in gated:
        m = float(pred[index[key]])
        cycles = gate_cycles(plan, key, staleness)
        if m <= 0 or not cycles:
            continue
        held = max(sum(float(pred[index[k]]) for k in plan.cycles[c].keys) - m for c in cycles)
        st = stretch(s, staleness, held / m)
        for n, w in enumerate(out):
            if w is not None:
                w[index[key]] = float(w[index[key]]) * (st.bound if n == 0 else st.predicted)
        if shown is None or st.predicted > shown[0].predicted:
            shown = (st, held)
    if shown is None:
        return list(out), None
    note = GATE_VERSION_NOTE.format(a=staleness, b=staleness + 1, factor=shown[0].predicted,
                                    hold_s=shown[1], steps=shown[0].steps)  # fmt: skip
    return list(out), note
