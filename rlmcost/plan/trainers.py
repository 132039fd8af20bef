"""The trainers `rlmcost plan` searches for an actor in a framework's large-MoE size tier.

Under a large-MoE size tier (:mod:`rlmcost.frameworks.preset_data.moe_tiers`: NeMo RL's, verl's
and slime's examples for Qwen3-235B-A22B and DeepSeek-V3) a framework's preset trains with
Megatron-core in the example's layout. The plan searches that trainer around the example
(:func:`megatron_space`): its ZeRO stage (the distributed optimizer, ZeRO-1), PP every power of
two up to the example's (the example's first/last-stage split at its own PP alone, Megatron-core's
even split elsewhere: :func:`rlmcost.plan.rl_runs.candidate_sections`), EP the powers of two
between a node's GPUs and the example's EP that divide the experts (Megatron-core's rule; 8 and
16 for NeMo RL's and slime's 235 B, 4 and 8 for verl's), and the engine's TP the example's
(across nodes: vLLM TP 16 for NeMo RL's 235 B, SGLang TP 32 for slime's) beside those within a
node. Outside a tier nothing changes (:func:`trainer_parts` gives the query's one part).

NeMo RL also trains a mixture of experts with its DTensor policy (:data:`DTENSOR_MOE`): its v2
worker builds the model with NeMo Automodel and lays it out on a mesh of TP x CP x EP with no
pipeline (``nemo_rl/models/automodel/setup.py`` @7ea279abf: ``expert_parallel_size`` from
``dtensor_cfg``, ``model_parallel_size = tp_size * cp_size * ep_size``, ``pp_size=1``; the
experts sharded over EP and FSDP over the rest, no expert TP), and its recipes run large ones
that way (``examples/configs/recipes/llm/grpo-minimax-m27-dapo-8n8g-automodel.yaml``: MiniMax-M2.7,
EP 64 on 64 GPUs, activation checkpointing; ``grpo-glm47-flash-4n8g-automodel.yaml``: EP 32 on
32; ``grpo-moonlight-16b-automodel-1n8g-ep8.yaml``: EP 8). So under NeMo RL's tier the plan
searches a second part (:func:`dtensor_base`, :func:`dtensor_space`): ZeRO-3 (FSDP2), with and
without ``dtensor_cfg.cpu_offload`` (the space's offload axis, :mod:`rlmcost.plan.offloads`), TP
within a node, CP as the plan's long-sequence rule gives it (unpacked: the DTensor policy refuses
CP with packing), PP 1, EP every power of two dividing the experts from a node's GPUs (every
Automodel MoE recipe's EP is at least a node: 8, 32, 64, each the policy's GPUs) up to the
largest GPU count searched. The other tiers keep their Megatron part alone: verl's FSDP workers
shard a mixture of experts without expert parallelism (its VeOmni engine has EP,
``verl/workers/config/engine.py`` @b178a3cd ``VeOmniEngineConfig.expert_parallel_size``, with no
example for these models and no model here), and slime trains with Megatron-LM alone. A query's
``--zero`` picks the parts (3: the DTensor policy; other stages: Megatron-core). The plan's notes
say which were searched, and a row's ``zero`` (and its topology's trainer) which it is. Light to
import (no numpy).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rlmcost.parallel.layout import ZeroStage

if TYPE_CHECKING:
    from rlmcost.frameworks.preset_model import Sized
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.run.spec import Run

MEGATRON_TRAINER = "megatron-core"
DTENSOR_TRAINER = "dtensor"

DTENSOR_MOE: dict[str, str] = {
    "nemo-rl": "NeMo RL's DTensor policy (v2 worker, NeMo Automodel; nemo_rl/models/automodel/"
               "setup.py @7ea279abf: TP x CP x expert_parallel_size, no PP)",
}
"""Frameworks that also train a large mixture of experts with an FSDP (ZeRO-3) trainer with
expert parallelism, beside their tier's Megatron-core one (module docstring)."""


def moe_tier(base: Run) -> Sized | None:
    """The large-MoE size tier whose Megatron-core trainer ``base`` runs (:func:`size_tier`),
    where the base's trainer is not ZeRO-3 (a query under ``--no-sized-defaults`` keeps its
    preset's own trainer); else None."""
    if base.deployment.train.zero is ZeroStage.OS_G_P:
        return None
    return size_tier(base)


