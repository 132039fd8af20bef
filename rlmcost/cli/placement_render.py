"""Rendering of `rlmcost placements`: the seven configurations side by side, one placement per
stage and per device group (with its transfers and the hints that make it fit), and the
symbolic Table IX rows. No computing here but the symbolic rows' library call; the hints come
from :mod:`rlmcost.evaluation.advice` through the ``run`` callback."""

from __future__ import annotations

from typing import Any

from rlmcost.cli._render import note, print_json, print_table
from rlmcost.errors import SpecError
from rlmcost.placement.kinds import Config

CAPTION = (
    "memory = peak per device over the groups active in the stage; time = predicted (kernel "
    "efficiency by shape, exposed communication, bubbles, the engine's decode steps); time >= "
    "= roofline lower bound (datasheet dense peak, HBM bandwidth; ZeRO-3 gathers for inference, "
    "weight sync/resharding and host offload at link bandwidth; no other communication); FLOP "
    "= add or mul."
)


def _caption(e: Any) -> str:
    """:data:`CAPTION` after the dtypes of ``e``'s deployment: its trainers' model states (the
    default NeMo RL preset stores fp32 weights and gradients, not bf16), activations, KV cache."""
    from rlmcost.cli.algorithms_render import _states
    from rlmcost.cli.dtype_words import kv_words

    w = e.workload
    return (f"Trainers: {_states(e)}; activations, KV cache: {w.activation_dtype}/{kv_words(e)}; "
            f"fp32 logits; " + CAPTION)  # fmt: skip


def _groups_text(e: Any) -> str:
    return ", ".join(f"{g.name}={g.gpus}" for g in e.groups)


def host_memory_line(e: Any) -> str:
    """The line of ``e``'s host memory per node (a PlacementEstimate): on groups of several
    accelerators, whose node the figure is (the busiest; a node holds one accelerator)."""
    from rlmcost.units import format_bytes

    host = format_bytes(e.host_memory_bytes_per_node)
    line = f"host memory per node for offloaded states: {host}"
    if len(e.fleet) > 1:
        hw = e.host_memory_node
        line += f" (the busiest node: {hw.host_gpus} x {hw.name})"
    cap = e.host_memory_capacity_bytes_per_node
    return line + (f" of its host's {format_bytes(cap)}." if cap is not None
                   else "; its host's memory is unknown, not checked.")  # fmt: skip


def fit_text(e: Any, paren: bool = False) -> str:
    """``yes``, or ``NO`` with the bytes a device lacks, or, where the devices hold the run, the
    bytes its busiest node's host lacks (``host +BYTES``), else the problem (``e``: a
    PlacementEstimate or an Evaluation of one)."""
    from rlmcost.units import format_bytes

    if e.fits:
        return "yes"
    if e.shortfall_bytes:
        short = f"+{format_bytes(e.shortfall_bytes)}"
    else:
        pe = getattr(e, "evaluation", None) or e
        cap = getattr(pe, "host_memory_capacity_bytes_per_node", None)
        over = 0 if cap is None else pe.host_memory_bytes_per_node - cap
        short = f"host +{format_bytes(over)}" if over > 0 else "a problem"
    return f"NO ({short})" if paren or short == "a problem" else f"NO {short}"


