"""``evaluate(run) -> Evaluation``: the one evaluation of a query (DESIGN.md, "One Run").

Every command, the library and the planner describe a query as a :class:`~rlmcost.run.Run`
and evaluate it here. The deployment's evaluation
(:func:`~rlmcost.evaluation.deployment.evaluate_deployment`: one memory model and one time
model over the device groups) is grouped by stage into the view every algorithm command prints
(:func:`~rlmcost.evaluation.view.from_placement`).

Layout: the deployment's trainer layout with ``cluster.dp`` replicas; when ``cluster.gpus`` is
larger, data parallelism fills the rest (stated in the notes). With ``tp_per_model`` each
model's TP is the smallest power of two that leaves half the HBM free of weights. Without a
placement or groups the Run is the co-located baseline: one device group of ``tp*pp*dp`` GPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.deployment.resolve import resolve_layout
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.evaluation.view import Evaluation, from_placement
from rlmcost.run.spec import WorkloadSpec
from rlmcost.specs import Workload

if TYPE_CHECKING:
    from rlmcost.deployment.spec import GroupLayouts
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
    (8, False, 'generation')
    """
    dep, c, train = run.deployment, run.cluster, run.deployment.train
    grouped = run.grouped
    layout_kw: dict[str, Any]
    if run.tp_per_model:
        lay, notes = train.layout(dp=c.dp or 1), list[str]()
        layout_kw = dict(tp=None, pp=train.pp, zero=train.zero, micro_batch=train.micro_batch)
        gpus = c.gpus
    else:
        lay, notes = resolve_layout(train.layout(dp=c.dp or 1), c.gpus)
        layout_kw = dict(layout=lay)
        gpus = lay.n_gpus if not grouped or (c.gpus is None and not dep.groups) else c.gpus
    w, m = run.workload, run.models
    host = c.host_bandwidth_gb_per_s
    base = None  # the default counts; dtypes other than bf16/fp32 need a base workload
    if w.dtypes() != WorkloadSpec().dtypes():
        base = Workload.model_validate(
            {"samples_per_prompt": get_algorithm(run.algorithm.name).default_group, **w.dtypes()}
        )
    result = evaluate_deployment(
        run.algorithm.name,
        m.actor,
        deployment=dep,
        placement=None if grouped else "baseline",
        length_dist=w.length_dist,
        models=m.given(),
        workload=base,
        batch=w.prompts,
        group=w.samples_per_prompt,
        prompt_len=w.prompt_len,
        response_len=w.response_len,
        hardware=c.hardware,
        gpus=gpus,
        options=run.algorithm.options(),
        host_bandwidth_bytes_per_s=host * 1e9 if host is not None else None,
        calibration=c.calibration,
        efficiency=efficiency,
        counting=run.attention,
        **layout_kw,
    )
    options = run.algorithm.options()
    return from_placement(
        result, result.algorithm, lay, options, run.attention, tuple(notes), run=run
    )


def groups_from_text(text: str) -> tuple[GroupLayouts, ...]:
    """``--groups`` text as the Run's device groups: ``rollout=16[tp=4],actor+ref=8`` ->
    ``GroupLayouts(members="rollout", gpus=16, settings="tp=4")``, ... (members spelled as the
    parser names them; SpecError for bad syntax)."""
    from rlmcost.deployment.spec import GroupLayouts
    from rlmcost.placement.groups import parse_groups

    out = []
    for g in parse_groups(text):
        spec = g.spec()
        settings = spec[spec.index("[") + 1 : -1] if g.settings else None
        out.append(GroupLayouts(members=g.name, gpus=g.gpus or 1, settings=settings))
    return tuple(out)
