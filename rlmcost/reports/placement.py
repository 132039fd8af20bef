"""One RL iteration under an inter-model placement, and all seven side by side
(`rlmcost placements`; the placement-aware `rlmcost ppo|grpo|... --placement`).

Both evaluate :class:`~rlmcost.run.Run` s with :func:`rlmcost.evaluate` and show the
deployment's evaluation (device groups, jobs, transfers, schedule). The keyword helpers take
the placements' layout defaults: ZeRO-3 for the model states (colocating trainable models
needs sharded states, as OpenRLHF and verl's FSDP backend do), TP per model the smallest power
of two that leaves half the HBM free of weights (stated in the notes), no pipeline, 8 GPUs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.evaluation.query import evaluate
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import ZeroStage
from rlmcost.placement.allocate import ranking_time_s
from rlmcost.placement.estimate import PlacementEstimate
from rlmcost.placement.kinds import Config
from rlmcost.reports.estimate import run_of
from rlmcost.run.spec import SCHEMA_VERSION, Run

DEFAULT_GPUS = 8
DEFAULT_ZERO = ZeroStage.OS_G_P


def placement_run(algorithm: str = "ppo", model: Any = "llama-3.1-8b", **kwargs: Any) -> Run:
    """:func:`~rlmcost.reports.estimate.run_of` with the placements' defaults (module
    docstring): ZeRO-3, TP per model unless ``tp`` or ``layout`` is given, 8 GPUs unless
    ``gpus`` or ``groups`` say otherwise."""
    kwargs.setdefault("zero", DEFAULT_ZERO)
    if "layout" not in kwargs:
        kwargs.setdefault("tp", None)
    if kwargs.get("gpus") is None and kwargs.get("groups") is None:
        kwargs["gpus"] = DEFAULT_GPUS
    return run_of(algorithm, model, **kwargs)


def placement_estimate(
    algorithm: str = "ppo", model: Any = "llama-3.1-8b", **kwargs: Any
) -> PlacementEstimate:
    """One iteration under a placement: the deployment's evaluation of :func:`placement_run`.

    >>> e = placement_estimate("grpo", "8b", placement="async", gpus=16)
    >>> [g.name for g in e.groups], e.placement.staleness, e.weight_sync_bytes > 0
    (['rollout', 'trainer'], 1, True)
    """
    efficiency = kwargs.pop("efficiency", None)
    return placed(evaluate(placement_run(algorithm, model, **kwargs), efficiency=efficiency))


def placed(e: Any) -> PlacementEstimate:
    assert e.evaluation is not None  # every Run evaluates a deployment
    return e.evaluation


def placement_json(run: Run, e: PlacementEstimate) -> dict[str, Any]:
    """`rlmcost placements --placement/--groups --json`: the placement's report with its Run."""
    return {"schema_version": SCHEMA_VERSION, "command": "placements", "run": run.to_json(),
            **e.to_json()}  # fmt: skip


@dataclass(frozen=True)
class PlacementComparison:
    """Every configuration (and the user's groups) on the same inputs; ``skipped`` says why a
    configuration does not apply."""

    estimates: tuple[PlacementEstimate, ...]
    skipped: dict[str, str]
    run: Run | None = None  # the query compared
    # deployments beyond the configurations that their notes compare with, fastest first
    # (rlmcost.plan.sizing.Outside: what, time_s, flags; `placements` sizes them)
    outside: tuple[Any, ...] = ()

    @property
    def faster_outside(self) -> tuple[Any, ...]:
        """Of :attr:`outside`, those faster than the fastest configuration that fits (all of
        them where none fits)."""
        best = self.fastest_that_fits
        if best is None:
            return self.outside
        return tuple(o for o in self.outside if o.time_s < ranking_time_s(best))

    @property
    def fastest_that_fits(self) -> PlacementEstimate | None:
        fitting = [e for e in self.estimates if e.fits]
        return min(fitting, key=ranking_time_s, default=None)

    def to_json(self) -> dict[str, Any]:
        best = self.fastest_that_fits
        return {
            "schema_version": SCHEMA_VERSION,
            "command": "placements",
            "run": self.run.to_json() if self.run is not None else None,
            "placements": [e.to_json() for e in self.estimates],
            "not_applicable": self.skipped,
            "fastest_that_fits": best.placement.name if best else None,
            "faster_outside": [o.to_json() for o in self.faster_outside],
        }


def compare_runs(
    run: Run, size: Callable[[Run], tuple[Run, PlacementEstimate]] | None = None
) -> PlacementComparison:
    """``run`` under each of the seven configurations, and under its own groups, when it has
    them, as ``custom``; a configuration that does not apply (ac-shared without a critic,
    async for an offline method) is listed with the reason. ``size``: how a configuration's
    groups are sized (`rlmcost placements` passes :func:`rlmcost.plan.sizing.sized`, the
    plan's search; default: as given, the evaluation's split search)."""
    size = size or (lambda one: (one, placed(evaluate(one))))
    estimates, skipped = [], {}
    staleness = run.deployment.staleness
    for cfg in Config:
        k = staleness if cfg in (Config.ASYNC, Config.COMBINED) else None
        one = run.replace(deployment={"placement": str(cfg), "staleness": k, "groups": []})
        try:
            estimates.append(size(one)[1])
        except SpecError as exc:
            skipped[str(cfg)] = str(exc)
    if run.deployment.groups:
        estimates.append(placed(evaluate(run.replace(deployment={"placement": None}))))
    if not estimates:
        raise SpecError(next(iter(skipped.values())))
    return PlacementComparison(tuple(estimates), skipped, run)


def compare_placements(
    algorithm: str = "ppo", model: Any = "llama-3.1-8b", **kwargs: Any
) -> PlacementComparison:
    """:func:`compare_runs` of :func:`placement_run` (without a placement)."""
    kwargs.pop("placement", None)
    return compare_runs(placement_run(algorithm, model, **kwargs))