def size_tier(base: Run) -> Sized | None:
    """The large-MoE size tier (``moe_only``) of ``base``'s framework for its actor; None for
    none, the bare layout or the idealized iteration."""
    from rlmcost.run.defaults import actor_tier

    fw = base.deployment.framework
    if fw is None or base.deployment.ideal:
        return None
    tier = actor_tier(fw, base.models.actor)
    return tier if tier is not None and tier.moe_only else None


def trainer_parts(base: Run, space: RLSpace,
                  largest: int) -> list[tuple[Run, RLSpace]]:  # fmt: skip
    """The searches of one part of a plan, ``(base, space)``, by trainer: outside a large-MoE
    tier the part itself; under one, the tier's Megatron-core trainer (:func:`megatron_space`)
    and, for a framework of :data:`DTENSOR_MOE`, its DTensor policy (:func:`dtensor_base`,
    :func:`dtensor_space`), as the space's ``zero`` allows (``largest``: the largest GPU count
    searched, EP's bound)."""
    from rlmcost.plan.mcore import is_megatron

    tier = moe_tier(base)
    if tier is None:
        return [(base, space)]
    dtensor = str(base.deployment.framework) in DTENSOR_MOE and not is_megatron(base)
    own = base.deployment.train.zero  # the tier's (its distributed optimizer)
    zeros = space.zero or ((own, ZeroStage.OS_G_P) if dtensor else (own,))
    mcore = tuple(z for z in zeros if not (dtensor and z is ZeroStage.OS_G_P))
    parts = [(base, megatron_space(base, replace(space, zero=mcore)))] if mcore else []
    if dtensor and ZeroStage.OS_G_P in zeros:
        dt = dtensor_base(base)
        parts.append((dt, dtensor_space(dt, space, largest)))
    return parts


def _arch(base: Run) -> Any:
    from rlmcost.compiled import arch_numbers
    from rlmcost.plan.rl_candidates import actor_spec

    return arch_numbers(actor_spec(base))


def _experts(base: Run, low: int, high: int) -> tuple[int, ...]:
    """Powers of two from ``low`` to ``high`` that divide the actor's routed experts."""
    from rlmcost.plan.space import powers_of_two

    n = _arch(base).n_experts
    return tuple(e for e in powers_of_two(high) if e >= low and n and n % e == 0)


def _engine_tps(base: Run, space: RLSpace) -> tuple[int, ...] | None:
    """The space's engine TPs: given, else those within a node and the base's own (a tier's
    across nodes); None (the default rule) for a Megatron engine, whose TP list reads given
    TPs its own way (:func:`rlmcost.plan.mcore.engine_tps`)."""
    from rlmcost.plan.mcore import is_megatron
    from rlmcost.plan.rl_space import node_gpus
    from rlmcost.plan.space import engine_tp_degrees

    if space.rollout_tp is not None or is_megatron(base):
        return space.rollout_tp
    own = base.deployment.engine.tp
    within = engine_tp_degrees(_arch(base), node_gpus(base, space))
    return tuple(sorted({*within, *([own] if own else [])}))


def megatron_space(base: Run, space: RLSpace) -> RLSpace:
    """The space of the tier's Megatron-core trainer (module docstring): the given lists, else
    PP every power of two up to the tier's, EP the powers of two between a node and the tier's
    dividing the experts, the engine's TP beside the tier's."""
    from rlmcost.plan.rl_space import node_gpus
    from rlmcost.plan.space import powers_of_two

    t = base.deployment.train
    layers = _arch(base).n_layers
    pp = space.pp or tuple(p for p in powers_of_two(t.pp) if p <= layers)
    node = node_gpus(base, space)
    ep = space.ep or _experts(base, min(t.ep, node), max(t.ep, node))
    return replace(space, pp=pp, ep=ep, rollout_tp=_engine_tps(base, space),
                   trainer=MEGATRON_TRAINER)  # fmt: skip


def dtensor_space(base: Run, space: RLSpace, largest: int) -> RLSpace:
    """The space of NeMo RL's DTensor policy (module docstring): ZeRO-3, PP 1, EP every power
    of two dividing the experts from a node up to ``largest`` GPUs (or the given ones), the
    engine's TP beside the tier's."""
    from rlmcost.plan.rl_space import node_gpus

    return replace(space, zero=(ZeroStage.OS_G_P,), pp=(1,),
                   ep=space.ep or _experts(base, node_gpus(base, space), largest),
                   rollout_tp=_engine_tps(base, space), trainer=DTENSOR_TRAINER)  # fmt: skip


