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

from dataclasses import dataclass
from typing import Any

from rlmcost.deployment.evaluate import evaluate_deployment
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import ZeroStage
from rlmcost.placement.allocate import ranking_time_s
from rlmcost.placement.estimate import PlacementEstimate
from rlmcost.placement.kinds import Config
from rlmcost.specs import ModelSpec

DEFAULT_GPUS = 8
DEFAULT_ZERO = ZeroStage.OS_G_P


def placement_estimate(
    algorithm: str = "ppo", model: str | ModelSpec = "llama-3.1-8b", **kwargs: Any
) -> PlacementEstimate:
    """One iteration under a placement: :func:`~rlmcost.deployment.evaluate.
    evaluate_deployment` with the placements' layout defaults (ZeRO-3 model states, TP per
    model, no pipeline; module docstring).

    >>> e = placement_estimate("grpo", "8b", placement="async", gpus=16)
    >>> [g.name for g in e.groups], e.placement.staleness, e.weight_sync_bytes > 0
    (['rollout', 'trainer'], 1, True)
    """
    kwargs.setdefault("zero", DEFAULT_ZERO)
    return evaluate_deployment(algorithm, model, **kwargs)


@dataclass(frozen=True)
class PlacementComparison:
    """Every configuration (and the user's groups) on the same inputs; ``skipped`` says why a
    configuration does not apply."""

    estimates: tuple[PlacementEstimate, ...]
    skipped: dict[str, str]

    @property
    def fastest_that_fits(self) -> PlacementEstimate | None:
        fitting = [e for e in self.estimates if e.fits]
        return min(fitting, key=ranking_time_s, default=None)

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
