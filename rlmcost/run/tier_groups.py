"""The device groups a Run takes from its framework's size tier (:class:`~rlmcost.frameworks.
tier_placement.TierPlacement`) when it names no placement and no groups: the example's
groups scaled to the Run's GPUs (:func:`~rlmcost.frameworks.tier_placement.scale`).

:func:`data_groups` fills a Run's data (:func:`rlmcost.run.defaults.with_framework_defaults`:
the CLI, the Run API and a deployment file alike; a Run's data with a ``groups`` key, even
empty, keeps it, so ``to_json -> from_data`` is the identity); :func:`placement_line` says in
the deployment line which groups a Run took, or why it stayed co-located.
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

APART = ("vllm", "sglang")
"""Engines that run on GPUs of their own (HF generate and DeepSpeed-Chat's hybrid engine run
on the trainer's model, Megatron-core generation on the trainer's GPUs)."""


def split(tier: Any, roles: tuple[str, ...] | None, gpus: int | None, engine: dict[str, Any],
          train: dict[str, Any]) -> tuple[list[tuple[str, int, str]] | None, str]:  # fmt: skip
    """The tier's groups (None: none, with the reason) for the model ``roles`` (None: an
    algorithm that generates nothing), ``gpus`` GPUs (None: not given, the example's own), the
    ``engine`` and trainer (``train``) fields of a deployment's data."""
    from rlmcost.frameworks.tier_placement import scale
    from rlmcost.parallel.layout import dp_unit

    if roles is None:
        return None, "the algorithm generates nothing (no engines)"
    if gpus is None:  # the example's own GPUs: a query naming none runs the example as it is
        gpus = tier.placement.gpus
    kind = str(engine.get("kind") or "vllm")
    if kind not in APART:
        return None, f"--engine {kind} generates on the trainers' GPUs"
    tp = engine.get("tp") or train.get("tp") or 1
    replica = int(tp) * int(engine.get("pp") or 1)
    tp, cp = int(train.get("tp") or 1), int(train.get("cp") or 1)
    etp = train.get("etp")
    # whole trainer replicas: tp*pp*cp times the data-parallel ranks an expert grid needs
    # (Layout.dp_unit: etp*ep must divide tp*cp*dp, Megatron-core's parallel_state)
    grid = dp_unit(tp, cp, int(train.get("ep") or 1), None if etp is None else int(etp))
    trainer = tp * int(train.get("pp") or 1) * cp * grid
    return scale(tier.placement, roles, int(gpus), replica, trainer)


def algo_roles(algo: dict[str, Any]) -> tuple[str, ...] | None:
    """The model roles of a Run's algorithm data with its options applied
    (:func:`rlmcost.algorithms.options.configure`: no reference without the KL or with it
    precomputed, no reward model with a rule-based reward); None for an algorithm that
    generates nothing (DPO: no engines to place). SpecError for options the algorithm
    refuses."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.algorithms.options import Options, configure

    alg = get_algorithm(algo.get("name") or "ppo")
    if alg.offline or not any(i.kind is Kind.GENERATE for i in alg.invocations):
        return None
    options = Options(kl=algo.get("kl") is not False,
                      ref_precomputed=bool(algo.get("ref_precomputed")),
                      rule_reward=bool(algo.get("rule_reward")))  # fmt: skip
    return tuple(str(r) for r in configure(alg, options).model_roles)


def data_groups(tier: Any, data: dict[str, Any], dep: dict[str, Any]) -> list[dict[str, Any]]:
    """The groups of a Run's ``data`` whose deployment (``dep``, the preset's fields filled)
    names neither groups nor a placement, from ``tier`` (a size tier with a placement):
    empty where the split does not hold (co-located). A problem with the data is left to
    the Run's own validation (no groups here)."""
    from rlmcost.deployment.group_brackets import Brackets

    try:
        roles = algo_roles(dict(data.get("algorithm") or {}))
        gpus = (data.get("cluster") or {}).get("gpus")
        groups, _ = split(tier, roles, None if gpus is None else int(gpus),
                          dict(dep.get("engine") or {}), dict(dep.get("train") or {}))
    except (SpecError, ValueError, TypeError):
        return []
    # a tier's brackets set engine keys only (TRL's server at gmu=0.9), kept as the group's
    # own engine fields, as `--groups rollout=8[gmu=0.9]` keeps them
    return [{"members": m, "gpus": n,
             **({"engine": Brackets(s, tier.placement.text).engine} if s else {})}
            for m, n, s in groups or ()]  # fmt: skip


