"""`rlmcost plan grpo|ppo|...|train`: search deployments for the best that fits a GPU budget.

The options the plan shares with the query commands (models, workload, algorithm knobs,
framework, hardware) come from the flag table (:mod:`rlmcost.cli._flags`) and build the
plan's base :class:`~rlmcost.run.Run` in the one place every command builds its Run
(:func:`rlmcost.cli._run.run_from_options`, through :mod:`rlmcost.cli.plan_query`, which
benchmarks/bench_plan.py calls too); the search's own options (the GPU budget, the
objective, the value lists of the space, Dask) are declared here. One library call
(:func:`rlmcost.plan.rl.plan_rl`, :func:`rlmcost.plan.rl.max_response_len` or
:func:`rlmcost.plan.train.plan_train`), then the top rows, the Pareto front and the families
that never fit are rendered. A progress bar goes to stderr. A search that Ctrl-C ended early
prints its partial result (``interrupted`` in --json) and exits with Ctrl-C's code, 130.
"""

# No `from __future__ import annotations`: typer reads the Annotated options at run time.

import inspect
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from rlmcost.cli._flags import flag_table, pick, signature
from rlmcost.cli._render import note, print_json, print_table
from rlmcost.cli.plan_query import NOT_TAKEN, SHARED, TRAIN_SHARED
from rlmcost.run.schema_envelope import versioned

_HELPS = {
    "batch": "Prompts B (RL; default 64) or sequences per step (train; default 8 per GPU).",
    "hardware": "Accelerator (see `rlmcost hardware`), or for RL a pool of several with the GPUs "
    "available of each, NAME:GPUS,... (h20:32,h100:16): each candidate's GPUs come from it (a "
    "co-located family on one type; groups apart, each group on one type), no count above "
    "the pool's total; --price for a type without a list price.",
    "framework": "Start from a framework's defaults (see `rlmcost frameworks`) and search "
    "only the topologies it launches (verl: co-located, hybrid; openrlhf: role groups, "
    "co-located, async; trl and nemo-rl: co-located, engines apart; slime: engines apart, "
    "co-located, async); the search sets the trainer layout and the engine's TP and "
    "reservation, the preset the rest. Without it, each family is evaluated under the "
    "framework that launches it (role groups: openrlhf; async split: slime; the rest: "
    "nemo-rl).",
}

# 128 + SIGINT: rlmcost.__main__.INTERRUPTED_CODE (not imported: it imports the CLI), which
# then adds the line `interrupted` on stderr
_INTERRUPTED = 130
_NO_LINE = "no command line says it: `rlmcost run` its Run (--json lists it)"

TARGET = inspect.Parameter(
    "target",
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    annotation=Annotated[str, typer.Argument(
        help="An RL algorithm (grpo, ppo, ...; see `rlmcost algorithms`) or `train` (the "
        "layout search for pre-training/SFT).")],
)  # fmt: skip

TOPOLOGY_ROWS = 40
"""Rows of the "best of each topology" table (the 70B PPO plan on 32 A100 has 26 topologies,
OpenRLHF's three-group split among them); --json has every one."""


