"""``evaluate(run) -> Evaluation``: the one evaluation of a query (DESIGN.md, "One Run").

Every command, the library and the planner describe a query as a :class:`~rlmcost.run.Run`
and evaluate it here. The deployment's evaluation
(:func:`~rlmcost.evaluation.deployment.evaluate_deployment`: one memory model and one time
model over the device groups) is grouped by stage into the view every algorithm command prints
(:func:`~rlmcost.evaluation.view.from_placement`).

Layout: the deployment's trainer layout with ``cluster.dp`` replicas; when ``cluster.gpus`` is
larger, data parallelism fills the rest (stated in the notes); with ``tp_per_model`` each
model's TP is the smallest power of two that leaves half the HBM free of weights
(:func:`~rlmcost.evaluation.deployment.trainer_layout`). Without a placement or groups the Run
is the co-located baseline: one device group of ``tp*pp*dp`` GPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment, trainer_layout
from rlmcost.evaluation.view import Evaluation, from_placement

if TYPE_CHECKING:
    from rlmcost.deployment.spec import GroupLayouts, TrainLayout
    from rlmcost.run.spec import Run
    from rlmcost.timing import Efficiency


def evaluate(run: Run, *, efficiency: Efficiency | None = None) -> Evaluation:
    """Work, depth, memory per device (and host), fit and time of one iteration of ``run``.

    ``efficiency``: measured efficiencies to use instead of the Run's calibration profile
    (a library object; a Run names a profile file in ``cluster.calibration``).

    >>> from rlmcost.run import Run
    >>> run = Run.from_data({"models": {"actor": "70b"}, "deployment": {"train": {"tp": 8}}})
    >>> e = evaluate(run)
    >>> e.gpus, e.fits, str(e.dominant_stage)
    (8, False, 'training')
    """
    from rlmcost.run.spec import require_run

    _require_efficiency(efficiency)
    result = evaluate_deployment(require_run(run, "rlmcost.evaluate"), efficiency=efficiency)
    trainer = trainer_layout(run)
    return from_placement(result, result.algorithm, trainer.layout, run.options(),
                          run.attention, trainer.notes, run=run)  # fmt: skip


def _require_efficiency(efficiency: object) -> None:
    """SpecError unless ``efficiency`` is None or an :class:`~rlmcost.timing.Efficiency` (its
    ``name``, ``compute`` and ``bandwidth``), before an AttributeError deep in the time model
    could: a profile file is the Run's ``cluster.calibration``, not this argument."""
    if efficiency is None or all(callable(getattr(efficiency, f, None))
                                 for f in ("compute", "bandwidth")):  # fmt: skip
        return
    raise SpecError(f"efficiency={efficiency!r:.60} must be a rlmcost.timing.Efficiency (its "
                    "compute and bandwidth methods); for a profile of `rlmcost calibrate "
                    "--out FILE` give calibration=FILE (cluster.calibration)")  # fmt: skip


def groups_from_text(text: str, train: TrainLayout | None = None,
                     before: tuple[GroupLayouts, ...] = ()) -> tuple[GroupLayouts, ...]:
    """``--groups`` text as the Run's device groups: ``rollout=16@h20[tp=4;gmu=0.85],actor+ref=8``
    -> ``GroupLayouts(members="rollout", gpus=16, settings="tp=4", hardware="h20",
    engine=EngineSpec(gpu_memory_utilization=0.85))``, ... (members spelled as the parser names
    them; SpecError for bad syntax). A bracket's engine and trainer keys become the group's own
    ``engine`` and ``train`` (:mod:`rlmcost.deployment.group_brackets`): its trainer layout is
    ``train`` (the run's; None: TrainLayout's defaults) with the bracket's keys over it.
    ``before``: the groups of a ``--deployment`` file or preset; a group of the same members
    keeps their own trainer, forward and engine settings, the bracket's keys over them (a flag
    overrides a file field by field); groups the text does not name are gone, as are their
    settings."""
    from rlmcost.deployment.group_brackets import own_fields
    from rlmcost.deployment.spec import GroupLayouts
    from rlmcost.placement.groups import brackets, parse_groups
    from rlmcost.specs.validation import build

    out = []
    file = {_members(g.members): g for g in before if g.train or g.forward or g.engine}
    for g, own in zip(parse_groups(text), brackets(text), strict=True):
        spec = g.spec()
        settings = spec[spec.index("[") + 1 : -1] if g.settings else None
        data = {"members": g.name, "gpus": g.gpus or 1, "settings": settings,
                "hardware": g.hardware}  # fmt: skip
        kept = file.get(_members(g.name))
        if own is not None:
            data.update(own_fields(own, train, kept, g.name, text))
        elif kept is not None:
            data.update(engine=kept.engine, train=kept.train, forward=kept.forward)
        out.append(build(GroupLayouts, data, f"--groups {text!r}"))
    return tuple(out)


def _members(name: str) -> frozenset[str]:
    """A group's members as a set, as ``--groups`` names them (``reference+actor`` and
    ``actor+ref`` are one group): how a file's group is found again under the flag."""
    from rlmcost.errors import SpecError
    from rlmcost.placement.groups import parse_groups

    try:
        name = parse_groups(f"{name}=1")[0].name
    except SpecError:
        pass
    return frozenset(name.split("+"))
