"""Flags -> :class:`~rlmcost.run.Run`, in one place: every query command builds its Run here.

The flags start from rlmcost's defaults, then ``--framework``'s preset, then a
``--deployment`` file (:func:`rlmcost.cli._deploy_build.base_deployment`); each flag given overrides
its field. ``--reward rule`` is a rule-based verifier (no reward model). `rlmcost placements`
has its own defaults (``placements=True``): TP per model when ``--tp`` is not given, ZeRO-3,
8 GPUs unless ``--gpus`` or ``--groups`` say otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from rlmcost.algorithms.kinds import MODEL_KEYS
from rlmcost.cli._deploy_build import base_deployment, build_deployment
from rlmcost.cli._parse import parse_fraction
from rlmcost.specs.prices import parse_prices

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

PLACEMENTS_GPUS = 8
"""`rlmcost placements` without --gpus or --groups: GPUs to split."""

_ROLES = {key: role.value for role, key in MODEL_KEYS.items()}  # --ref -> reference


def require_model(opts: dict[str, Any]) -> str:
    """The ``--model`` of the options (BadParameter, one line, when it is missing)."""
    if opts.get("model") is None:
        raise typer.BadParameter(
            "give --model NAME (see `rlmcost models`), e.g. --model 70b", param_hint="--model"
        )
    return str(opts["model"])


def options_data(opts: dict[str, Any], alg: Any) -> dict[str, Any]:
    """The algorithm options the flags give for ``alg``: each flag given, else
    the framework's implied option (``--framework``, else the ``--deployment`` file's;
    :func:`~rlmcost.frameworks.presets.preset_options`:
    log-prob recomputation, KL, the reward kind), else rlmcost's default. ``--reward rule``
    is a verifier, ``--reward MODEL`` a reward model, none the framework's kind."""
    from rlmcost.cli._deploy_build import query_actor_size, query_framework
    from rlmcost.frameworks.presets import preset_options

    preset = preset_options(query_framework(opts), alg, *query_actor_size(opts))
    recompute = opts.get("recompute_logprobs")
    no_kl = opts.get("no_kl")
    reward = (opts.get("reward") or "").strip().lower()
    oversample = parse_fraction(opts.get("oversample"))
    return {
        "epochs": opts.get("epochs"),
        "mini_batches": opts.get("mini_batches"),
        "global_batch": opts.get("global_batch"),
        "oversample": str(oversample) if oversample is not None else None,
        "prm_steps": opts.get("prm_steps"),
        "judge_len": opts.get("judge_len"),
        "recompute_logprobs": preset["recompute_logprobs"] if recompute is None else recompute,
        "kl": preset["kl"] if no_kl is None else not no_kl,
        "ref_precomputed": bool(opts.get("ref_precomputed")),
        "rule_reward": reward == "rule" or (not reward and preset["rule_reward"]),
        "kv_scales": opts.get("kv_scale_calibration"),  # None: the framework's (Run.options)
    }


