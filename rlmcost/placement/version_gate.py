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

So with a trajectory age ``a`` (rlmcost's staleness) the batch for step ``k`` starts only when
step ``k - a - 1`` has trained and refit the engines, and step ``k`` starts when that batch's
last group has returned: (start of the batch for step ``k``) >= (its latency, first group
admitted to last group returned, for step ``k - a - 1``) + that step's trainer units + the
refit. This is the schedule's stage cycle of shift ``a + 1``
(:mod:`rlmcost.placement.schedule`), but in a stream the batches overlap, so a batch's latency
``D`` exceeds the engines' marginal time per batch ``M`` (the generation unit's weight, the
stream's steady state, :mod:`rlmcost.placement.streaming`): on the cycles where the generation
hands its batch to the next unit, the gate weighs ``D`` where the schedule weighs ``M``. When the
trainer is short the engines' own cycle (``M`` per iteration) still sets the period and the gate
costs nothing; as it nears ``M`` the engines wait for the new weights.

``D / M`` is measured on the stream's own timeline (:func:`rlmcost.placement.streaming.stream`:
the middle batches of the simulated stream, the roofline clock; the same ratio scales the bound,
the prediction and the interval's ends). Assumption (stated in the note): the latency is that of
the ungated stream; a gate that holds the batches back lets each enter emptier engines, whose
latency is then nearer a drained batch's, so the gate's cost is a lower estimate there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlmcost.placement.schedule_template import Template

GATE_VERSION_NOTE = (
    "version gate: the prompt groups for step k start only once step k - {b} has trained and "
    "refit the engines (NeMo RL's target weight versions, max_trajectory_age_steps {a}), "
    "so a batch's latency in the stream ({ratio:.2f} x the engines' time per batch) enters the "
    "cycle through the trainer and the refit"
)


def gate_cycles(plan: Template, latency: Mapping[str, float], staleness: int) -> tuple[int, ...]:
    """The indices of ``plan``'s cycles the gate weighs: shift ``staleness + 1`` (the stage
    chain back to the first stage, or the refit back to the engines), through a generation
    unit of ``latency`` whose successor on the cycle is not a weight-sync link (the engines'
    pause for the refit is their own busy time, not the batch handed on)."""
    out = []
    for i, c in enumerate(plan.cycles):
        if c.shift != staleness + 1:
            continue
        for j, key in enumerate(c.keys):
            nxt = c.keys[(j + 1) % len(c.keys)]
            if key in latency and not plan.resource_of[nxt].startswith("link:"):
                out.append(i)
                break
    return tuple(out)


def gated_value(plan: Template, weights: Sequence[Any], latency: Mapping[str, float],
                cycles: Sequence[int]) -> float:  # fmt: skip
    """The largest mean over ``cycles`` with each generation unit weighing its batch latency,
    ``latency[key]`` x its weight (module docstring); 0.0 without cycles."""
    index = {k: i for i, k in enumerate(plan.keys)}  # a repeated key weighs as its last unit
    best = 0.0
    for i in cycles:
        c = plan.cycles[i]
        total = 0.0
        for key in c.keys:
            total += float(weights[index[key]]) * latency.get(key, 1.0)
        best = max(best, total / c.shift)
    return best


def apply_gate(plan: Template, weights: Sequence[Any], value: Any, latency: Mapping[str, float],
               staleness: int) -> tuple[float, bool]:  # fmt: skip
    """The period ``value`` under the gate: the larger of it and :func:`gated_value`, and
    whether the gate set it."""
    cycles = gate_cycles(plan, latency, staleness)
    gated = gated_value(plan, weights, latency, cycles)
    return (gated, True) if gated > float(value) else (float(value), False)


def gated(plan: Template, jobs: Mapping[int, Any], key_of: Mapping[int, str], staleness: int,
          weights: Sequence[Sequence[Any]], values: Sequence[Any]
          ) -> tuple[list[float], str | None]:  # fmt: skip
    """Each of ``values`` (the periods of the bound, the prediction and the interval's ends,
    from ``weights`` of the same order) under the gate, and the note saying so (None where no
    streamed generation job has a version gate, ``Job.latency_ratio`` 1, or no staleness)."""
    latency = {key_of[i]: j.latency_ratio for i, j in jobs.items()
               if j.latency_ratio != 1.0 and i in key_of}  # fmt: skip
    if not latency or staleness < 1:
        return [float(v) for v in values], None
    out = [apply_gate(plan, w, v, latency, staleness)[0] for w, v in zip(weights, values,
                                                                        strict=True)]
    ratio = max(latency.values())
    moved = out[1] > float(values[1])
    note = GATE_VERSION_NOTE.format(a=staleness, b=staleness + 1, ratio=ratio) + (
        f": it sets the iteration, {float(values[1]):.1f} s -> {out[1]:.1f} s" if moved
        else ": the engines' own time per batch still sets the iteration")  # fmt: skip
    return out, note
