"""`rlmcost ppo|grpo|dpo|<variant>`, `rlmcost compare`, `rlmcost algorithms`.

One command per algorithm of the catalog (light to import: no sympy). Each parses its options,
makes one library call (``reports.estimate.estimate``, ``compare`` or
``reports.algorithms.symbolic_stages``) and renders the result.
"""

# No `from __future__ import annotations`: the per-algorithm help texts in the Annotated
# options are built when each command is made.

from typing import Annotated, Any

import typer

from rlmcost.algorithms.catalog import algorithms
from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import DEFAULT_BATCH, DEFAULT_HARDWARE, DEFAULT_RESPONSE_LEN, KNOBS
from rlmcost.choices import AttnCounting
from rlmcost.cli._deploy import base_deployment, build_deployment, deployment_options
from rlmcost.cli._parse import CALIBRATION_HELP, GROUPS_HELP, LENGTH_HELP, parse_fraction
from rlmcost.cli._render import note, print_json, print_table
from rlmcost.cli.algorithms_render import render, render_comparison
from rlmcost.frameworks.presets import Framework
from rlmcost.parallel.layout import ZeroStage
from rlmcost.placement.kinds import Config

DEFAULT_LEN, DEFAULT_HW = DEFAULT_RESPONSE_LEN, DEFAULT_HARDWARE  # S and T share a default
Pos = dict(min=1)
_KNOB = {k.field: k for k in KNOBS}


def _knob_help(field: str, alg: Algorithm | None) -> str:
    k = _KNOB[field]
    base = {
        "epochs": "E_ppo: passes of Training over each rollout batch (PPO epochs)",
        "mini_batches": "N_mini: optimizer steps per epoch (mini-batches)",
        "oversample": "rho: generated / kept sequences (DAPO dynamic sampling)",
        "prm_steps": "N_step: reasoning steps the process reward model scores, one pass each",
        "judge_len": "T_j: tokens the judge generates per verdict",
    }[field]
    if alg is not None and k.name not in alg.names:
        return f"{base}. Not used by {alg.name}."
    return f"{base} (default: {k.default}; {k.source})"