def dtensor_base(base: Run) -> Run:
    """``base`` with NeMo RL's DTensor policy for its trainer: each trainer field (``train``,
    and the log-prob forwards' batching) the query left at its tier's value takes the preset's
    own for the actor without its large-MoE tiers (NeMo RL's DTensor recipe for Qwen2.5-32B:
    ZeRO-3, fp32 master weights in the model, activation checkpointing, micro-batches of 1, the
    optimizer and weights offloaded around colocated generation), else rlmcost's default (the
    bare layout: no PP, EP folded in, its even split); a field the query set otherwise is kept.
    The experts take no expert TP (Automodel's EP mesh, module docstring). The engine, the
    algorithm and the workload stay the base's, so the two trainers answer the same query."""
    from rlmcost.deployment.batching import BATCHING, following_batching
    from rlmcost.deployment.spec import TrainLayout
    from rlmcost.frameworks.presets import get_preset
    from rlmcost.run.defaults import actor_layers, actor_moe, actor_params, actor_spec
    from rlmcost.run.spec import Run, merge

    fw, actor = str(base.deployment.framework), base.models.actor
    size, layers = (actor_params(actor), actor_moe(actor)), actor_layers(actor)
    preset = get_preset(fw)
    kind = str(base.deployment.engine.kind)
    own = replace(preset, sized=tuple(s for s in preset.sized if not s.moe_only))
    bare = TrainLayout().model_dump(mode="json")
    tiered, dt = (p.for_params(*size, layers, actor_spec(actor)).deployment_data(kind)
                  for p in (preset, own))  # fmt: skip
    tier_train, dt_train = (TrainLayout.model_validate(merge(bare, d.get("train") or {}))
                            .model_dump(mode="json") for d in (tiered, dt))  # fmt: skip
    data = base.to_json()
    dep = data["deployment"]
    train = {k: dt_train[k] if _same(v, tier_train[k]) else v for k, v in dep["train"].items()}
    train["etp"] = 1  # no expert TP: Automodel shards the experts over EP and FSDP alone
    had = following_batching(dep.get("forward"), dep["train"]) or {}
    forward = {}
    for k in BATCHING:  # the forwards' batching over the trainer's layout
        tier_v = (tiered.get("forward") or {}).get(k, tier_train[k])
        dt_v = (dt.get("forward") or {}).get(k, dt_train[k])
        forward[k] = dt_v if k not in had or _same(had[k], tier_v) else had[k]
    dep.update(train=train, forward=forward)
    return Run.from_data(data)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return all(_same(a.get(k), b.get(k)) for k in {*a, *b})
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return [str(x) for x in a] == [str(x) for x in b]
    return str(a) == str(b)


def trainers_note(parts: list[tuple[Run, RLSpace]]) -> list[str]:
    """The note that says which trainers a plan searched under each framework's large-MoE tier
    (none outside one)."""
    by: dict[str, list[RLSpace]] = {}
    tiers: dict[str, Sized] = {}
    for b, sp in parts:
        tier = size_tier(b)
        if sp.trainer and tier is not None:
            fw = str(b.deployment.framework)
            tiers[fw] = tier
            by.setdefault(fw, []).append(sp)
    clauses = []
    for fw, spaces in by.items():
        example = tiers[fw].example.split(",")[0]
        said = {MEGATRON_TRAINER: f"Megatron-core around {example}'s layout (ZeRO {{zero}}, PP "
                                  "{pp}, EP {ep})",
                DTENSOR_TRAINER: f"{DTENSOR_MOE.get(fw)}: ZeRO-3 with and without CPU offload, "
                                 "PP 1, EP {ep}"}  # fmt: skip
        what = " and ".join(dict.fromkeys(said[sp.trainer].format(
            zero=",".join(str(z) for z in sp.zero or ()), pp=",".join(map(str, sp.pp or (1,))),
            ep=",".join(map(str, sp.ep or ()))) for sp in spaces))  # fmt: skip
        alone = "" if fw in DTENSOR_MOE else " (no trainer of its own with expert parallelism " \
            "beside it searched)"  # fmt: skip
        clauses.append(f"{fw}'s, {what}{alone}")
    if not clauses:
        return []
    return ["under a size tier for this mixture of experts, the trainers searched: "
            + "; ".join(clauses) + "; a row's zero says which (rlmcost.plan.trainers)"]
