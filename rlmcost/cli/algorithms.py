"""`rlmcost ppo|grpo|dpo|<variant>`, `rlmcost compare`, `rlmcost algorithms`.

One command per algorithm of the catalog (light to import: no sympy). Each parses its options
(the flag table of :mod:`rlmcost.cli._flags`), builds its :class:`~rlmcost.run.Run` in one place
(:func:`rlmcost.cli._run.run_from_options`), makes one library call (:func:`rlmcost.evaluate`,
``reports.estimate.compare_runs`` or ``reports.algorithms.symbolic_stages``) and renders (the
tables of :mod:`rlmcost.cli.algorithms_render` load for human output only).
"""

# No `from __future__ import annotations`: the per-algorithm help texts in the Annotated
# options are built when each command is made.

from typing import Annotated, Any

import typer

from rlmcost.algorithms.catalog import algorithms
from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import DEFAULT_BATCH, DEFAULT_HARDWARE, DEFAULT_RESPONSE_LEN, KNOBS
from rlmcost.cli._flags import PLACEMENT_OPTIONS, flag_table, signature
from rlmcost.cli._parse import parse_fraction
from rlmcost.cli._render import note, print_json, print_table
from rlmcost.run.schema_envelope import versioned

DEFAULT_LEN, DEFAULT_HW = DEFAULT_RESPONSE_LEN, DEFAULT_HARDWARE  # S and T share a default


def _evaluate(opts: dict[str, Any], alg: Algorithm) -> Any:
    """The Run of the options, evaluated (one place: flags -> Run -> evaluate). A built-in
    placement without --groups has its groups sized by the planner's search, as `rlmcost
    placements --placement` sizes them (:func:`rlmcost.plan.sizing.sized`: as given when it
    fits, else the fastest fitting split, said in the notes); the output's Run is the sized
    one, so `rlmcost run` reproduces it."""
    from rlmcost.cli._run import run_from_options
    from rlmcost.plan.sizing import evaluate_sized

    return evaluate_sized(run_from_options(opts, alg.name))


TIMELINE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "timeline": (
        Annotated[
            bool,
            typer.Option(
                "--timeline",
                help="Also print the memory timeline per device group: init, the first "
                "optimizer step (Adam states appear), each phase; allocated, reserved and "
                "nvidia-smi bytes. With --json: the output's memory_timeline key.",
            ),
        ],
        False,
    ),
    "plot": (
        Annotated[
            str | None,
            typer.Option(
                "--plot",
                metavar="FILE.png|svg",
                help="Draw the memory timeline (stacked memory per phase beside a Gantt chart "
                "of the jobs, one row per device group) to FILE; needs "
                'pip install "rlmcost\\[plot]".',
            ),
        ],
        None,
    ),
}
"""The algorithm commands' own options (the memory timeline; not `compare`'s)."""