def colocate(p: Any, out: dict[str, Any], given: dict[str, Any], algo: dict[str, Any]) -> None:
    """Set in ``out`` (a deployment's data, the preset's fields filled) the fields the
    framework sets when it co-locates (``p.colocated``, :class:`~rlmcost.frameworks.
    tier_placement.TierPlacement`) that ``given`` (the Run's own deployment data) leaves out,
    for an algorithm (``algo``) that generates; each section it changes a new mapping (the
    preset's are shared)."""
    if not p.colocated:
        return
    try:
        if algo_roles(algo) is None:
            return
    except (SpecError, ValueError, TypeError):
        return  # left to the Run's own validation
    for field, value in p.colocated:
        section, key = field.split(".")
        if key in (given.get(section) or {}):
            continue
        out[section] = {**(out.get(section) or {}),
                        key: list(value) if isinstance(value, tuple) else value}  # fmt: skip


def colocated_said(run: Any, p: Any) -> str:
    """The deployment line's clause for a Run that took ``p.colocated`` (all of it): how the
    framework co-locates; "" otherwise."""
    if not p.colocated_text:
        return ""
    dj = run.deployment.to_json()
    for field, value in p.colocated:
        section, key = field.split(".")
        have = dj.get(section, {}).get(key)
        if (list(value) if isinstance(value, tuple) else value) != have:
            return ""
    return f", {p.colocated_text}"


def run_split(run: Any, tier: Any) -> tuple[list[tuple[str, int, str]] | None, str]:
    """:func:`split` of a Run under its size ``tier``."""
    a = run.algorithm
    dj = run.deployment.to_json()
    roles = algo_roles({"name": a.name, "kl": a.kl, "ref_precomputed": a.ref_precomputed,
                        "rule_reward": a.rule_reward})  # fmt: skip
    return split(tier, roles, run.cluster.gpus, dj["engine"], dj["train"])


def run_tier(run: Any) -> Any:
    """The size tier with a placement that ``run`` follows (None: none, or not followed)."""
    from rlmcost.run.defaults import actor_tier

    d = run.deployment
    if d.framework is None or d.ideal:
        return None
    tier = actor_tier(d.framework, run.models.actor)
    ok = tier is not None and tier.placement is not None and tier.followed_by(d)
    return tier if ok else None


def tier_placed(run: Any) -> bool:
    """``run``'s device groups are the ones its framework's size tier gives it."""
    tier = run_tier(run)
    d = run.deployment
    if tier is None or d.placement is not None or not d.groups:
        return False
    groups, _ = run_split(run, tier)
    return groups is not None and [(m, n) for m, n, _ in groups] == \
        [(g.members, g.gpus) for g in d.groups]  # fmt: skip (a bracket's keys: in the engine)


def retier(before: Any, after: Any) -> Any:
    """``after`` (``before`` changed: another algorithm, `rlmcost compare`) with its size
    tier's groups in place of ``before``'s where those were ``before``'s tier's."""
    if not tier_placed(before):
        return after
    from rlmcost.run.spec import Run

    data = after.to_json()
    del data["deployment"]["groups"]
    return Run.from_data(data)


def placement_line(run: Any, tier: Any) -> str:
    """What the deployment line says of the tier's groups for ``run`` (which follows the
    tier): the example's groups it took, or why it stayed co-located; empty where the run
    names its own placement or groups."""
    from rlmcost.frameworks.tier_placement import RULE, groups_text

    p, d = tier.placement, run.deployment
    if p is None or d.placement is not None:
        return ""
    groups, why = run_split(run, tier)
    if d.groups:
        if not tier_placed(run) or groups is None:
            return ""
        own = (f"; the GPUs not given (--gpus): the example's {p.gpus}"
               if run.cluster.gpus is None else "")
        return (f"; placed as its example ({p.text}): --groups {groups_text(groups)} "
                f"({RULE}{own}; --placement baseline: co-located)")
    if groups is not None or why.startswith("the algorithm"):
        return ""
    return (f"; co-located{colocated_said(run, p)}: its example's groups ({p.text}) do not "
            f"hold here, as {why} ({RULE})")
