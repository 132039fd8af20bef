"""`rlmcost validate`: predicted versus published training throughput and RL step times.

``--engine``: published inference measurements (:mod:`rlmcost.perf.validate_engine`).

``--memory``: published GPU-memory measurements (:mod:`rlmcost.perf.validate_memory`), each
row's ``rlmcost train`` command run as typed (:func:`train_json`) or its published RL run's Run.

``--rl``: the published RL runs (:mod:`rlmcost.reports.rl_runs_rows`), each as the query its
framework's users would write; the Run of each is built here, by the algorithm command's own
flag parser (:func:`run_from_argv`), so a row's command typed by hand gives the same Run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from rlmcost.cli._render import print_json, print_table
from rlmcost.cli.from_command import run_from_argv

__all__ = ["run_from_argv", "validate"]  # run_from_argv: rlmcost.run_from_command's own parse

if TYPE_CHECKING:
    from rlmcost.perf.validate import Validation
    from rlmcost.perf.validate_engine import EngineValidation
    from rlmcost.perf.validate_memory import MemoryValidation
    from rlmcost.reports.rl_runs_rows import RlRunsReport


def validate(
    source: Annotated[
        str | None,
        typer.Option(
            help="Only the rows of one source (e.g. narayanan2021, korthikanti2022, "
            "nemo_rl_v0.4; an unknown name lists them); with --rl a framework (nemo-rl, verl, "
            "openrlhf, deepspeed-chat, areal, trl, slime, miles) or a source of rl_runs.json."
        ),
    ] = None,
    rl: Annotated[
        bool,
        typer.Option(
            "--rl",
            help="The published RL runs (rlmcost/perf/data/rl_runs.json), each as its "
            "framework's users would write it: predicted vs published step time, interval, "
            "phases, fit; summary per framework.",
        ),
    ] = False,
    engine: Annotated[
        bool,
        typer.Option(
            "--engine",
            help="Published inference measurements (rlmcost/perf/data/engine_runs.json: vLLM, "
            "TensorRT-LLM, NIM) against the engine model's decode steps and prefill; with "
            "--source one of its sources.",
        ),
    ] = False,
    memory: Annotated[
        bool,
        typer.Option(
            "--memory",
            help="Published GPU-memory measurements (rlmcost/perf/data/memory_runs.json: "
            "torchtitan, verl; vLLM / SGLang KV-cache pools) against rlmcost's memory per "
            "device, in the quantity each source measured (allocated, reserved, nvidia-smi, "
            "an engine's logged KV pool in GiB or tokens): published vs predicted, "
            "error, allocator-slack interval; summary per source. With --source one source.",
        ),
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Reproduce published training measurements with the step-time model: predicted vs
    published, the error per row, mean and max per source (--rl: the published RL runs)."""
    from rlmcost.run.schema_envelope import versioned

    if memory:
        from rlmcost.perf.validate_memory import validate_memory

        checked_memory = validate_memory(train_json, run_from_argv, source)
        if json_out:
            print_json(versioned("validate", checked_memory.to_json()))
            return
        _render_memory(checked_memory)
        return
    if engine:
        from rlmcost.perf.validate_engine import validate_engine

        checked = validate_engine(source)
        if json_out:
            print_json(versioned("validate", checked.to_json()))
            return
        _render_engine(checked)
        return
    if rl:
        from rlmcost.reports.rl_runs_rows import validate_rl_runs

        report = validate_rl_runs(run_from_argv, source)
        if json_out:
            print_json(versioned("validate", report.to_json()))
            return
        _render_rl(report)
        return
    from rlmcost.perf.validate import validate as run

    result = run(source)
    if json_out:
        print_json(versioned("validate", result.to_json()))
        return
    _render(result)


def _figure(metric: str, value: float) -> str:
    if metric == "step_time_s":
        return f"{value:.2f} s/step"
    if metric == "tokens_per_s_per_gpu":
        return f"{value:,.0f} tok/s/GPU"
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
        ["row", "setup", "published", "predicted", "error", "interval", "step"],
        [
            (
                row.id,
                row.setup,
                _figure(row.metric, row.published),
                _figure(row.metric, row.predicted),
                f"{100 * row.error:+.1f} %",
                " - ".join(_figure(row.metric, x) for x in row.interval)
                + ("" if row.inside_interval else " (outside)"),
                format_seconds(row.step.step_s),
            )
            for row in r.rows
        ],
        caption="Each figure in its source's own FLOP convention (see --json 'sources'); "
        "error = predicted / published - 1; interval = the predicted step's "
        "(rlmcost.perf.interval.TEACHER_FORCED, never below the roofline bound) in the row's "
        "metric; step = predicted step time.",
        right=(2, 3, 4, 5, 6),
    )
    _summary("error per source", r.summary(), r)