def _algorithm_command(alg: Algorithm):  # noqa: ANN202 - a typer command
    def run(**opts: Any) -> None:
        timeline, plot = opts.pop("timeline"), opts.pop("plot")
        if opts["symbolic"]:
            if timeline or plot:
                from rlmcost.errors import SpecError

                raise SpecError("--timeline and --plot need a model: drop --symbolic")
            _symbolic(alg.name, opts)
            return
        if plot is not None:
            from rlmcost.reports.timeline_plot import check_path

            check_path(plot)
        from rlmcost.cli._deploy_build import unused_generation_flags

        unused = unused_generation_flags(opts, alg.name, alg.offline)
        result = _evaluate(opts, alg)
        if unused:
            note(f"note: {unused}")
        if opts.get("sp") and result.layout.tp == 1 and not result.grouped:
            # Megatron-LM megatron/training/arguments.py: "Disabling sequence parallelism
            # because tensor model parallelism is disabled" (a warning, SP set off at TP 1)
            note("note: --sp has no effect at --tp 1: sequence parallelism splits the "
                 "activations over the tensor-parallel group (give --tp > 1)")
        if plot:
            _plot(result, plot)
        if opts["json_out"]:
            from rlmcost.cli.deployment_line import evaluation_json

            out = evaluation_json(result)
            if timeline:
                from rlmcost.reports.timeline import timeline_json

                out["memory_timeline"] = timeline_json(result.evaluation)
            print_json(out)
            return
        from rlmcost.cli.algorithms_render import render_evaluation, render_timeline

        render_evaluation(result)
        if timeline:
            render_timeline(result)

    table = {**flag_table(alg), **TIMELINE_OPTIONS}
    run.__signature__ = signature(table)  # type: ignore[attr-defined]
    knobs = ", ".join(f"{k.flag} (default {k.default})" for k in KNOBS if k.name in alg.names)
    run.__doc__ = (
        f"{alg.summary}.\n\n{alg.citation}. Prints per stage (Generation, Assessment, "
        "Training): work, depth, memory per device with its breakdown, whether it fits, the "
        "predicted time with its range and the roofline lower bound, each stage's share; then "
        "the phases as frameworks time them, the memory per stage and the cost.\n\n"
        f"Defaults: B={DEFAULT_BATCH}"
        + (f", K={alg.default_group}" if "K" in alg.names else "")
        + f", S=T={DEFAULT_LEN}, {DEFAULT_HW}, gpus = tp*pp*cp*dp ("
        + ("" if alg.offline else "at least one engine replica, or ")
        + "the grid the preset's example for the actor's size needs), each other model the "
        "actor's"
        + (f"; knobs: {knobs}" if knobs else "")
        + ". The deployment: nemo-rl's preset (the default deployment; `rlmcost frameworks`), "
        "all models co-located on the same GPUs; --framework NAME for another framework's, "
        "none for rlmcost's bare layout (the value an option's help gives for --framework "
        "none)."
    )
    return run


def _plot(result: Any, path: str) -> None:
    from rlmcost.reports.timeline import memory_timeline
    from rlmcost.reports.timeline_plot import plot_timeline

    title = f"{result.algorithm.name} on {result.model}: {result.gpus} x {result.hardware.name}"
    written = plot_timeline(memory_timeline(result.evaluation), path, title)
    note(f"memory timeline drawn to {written}")


def _compare(names: list[str], **opts: Any) -> None:
    from rlmcost.cli._run import run_from_options
    from rlmcost.reports.estimate import compare_runs

    if not names:
        from rlmcost.errors import SpecError

        raise SpecError("give at least one algorithm, e.g. `rlmcost compare ppo grpo dpo`")
    seen = [n.strip().lower() for n in names]
    twice = next((n for i, n in enumerate(seen) if n in seen[:i]), None)
    if twice is not None:  # two identical columns side by side compare nothing
        from rlmcost.errors import SpecError

        raise SpecError(f"compare: {twice} given twice; give each algorithm once")
    given = {k for k, flag in (("rule_reward", "reward"), ("recompute_logprobs",
             "recompute_logprobs"), ("kl", "no_kl")) if opts.get(flag) is not None}  # fmt: skip
    result = compare_runs(run_from_options(opts, names[0]), names, frozenset(given))
    for line in result.notes():
        note(f"note: {line}")
    if opts["json_out"]:
        print_json(result.to_json())
        return
    from rlmcost.cli.algorithms_render import render_comparison

    render_comparison(result)


