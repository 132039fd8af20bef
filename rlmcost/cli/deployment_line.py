"""The last lines of an algorithm command's report: which framework's defaults the Run follows
(for the default deployment, its summary and the flags that set it by hand), after a note
where its framework example's groups are slower than co-locating, and the same lines in the
``--json`` notes. Light to import (no rich): the JSON path loads it."""

from __future__ import annotations

from typing import Any

_SPLIT = ("disaggregated", "async", "combined")
"""Table IX placements that give models GPUs of their own (the others co-locate them)."""


def evaluation_json(result: Any) -> dict[str, Any]:
    """``result.to_json()``; for an evaluation, its notes end with :func:`deployment_line`, as
    the text ends with it (an algorithm command, `rlmcost run` and `rlmcost import` alike)."""
    from rlmcost.evaluation.view import Evaluation

    out = result.to_json()
    if isinstance(result, Evaluation):
        line = split_note(result)
        out["notes"].extend([*([line] if line else []), deployment_line(result.run)])
    return out


def split_note(result: Any) -> str | None:
    """Where an evaluation's framework example's groups are slower than co-locating the models
    on the same GPUs, the note saying so (:mod:`rlmcost.evaluation.split_advice`)."""
    from rlmcost.evaluation.split_advice import colocated_note

    return colocated_note(result.run, result.time_s)


def deployment_line(run: Any) -> str:
    """Which framework's defaults and semantics the Run follows, and how to change them."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.frameworks.engine_summary import engine_summary
    from rlmcost.frameworks.presets import DEFAULT_FRAMEWORK, get_preset, preset_options
    from rlmcost.run.defaults import actor_layers, actor_moe, actor_params

    fw = run.deployment.framework
    if run.deployment.ideal:
        return "deployment: the paper's idealized iteration (--ideal)."
    if fw is None:
        return "deployment: rlmcost's bare layout (--framework none): no framework's defaults."
    default = ""
    if fw == DEFAULT_FRAMEWORK.value:  # say what the default deployment is, as flags
        actor = run.models.actor
        size = (actor_params(actor), actor_moe(actor))
        p = get_preset(fw).for_params(*size, actor_layers(actor))
        name, engine = run.algorithm.name, str(run.deployment.engine.kind)
        flags = p.flags_line(preset_options(fw, get_algorithm(name), *size), name,
                             engine)  # the run's engine's defaults
        default = f" (the default deployment: {engine_summary(p, engine)}; {flags})"
        dep = run.deployment  # the summary's co-located engine, where the query splits GPUs
        if len(dep.groups) > 1 or dep.placement in _SPLIT:
            how = "--groups" if dep.groups else f"--placement {dep.placement}"
            default += f"; the models placed on the GPUs {how} gives, not co-located"
    else:  # a larger actor's tier: which of the framework's examples the run follows
        tier = get_preset(fw).tier(actor_params(run.models.actor), actor_moe(run.models.actor))
        if tier is not None and tier.followed_by(run.deployment, actor_layers(run.models.actor)):
            from rlmcost.run.tier_groups import placement_line

            placed = placement_line(run, tier)
            default = f" (its defaults for larger actors: {tier.example}{placed})"
    return (f"deployment: {fw}'s defaults{default}, listed by `rlmcost frameworks`; "
            "--framework NAME for another framework, none for rlmcost's bare layout.")  # fmt: skip
