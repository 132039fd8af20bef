"""`rlmcost run FILE`: evaluate a saved Run; `rlmcost schema COMMAND`: the JSON Schema of a
command's ``--json`` output. Parse, one library call, render."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rlmcost.cli._render import print_json
from rlmcost.run.schema_envelope import schema_commands


def run(
    file: Annotated[
        Path,
        typer.Argument(
            help="A Run (YAML or JSON: algorithm, models, workload, deployment, cluster), or "
            "any query command's --json output (its embedded Run is re-evaluated as that "
            "command shows it; `rlmcost import`'s as its algorithm command)."
        ),
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
    command: Annotated[
        bool, typer.Option("--command", help="Print the CLI line that reproduces the Run.")
    ] = False,
) -> None:
    """Evaluate a saved Run (`rlmcost ppo ... --json > out.json; rlmcost run out.json`)."""
    from rlmcost.reports.views import evaluate_view, view_command
    from rlmcost.run.spec import load_run

    the_run, meta = load_run(file)
    if command:
        line = the_run.to_command(view_command(the_run, meta))
        head = f"rlmcost compare {the_run.algorithm.name}"
        others = [n for n in meta.get("compared") or () if n != the_run.algorithm.name]
        if line.startswith(head + " ") and others:  # every algorithm the comparison ran
            line = " ".join([head, *others]) + line[len(head):]
        print(line)
        return
    from rlmcost.plan.sizing import compare_sized, evaluate_sized  # as the commands size

    result = evaluate_view(the_run, meta, compare_sized, evaluate_sized)
    if json_out:
        from rlmcost.cli.deployment_line import evaluation_json

        print_json(evaluation_json(result))
        return
    _render(result)


def _render(result: Any) -> None:
    from rlmcost.evaluation.view import Evaluation
    from rlmcost.reports.estimate import Comparison
    from rlmcost.reports.placement import PlacementComparison

    if isinstance(result, Evaluation):
        from rlmcost.cli.algorithms_render import render_evaluation

        render_evaluation(result)
    elif isinstance(result, Comparison):
        from rlmcost.cli.algorithms_render import render_comparison

        render_comparison(result)
    elif isinstance(result, PlacementComparison):
        from rlmcost.cli.placement_render import render_comparison as render_placements

        render_placements(result)
    else:
        from rlmcost.cli.placement_render import render_estimate

        render_estimate(result.estimate)


def schema(
    command: Annotated[
        list[str],
        typer.Argument(
            help="A command with --json output: "
            + ", ".join(schema_commands())
            + "; `import` alone names the schema every `import FRAMEWORK` shares.",
            show_default=False,
        ),
    ],
) -> None:
    """Print the JSON Schema of COMMAND's --json output (generated from the models; every
    output starts with schema_version and command)."""
    from rlmcost.run.schema import json_schema

    print_json(json_schema(" ".join(command)))


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("schema")(schema)