def _own_options() -> dict[str, tuple[Any, Any]]:
    """The search's options: budget, objective, the space's value lists, where it runs."""
    return {
        "gpus": (Annotated[str | None, typer.Option(
            help="GPU budget: a count (64), a list (8,16,32) or a range (8..64: 8, 16, 32, "
            "64). Default: the --groups' sum where each group keeps its count, else "
            "8..64.")], None),
        "objective": (Annotated[str, typer.Option(
            help="Rank by: time (fastest), gpus (fewest), gpu-hours (per iteration), "
            "throughput (tokens/s/GPU) or cost (USD per iteration at --price or the cited "
            "list prices).")], "time"),
        "top": (Annotated[int, typer.Option(help="Rows to print.", min=1)], 10),
        "min_gpus": (Annotated[bool, typer.Option(
            "--min-gpus", help="Smallest GPU count of the budget with any fitting "
            "deployment; its rows are that count's best by --objective (cost: the cheapest "
            "on the fewest GPUs; without --min-gpus: the cheapest over the budget).")], False),
        "max_response_len": (Annotated[bool, typer.Option(
            "--max-response-len", help="Longest response (multiple of 1024 tokens) that fits "
            "on the largest GPU count of the budget.")], False),
        "seq": (Annotated[int, typer.Option(help="train: tokens per sequence.", min=1)], 2048),
        "tp": (Annotated[str | None, typer.Option(
            help="TP degrees to search, e.g. 1,2,4,8 (default: every valid one within a "
            "node).")], None),
        "pp": (Annotated[str | None, typer.Option(
            help="PP degrees to search (RL default: 1; under a framework's large-MoE size "
            "tier, its Megatron-core trainer every power of two up to its example's PP and "
            "NeMo RL's DTensor policy 1).")], None),
        "zero": (Annotated[str | None, typer.Option(
            help="ZeRO stages, e.g. 1,3 (RL default: 3, FSDP; 1, the distributed optimizer, "
            "with --engine megatron and for slime and miles; under a framework's large-MoE "
            "size tier 1 for its Megatron-core trainer and 3 for NeMo RL's DTensor policy, "
            "both searched: --zero picks one).")], None),
        "ckpt": (Annotated[str | None, typer.Option(
            help="Checkpointing, e.g. none,full.")], None),
        "micro_batch": (Annotated[str | None, typer.Option(
            help="Micro-batches, e.g. 1,2,4.")], None),
        "rollout_tp": (Annotated[str | None, typer.Option(
            help="RL: engine TP degrees.")], None),
        "ep": (Annotated[str | None, typer.Option(
            help="RL: the trainer's expert-parallel degrees (MoE), e.g. 1,2,4,8 (default: the "
            "query's --ep; with --engine megatron every power of two up to a node dividing the "
            "experts).")], None),
        "cp": (Annotated[str | None, typer.Option(
            help="RL: context-parallel degrees (ring attention), e.g. 1,2,4 (default: up to "
            "a node from 16K tokens of prompt plus response, else 1).")], None),
        "placements": (Annotated[str | None, typer.Option(
            help="RL: topology families, any of baseline (co-located), split (engines "
            "apart), roles (OpenRLHF's role groups), async-split, async-roles (the same, "
            "overlapped with staleness), async-stream, async-colocated (async on one group, "
            "--engine megatron only), ac-shared, disaggregated, hybrid, fusion, async, "
            "combined (default baseline,split,roles,async-split,async-roles; with --engine "
            "megatron NeMo RL's baseline,split,async-colocated).")], None),
        "groups": (Annotated[str | None, typer.Option(
            help="RL: device groups whose counts the search picks: ? for a count to "
            "search, e.g. rollout=?,actor+reference=? or rollout=?\\[tp=4;gmu=0.8],actor=16"
            "\\[padded],critic+reward=? (bracket keys as in `rlmcost grpo --help`; trainer keys "
            "go over each candidate's trainer layout; alone unless --placements is given "
            "too).")], None),
        "workers": (Annotated[int | None, typer.Option(
            help="Run on a local Dask cluster of N workers.", min=1)], None),
        "cluster": (Annotated[str | None, typer.Option(
            help="Run on the Dask scheduler at ADDRESS (tcp://host:8786).")], None),
    }  # fmt: skip


def options() -> dict[str, tuple[Any, Any]]:
    """Every option of `rlmcost plan`: the shared ones from the flag table, then its own."""
    return {**pick(flag_table(None), SHARED, _HELPS), **_own_options()}


