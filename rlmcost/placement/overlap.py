"""What an asynchronous iteration overlaps: which group sets the pace and how long the others
wait, in the iteration's notes.

With staleness k >= 1 and rollout and training on different groups, the steady-state period
is the largest cycle mean of the schedule (:mod:`rlmcost.placement.schedule`): usually one
group's own busy time per iteration (its units summed), the bottleneck, while every other group
idles for the difference (AReaL "balances the workload of rollout and training workers", Fu
et al. 2025, arXiv:2505.24298 abstract; verl fully-async reports it as ``trainer/idle_ratio``
and ``rollouter/idle_ratio``, docs/advance/fully_async.md "Key Metrics"). A period above every
group's busy time comes from a cycle through the stages (the staleness chain) or a weight-sync
link.

A split that leaves one side idle is unbalanced: :func:`overlap_notes` also gives the split
that balances the groups' GPU-seconds (each group's busy time x its GPUs, spread over all the
GPUs in proportion; an estimate: exact only where a group's time scales as 1 / its GPUs, which
decode does not), the tuning rule verl's doc gives ("the rollout time and train time close",
"Resource Allocation and Adjustment"); ``--placement async`` without ``--groups`` searches the
split itself (:mod:`rlmcost.placement.allocate`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rlmcost.errors import SpecError


def check_partial_rollout(partial: bool, staleness: int, in_flight: int = 1) -> None:
    """Partial rollouts interrupt generation at the weight updates of an asynchronous run;
    verl: "partial_rollout only actually takes effect when staleness_threshold>0". Batches in
    flight at once: at most the staleness (a sample is at most that many updates old; NeMo RL
    caps them at num_prompts_per_step x max_trajectory_age_steps prompt groups)."""
    if in_flight > 1 and not partial:
        raise SpecError(f"--in-flight-batches {in_flight} holds batches in a streaming rollout: "
                        "add --partial-rollout, or drop --in-flight-batches")  # fmt: skip
    if partial and in_flight > max(1, staleness):
        raise SpecError(f"--in-flight-batches {in_flight} exceeds --staleness {staleness}: a "
                        "sample would be older than the staleness allows; lower it or raise "
                        "--staleness")  # fmt: skip
    if partial and not staleness:
        raise SpecError(
            "--partial-rollout streams generation across weight updates, which only an "
            "asynchronous run has: add --placement async (or combined) with --staleness k >= 1 "
            "(`rlmcost compare`, which has neither flag: a --deployment file's `placement: "
            "async` and `staleness: k`), or drop --partial-rollout"
        )


def overlap_notes(
    period_s: float,
    busy_s: Mapping[str, float],
    gpus: Mapping[str, int],
    staleness: int,
    in_turn_s: float | None = None,
    mixed: bool = False,
) -> list[str]:
    """Notes for an iteration of ``period_s`` predicted seconds whose groups are busy
    ``busy_s`` each (their units' predicted seconds summed) on ``gpus`` each; ``in_turn_s``:
    the same groups and units without overlap (staleness 0), the saving's reference;
    ``mixed``: the groups run on different accelerators, whose GPU-seconds do not add, so no
    split balanced by them is offered."""
    if not staleness or len(busy_s) < 2 or period_s <= 0:
        return []
    bottleneck = max(busy_s, key=lambda g: busy_s[g])
    top = busy_s[bottleneck]
    others = ", ".join(
        f"{g} idles {period_s - b:.1f} s ({(period_s - b) / period_s:.0%})"
        for g, b in busy_s.items()
        if g != bottleneck
    )
    if period_s > top * (1 + 1e-9):
        head = (
            f"asynchronous overlap (staleness {staleness}): the iteration ({period_s:.1f} s) is "
            f"longer than any group's busy time (most: {bottleneck} {top:.1f} s): the stage "
            f"chain over {staleness + 1} iterations or a weight-sync link sets it"
        )
    else:
        head = (
            f"asynchronous overlap (staleness {staleness}): {bottleneck} is the bottleneck, "
            f"{top:.1f} s busy per iteration (predicted)"
        )
    saving = ""
    if in_turn_s is not None and in_turn_s > 0:
        saving = (f"; the same groups in turn (staleness 0) take {in_turn_s:.1f} s, the overlap "
                  f"saves {in_turn_s - period_s:.1f} s")  # fmt: skip
    notes = [f"{head}; {others}{saving}"]
    total = sum(gpus.values())
    gpu_s = {g: busy_s[g] * gpus[g] for g in busy_s}
    spread = sum(gpu_s.values()) / total
    if spread > 0 and mixed:
        notes.append(
            f"GPU split: {', '.join(f'{g} {gpus[g]}' for g in gpus)} of {total}, on different "
            "accelerators: a GPU-second of one is not one of another, so no split balanced by "
            "GPU-seconds is offered (`rlmcost plan --hardware` searches the split over a pool)"
        )
    elif spread > 0:
        split = ", ".join(f"{g} {total * gpu_s[g] / sum(gpu_s.values()):.0f}" for g in gpu_s)
        notes.append(
            f"GPU split: {', '.join(f'{g} {gpus[g]}' for g in gpus)} of {total}; balanced by "
            f"GPU-seconds it would be {split} GPUs, about {spread:.1f} s per iteration if each "
            "group's time scaled as 1 / its GPUs (decode does not: fewer engines run fuller "
            "batches; --placement async without --groups searches the split)"
        )
    return notes


def busy_per_group(
    shape: Sequence[tuple[str, str, object, bool]], weights: Sequence[float], groups: Sequence[str]
) -> dict[str, float]:
    """Each group's busy seconds per iteration: its units' weights summed (links left out)."""
    busy = {g: 0.0 for g in groups}
    for (_, resource, _, _), w in zip(shape, weights, strict=True):
        if resource in busy:
            busy[resource] += float(w)
    return busy
