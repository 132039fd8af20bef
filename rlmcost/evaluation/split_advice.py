"""Whether a framework example's device groups cost time on the query's GPUs: a Run placed as
its framework's size tier places larger actors (:func:`rlmcost.run.tier_groups.tier_placed`:
OpenRLHF's 70 B example's role groups, TRL's "GRPO at scale" server on GPUs of its own) is
evaluated again with every model co-located on the same GPUs, under the same framework's
other defaults (TRL's ``vllm_mode="colocate"``, OpenRLHF's ``--colocate_all_models``). Where
that fits and is faster, a note says so: the examples' splits were sized for their own
cluster, and on a larger one the split can be the slower choice (TRL's 70 B GRPO on 64 H100:
the server's per-parameter NCCL weight sync crosses nodes every step).

Only the text's and the ``--json`` notes' advice: the prediction stays the example's split,
which is what the framework's example runs.
"""

from __future__ import annotations

from typing import Any

FASTER_BY = 0.10
"""The least saving (a share of the split's predicted iteration) worth a note: below it the
two are within the prediction's own spread (the interval's efficiency term alone spans more)."""

COLOCATE_FLAG = {
    "trl": "GRPOConfig vllm_mode='colocate'",
    "openrlhf": "--colocate_all_models",
}
"""Each framework's own switch for the co-located deployment (TRL: trl/trainer/grpo_config.py
``vllm_mode`` @f2cd5771; OpenRLHF: openrlhf/cli/train_ppo_ray.py @3c3be623)."""


def colocated_run(run: Any) -> Any:
    """``run`` with every model co-located on its GPUs (its tier's groups dropped; a Run's
    data with an empty ``groups`` keeps it so), or None where ``run`` does not take its
    groups from its framework's size tier."""
    from rlmcost.run.spec import Run
    from rlmcost.run.tier_groups import tier_placed

    if not tier_placed(run):
        return None
    data = run.to_json()
    data["deployment"]["groups"] = []
    return Run.from_data(data)


def colocated_note(run: Any, split_time_s: float) -> str | None:
    """The note for ``run`` (predicted at ``split_time_s`` a step on its tier's groups) when
    the co-located alternative (:func:`colocated_run`) fits and is at least
    :data:`FASTER_BY` faster; None otherwise (or where it cannot be evaluated)."""
    from rlmcost.errors import SpecError
    from rlmcost.evaluation.query import evaluate
    from rlmcost.units import format_bytes, format_seconds

    alt = colocated_run(run)
    if alt is None:
        return None
    try:
        e = evaluate(alt)
    except SpecError:
        return None
    if not e.fits or e.time_s > (1 - FASTER_BY) * split_time_s:
        return None
    fw = run.deployment.framework
    switch = COLOCATE_FLAG.get(str(fw))
    how = f"--placement baseline; {fw}: {switch}" if switch else "--placement baseline"
    peak = max(s.memory_bytes_per_device for s in e.stages.values())
    return (f"co-located on the same {run.cluster.gpus} GPUs ({how}) fits "
            f"({format_bytes(peak)} per device) and is predicted at "
            f"{format_seconds(e.time_s)} a step, {split_time_s / e.time_s:.1f}x faster than "
            f"the example's groups ({format_seconds(split_time_s)}), which the prediction "
            "keeps.")  # fmt: skip