def plan(target: str, **opts: Any) -> None:
    """Search deployments for the cheapest that fits: valid layouts and placements on the
    GPU budget, pruned by a memory lower bound, evaluated exactly, ranked by the objective;
    prints the top rows (each with the command that reproduces it), the Pareto front (GPUs
    vs predicted time) and, for families that never fit, the binding memory term."""
    from rlmcost.cli.plan_query import gpu_budget
    from rlmcost.plan.distributed import Compute
    from rlmcost.plan.kinds import parse_objective

    obj = parse_objective(opts["objective"])
    opts["gpus"] = gpu_budget(opts)
    with _progress(opts["json_out"]) as progress:
        compute = Compute(opts["workers"], opts["cluster"], progress)
        if target == "train":
            result = _plan_train(opts, obj, compute)
        else:
            result = _plan_rl(target, opts, compute)
    if result is None:
        return
    if opts["json_out"]:
        run = result.base.to_json() if result.base is not None else None
        print_json(versioned("plan", result.to_json(), run=run))
    else:
        _render(result)
    if result.interrupted:  # a partial result: Ctrl-C's exit code, after it is printed
        raise typer.Exit(_INTERRUPTED)


plan.__signature__ = signature(options(), [TARGET])  # type: ignore[attr-defined]
plan.__doc__ = f"{inspect.getdoc(plan)}\n\nThe query commands' options it leaves out: {NOT_TAKEN}."


def _plan_train(opts: dict[str, Any], obj: Any, compute: Any) -> Any:
    from rlmcost.cli._run import require_model
    from rlmcost.cli.plan_query import space_fields
    from rlmcost.errors import SpecError
    from rlmcost.plan.train import plan_train

    if opts["min_gpus"] or opts["max_response_len"]:
        raise SpecError("--min-gpus/--max-response-len are RL searches; for train use "
                        "--objective gpus")  # fmt: skip
    table = options()
    rl_only = [name for name in SHARED if name not in TRAIN_SHARED
               and opts[name] != table[name][1]]  # fmt: skip
    for name in ("rollout_tp", "placements", "groups", "cp", "ep"):
        if opts[name] is not None:
            rl_only.append(name)
    if rl_only:
        flags = ", ".join("--" + n.replace("_", "-") for n in rl_only)
        raise SpecError(f"{flags}: RL options; `rlmcost plan train` takes --model, --batch, "
                        "--seq, --hardware and the space's lists")  # fmt: skip
    return plan_train(require_model(opts), opts["gpus"], hardware=opts["hardware"],
                      seq=opts["seq"], batch=opts["batch"], objective=obj, top=opts["top"],
                      space=space_fields(opts), compute=compute)  # fmt: skip


def _plan_rl(target: str, opts: dict[str, Any], compute: Any) -> Any:
    from rlmcost.cli.plan_query import rl_plan, rl_query
    from rlmcost.plan.kinds import parse_gpus
    from rlmcost.plan.longest import LongestInterrupted, longest_response

    if not opts["max_response_len"]:
        return rl_plan(target, opts, compute)
    base, rl_space, bases = rl_query(target, opts)
    n = max(parse_gpus(opts["gpus"]))
    try:
        t, row, above = longest_response(base, n, space=rl_space, progress=compute.progress,
                                         bases=bases)  # fmt: skip
        _print_longest(base, n, opts["json_out"], t, row, above, interrupted=False)
    except LongestInterrupted as stop:  # Ctrl-C: what was settled, then Ctrl-C's exit code
        _print_longest(base, n, opts["json_out"], stop.tokens, stop.row, stop.not_fitting,
                       interrupted=True)  # fmt: skip
        raise typer.Exit(_INTERRUPTED) from None
    return None