def _make_command(alg: Algorithm | None):  # noqa: ANN202 - a typer command
    """The command for ``alg`` (None: `compare`, which takes the algorithm names)."""
    name = alg.name if alg else "each algorithm"
    uses_k = alg is None or "K" in alg.names
    k_default = f"{alg.default_group} for {alg.name}" if alg else "each algorithm's default"
    group_help = (
        f"Responses K sampled per prompt (default: {k_default})."
        if uses_k
        else f"Not used: {name} samples no groups (fixed data)."
    )
    batch_help = (
        "Preference pairs (examples for KTO) B per iteration"
        if alg is not None and alg.offline
        else "Prompts B per iteration"
    ) + f" (default: {DEFAULT_BATCH})."

    def command(
        model: Annotated[
            str | None,
            typer.Option(
                "--model",
                "-m",
                help="Actor model: built-in name or alias (see `rlmcost models`) "
                "or a transformers config.json path.",
            ),
        ] = None,
        critic: Annotated[
            str | None, typer.Option(help="Critic model (default: the actor's model).")
        ] = None,
        reward: Annotated[
            str | None,
            typer.Option(
                help="Reward model (also cost model / PRM) (default: the actor's), or `rule`: "
                "a rule-based verifier, no reward model (most GRPO/DAPO runs)."
            ),
        ] = None,
        ref: Annotated[
            str | None, typer.Option(help="Reference model (default: the actor's model).")
        ] = None,
        judge: Annotated[
            str | None, typer.Option(help="Judge model (d-rlaif) (default: the actor's).")
        ] = None,
        batch: Annotated[int | None, typer.Option("--batch", "-B", help=batch_help, **Pos)] = None,
        group: Annotated[int | None, typer.Option("--group", "-K", help=group_help, **Pos)] = None,
        prompt_len: Annotated[
            int | None,
            typer.Option(
                "--prompt-len", "-S", help=f"Prompt tokens S (default: {DEFAULT_LEN}).", **Pos
            ),
        ] = None,
        response_len: Annotated[
            int | None,
            typer.Option(
                "--response-len", "-T", help=f"Response tokens T (default: {DEFAULT_LEN}).", **Pos
            ),
        ] = None,
        epochs: Annotated[int | None, typer.Option(help=_knob_help("epochs", alg), **Pos)] = None,
        mini_batches: Annotated[
            int | None, typer.Option(help=_knob_help("mini_batches", alg), **Pos)
        ] = None,
        oversample: Annotated[str | None, typer.Option(help=_knob_help("oversample", alg))] = None,
        prm_steps: Annotated[
            int | None, typer.Option(help=_knob_help("prm_steps", alg), **Pos)
        ] = None,
        judge_len: Annotated[
            int | None, typer.Option(help=_knob_help("judge_len", alg), **Pos)
        ] = None,
        recompute_logprobs: Annotated[
            bool | None,
            typer.Option(
                "--recompute-logprobs/--no-recompute-logprobs",
                help="Recompute old log-probs with an extra actor forward (verl, OpenRLHF) "
                "instead of taking them from generation (default: no, or --framework's).",
            ),
        ] = None,
        no_kl: Annotated[
            bool | None,
            typer.Option(
                "--no-kl/--kl",
                help="KL coefficient 0: no reference model runs (default: --kl, or "
                "--framework's).",
            ),
        ] = None,
        framework: Annotated[
            Framework | None,
            typer.Option(
                help="Start from a framework's defaults (engine reservation and sleep, "
                "ZeRO/FSDP, checkpointing, micro-batch, recomputed log-probs, reference); "
                "explicit flags override them. See `rlmcost frameworks`.",
            ),
        ] = None,
        ref_precomputed: Annotated[
            bool,
            typer.Option(
                "--ref-precomputed",
                help="Offline methods: reference log-probs computed once before training.",
            ),
        ] = False,
        hardware: Annotated[
            str, typer.Option("--hardware", "-H", help="Accelerator (see `rlmcost hardware`).")
        ] = DEFAULT_HW,
        gpus: Annotated[
            int | None,
            typer.Option(help="GPUs (default: tp*pp*dp; when larger, dp fills the rest).", **Pos),
        ] = None,
        tp: Annotated[
            int | None, typer.Option(help="Tensor-parallel degree (default 1).", **Pos)
        ] = None,
        pp: Annotated[
            int | None, typer.Option(help="Pipeline-parallel degree (default 1).", **Pos)
        ] = None,
        dp: Annotated[
            int | None,
            typer.Option(help="Data-parallel degree (default: gpus/(tp*pp) or 1).", **Pos),
        ] = None,
        zero: Annotated[
            ZeroStage | None,
            typer.Option(help="ZeRO stage over the data-parallel ranks (default 0; 3 = FSDP)."),
        ] = None,
        attention: Annotated[
            AttnCounting,
            typer.Option(
                help="Teacher-forced attention FLOPs: full (what PyTorch counts) or causal "
                "(the unmasked half, what causal FlashAttention computes; the strict lower "
                "bound at long contexts)."
            ),
        ] = AttnCounting.FULL,
        calibration: Annotated[
            str | None,
            typer.Option(help=CALIBRATION_HELP),
        ] = None,
        json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
        symbolic: Annotated[
            bool,
            typer.Option(
                "--symbolic",
                help="Print Table IV rows: work, depth, memory per stage in block notation "
                "and Big-O, on the paper's canonical model (no --model needed).",
            ),
        ] = False,
        placement: Annotated[
            Config | None,
            typer.Option(help="Inter-model placement (Table IX); see `rlmcost placements`."),
        ] = None,
        groups: Annotated[str | None, typer.Option(help=GROUPS_HELP)] = None,
        staleness: Annotated[
            int | None, typer.Option(help="Staleness k for async/combined (default: 1).", min=0)
        ] = None,
        length_dist: Annotated[str | None, typer.Option(help=LENGTH_HELP)] = None,
    ) -> dict[str, Any]:
        """Collects the options; the caller (one command per algorithm, or compare) runs."""
        return dict(locals())

    return command


PLACEMENT_OPTIONS = ("placement", "groups", "staleness", "length_dist")
"""Options that route an algorithm query through the placement model (issue 5)."""


def _options(opts: dict[str, Any], alg: Algorithm | None = None) -> Any:
    """The algorithm knobs among the parsed options, as an ``Options`` (``alg``: the
    algorithm, for the ``--framework`` options that apply to it; None for `compare`)."""
    from rlmcost.algorithms.options import Options
    from rlmcost.frameworks.presets import preset_options

    preset = preset_options(opts.get("framework"), alg)
    recompute = opts["recompute_logprobs"]
    recompute = preset["recompute_logprobs"] if recompute is None else recompute
    kl = preset["kl"] if opts["no_kl"] is None else not opts["no_kl"]
    return Options(
        epochs=opts["epochs"],
        mini_batches=opts["mini_batches"],
        oversample=parse_fraction(opts["oversample"]),
        prm_steps=opts["prm_steps"],
        judge_len=opts["judge_len"],
        recompute_logprobs=recompute,
        kl=kl,
        ref_precomputed=opts["ref_precomputed"],
        rule_reward=_rule_reward(opts),
    )


def _rule_reward(opts: dict[str, Any]) -> bool:
    """``--reward rule``: a rule-based verifier instead of a reward model."""
    return (opts.get("reward") or "").strip().lower() == "rule"


