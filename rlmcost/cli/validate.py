"""`rlmcost validate`: predicted versus published training throughput."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from rlmcost.cli._render import print_json, print_table

if TYPE_CHECKING:
    from rlmcost.perf.validate import Validation


def validate(
    source: Annotated[
        str | None,
        typer.Option(
            help="Only the rows of one source (narayanan2021, korthikanti2022, nemo_rl_v0.4)."
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Reproduce published training measurements with the step-time model: predicted vs
    published, the error per row, mean and max per source."""
    from rlmcost.perf.validate import validate as run

    result = run(source)
    if json_out:
        from rlmcost.run.schema_envelope import versioned

        print_json(versioned("validate", result.to_json()))
        return
    _render(result)


def _figure(metric: str, value: float) -> str:
    return f"{value:.1f} TFLOP/s" if metric.startswith("tflops") else f"{100 * value:.1f} % MFU"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _render(result: Validation) -> None:
    from rlmcost.units import format_seconds

    r = result
    if r.rl_rows:
        print_table(
            "predicted vs published RL step time",
            ["row", "setup", "published", "predicted", "error", "bound"],
            [
                (
                    row.id,
                    row.setup,
                    format_seconds(row.published_s),
                    format_seconds(row.predicted_s),
                    f"{100 * row.error:+.1f} %",
                    format_seconds(row.lower_bound_s),
                )
                for row in r.rl_rows
            ],
            caption="Predicted = the iteration's predicted time (rlmcost.perf, the engine's "
            "decode steps, the trainer's steps, the deployment's schedule); bound = its roofline "
            "lower bound; error = predicted / published - 1. Setups and assumptions per row: "
            "--json 'rl_rows'.",
            right=(2, 3, 4, 5),
        )
        _summary("RL step-time error per source", r.rl_summary(), r)
    if not r.rows:
        return
    print_table(
        "predicted vs published training throughput",
        ["row", "setup", "published", "predicted", "error", "step"],
        [
            (
                row.id,
                row.setup,
                _figure(row.metric, row.published),
                _figure(row.metric, row.predicted),
                f"{100 * row.error:+.1f} %",
                format_seconds(row.step.step_s),
            )
            for row in r.rows
        ],
        caption="Each figure in its source's own FLOP convention (see --json 'sources'); "
        "error = predicted / published - 1; step = predicted step time.",
        right=(2, 3, 4, 5),
    )
    _summary("error per source", r.summary(), r)


def _summary(title: str, summary: dict[str, Any], r: Any) -> None:
    print_table(
        title,
        ["source", "rows", "mean |error|", "max |error|"],
        [
            (k, v["rows"], _pct(v["mean_abs_error"]), _pct(v["max_abs_error"]))
            for k, v in summary.items()
        ],
        caption="; ".join(f"{k}: {v['title']}" for k, v in r.sources.items()),
        right=(1, 2, 3),
    )


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
