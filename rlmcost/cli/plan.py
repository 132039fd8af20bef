"""`rlmcost plan grpo|ppo|...|train`: search deployments for the best that fits a GPU budget.

Parses the options, makes one library call (:func:`rlmcost.plan.rl.plan_rl`,
:func:`rlmcost.plan.rl.max_response_len` or :func:`rlmcost.plan.train.plan_train`) and
renders the top rows, the Pareto front and the families that never fit. A progress bar goes
to stderr.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Annotated, Any

import typer

from rlmcost.cli._render import note, print_json, print_table
from rlmcost.run.schema_envelope import versioned

Pos = dict(min=1)


def plan(
    target: Annotated[
        str, typer.Argument(help="An RL algorithm (grpo, ppo, ...; see `rlmcost algorithms`) "
                            "or `train` (the layout search for pre-training/SFT).")
    ],
    model: Annotated[str, typer.Option("--model", "-m", help="Model (see `rlmcost models`).")],
    gpus: Annotated[
        str, typer.Option(help="GPU budget: a count (64), a list (8,16,32) or a range (8..64: "
                          "8, 16, 32, 64).")
    ] = "8..64",
    hardware: Annotated[str, typer.Option("--hardware", "-H", help="Accelerator.")] = "h100-sxm",
    objective: Annotated[
        str, typer.Option(help="Rank by: time (fastest), gpus (fewest), gpu-hours (per "
                          "iteration) or throughput (tokens/s/GPU).")
    ] = "time",
    top: Annotated[int, typer.Option(help="Rows to print.", **Pos)] = 10,
    min_gpus: Annotated[
        bool, typer.Option("--min-gpus", help="Smallest GPU count of the budget with any "
                           "fitting deployment.")
    ] = False,
    max_response_len: Annotated[
        bool, typer.Option("--max-response-len", help="Longest response (multiple of 1024 "
                           "tokens) that fits on the largest GPU count of the budget.")
    ] = False,
    batch: Annotated[int | None, typer.Option("--batch", "-B", help="Prompts B (RL) or "
                                              "sequences per step (train).", **Pos)] = None,
    group: Annotated[int | None, typer.Option("--group", "-K", help="Responses per prompt.",
                                              **Pos)] = None,
    prompt_len: Annotated[int | None, typer.Option("--prompt-len", "-S", **Pos)] = None,
    response_len: Annotated[int | None, typer.Option("--response-len", "-T", **Pos)] = None,
    reward: Annotated[str | None, typer.Option(help="Reward model, or `rule`.")] = None,
    critic: Annotated[str | None, typer.Option(help="Critic model.")] = None,
    ref: Annotated[str | None, typer.Option(help="Reference model.")] = None,
    seq: Annotated[int, typer.Option(help="train: tokens per sequence.", **Pos)] = 2048,
    tp: Annotated[str | None, typer.Option(help="TP degrees to search, e.g. 1,2,4,8 "
                                           "(default: every valid one within a node).")] = None,
    pp: Annotated[str | None, typer.Option(help="PP degrees to search (RL default 1).")] = None,
    zero: Annotated[str | None, typer.Option(help="ZeRO stages, e.g. 1,3 (RL default 3).")] = None,
    ckpt: Annotated[str | None, typer.Option(help="Checkpointing, e.g. none,full.")] = None,
    micro_batch: Annotated[str | None, typer.Option(help="Micro-batches, e.g. 1,2,4.")] = None,
    rollout_tp: Annotated[str | None, typer.Option(help="RL: engine TP degrees.")] = None,
    placements: Annotated[
        str | None, typer.Option(help="RL: placements, any of baseline, split (partial "
                                 "colocation: rollout on half the GPUs), async, "
                                 "disaggregated, hybrid, fusion, combined (default "
                                 "baseline,split).")
    ] = None,
    workers: Annotated[int | None, typer.Option(help="Run on a local Dask cluster of N "
                                                "workers.", **Pos)] = None,
    cluster: Annotated[str | None, typer.Option(help="Run on the Dask scheduler at ADDRESS "
                                                "(tcp://host:8786).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Search deployments for the cheapest that fits: valid layouts and placements on the
    GPU budget, pruned by a memory lower bound, evaluated exactly, ranked by the objective;
    prints the top rows (each with the command that reproduces it), the Pareto front (GPUs
    vs predicted time) and, for families that never fit, the binding memory term."""
    from rlmcost.plan.kinds import parse_gpus, parse_ints, parse_objective

    obj = parse_objective(objective)
    space = _space_fields(tp, pp, zero, ckpt, micro_batch)
    with _progress(json_out) as progress:
        if target == "train":
            from rlmcost.plan.train import plan_train

            if min_gpus or max_response_len:
                from rlmcost.errors import SpecError

                raise SpecError("--min-gpus/--max-response-len are RL searches; for train use "
                                "--objective gpus")
            result = plan_train(model, gpus, hardware=hardware, seq=seq, batch=batch,
                                objective=obj, top=top, space=space, workers=workers,
                                cluster=cluster, progress=progress)  # fmt: skip
        else:
            from dataclasses import replace

            from rlmcost.plan.rl import RLQuery, RLSpace, plan_rl
            from rlmcost.plan.rl import max_response_len as longest

            rl_space = RLSpace(**space)
            if rollout_tp is not None:
                rl_space = replace(rl_space, rollout_tp=parse_ints(rollout_tp, "rollout-tp"))
            if placements is not None:
                rl_space = replace(rl_space, placements=tuple(
                    p.strip() for p in placements.split(",") if p.strip()))  # fmt: skip
            query = RLQuery(target, model, hardware, batch, group, prompt_len, response_len,
                            reward, critic, ref)  # fmt: skip
            if max_response_len:
                n = max(parse_gpus(gpus))
                t, row = longest(query, n, space=rl_space, progress=progress)
                out = {"gpus": n, "max_response_len": t, "deployment": row}
                if json_out:
                    print_json(versioned("plan", out))
                elif row is None:
                    note(f"no deployment fits even 1024 response tokens on {n} GPUs")
                else:
                    from rlmcost.plan.rl import response_limit

                    why = ("stopped by the model's trained context less the prompt"
                           if t == response_limit(query) else "stopped by memory")  # fmt: skip
                    print(f"longest response that fits on {n} x {hardware}: {t:,} tokens "
                          f"({why}).")  # fmt: skip
                    print(f"  {row['command']}")
                return
            result = plan_rl(query, gpus, objective=obj, top=top, space=rl_space,
                             min_gpus=min_gpus, workers=workers, cluster=cluster,
                             progress=progress)  # fmt: skip
    if json_out:
        print_json(versioned("plan", result.to_json()))
        return
    _render(result)