def _print_longest(base: Any, n: int, json_out: bool, t: int, row: dict[str, Any] | None,
                   not_fitting: int | None, *, interrupted: bool) -> None:  # fmt: skip
    """`plan --max-response-len`'s answer (text or --json); an interrupted search gives the
    range it had narrowed the answer to."""
    from rlmcost.plan.longest import response_limit

    if json_out:
        print_json(versioned("plan", {"gpus": n, "max_response_len": t, "deployment": row,
                                      "not_fitting": not_fitting,
                                      "interrupted": interrupted}))  # fmt: skip
        return
    # the row's own GPUs (a pool: "4 x h20 + 4 x h100-sxm"), not the base Run's hardware
    where = row["hardware"] if row is not None else f"{n} x {base.cluster.hardware}"
    if interrupted:
        left = (f"{not_fitting:,} tokens do not fit" if not_fitting is not None
                else "the longer lengths were not tried")  # fmt: skip
        note(f"interrupted (Ctrl-C): {t:,} tokens fit on {where}; {left}" if row is not None
             else "interrupted (Ctrl-C) before a response length that fits was found")
    elif row is None:
        note(f"no deployment fits even {not_fitting or 1024:,} response tokens on {n} GPUs")
        return
    if row is None:
        return
    why = ("stopped by the model's trained context less the prompt"
           if t == response_limit(base) else "stopped by memory")  # fmt: skip
    print(f"longest response that fits on {where}: {t:,} tokens"
          + (" at least (the search was interrupted)." if interrupted else f" ({why})."))
    print(f"  {row['command'] or _NO_LINE}")


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
        pooled = r.query.get("hardware") if ":" in str(r.query.get("hardware")) else None
        from rlmcost.plan.rl_groups import run_values, spelled

        ep = any(x.get("ep", 1) != 1 or run_values(x).get("ep", {"1"}) != {"1"}
                 for x in (*r.rows, *r.front, *r.per_topology))  # fmt: skip
        cols = ["#", "gpus", "family", "groups", "tp", "pp", "cp", *(["ep"] if ep else []),
                "zero", "ckpt", "mb", "offload", "engine tp", "engine mem"]  # fmt: skip

        from rich.markup import escape  # a group's [tp=4] is not rich markup

        def lay(x: dict[str, Any]) -> list[Any]:
            fam = x["family"] + (f" k={x['staleness']}" if x["staleness"] else "")
            frac, pool = x["gpu_memory_utilization"], x.get("kv_buffer_gib")
            where = x["groups"] or ("all" if pooled is None else f"all @{x['hardware']}")
            mem = f"{pool:g} GiB" if pool is not None else "-" if frac is None else f"{frac:g}"
            own = run_values(x)  # a group's own value: marked *

            def cell(field: str, text: Any, *more: str) -> str:
                odd = any(own.get(f, set()) - {spelled(f, x[f])} for f in (field, *more))
                return f"{text}*" if odd else str(text)

            return [x["gpus"], fam, escape(where), cell("tp", x["tp"]), cell("pp", x["pp"]),
                    cell("cp", f"{x['cp']}{' +sp' if x['sp'] else ''}", "sp"),
                    *([cell("ep", x["ep"])] if ep else []), cell("zero", x["zero"]),
                    cell("ckpt", x["ckpt"]), "budget" if x["micro_batch"] is None else
                    cell("micro_batch", x["micro_batch"]),
                    cell("offload", x["offload"] or "-"),
                    "-" if x["rollout_tp"] is None else cell("rollout_tp", x["rollout_tp"])
                    if x["rollout_tp"] else "trainer's",
                    mem]  # fmt: skip
    nums = ["time", "bound", "mem/GPU", "tok/s/GPU", "MFU", "GPU-h"]
    costed = kind != "train" and any(x.get("cost_per_iteration_usd") is not None
                                     for x in r.rows)  # fmt: skip
    if costed:
        nums += ["$/iter", "$/1M tok"]

    def usd(v: float | None) -> str:
        return "-" if v is None else f"{v:,.3f}"

    def values(x: dict[str, Any]) -> list[Any]:
        out = [format_seconds(x["time_s"]), format_seconds(x["time_lower_bound_s"]),
               format_bytes(x["memory_bytes_per_device"]), f"{x['tokens_per_s_per_gpu']:.0f}",
               f"{100 * x['mfu']:.1f} %", f"{x['gpu_hours']:.3f}"]  # fmt: skip
        if costed:
            out += [usd(x.get("cost_per_iteration_usd")),
                    usd(x.get("cost_per_million_tokens_usd"))]  # fmt: skip
        return out

    q = r.query
    what = f"{q.get('algorithm', 'train')} {q['model']} on {_fleet(r)}"
    right = tuple(range(len(cols), len(cols) + len(nums)))
    print_table(
        f"plan: {what}, best by {r.objective}",
        cols + nums,
        [[i + 1, *lay(x), *values(x)] for i, x in enumerate(r.rows)],
        caption=("time = predicted step; bound = roofline lower bound; sched = the pipeline "
                 "schedule (v: virtual stages per rank); " if kind == "train" else
                 "time = predicted iteration; bound = roofline lower bound; engine mem = the "
                 "engine's reservation (vLLM gpu_memory_utilization) or KV pool per GPU "
                 "(--engine megatron --kv-buffer-gib); engine tp trainer's: Megatron "
                 "generation in the trainer's layout; * a group's brackets give it a value of "
                 "its own (the groups column), or its placement or framework does (hybrid: "
                 "training at TP 1 under ZeRO-3), the one shown is the run-wide value (--json: "
                 "each group's in group_layouts); mb budget: a per-GPU token budget forms every "
                 "micro-batch (--max-tokens-per-gpu; --json micro_batch null); ")
        + "bytes base 1024; GPU-h = GPU-hours per " + ("step; " if kind == "train" else
                                                        "iteration; ")
        + ("$/iter = USD per iteration, $/1M tok = USD per 10^6 trained tokens; " if costed
           else "") + "reproduce a row with its command (--json lists them).",
        right=right,
    )
    if r.best is not None:
        print(f"best: {r.best['command'] or _NO_LINE}")
    if len(r.front) > 1:
        print_table(
            "Pareto front: GPUs vs predicted time",
            cols + nums,
            [[i + 1, *lay(x), *values(x)] for i, x in enumerate(r.front)],
            right=right,
        )
    if len(r.per_topology) > 1:
        shown_t = r.per_topology[:TOPOLOGY_ROWS]
        cut = f"the first {len(shown_t)}; " if len(shown_t) < len(r.per_topology) else ""
        print_table(
            f"best of each topology ({len(r.per_topology)}; GPUs, family and groups)",
            cols + nums,
            [[i + 1, *lay(x), *values(x)] for i, x in enumerate(shown_t)],
            caption=f"{cut}each topology's fastest fitting deployment the search evaluated; "
            "--json 'best_per_topology' has every one with its command",
            right=right,
        )
    if r.failures:
        shown = r.failures[:12]
        print_table(
            f"families that never fit ({len(r.failures)}; leanest member's binding term)",
            ["family", "binding term", "bytes"],
            [(f["family"], f["binding_term"], "invalid" if f.get("invalid")
              else format_bytes(int(f.get("binding_term_bytes", 0)))) for f in shown],  # fmt: skip
            caption=(f"the first {len(shown)}; --json 'never_fit' has every one"
                     if len(shown) < len(r.failures) else ""),  # fmt: skip
        )
    if not r.rows and r.interrupted:
        note("interrupted before a deployment that fits was found")
    elif not r.rows and r.failures and all(f.get("invalid") for f in r.failures):
        note("error-free search, but every family is invalid (the binding term says why), "
             "none short of memory: more GPUs do not mend it")
    elif not r.rows:
        note("error-free search, but nothing fits: raise --gpus or widen the space "
             "(--zero, --ckpt, --tp)")
    for line in r.notes:
        note(f"note: {line}")


def _fleet(r: Any) -> str:
    """What the plan's rows run on: their one fleet where they share it (``16 x h20 + 8 x
    h100-sxm``: ``--groups`` that keep their counts and accelerators); else the accelerators
    they use where several (``--groups rollout=?@h20,...``), the pool, or the hardware."""
    fleets = list(dict.fromkeys(x["hardware"] for x in (*r.rows, *r.front, *r.per_topology)
                                if x.get("hardware")))  # fmt: skip
    if len(fleets) == 1:
        return str(fleets[0])
    names = dict.fromkeys(part.partition(" x ")[2] for f in fleets for part in f.split(" + "))
    if len(names) > 1 and ":" not in str(r.query["hardware"]):
        return " + ".join(names)
    return str(r.query["hardware"])


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
