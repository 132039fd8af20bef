"""The one evaluation: a deployment of an algorithm on models, a workload and hardware.

Every query goes through :func:`evaluate_deployment` — `rlmcost ppo|grpo|...` (the co-located
baseline: one device group, the user's layout), `--placement`, `--groups` and `rlmcost
placements` — so two commands never disagree about the same run (DESIGN.md §6b). It resolves
the names and defaults (:mod:`rlmcost.deployment.resolve`), builds the placement's device groups
(:mod:`rlmcost.placement.configs`; a deployment's own groups with their layouts), and evaluates
them with :mod:`rlmcost.placement` — one memory model (model states, activations, KV cache, the
deployment's terms of :mod:`rlmcost.deployment.memory`) and one time model (the roofline bound
of :mod:`rlmcost.timing`, the decode timeline, transfers, the schedule).

Layout defaults: the given ``layout`` (TP for every model), else ``tp``/``pp``/``zero``/
``micro_batch`` with TP per model the smallest power of two that leaves half the HBM free of
weights (stated in the notes), else the deployment's trainer layout.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import DEFAULT_HARDWARE, Options, configure, resolve_values
from rlmcost.choices import AttnCounting
from rlmcost.deployment.resolve import models_given, resolve_models, resolve_workload
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.placement.allocate import allocate
from rlmcost.placement.configs import build
from rlmcost.placement.groups import DeviceGroup, parse_groups
from rlmcost.placement.inputs import Setup, auto_tp
from rlmcost.placement.iteration import PlacementEstimate
from rlmcost.placement.kinds import Config
from rlmcost.placement.lengths import LengthDist, parse_length_dist
from rlmcost.placement.transfer import host_bandwidth_bytes_per_s as default_host_bandwidth
from rlmcost.specs import HardwareSpec, ModelSpec, Workload, get_hardware
from rlmcost.timing import PEAK, Efficiency

DEFAULT_GPUS = 8


def evaluate_deployment(
    algorithm: str | Algorithm = "ppo",
    model: str | ModelSpec = "llama-3.1-8b",
    *,
    deployment: Deployment | None = None,
    placement: Config | str | None = None,
    groups: str | Sequence[DeviceGroup] | None = None,
    staleness: int | None = None,
    length_dist: str | LengthDist | None = None,
    critic: str | ModelSpec | None = None,
    reward: str | ModelSpec | None = None,
    ref: str | ModelSpec | None = None,
    judge: str | ModelSpec | None = None,
    models: Mapping[Role | str, str | ModelSpec] | None = None,
    workload: Workload | None = None,
    batch: int | None = None,
    group: int | None = None,
    prompt_len: int | None = None,
    response_len: int | None = None,
    layout: Layout | None = None,
    tp: int | None = None,
    pp: int = 1,
    zero: ZeroStage = ZeroStage.OS_G_P,
    micro_batch: int = 1,
    hardware: str | HardwareSpec = DEFAULT_HARDWARE,
    gpus: int | None = None,
    options: Options | None = None,
    offload: bool = False,
    host_bandwidth_bytes_per_s: float | None = None,
    calibration: str | Path | None = None,
    efficiency: Efficiency | None = None,
    counting: AttnCounting = AttnCounting.FULL,
) -> PlacementEstimate:
    """Work, depth, memory per device (and host), fit and time of one iteration of
    ``algorithm`` as ``deployment`` runs it (default ``Deployment()``; ``Deployment(ideal=True)``
    is the paper's idealized iteration).

    ``placement``: a Table IX configuration (default baseline; with ``groups`` alone the
    user's groups run synchronously); ``groups``: ``--groups`` text or DeviceGroups;
    ``staleness``: k for async/combined; ``length_dist``: ``--length-dist`` text (default
    fixed T). ``layout``: the trainer's layout with TP for every model (its ``dp`` is filled
    per group); else ``tp`` (None: per model), ``pp``, ``zero``, ``micro_batch``. ``gpus``:
    devices in all (default: the groups' sum, else 8). ``offload``: idle models wait in host
    memory. ``calibration``/``efficiency``: measured efficiencies (default: the profile shipped
    for ``hardware``, else datasheet peaks). Models and workload as :mod:`rlmcost.deployment.
    resolve` resolves them.

    >>> e = evaluate_deployment("grpo", "8b", placement="async", gpus=16)
    >>> [g.name for g in e.groups], e.placement.staleness, e.weight_sync_bytes > 0
    (['rollout', 'trainer'], 1, True)
    """
    dep = deployment if deployment is not None else Deployment()
    alg = configure(get_algorithm(algorithm), options or Options())
    wl = resolve_workload(alg, workload, batch, group, prompt_len, response_len)
    specs = resolve_models(alg, model, models_given(models, critic, reward, ref, judge))
    hw = get_hardware(hardware)
    if calibration is not None and efficiency is not None:
        raise SpecError("give either efficiency or calibration, not both")
    if efficiency is None:
        from rlmcost.calibrate import resolve_profile

        efficiency = resolve_profile(calibration, hw)
    user_groups = _groups(groups, dep)
    dep = _canonical(dep, user_groups)
    plan = build(
        placement if placement is not None else dep.placement,
        alg,
        staleness=staleness if staleness is not None else dep.staleness,
        groups=user_groups,
        offload=offload or dep.offload_idle,
    )
    notes: list[str] = []
    if plan.shared_backbone and specs[Role.CRITIC].name != specs[Role.ACTOR].name:
        raise SpecError(
            f"--placement ac-shared shares one backbone, but the critic ({specs[Role.CRITIC].name})"
            f" is not the actor's model ({specs[Role.ACTOR].name}); drop --critic"
        )
    values = resolve_values(
        alg,
        {"B": wl.prompts, "K": wl.samples_per_prompt, "S": wl.prompt_len, "T": wl.response_len},
        options,
    )
    t = dep.train  # checkpointing, SP, CP, EP of the deployment's trainer when no layout
    base = layout or Layout(
        pp=pp, zero=zero, micro_batch=micro_batch, ckpt=t.ckpt, sp=t.sp, cp=t.cp, ep=t.ep
    )
    given_tp = layout.tp if layout is not None else tp
    tps: dict[Role, int] = {}
    for role, spec in specs.items():
        if given_tp is not None:
            tps[role] = given_tp
            continue
        weight_bytes = spec_params(spec) * wl.weight_dtype.bytes
        tps[role] = auto_tp(spec.arch(), hw, weight_bytes)
    if given_tp is None:
        shown = ", ".join(f"{r}={t}" for r, t in tps.items())
        notes.append(f"tp per model (smallest leaving half the HBM free of weights): {shown}")
    dist = length_dist if isinstance(length_dist, LengthDist) else parse_length_dist(length_dist)
    host = _host_bandwidth(hw, host_bandwidth_bytes_per_s)
    setup = Setup(
        alg=alg,
        placement=plan,
        tasks=plan.tasks(alg),
        specs=specs,
        hardware=hw,
        workload=wl,
        values=values,
        base=base,
        tp=tps,
        lengths=dist,
        host_bytes_per_s=host,
        efficiency=efficiency or PEAK,
        deployment=dep,
        counting=counting,
    )
    total = gpus if gpus is not None or user_groups is not None else DEFAULT_GPUS
    result = allocate(setup, total)
    if efficiency is not None:
        notes.append(f"time calibrated with {efficiency.name}")
    if plan.offload or dep.train.offload:
        notes.append(
            f"offload over the host link at {host / 1e9:g} GB/s per direction (assumed)"
        )
    if alg.offline:
        notes.append(
            f"{alg.name} is offline (Table IV †): its responses come from a fixed dataset "
            "generated before training, so the loop has no Generation stage"
        )
    for inv in alg.invocations:
        if inv.kind is not Kind.VERIFY and inv.role in specs:
            note = specs[inv.role].context_note(wl.prompt_len + wl.response_len)
            if note and note not in notes:
                notes.append(note)
    for g in result.groups:  # an engine wider than the KV heads replicates them
        for j in g.jobs:
            kv = int(setup.arch(j.task.role).n_kv_heads)
            if j.task.kind is Kind.GENERATE and j.layout.tp > kv:
                note = (
                    f"{j.task.label()} on {g.name}: tp={j.layout.tp} > kv heads={kv}: each rank "
                    f"holds one KV head, replicated on {j.layout.tp // kv} ranks (vLLM), so the "
                    "KV cache per rank does not shrink below one head"
                )
                if note not in notes:
                    notes.append(note)
    for spec in specs.values():  # decode convention (MLA) and the spec's approximations
        for note in (spec.attention_note(), *spec.notes):
            if note and note not in notes:
                notes.append(note)
    return replace(result, notes=tuple(notes) + result.notes)


def spec_params(spec: ModelSpec) -> int:
    """|M| of a model spec (LM head)."""
    from rlmcost.compiled.blocks import params

    return params(spec.arch())


def _host_bandwidth(hw: HardwareSpec, given: float | None) -> float:
    if given is None:
        return default_host_bandwidth(hw)
    if not (math.isfinite(given) and given > 0):
        raise SpecError(
            f"host bandwidth {given} B/s must be a positive number; give GB/s per direction, "
            "e.g. --host-bandwidth 64"
        )
    return given


def _groups(
    groups: str | Sequence[DeviceGroup] | None, dep: Deployment
) -> tuple[DeviceGroup, ...] | None:
    """The user's device groups: ``groups`` (text or objects), else the deployment's."""
    if isinstance(groups, str):
        return parse_groups(groups)
    if groups is not None:
        return tuple(groups)
    if not dep.groups:
        return None
    out = []
    for g in dep.groups:
        brackets = f"[{g.settings}]" if g.settings else ""
        (parsed,) = parse_groups(f"{g.members}={g.gpus}{brackets}")
        layouts = []
        if g.train is not None:
            layouts.append((Kind.TRAIN, g.train.layout()))
        if g.forward is not None:
            layouts.append((Kind.FORWARD, g.forward.layout()))
        if g.engine is not None and g.engine.tp is not None:
            layouts.append((Kind.GENERATE, Layout(tp=g.engine.tp, pp=g.engine.pp, ep=g.engine.ep)))
        out.append(replace(parsed, layouts=tuple(layouts)))
    return tuple(out)


def _canonical(dep: Deployment, groups: tuple[DeviceGroup, ...] | None) -> Deployment:
    """``dep`` with its groups' members spelled as the parsed groups name them."""
    if not dep.groups or groups is None:
        return dep
    renamed = tuple(
        g.model_copy(update={"members": parsed.name})
        for g, parsed in zip(dep.groups, groups, strict=False)
    )
    return dep.model_copy(update={"groups": renamed})