def render_comparison(c: Any) -> None:
    from rlmcost.algorithms.kinds import Stage
    from rlmcost.units import format_bytes, format_seconds

    es = c.estimates
    best = c.fastest_that_fits

    def stage(e: Any, s: Stage) -> str:
        return format_seconds(e.stages[s].time_lower_bound_s) if s in e.stages else "-"

    rows = [
        (
            f"{e.placement.name} *" if e is best else e.placement.name,
            _groups_text(e),
            *(stage(e, s) for s in Stage),
            format_seconds(e.iteration_time_s),
            format_seconds(e.iteration_time_lower_bound_s),
            format_seconds(e.stage_sum_s),
            format_bytes(e.peak_memory_bytes_per_device),
            fit_text(e),
            format_bytes(e.weight_sync_bytes),
            "-" if e.cost_per_iteration_usd is None else f"{e.cost_per_iteration_usd:,.4f}",
        )
        for e in es
    ]
    first = es[0]
    w = first.workload
    print_table(
        f"{first.algorithm.name} on {first.groups[0].jobs[0].model}: placements on "
        f"{first.gpus} x {first.hardware.name}",
        [
            "placement",
            "groups=GPUs",
            "Gen >=",
            "Assess >=",
            "Train >=",
            "iteration",
            "iteration >=",
            "back to back",
            "peak mem/dev",
            "fits",
            "weight sync",
            "$/iter",
        ],  # fmt: skip
        rows,
        caption=f"B={w.prompts}, K={w.samples_per_prompt}, S={w.prompt_len}, lengths "
        f"{first.lengths.describe(w.response_len)}. * = fastest that fits; back to back = the "
        "stages' bounds (>=) summed (a synchronous loop's bound); weight sync = bytes sent "
        "between device groups (an engine refitted on its trainer's GPUs moves none between "
        "groups: its refit shows in `rlmcost ALGORITHM --placement NAME`'s transfers); $/iter = "
        "USD per iteration (predicted "
        "seconds x GPUs x USD per GPU-hour, --price or the cited list price; -: not priced). "
        + _caption(first),
        right=(2, 3, 4, 5, 6, 7, 8, 10, 11),
    )
    faster = getattr(c, "faster_outside", ())
    if best is not None:
        print(
            f"fastest that fits{' of these configurations' if faster else ''}: "
            f"{best.placement.name} "
            f"({format_seconds(best.iteration_time_s)} per iteration predicted, >= "
            f"{format_seconds(best.iteration_time_lower_bound_s)}, "
            f"{_groups_text(best)})."
        )
    else:
        print(f"no placement fits: give more GPUs (--gpus), {_untried(first.deployment)}.")
    if faster:  # what the notes found beyond the configurations: the headline says it too
        print("faster beyond them (the notes say why): "
              + "; ".join(o.text() for o in faster) + ".")
    for name, why in c.skipped.items():
        note(f"note: {name} does not apply: {why}")
    for line in dict.fromkeys(n for e in es for n in e.notes):
        note(f"note: {line}")


def _untried(dep: Any) -> str:
    """The memory flags of ``dep`` not yet at their leanest, as a hint (none already set)."""
    from rlmcost.deployment import Offload
    from rlmcost.parallel.layout import Checkpointing

    flags = ["larger --tp or --pp"]
    if Offload.OPTIMIZER not in dep.train.offload:
        flags.append("--offload optimizer")
    if dep.train.ckpt is not Checkpointing.FULL:
        flags.append("--ckpt full")
    if not dep.offload_idle:
        flags.append("--offload-idle")
    return ", ".join(flags[:-1]) + " or " + flags[-1] if len(flags) > 1 else flags[0]