def _space_fields(tp: str | None, pp: str | None, zero: str | None, ckpt: str | None,
                  micro_batch: str | None) -> dict[str, Any]:  # fmt: skip
    from rlmcost.errors import SpecError
    from rlmcost.parallel.layout import Checkpointing, ZeroStage
    from rlmcost.plan.kinds import parse_ints

    out: dict[str, Any] = {}
    for name, text in (("tp", tp), ("pp", pp), ("micro_batch", micro_batch)):
        values = parse_ints(text, name.replace("_", "-"))
        if values is not None:
            out[name] = values
    for name, text, enum in (("zero", zero, ZeroStage), ("ckpt", ckpt, Checkpointing)):
        if text is None:
            continue
        try:
            out[name] = tuple(enum(w.strip()) for w in text.split(",") if w.strip())
        except ValueError:
            have = ", ".join(m.value for m in enum)
            raise SpecError(f"--{name} {text!r}: use any of {have}, comma-separated") from None
    return out


@contextmanager
def _progress(quiet: bool):  # noqa: ANN202 - a context manager
    """A rich progress bar on stderr; yields the callback (done, total)."""
    import sys

    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("evaluating", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _render(r: Any) -> None:
    from rlmcost.units import format_bytes, format_seconds

    kind = r.query.get("kind")
    if kind == "train":
        cols = ["#", "gpus", "dp", "tp", "pp", "sp", "zero", "ckpt", "mb", "sched"]

        def lay(x: dict[str, Any]) -> list[Any]:
            sched = "1f1b" if x["virtual_stages"] == 1 else f"interleaved v={x['virtual_stages']}"
            return [x["gpus"], x["dp"], x["tp"], x["pp"], "on" if x["sp"] else "", x["zero"],
                    x["ckpt"], x["micro_batch"], sched]  # fmt: skip
    else:
        cols = ["#", "gpus", "placement", "tp", "pp", "zero", "ckpt", "mb", "offload",
                "engine tp", "engine mem"]  # fmt: skip

        def lay(x: dict[str, Any]) -> list[Any]:
            where = x["groups"] or x["placement"]
            frac = x["gpu_memory_utilization"]
            return [x["gpus"], where, x["tp"], x["pp"], x["zero"], x["ckpt"], x["micro_batch"],
                    x["offload"] or "-", x["rollout_tp"], "-" if frac is None else f"{frac:g}"]
    nums = ["time", "bound", "mem/GPU", "tok/s/GPU", "MFU", "GPU-h"]

    def values(x: dict[str, Any]) -> list[Any]:
        return [format_seconds(x["time_s"]), format_seconds(x["time_lower_bound_s"]),
                format_bytes(x["memory_bytes_per_device"]), f"{x['tokens_per_s_per_gpu']:.0f}",
                f"{100 * x['mfu']:.1f} %", f"{x['gpu_hours']:.3f}"]  # fmt: skip

    q = r.query
    what = f"{q.get('algorithm', 'train')} {q['model']} on {q['hardware']}"
    right = tuple(range(len(cols), len(cols) + len(nums)))
    print_table(
        f"plan: {what}, best by {r.objective}",
        cols + nums,
        [[i + 1, *lay(x), *values(x)] for i, x in enumerate(r.rows)],
        caption="time = predicted iteration (train: step); bound = roofline lower bound; "
        "bytes base 1024. Reproduce a row with its command (--json lists them).",
        right=right,
    )
    if r.best is not None:
        print(f"best: {r.best['command']}")
    if len(r.front) > 1:
        print_table(
            "Pareto front: GPUs vs predicted time",
            cols + nums,
            [[i + 1, *lay(x), *values(x)] for i, x in enumerate(r.front)],
            right=right,
        )
    if r.failures:
        shown = r.failures[:12]
        print_table(
            f"families that never fit ({len(r.failures)}; leanest member's binding term)",
            ["family", "binding term", "bytes"],
            [(f["family"], f["binding_term"], format_bytes(int(f.get("binding_term_bytes", 0))))
             for f in shown],  # fmt: skip
        )
    if not r.rows:
        note("error-free search, but nothing fits: raise --gpus or widen the space "
             "(--zero, --ckpt, --tp)")
    for line in r.notes:
        note(f"note: {line}")


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
