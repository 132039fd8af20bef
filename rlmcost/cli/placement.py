"""`rlmcost placements`: the seven inter-model configurations of Table IX side by side on real
models and GPUs, or one of them (``--placement``) or the user's groups (``--groups``) in detail.

Parses options (the flag table, with ``placements``' own defaults), builds the Run
(:func:`rlmcost.cli._run.run_from_options`), makes one library call (:func:`rlmcost.evaluate`
or ``reports.placement.compare_runs``) and renders (:mod:`rlmcost.cli.placement_render`).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rlmcost.cli._render import print_json
from rlmcost.cli.placement_render import render_comparison, render_estimate, render_symbolic
from rlmcost.parallel.layout import ZeroStage
from rlmcost.placement.kinds import Config


def placements(
    model: str | None = None,
    algorithm: str = "ppo",
    placement: Config | None = None,
    symbolic: bool = False,
    json_out: bool = False,
    **opts: Any,
) -> None:
    """Inter-model placements (Table IX): colocate, split or overlap models across GPUs.

    Without --placement: baseline, ac-shared, disaggregated, hybrid, fusion, async and combined
    side by side, the fastest that fits marked. With --placement: that configuration per
    stage and per device group. With --groups: your groups (each with its GPU count, e.g.
    rollout=16,actor+reference=32) in detail, or under --placement hybrid/fusion/async/combined.
    The built-in configurations' groups are sized by a search: the split of --gpus that fits
    with the shortest iteration.
    """
    if symbolic:
        render_symbolic(algorithm, placement, opts.get("staleness"), json_out)
        return
    from rlmcost.cli._run import run_from_options

    opts = {**opts, "model": model, "placement": placement}
    run = run_from_options(opts, algorithm, placements=True)
    if placement is None and not run.deployment.groups:
        from rlmcost.plan.sizing import compare_sized

        result = compare_sized(run)
        if json_out:
            print_json(result.to_json())
            return
        render_comparison(result)
        return
    from rlmcost.evaluation.query import evaluate
    from rlmcost.plan.sizing import sized
    from rlmcost.reports.placement import placement_json

    if run.deployment.groups:
        e = evaluate(run).evaluation
        assert e is not None  # every Run evaluates a deployment
    else:  # a built-in configuration: its groups sized by the plan's search
        run, e = sized(run)
    if json_out:
        print_json(placement_json(run, e))
        return

    def rerun(**changes: Any) -> Any:  # the same Run with changes, for the hints
        from rlmcost.reports.estimate import estimate

        return estimate(base=run, **changes)

    render_estimate(e, rerun)


_OWN = {
    "model": (
        Annotated[
            str | None,
            typer.Option(
                "--model", "-m", help="Actor model (see `rlmcost models`) or config.json."
            ),
        ],
        None,
    ),
    "algorithm": (
        Annotated[
            str, typer.Option("--algorithm", "-a", help="Algorithm (see `rlmcost algorithms`).")
        ],
        "ppo",
    ),
    "placement": (
        Annotated[
            Config | None,
            typer.Option(help="Show one configuration in detail (default: all side by side)."),
        ],
        None,
    ),
    "tp": (
        Annotated[
            int | None,
            typer.Option(
                help="TP degree of every model (default: per model, the smallest leaving "
                "half the HBM free).",
                min=1,
            ),
        ],
        None,
    ),
    "zero": (
        Annotated[
            ZeroStage | None,
            typer.Option(help="ZeRO stage of the model states on training groups (default 3)."),
        ],
        None,
    ),
    "gpus": (
        Annotated[
            int | None,
            typer.Option(help="GPUs in all (default: the --groups sum, else 8).", min=1),
        ],
        None,
    ),
    "symbolic": (
        Annotated[
            bool,
            typer.Option(
                "--symbolic",
                help="Print Table IX rows (work, depth, peak memory per device group per "
                "stage, notation and Big-O) on the paper's canonical model; no --model needed.",
            ),
        ],
        False,
    ),
}
"""`placements`' own options (and its defaults for tp, zero, gpus); the rest come from the
flag table."""


def register(app: typer.Typer) -> None:
    from rlmcost.cli._flags import flag_table, signature

    table = {**_OWN, **{k: v for k, v in flag_table(None).items() if k not in _OWN}}
    placements.__signature__ = signature(table)  # type: ignore[attr-defined]
    app.command("placements")(placements)