def run_from_options(opts: dict[str, Any], algorithm: str, *, placements: bool = False) -> Run:
    """The Run of a command's parsed options (SpecError or BadParameter for bad ones)."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.errors import SpecError
    from rlmcost.parallel.layout import ZeroStage
    from rlmcost.run.spec import Run

    require_model(opts)
    alg = get_algorithm(algorithm)
    algo = {"name": alg.name, **options_data(opts, alg)}
    rule = algo["rule_reward"]
    models: dict[str, Any] = {"actor": opts["model"]}
    for key, role in _ROLES.items():
        if opts.get(key) is not None and not (key == "reward" and rule):
            models[role] = opts[key]
    workload = {
        "prompts": opts.get("batch"),
        "samples_per_prompt": opts.get("group"),
        "prompt_len": opts.get("prompt_len"),
        "response_len": opts.get("response_len"),
        "length_dist": opts.get("length_dist"),
        "image_tokens": opts.get("image_tokens"),
        **{k: v for k, v in (("turns", opts.get("turns")),
                             ("observation_tokens", opts.get("observation_tokens")),
                             ("tool_latency_s", opts.get("tool_latency")),
                             ("turn_schedule", opts.get("turn_schedule"))) if v is not None},
    }
    base = base_deployment(opts).train
    default_zero = ZeroStage.OS_G_P if placements else ZeroStage.NONE
    tp = opts.get("tp") or base.tp
    zero = opts.get("zero") or (base.zero if base.zero is not ZeroStage.NONE else default_zero)
    dep = build_deployment(opts, tp, opts.get("pp") or base.pp, zero)
    update: dict[str, Any] = {}
    if opts.get("placement") is not None:
        update["placement"] = str(opts["placement"])
    if opts.get("staleness") is not None:
        update["staleness"] = opts["staleness"]
    if opts.get("groups") is not None:
        from rlmcost.evaluation.query import groups_from_text
        from rlmcost.placement.groups import brackets

        update["groups"] = groups_from_text(opts["groups"], dep.train, dep.groups)
        if placements and opts.get("tp") is None and base.tp == 1 and any(
                b is not None and b.train for b in brackets(opts["groups"])):  # fmt: skip
            raise SpecError("--groups: trainer keys in brackets build the group's trainer "
                            "layout from the run's; give --tp (without it `rlmcost placements` "
                            "picks each model's TP)")
    if update:
        dep = dep.model_copy(update=update)
    host = opts.get("host_bandwidth")
    gpus = opts.get("gpus")
    if placements and gpus is None and not dep.groups:
        gpus = PLACEMENTS_GPUS
    cluster = {
        "hardware": opts.get("hardware"),
        "gpus": gpus,
        "dp": opts.get("dp"),
        "host_bandwidth_gb_per_s": host,
        "host_memory_gib": opts.get("host_memory_gib"),
        "calibration": opts.get("calibration"),
        "rank_order": str(opts["rank_order"]) if opts.get("rank_order") else None,
        "prices": parse_prices(opts.get("price")) or None,
    }
    data: dict[str, Any] = {
        "algorithm": algo,
        "models": models,
        "workload": workload,
        "deployment": dep.to_json(),
        "cluster": {k: v for k, v in cluster.items() if v is not None},
        "attention": str(opts.get("attention") or "full"),
        "tp_per_model": placements and opts.get("tp") is None and base.tp == 1,
    }
    if not placements and _tier_may_place(opts):  # the Run's defaults place it as its tier
        del data["deployment"]["groups"]
        _unset_colocated(data["deployment"], opts)
    from rlmcost.run.command import field_flags

    return Run.from_data(data, flags=field_flags())


def _tier_may_place(opts: dict[str, Any]) -> bool:
    """The query leaves its device groups to its framework's size tier
    (:mod:`rlmcost.run.tier_groups`): it names no ``--groups``, ``--placement`` nor a
    deployment file's groups or placement, and keeps the sized defaults. `rlmcost
    placements` compares placements, and `rlmcost plan` searches them: neither takes it."""
    from rlmcost.cli._deploy_build import _file_fields

    if opts.get("groups") is not None or opts.get("placement") is not None or \
            not opts.get("sized_defaults", True):  # fmt: skip
        return False
    path = opts.get("deployment_file")
    return not path or not {"groups", "placement"} & set(_file_fields(path))


def _unset_colocated(dep: dict[str, Any], opts: dict[str, Any]) -> None:
    """Leave out of ``dep`` (a deployment's data) the fields that a size tier's co-located
    fallback sets (``TierPlacement.colocated``: slime's ``--colocate`` sleeps the engines and
    offloads the trainer) where neither a flag (``--sleep/--no-sleep``, ``--offload``) nor the
    deployment file gives them, so the Run's defaults fill them
    (:func:`rlmcost.run.tier_groups.colocate`)."""
    from rlmcost.cli._deploy_build import _file_fields

    path = opts.get("deployment_file")
    given = _file_fields(path) if path else {}
    for section, key, flag in (("engine", "sleep", "no_sleep"), ("train", "offload", "offload")):
        if opts.get(flag) is None and key not in (given.get(section) or {}):
            (dep.get(section) or {}).pop(key, None)