def algorithms_command(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """List every algorithm and variant: base, what it changes, paper."""
    from rlmcost.reports.listings import algorithm_listing

    rows = algorithm_listing()
    if json_out:
        print_json(versioned("algorithms", {"algorithms": rows}))
        return
    print_table(
        "Algorithms (each variant = its base plus/minus invocations)",
        ["name", "base", "summary", "K", "paper"],
        [
            (
                r["name"],
                r["base"] or "-",
                r["summary"],
                r["default_group"] if r["default_group"] is not None else "-",
                r["citation"],
            )
            for r in rows
        ],
        caption="`rlmcost NAME --help` for options; `rlmcost algorithms --json` lists each "
        "invocation. K = default responses per prompt.",
    )


def _symbolic(name: str, opts: dict[str, Any]) -> None:
    from rlmcost.reports.algorithms import symbolic_stages

    options = _symbolic_options(opts, algorithms()[name])
    rows = symbolic_stages(name, options)
    if opts["json_out"]:
        print_json(versioned(name, {"symbolic": True, "stages": [r.to_json() for r in rows]}))
        return
    print_table(
        f"{name}: Table IV rows (canonical model for every role; d_ff = O(d))",
        ["stage", "work", "Big-O work", "depth ‡", "Big-O depth", "memory", "Big-O memory"],
        [
            (
                r.stage.label,
                r.work.text,
                *([f"O({r.big_o()['work']})"] if r.cost else ["-"]),
                r.depth_disaggregated.text,
                *([f"O({r.big_o()['depth']})"] if r.cost else ["-"]),
                r.memory.text,
                *([f"O({r.big_o()['memory']})"] if r.cost else ["-"]),
            )
            for r in rows
        ],
        caption="‡ max = disaggregated (each model on its own devices); co-located depths add "
        "up. Memory in elements: 4|M| = Adam model states; M_Act activations, M_Inf inference "
        "buffer, M_KV KV cache; a frozen model never holds M_Act. `--json` adds the explicit "
        "expanded forms.",
    )


def _symbolic_options(opts: dict[str, Any], alg: Algorithm) -> Any:
    """The algorithm knobs of the options (Table IV rows take no models or deployment)."""
    from rlmcost.algorithms.options import Options
    from rlmcost.cli._run import options_data

    data = options_data(opts, alg)
    if data.pop("global_batch") is not None:
        from rlmcost.errors import SpecError

        raise SpecError("--global-batch needs B x K samples; the symbolic rows keep N_mini a "
                        "symbol: give --mini-batches, or drop --symbolic")  # fmt: skip
    return Options(**{**data, "oversample": parse_fraction(data["oversample"])})


# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------


def _compare_run() -> Any:
    import inspect

    def run(names: list[str], **opts: Any) -> None:
        _compare(names, **opts)

    names_param = inspect.Parameter(
        "names",
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        annotation=Annotated[list[str], typer.Argument(
            metavar="ALGORITHM",
            help="Algorithms, e.g. ppo grpo dpo (see `rlmcost algorithms`).")],
    )
    skip = ("symbolic", *PLACEMENT_OPTIONS)
    table = {k: v for k, v in flag_table(None).items() if k not in skip}
    run.__signature__ = signature(table, [names_param])  # type: ignore[attr-defined]
    run.__doc__ = (
        "Several algorithms side by side on the same models, workload and GPUs (e.g. "
        "`rlmcost compare ppo grpo dpo --model 8b`). Inputs that do not apply to an "
        "algorithm (a group for DPO, a critic for GRPO) are left out for it, with a note."
    )
    return run


PANEL = "RL algorithms: one iteration per stage (Table IV)"


def command_names() -> list[str]:
    """The commands of this module, in help order: the listing, compare, then the catalog's."""
    return ["algorithms", "compare", *algorithms()]


def register_command(app: typer.Typer, name: str) -> None:
    """Register the command ``name`` alone (building each algorithm's command takes a few ms;
    a run needs one of them)."""
    if name == "algorithms":
        app.command("algorithms", rich_help_panel=PANEL)(algorithms_command)
    elif name == "compare":
        app.command("compare", rich_help_panel=PANEL)(_compare_run())
    else:
        app.command(name, rich_help_panel=PANEL)(_algorithm_command(algorithms()[name]))


def register(app: typer.Typer) -> None:
    for name in command_names():
        register_command(app, name)
