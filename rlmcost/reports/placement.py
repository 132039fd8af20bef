"""One RL iteration under an inter-model placement, and all seven side by side
(`rlmcost placements`; the placement-aware `rlmcost ppo|grpo|... --placement`).

Resolves names and defaults the way ``reports.estimate`` does (models per role default to the
actor's; B = 64 prompts, K the algorithm's default, S = T = 1024; h100-sxm), then evaluates the
placement with :mod:`rlmcost.placement` on ``gpus`` devices. Layout defaults for placements:
ZeRO-3 for the model states (colocating trainable models needs sharded states, as OpenRLHF
and verl's FSDP backend do), TP per model the smallest power of two that leaves half the HBM
free of weights (stated in the notes), no pipeline. ``--groups`` sets the groups by hand.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.cost import resolve_values
from rlmcost.algorithms.kinds import Role
from rlmcost.algorithms.options import Options, configure
from rlmcost.calibrate import resolve_profile
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.placement.allocate import evaluate
from rlmcost.placement.configs import build
from rlmcost.placement.groups import DeviceGroup, parse_groups
from rlmcost.placement.inputs import Setup, auto_tp
from rlmcost.placement.iteration import PlacementEstimate
from rlmcost.placement.kinds import Config
from rlmcost.placement.lengths import LengthDist, parse_length_dist
from rlmcost.placement.transfer import host_bandwidth_bytes_per_s as default_host_bandwidth
from rlmcost.reports.estimate import (
    DEFAULT_HARDWARE,
    models_given,
    resolve_models,
    resolve_workload,
)
from rlmcost.specs import HardwareSpec, ModelSpec, Workload, get_hardware
from rlmcost.timing import PEAK

DEFAULT_GPUS = 8
DEFAULT_ZERO = ZeroStage.OS_G_P


def placement_estimate(
    algorithm: str = "ppo",
    model: str | ModelSpec = "llama-3.1-8b",
    *,
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
    tp: int | None = None,
    pp: int = 1,
    zero: ZeroStage = DEFAULT_ZERO,
    micro_batch: int = 1,
    hardware: str | HardwareSpec = DEFAULT_HARDWARE,
    gpus: int | None = None,
    options: Options | None = None,
    offload: bool = False,
    host_bandwidth_bytes_per_s: float | None = None,
    calibration: str | Path | None = None,
) -> PlacementEstimate:
    """Work, depth, peak memory per device and time of one iteration under a placement.

    ``placement``: one of the seven configurations (default baseline; with ``groups`` alone,
    the user's groups run synchronously). ``groups``: ``--groups`` text or DeviceGroups.
    ``staleness``: k for async and combined (default 1). ``length_dist``: ``--length-dist``
    text (default fixed T). ``tp``: one TP degree for every model (default: per model, see
    the module docstring). ``gpus``: devices in all (default the groups' sum, else 8).
    ``offload``: idle models wait in host memory. ``calibration``: a profile from `rlmcost
    calibrate` (default: the one shipped for ``hardware``, else datasheet peaks). Other inputs
    as ``reports.estimate``.

    >>> e = placement_estimate("grpo", "8b", placement="async", gpus=16)
    >>> [g.name for g in e.groups], e.placement.staleness, e.weight_sync_bytes > 0
    (['rollout', 'trainer'], 1, True)
    """
    alg = configure(get_algorithm(algorithm), options or Options())
    wl = resolve_workload(alg, workload, batch, group, prompt_len, response_len)
    specs = resolve_models(alg, model, models_given(models, critic, reward, ref, judge))
    hw = get_hardware(hardware)
    profile = resolve_profile(calibration, hw)
    user_groups = parse_groups(groups) if isinstance(groups, str) else groups
    plan = build(placement, alg, staleness=staleness, groups=user_groups, offload=offload)
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
    tps: dict[Role, int] = {}
    for role, spec in specs.items():
        if tp is not None:
            tps[role] = tp
            continue
        arch = spec.arch()
        tps[role] = auto_tp(arch, hw, spec_params(spec) * wl.weight_dtype.bytes)
    if tp is None:
        shown = ", ".join(f"{r}={t}" for r, t in tps.items())
        notes.append(f"tp per model (smallest leaving half the HBM free of weights): {shown}")
    dist = length_dist if isinstance(length_dist, LengthDist) else parse_length_dist(length_dist)
    host = default_host_bandwidth(hw)
    if host_bandwidth_bytes_per_s is not None:
        if not (math.isfinite(host_bandwidth_bytes_per_s) and host_bandwidth_bytes_per_s > 0):
            raise SpecError(
                f"host bandwidth {host_bandwidth_bytes_per_s} B/s must be a positive number; "
                "give GB/s per direction, e.g. --host-bandwidth 64"
            )
        host = host_bandwidth_bytes_per_s
    setup = Setup(
        alg=alg,
        placement=plan,
        tasks=plan.tasks(alg),
        specs=specs,
        hardware=hw,
        workload=wl,
        values=values,
        base=Layout(pp=pp, zero=zero, micro_batch=micro_batch),
        tp=tps,
        lengths=dist,
        host_bytes_per_s=host,
        efficiency=profile or PEAK,
    )
    total = gpus if gpus is not None or user_groups is not None else DEFAULT_GPUS
    result = evaluate(setup, total)
    if profile is not None:
        notes.append(f"time calibrated with {profile.name}")
    if offload:
        notes.append(f"offload over the host link at {host / 1e9:g} GB/s per direction (assumed)")
    if alg.offline:
        notes.append(f"{alg.name} is offline: no Generation stage in the loop")
    for spec in specs.values():
        mla_note = spec.attention_note()
        if mla_note and mla_note not in notes:
            notes.append(mla_note)
    return _with_notes(result, notes)


def spec_params(spec: ModelSpec) -> int:
    """|M| of a model spec (LM head)."""
    from rlmcost import blocks as bl

    return int(bl.params(spec.arch()))


def _with_notes(e: PlacementEstimate, notes: list[str]) -> PlacementEstimate:
    from dataclasses import replace

    return replace(e, notes=tuple(notes) + e.notes)


@dataclass(frozen=True)
class PlacementComparison:
    """Every configuration (and the user's groups) on the same inputs; ``skipped`` says why a
    configuration does not apply."""

    estimates: tuple[PlacementEstimate, ...]
    skipped: dict[str, str]

    @property
    def fastest_that_fits(self) -> PlacementEstimate | None:
        fitting = [e for e in self.estimates if e.fits]
        return min(fitting, key=lambda e: e.iteration_time_lower_bound_s, default=None)

    def to_json(self) -> dict[str, Any]:
        best = self.fastest_that_fits
        return {
            "placements": [e.to_json() for e in self.estimates],
            "not_applicable": self.skipped,
            "fastest_that_fits": best.placement.name if best else None,
        }


def compare_placements(
    algorithm: str = "ppo", model: str | ModelSpec = "llama-3.1-8b", **kwargs: Any
) -> PlacementComparison:
    """:func:`placement_estimate` for each of the seven configurations (and the ``groups``
    when given, as ``custom``); a configuration that does not apply (ac-shared without a
    critic, async for an offline method) is listed with the reason."""
    groups = kwargs.pop("groups", None)
    staleness = kwargs.pop("staleness", None)
    kwargs.pop("placement", None)
    estimates, skipped = [], {}
    for cfg in Config:
        k = staleness if cfg in (Config.ASYNC, Config.COMBINED) else None
        try:
            estimates.append(
                placement_estimate(algorithm, model, placement=cfg, staleness=k, **kwargs)
            )
        except SpecError as exc:
            skipped[str(cfg)] = str(exc)
    if groups is not None:
        estimates.append(placement_estimate(algorithm, model, groups=groups, **kwargs))
    if not estimates:
        raise SpecError(next(iter(skipped.values())))
    return PlacementComparison(tuple(estimates), skipped)
