"""The last lines of an algorithm command's report: which framework's defaults the Run follows
(for the default deployment, its summary and the flags that set it by hand), after a note
where its framework example's groups are slower than co-locating, and the same lines in the
``--json`` notes. Light to import (no rich): the JSON path loads it."""

from __future__ import annotations

import re
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
    from rlmcost.run.defaults import actor_layers, actor_moe, actor_params, actor_spec

    fw = run.deployment.framework
    if run.deployment.ideal:
        return "deployment: the paper's idealized iteration (--ideal)."
    if fw is None:
        return "deployment: rlmcost's bare layout (--framework none): no framework's defaults."
    default = ""
    if fw == DEFAULT_FRAMEWORK.value:  # say what the default deployment is, as flags
        actor = run.models.actor
        size = (actor_params(actor), actor_moe(actor), actor_spec(actor))
        p = get_preset(fw).for_params(*size[:2], actor_layers(actor), size[2])
        name, engine = run.algorithm.name, str(run.deployment.engine.kind)
        applied = preset_options(fw, get_algorithm(name), *size)
        flags = p.flags_line(applied, name, engine)  # the run's engine's defaults
        summary = for_layers(engine_summary(p, engine), actor_layers(actor))
        if not generates(run):
            summary, flags = offline_default(get_preset(fw), p, applied, name, size)
        default = f" (the default deployment: {summary}; {flags}{own_values(run, p, applied)})"
        default += fitted_said(get_preset(fw).tier(*size), run)
        default += trainer_left(run, get_preset(fw), size)
        dep = run.deployment  # the summary's co-located engine, where the query splits GPUs
        if len(dep.groups) > 1 or dep.placement in _SPLIT:
            how = "--groups" if dep.groups else f"--placement {dep.placement}"
            default += f"; the models placed on the GPUs {how} gives, not co-located"
    else:  # a larger actor's tier: which of the framework's examples the run follows
        size = (actor_params(run.models.actor), actor_moe(run.models.actor),
                actor_spec(run.models.actor))  # fmt: skip
        tier = get_preset(fw).tier(*size)
        if tier is not None and tier.followed_by(run.deployment, actor_layers(run.models.actor)):
            from rlmcost.run.tier_groups import placement_line

            placed = placement_line(run, tier)
            example = for_layers(tier.example, actor_layers(run.models.actor))
            if not generates(run):
                example = offline_example(tier, run, actor_layers(run.models.actor))
            whose = "model" if tier.models else "size"
            default = (f" (its example for this actor's {whose}: {example}{placed}"
                       f"{fitted_said(tier, run)})")  # fmt: skip
        elif tier is not None:  # the tier's trainer left: say which one is evaluated
            left = trainer_left(run, get_preset(fw), size)
            default = f" ({left[2:]})" if left else ""
    return (f"deployment: {fw}'s defaults{default}, listed by `rlmcost frameworks`; "
            "--framework NAME for another framework, none for rlmcost's bare layout."
            + untested_moe(fw, run.models.actor))  # fmt: skip


_SPLIT_FOR = re.compile(r" \(([^()]*) for (\d+) layers\)")
"""An example's pipeline split in words, '(22 layers last for 94 layers)'."""

_ENGINE_CLAUSE = re.compile(r",? and (?:vLLM|SGLang) [^,(]*")
"""A preset summary's engine clause, ' and vLLM colocated on the same GPUs'."""


def own_values(run: Any, preset: Any, applied: dict[str, Any]) -> str:
    """The clause naming the flags of ``preset`` (the default framework's, sized for the actor)
    whose fields the Run sets to another value than the flags line lists (an explicit
    ``--zero 1`` under NeMo RL's ``--zero 3``), so that line does not read as the Run's;
    "" where the Run keeps every default. Option defaults ``applied`` leaves out for the
    algorithm (``--reward rule`` for PPO) are said by the flags line already."""
    from rlmcost.frameworks.preset_model import OPTION_FIELDS

    engine = str(run.deployment.engine.kind)
    use = [d for d in preset.defaults if not d.engines or engine in d.engines]
    last = {d.field: d for d in use}  # the later default of a field wins (Preset.flags)
    names = []
    for d in use:
        if last[d.field] is not d or (d.field in OPTION_FIELDS and applied.get(d.field)
                                      != d.value):  # fmt: skip
            continue
        where = run.algorithm if d.field in OPTION_FIELDS else run.deployment
        got = _field(where, d.field)
        if got is not _MISSING and _plain(got) != _plain(d.value):
            names.append(_flag_name(d.flag))
    names = list(dict.fromkeys(names))
    return f"; the query sets its own {', '.join(names)}" if names else ""


_MISSING = object()


def _field(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part, _MISSING)
        if obj is _MISSING:
            return obj
    return obj


def _plain(v: Any) -> Any:
    """A field's value as the presets write it: enums by value, sequences as tuples."""
    if isinstance(v, list | tuple):
        return tuple(_plain(x) for x in v)
    return str(getattr(v, "value", v))


def _flag_name(flag: str) -> str:
    """``--zero`` of ``--zero 3``, ``--sleep`` of ``--no-sleep``, ``--offload-idle`` of
    ``(no --offload-idle)``."""
    word = flag.strip("()").removeprefix("no ").split()[0]
    return "--" + word[len("--no-"):] if word.startswith("--no-") else word