def _summary(title: str, summary: dict[str, Any], r: Any) -> None:
    covered = any("coverage" in v for v in summary.values())
    print_table(
        title,
        ["source", "rows", "mean |error|", "max |error|", *(["coverage"] if covered else [])],
        [
            (k, v["rows"], _pct(v["mean_abs_error"]), _pct(v["max_abs_error"]),
             *([_pct(v["coverage"])] if covered else []))
            for k, v in summary.items()
        ],
        caption="; ".join(f"{k}: {v['title']}" for k, v in r.sources.items()),
        right=(1, 2, 3),
    )


def _render_rl(report: RlRunsReport) -> None:
    from rlmcost.units import format_seconds

    def sec(x: float | None) -> str:
        return "-" if x is None else format_seconds(x)

    rows = []
    for r in report.rows:
        lo_hi = f"[{sec(r.interval_s[0])}, {sec(r.interval_s[1])}]" if r.interval_s else "-"
        inside = {True: "yes", False: "no", None: "-"}[r.inside]
        fit = {True: "yes", False: "DOES NOT FIT", None: "-"}[r.fits]
        err = "-" if r.error is None else f"{100 * r.error:+.1f} %"
        rows.append((r.recipe.id, r.recipe.framework, sec(r.published_s), sec(r.predicted_s),
                     err, lo_hi, inside, r.status if r.status != "ok"
                     else "excluded" if r.excluded else fit))  # fmt: skip
    print_table(
        "predicted vs published RL step time (published runs, as each framework's users write "
        "them)",
        ["run", "framework", "published", "predicted", "error", "interval", "inside", "fits"],
        rows,
        caption="published: seconds per step (end-to-end hours over the source's step count "
        "where so published); predicted: the evaluation's iteration time; error = predicted / "
        "published - 1; interval: the prediction's (low, high); inside: the published value in "
        "it. Commands, choices and Runs: --json 'rl_runs'.",
        right=(2, 3, 4),
    )
    phase_rows = [
        (r.recipe.id, p.published_key, p.name or "(not predicted)", sec(p.published_s),
         sec(p.predicted_s))
        for r in report.rows for p in r.phases
    ]  # fmt: skip
    if phase_rows:
        print_table(
            "published vs predicted phases",
            ["run", "published", "rlmcost phase", "published s", "predicted s"],
            phase_rows,
            right=(3, 4),
        )
    print_table(
        "RL step-time error per framework",
        ["framework", "runs", "predicted", "median |error|", "max |error|", "coverage",
         "not fitting", "excluded"],
        [
            (k, v["runs"], v["predicted"], _pct_or(v["median_abs_error"]),
             _pct_or(v["max_abs_error"]), _pct_or(v["coverage"]), v["not_fitting"],
             v["excluded"])
            for k, v in report.summary().items()
        ],
        caption="coverage: share of predicted runs whose published step time lies inside the "
        "predicted interval; excluded: runs printed above (error included) but left out of "
        "these figures, each for the reason its row states.",
        right=(1, 2, 3, 4, 5, 6, 7),
    )  # fmt: skip
    for r in report.rows:
        print(f"{r.recipe.id}: {r.recipe.command or r.status}")
        for c in r.recipe.choices:
            print(f"  - {c}")
        if r.excluded:
            print(f"  ! excluded from the summary: {r.excluded}")
        if r.fits is False:
            why = "; ".join(r.problems) or f"short of {r.shortfall_bytes / 1e9:.1f} GB per GPU"
            print(f"  ! does not fit: {why}")


def _render_engine(v: EngineValidation) -> None:
    from rlmcost.perf.validate_engine import unit

    def fig(x: float, unit: str) -> str:
        return f"{x:,.1f} {unit}" if unit == "ms" else f"{x:,.0f} {unit}"

    print_table(
        "published vs predicted inference (engine model)",
        ["row", "setup", "metric", "published", "predicted", "error"],
        [
            (r.id, r.setup, r.row["metric"], fig(r.published, unit(r.row)),
             fig(r.predicted, unit(r.row)),
             f"{100 * r.error:+.1f} %" + (" (excluded)" if r.row.get("excluded") else ""))
            for r in v.rows
        ],
        caption="throughput: output tokens/s of a static batch, prefill included; itl: mean "
        "inter-token latency at a closed-loop concurrency (batch); latency: one batch end to "
        "end. error = predicted / published - 1. Conversions: rlmcost.perf.validate_engine; "
        "why a row is excluded: --json 'excluded'.",
        right=(3, 4, 5),
    )  # fmt: skip
    print_table(
        "inference error per source",
        ["source", "rows", "median |error|", "max |error|", "median speed error"],
        [(k, s["rows"], _pct(s["median_abs_error"]), _pct(s["max_abs_error"]),
          f"{100 * s['median_speed_error']:+.1f} %") for k, s in v.summary().items()],
        caption="speed error: predicted speed / published speed - 1 (negative: the model is "
        "slow). " + "; ".join(f"{k}: {s['url']}" for k, s in v.sources.items()),
        right=(1, 2, 3, 4),
    )  # fmt: skip