def render_estimate(e: Any, run: Any = None) -> None:
    """One placement per stage and per group; ``run`` re-runs the query as an estimate with
    changes (the hints that make it fit, :mod:`rlmcost.evaluation.advice`)."""
    from rlmcost.units import format_bytes, format_flops, format_seconds

    rows = [
        (
            s.stage.label,
            format_flops(s.work_flops),
            f"{s.depth:,}",
            format_bytes(s.peak_memory_bytes_per_device),
            format_seconds(s.time_s),
            format_seconds(s.time_lower_bound_s),
            ", ".join(s.groups),
        )
        for s in e.stages.values()
    ]
    rows.append(
        (
            "Iteration",
            format_flops(e.work_flops),
            f"{e.iteration_depth:,}",
            format_bytes(e.peak_memory_bytes_per_device),
            format_seconds(e.iteration_time_s),
            format_seconds(e.iteration_time_lower_bound_s),
            f"staleness {e.placement.staleness}",
        )
    )
    w, actor = e.workload, e.specs.get("actor")  # the model, as the one-group title names it
    on = f" on {actor.name}" if actor is not None else ""
    print_table(
        f"{e.algorithm.name}{on}, placement {e.placement.name}: {e.fleet_text}",
        ["stage", "work", "depth", "peak mem/device", "time", "time >=", "groups"],
        rows,
        caption=f"B={w.prompts}, K={w.samples_per_prompt}, S={w.prompt_len}, lengths "
        f"{e.lengths.describe(w.response_len)}. " + _caption(e),
        right=(1, 2, 3, 4, 5),
    )
    from rlmcost.cli.algorithms_render import render_phases

    render_phases(e.phases, e.iteration_time_s, e.tokens_per_s_per_gpu, e.mfu, e)
    grows = []
    for g in e.groups:
        gen = next((j for j in g.jobs if j.timeline is not None), None)
        grows.append(
            (
                g.name,
                f"{g.gpus} x {g.hardware}" if len(e.fleet) > 1 else str(g.gpus),
                ", ".join(j.task.label() for j in g.jobs),
                ", ".join(str(r) for r in g.shadows) or "-",
                format_bytes(g.peak_memory_bytes_per_device),
                "yes" if g.fits else f"NO (+{format_bytes(g.shortfall_bytes)})",
                format_seconds(g.busy_predicted_s),
                format_seconds(g.busy_s),
                f"{gen.timeline.waves} x {gen.timeline.slots}" if gen else "-",
            )
        )
    print_table(
        "Device groups",
        ["group", "GPUs", "runs", "shadow M_sh", "peak mem/device", "fits", "busy", "busy >=",
         "waves"],
        grows,
        caption="busy = the group's own invocations and transfers per iteration, predicted "
        "(busy >= the bound); waves = rounds x sequences in flight per generation replica "
        "(KV-cache capacity).",
        right=(1, 4, 6, 7),
    )  # fmt: skip
    transfers = [t for g in e.groups for t in g.transfers] + list(e.syncs)
    if transfers:
        print_table(
            "Transfers per iteration",
            ["kind", "what", "bytes", "per device", "time", "time >="],
            [
                (
                    t.kind,
                    t.what,
                    format_bytes(t.bytes),
                    format_bytes(t.bytes_per_device),
                    format_seconds(t.predicted),
                    format_seconds(t.time_s),
                )
                for t in transfers
            ],  # fmt: skip
            right=(2, 3, 4, 5),
        )
    print(
        f"iteration {format_seconds(e.iteration_time_s)} predicted, >= "
        f"{format_seconds(e.iteration_time_lower_bound_s)} "
        f"(stages back to back: {format_seconds(e.stage_sum_s)}); critical: {e.critical_path}."
    )
    if e.fusion is not None:
        print(
            f"fusion took {format_seconds(e.fusion.inter_stage_s)} of assessment under decoding "
            f"and {format_seconds(e.fusion.intra_stage_s)} of pipeline bubbles off the path."
        )
    if e.host_memory_bytes_per_node:
        print(host_memory_line(e))
    if e.fits and run is not None:
        from rlmcost.cli.fit_hints import render_pool_hints

        render_pool_hints(run, run())
    if not e.fits:
        failing = [g for g in e.groups if not g.fits]
        bad = ", ".join(
            f"{g.name} (+{format_bytes(g.shortfall_bytes)})" if g.shortfall_bytes
            else f"{g.name} ({'; '.join(g.problems)})"
            for g in failing
        )  # fmt: skip
        caps = " / ".join(dict.fromkeys(f"{format_bytes(g.hbm_bytes)} per device of one "
                                        f"{g.hardware or e.hardware.name}" for g in failing))
        if failing:  # the capacity the check uses: what a device gives programs
            print(f"DOES NOT FIT in {caps}: {bad}; the times assume it fit.")
        for problem in e.host_check.problems:  # a node over its host's memory
            print(f"DOES NOT FIT: {problem}; the times assume it fit.")
        if run is not None:
            from rlmcost.cli.fit_hints import render_hints

            render_hints(run, run())
        else:
            print("  give more GPUs (--gpus); the algorithm's command with the same "
                  "--placement or --groups names the changes that make it fit.")  # fmt: skip
    for line in e.notes:
        note(f"note: {line}")


def render_symbolic(
    algorithm: str, placement: Config | None, staleness: int | None, json_out: bool
) -> None:
    """Table IX rows of ``algorithm`` for one configuration or all seven."""
    from rlmcost.placement.symbolic import placement_rows

    configs = [placement] if placement is not None else list(Config)
    rows, skipped = [], []
    for cfg in configs:
        k = staleness if cfg in (Config.ASYNC, Config.COMBINED) else None
        try:
            rows += placement_rows(cfg, algorithm, staleness=k)
        except SpecError as exc:
            if placement is not None:
                raise
            skipped.append(f"{cfg} does not apply: {exc}")
    if json_out:
        from rlmcost.run.schema_envelope import versioned

        print_json(versioned("placements", {"symbolic": True,
                                            "rows": [r.to_json() for r in rows]}))
        return
    print_table(
        f"{algorithm}: Table IX rows (canonical model for every role; d_ff = O(d))",
        [
            "configuration",
            "stage",
            "work",
            "depth",
            "peak memory per device group",
            "Big-O depth",
            "Big-O memory",
        ],  # fmt: skip
        [
            (
                Config(r.config).label,
                r.label,
                r.work.text,
                r.depth.text,
                r.memory.text,
                f"O({r.big_o()['depth']})",
                f"O({r.big_o()['memory']})",
            )
            for r in rows
        ],  # fmt: skip
        caption="Memory in elements per device group (Adam 4|M|, M_sh shadow copy, M_KV, "
        "M_Inf, M_Act); depths add inside a group, take the max across groups; the iteration "
        "depth is the steady-state period. `rlmcost tables` writes all of it to "
        "tables/table_09.*, with Big-O work.",
    )
    for line in skipped:
        note(f"note: {line}")