def for_layers(text: str, layers: int | None) -> str:
    """``text`` (an example's description) with its pipeline split, which its model's depth
    alone takes (``Default.layers``), said as what applies to an actor of ``layers`` decoder
    layers of another depth: Megatron-core's even split."""
    def said(m: re.Match[str]) -> str:
        if layers is None or int(m.group(2)) == layers:
            return m.group(0)
        return (f" (the even split of this actor's {layers} layers; the example's "
                f"{m.group(1)} is for its {m.group(2)})")

    return _SPLIT_FOR.sub(said, text)


def generates(run: Any) -> bool:
    """``run``'s algorithm runs a generation engine (DPO's family does not)."""
    from rlmcost.run.tier_groups import algo_roles

    a = run.algorithm
    return algo_roles({"name": a.name, "kl": a.kl, "ref_precomputed": a.ref_precomputed,
                       "rule_reward": a.rule_reward}) is not None  # fmt: skip


def offline_example(tier: Any, run: Any, layers: int | None) -> str:
    """For an algorithm that generates nothing: the tier's example by name and the flags of
    its settings that apply (the trainer's, not the engine's nor the groups')."""
    from rlmcost.frameworks.preset_model import OPTION_FIELDS

    name = tier.example.split(": ", 1)[0]
    flags = " ".join(dict.fromkeys(
        d.flag for d in tier.defaults if not d.field.startswith("engine.")
        and d.field not in OPTION_FIELDS and (not d.layers or d.layers == layers)))  # fmt: skip
    what = f"; for {run.algorithm.name}, which generates nothing, its trainer's: {flags}"
    return name + (what if flags else "")


def fitted_said(tier: Any, run: Any) -> str:
    """The clause that says which of ``tier``'s degrees were lowered for this actor and why
    (``Sized.fitted``, :mod:`rlmcost.frameworks.preset_fit`), where ``run`` keeps them; ""
    where none were."""
    if tier is None or not tier.fitted or not tier.followed_by(run.deployment,
                                                               _layers(run)):  # fmt: skip
        return ""
    return ("; its layout fitted to this actor, each degree the largest divisor of the "
            f"example's that holds: {'; '.join(tier.fitted)}")


def _layers(run: Any) -> int | None:
    from rlmcost.run.defaults import actor_layers

    return actor_layers(run.models.actor)


def offline_default(preset: Any, p: Any, applied: dict[str, Any], name: str,
                    size: tuple[Any, ...]) -> tuple[str, str]:  # fmt: skip
    """The default deployment's summary and flags for an algorithm (``name``) that generates
    nothing: ``preset``'s summary without its engine clause, its size tier's example by name,
    and ``p``'s (the sized preset's) flags with the engine's among those not applied."""
    tier = preset.tier(*size)
    base = _ENGINE_CLAUSE.sub("", (tier.summary if tier is not None else "") or preset.summary)
    summary = base + (f" ({tier.example.split(': ', 1)[0]})" if tier is not None else "")
    left = [d.flag for d in p.defaults if d.field in applied and d.value != applied[d.field]]
    text = f" {p.flags(applied)} "
    for d in p.defaults:
        if d.field.startswith("engine.") and f" {d.flag} " in text:
            text = text.replace(f" {d.flag} ", " ")
            left.append(d.flag)
    tail = f"; not applied to {name}, which generates nothing: {' '.join(left)}" if left else ""
    return summary, f"as flags: {text.strip()}{tail}"


def untested_moe(framework: str, actor: Any) -> str:
    """Where ``actor`` is a mixture of experts and ``framework`` has no example that trains one
    (:data:`~rlmcost.frameworks.preset_data.moe_tiers.MOE_NO_EXAMPLE`), the clause that says its
    defaults here are not a setup the framework runs; "" otherwise."""
    from rlmcost.frameworks.preset_data.moe_tiers import MOE_NO_EXAMPLE
    from rlmcost.run.defaults import actor_moe

    if framework not in MOE_NO_EXAMPLE or not actor_moe(actor):
        return ""
    return (f" For a mixture of experts these defaults are not a setup {framework} is known "
            f"to run: {MOE_NO_EXAMPLE[framework]}; where it does not fit, the advice above says "
            "what does.")


def trainer_left(run: Any, preset: Any, size: tuple[Any, ...]) -> str:
    """Where ``run``'s trainer is not its size tier's (a degree or a ZeRO stage given lays
    the trainer out whole: ``rlmcost.run.defaults``), the clause that says which trainer is
    evaluated: its ZeRO stage and degrees beside the example's, and, at the preset's own ZeRO
    stage, the preset's own trainer (NeMo RL's DTensor policy under ``--zero 3``); "" where the
    run follows its tier's layout or its actor has no tier."""
    tier = preset.tier(*size)
    if tier is None:
        return ""
    want = {d.field[len("train."):]: d.value for d in tier.defaults
            if d.field in {f"train.{k}" for k in _DEGREES}}  # fmt: skip
    t = run.deployment.train
    if not want or all(str(getattr(t, k)) == str(v) for k, v in want.items()):
        return ""

    def said(values: dict[str, Any]) -> str:
        return ", ".join(f"{_DEGREES[k]} {values.get(k, 1)}" for k in _DEGREES)

    own = next((d.value for d in preset.defaults if d.field == "train.zero"), None)
    whose = ""
    if own is not None and str(own) == str(t.zero) and str(own) != str(want.get("zero")):
        whose = f": {preset.framework.value}'s own trainer ({preset.summary.split(', ')[0]})"
    return (f"; evaluated with the trainer the query lays out ({said(t.model_dump())}{whose}), "
            f"not that example's ({said(want)})")


_DEGREES = {"zero": "ZeRO", "tp": "TP", "pp": "PP", "cp": "CP", "ep": "EP"}
"""The trainer fields the deployment line compares with a size tier's (:func:`trainer_left`)."""