def train_json(words: list[str]) -> dict[str, Any]:
    """The ``--json`` object `rlmcost train WORDS` prints, the command run in-process by its
    own parser (a SpecError for what the command rejects)."""
    import contextlib
    import io
    import json

    import typer.main

    from rlmcost.cli import app
    from rlmcost.cli._app import _click_exceptions, choice_message
    from rlmcost.errors import SpecError

    cmd = typer.main.get_command(app).get_command(None, "train")  # type: ignore[attr-defined]
    out = io.StringIO()
    try:
        ctx = cmd.make_context("rlmcost train", [*words, "--json"])
        with contextlib.redirect_stdout(out):
            cmd.invoke(ctx)
    except _click_exceptions.ClickException as exc:
        text = choice_message(exc.format_message().replace("\n", " ").strip())
        raise SpecError(f"`rlmcost train`: {text}") from None
    return dict(json.loads(out.getvalue()))


def _render_memory(v: MemoryValidation) -> None:
    def gib(x: float | None) -> str:
        return "-" if x is None else f"{x / 2**30:.1f} GiB"

    rows = []
    for r in v.rows:
        lo_hi = "-" if r.interval_bytes is None else \
            f"{gib(r.interval_bytes[0])} - {gib(r.interval_bytes[1])}"  # fmt: skip
        published, predicted = f"{float(r.row.get('published_gib', 0)):g} GiB", \
            gib(r.predicted_bytes)  # fmt: skip
        if r.tokens:  # an engine's KV pool in tokens
            published = f"{int(r.row['published_tokens']):,} tok"
            predicted = "-" if r.predicted_tokens is None else f"{r.predicted_tokens:,} tok"
            lo_hi = "-" if r.interval_tokens is None else \
                f"{r.interval_tokens[0]:,} - {r.interval_tokens[1]:,} tok"  # fmt: skip
        rows.append((r.id, r.row["measured"], published,
                     predicted, "-" if r.error is None else f"{100 * r.error:+.1f} %",
                     lo_hi, {True: "yes", False: "no", None: "-"}[r.inside],
                     "ok" if r.status == "ok" else r.status))  # fmt: skip
    print_table(
        "published vs predicted GPU memory per device",
        ["row", "measured", "published", "predicted", "error", "interval", "inside", "status"],
        rows,
        caption="allocated: torch.cuda.max_memory_allocated vs rlmcost's allocated peak; "
        "reserved: the caching allocator's reserved peak vs the allocated peak plus rlmcost's "
        "allocator slack (no CUDA context, no NCCL buffers); allocated_or_reserved: a figure "
        "its source does not name, predicted as allocated; device: nvidia-smi vs the RL "
        "evaluation's device view; kv_gib / kv_tokens: a vLLM or SGLang engine's logged KV pool "
        "vs the pool the RL evaluation gives the engine alone (interval: the memory outside "
        "PyTorch the engine version counts, rlmcost.perf.validate_memory_engine). interval: "
        "the allocator slack's range, up to the "
        "fragmentation GMLake measured (arXiv 2401.08156: 15 % of reserved, 33 % without "
        "expandable segments; a point for allocated rows); inside: the published figure, +- "
        "half its printed digit, in it. error = "
        "predicted / published - 1. Commands and assumptions: --json 'memory_rows'.",
        right=(2, 3, 4),
    )  # fmt: skip
    print_table(
        "memory error per source",
        ["source", "rows", "predicted", "mean |error|", "max |error|", "mean error", "coverage"],
        [(k, s["rows"], s["predicted"], _pct_or(s["mean_abs_error"]),
          _pct_or(s["max_abs_error"]),
          "-" if s["mean_error"] is None else f"{100 * s['mean_error']:+.1f} %",
          _pct_or(s["coverage"])) for k, s in v.summary().items()],
        caption="; ".join(f"{k}: {s['url']} ({s['measured']})" for k, s in v.sources.items()),
        right=(1, 2, 3, 4, 5, 6),
    )  # fmt: skip


def _pct_or(x: float | None) -> str:
    return "-" if x is None else _pct(x)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