def _estimate_kwargs(opts: dict[str, Any], alg: Algorithm | None = None) -> dict[str, Any]:
    """Map parsed options onto :func:`rlmcost.reports.estimate.estimate` arguments."""

    if opts["model"] is None:
        raise typer.BadParameter(
            "give --model NAME (see `rlmcost models`), e.g. --model 70b", param_hint="--model"
        )
    deployment = _deployment(opts)
    train = deployment.train
    return dict(
        model=opts["model"],
        critic=opts["critic"],
        reward=None if _rule_reward(opts) else opts["reward"],
        ref=opts["ref"],
        judge=opts["judge"],
        batch=opts["batch"],
        group=opts["group"],
        prompt_len=opts["prompt_len"],
        response_len=opts["response_len"],
        layout=train.layout(dp=opts["dp"] or 1),
        hardware=opts["hardware"],
        gpus=opts["gpus"],
        calibration=opts["calibration"],
        counting=opts["attention"],
        options=_options(opts, alg),
        deployment=deployment,
    )


def _deployment(opts: dict[str, Any]) -> Any:
    """The Deployment of the options; the layout flags default to the file's or the
    framework's (``base_deployment``), else 1/0."""
    base = base_deployment(opts).train
    tp = opts["tp"] or base.tp
    pp = opts["pp"] or base.pp
    zero = opts["zero"] or base.zero or ZeroStage.NONE
    return build_deployment(opts, tp, pp, zero)


def _algorithm_command(alg: Algorithm):  # noqa: ANN202 - a typer command
    collect = _make_command(alg)

    def run(**opts: Any) -> None:
        if opts["symbolic"]:
            _symbolic(alg.name, opts)
            return
        placed = {k: opts[k] for k in PLACEMENT_OPTIONS if opts[k] is not None}
        if placed and opts["json_out"]:  # one JSON layout: the estimate's, plus a section
            from rlmcost.reports.estimate import estimate

            print_json(estimate(alg.name, **_estimate_kwargs(opts, alg), **placed).to_json())
            return
        if placed:
            from rlmcost.cli.placement import run_placement

            run_placement(
                alg.name,
                _estimate_kwargs(opts, alg),
                placement=opts["placement"],
                groups=opts["groups"],
                staleness=opts["staleness"],
                length_dist=opts["length_dist"],
                json_out=opts["json_out"],
            )
            return
        from rlmcost.reports.estimate import estimate

        kwargs = _estimate_kwargs(opts, alg)
        result = estimate(alg.name, **kwargs)
        if opts["json_out"]:
            print_json(result.to_json())
            return

        def rerun(**changes: Any) -> Any:
            return estimate(alg.name, **{**kwargs, **changes})

        render(result, rerun)

    _wrap(run, collect)
    knobs = ", ".join(f"{k.flag} (default {k.default})" for k in KNOBS if k.name in alg.names)
    run.__doc__ = (
        f"{alg.summary}.\n\n{alg.citation}. Prints per stage (Generation, Assessment, "
        "Training): work, depth, memory per device with its breakdown, whether it fits, and "
        "a roofline lower bound of time with each stage's share.\n\n"
        f"Defaults: B={DEFAULT_BATCH}"
        + (f", K={alg.default_group}" if "K" in alg.names else "")
        + f", S=T={DEFAULT_LEN}, {DEFAULT_HW}, gpus = tp*pp*dp, critic/reward/reference = "
        "the actor's model"
        + (f"; knobs: {knobs}" if knobs else "")
        + ". All models co-located on the same GPUs."
    )
    return run


def _wrap(run: Any, collect: Any) -> None:
    """Give ``run`` the signature (the options) of ``collect`` plus the deployment options."""
    run.__signature__ = _with_deployment_options(collect)


def _with_deployment_options(collect: Any) -> Any:
    import inspect

    return _with_deployment_options_sig(inspect.signature(collect))


def _with_deployment_options_sig(sig: Any) -> Any:
    import inspect

    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann)
        for name, (ann, default) in deployment_options().items()
    ]
    return sig.replace(parameters=[*sig.parameters.values(), *extra])


def _compare(names: list[str], **opts: Any) -> None:
    from rlmcost.reports.estimate import compare

    result = compare(names, **_estimate_kwargs(opts))
    for line in result.notes():
        note(f"note: {line}")
    if opts["json_out"]:
        print_json(result.to_json())
        return
    render_comparison(result)


def algorithms_command(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """List every algorithm and variant: base, what it changes, paper."""
    from rlmcost.reports.listings import algorithm_listing

    rows = algorithm_listing()
    if json_out:
        print_json(rows)
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

    options = _options(opts, algorithms().get(name))
    rows = symbolic_stages(name, options)
    if opts["json_out"]:
        print_json([r.to_json() for r in rows])
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


# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------


def _compare_run() -> Any:
    import inspect

    collect = _make_command(None)

    def run(names: list[str], **opts: Any) -> None:
        _compare(names, **opts)

    sig = inspect.signature(collect)
    names_param = inspect.Parameter(
        "names",
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        annotation=Annotated[list[str], typer.Argument(help="Algorithms, e.g. ppo grpo dpo.")],
    )
    skip = ("symbolic", *PLACEMENT_OPTIONS)
    params = [p for p in sig.parameters.values() if p.name not in skip]
    run.__signature__ = _with_deployment_options_sig(  # type: ignore[attr-defined]  # typer reads it
        sig.replace(parameters=[names_param, *params])
    )
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
