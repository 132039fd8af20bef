"""Rendering of the algorithm commands' results: the per-stage estimate with its memory
breakdown, verdict and answers, the phase table, the side-by-side comparison and the symbolic
Table IV rows (`rlmcost ppo|grpo|...`, `rlmcost compare`). No computing here: the answers
come from :mod:`rlmcost.evaluation.advice` through the ``run`` callback."""

from __future__ import annotations

from typing import Any

from rlmcost.cli._render import note, print_table
from rlmcost.cli.dtype_words import kv_words


def render(e: Any, run: Any = None) -> None:
    """The estimate as tables; ``run`` re-runs the query with changes (for the advice)."""
    from rlmcost.units import format_bytes, format_flops, format_seconds

    lay = e.layout  # cp and ep where > 1: tp x pp x cp x dp is the GPUs of the title
    more = "".join(f", {k}={getattr(lay, k)}" for k in ("cp", "ep") if getattr(lay, k) > 1)
    title = (f"{e.algorithm.name} on {e.model}: one iteration, {fleet(e)} "
             f"(tp={lay.tp}, pp={lay.pp}{more}, dp={lay.dp}, zero={lay.zero})")  # fmt: skip
    rows = [(s.stage.label, format_flops(s.work_flops), f"{s.depth:,}",
             format_bytes(s.memory_bytes_per_device), "yes" if s.fits else "NO",
             format_seconds(s.time_s), format_seconds(s.time.bound_s), s.time.bound,
             f"{s.share:.0%}") for s in e.stages.values()]  # fmt: skip
    rows.append(
        (
            "Iteration",
            format_flops(e.work_flops),
            f"{e.depth:,}",
            format_bytes(max(s.memory_bytes_per_device for s in e.stages.values())),
            "yes" if e.fits else "NO",
            format_seconds(e.time_s),
            format_seconds(e.time_lower_bound_s),
            "",
            "100%",
        )
    )
    print_table(
        title,
        ["stage", "work", "depth", "mem/device", "fits", "time", "time >=", "bound", "share"],
        rows,
        caption=_caption(e),
        right=(1, 2, 3, 5, 6, 8),
    )
    if e.evaluation is not None:
        render_phases(e.evaluation.phases, e.time_s, e.tokens_per_s_per_gpu, e.mfu,
                      e.evaluation)  # fmt: skip
    comps = [
        "weights", "gradients", "optimizer", "activations", "kv_cache", "logits", "buffers",
        "rollout",
        "engine", "overhead",
    ]  # fmt: skip
    stages = list(e.stages.values())
    print_table(
        "Memory per device at each stage's peak (co-resident models included)",
        ["", *(s.stage.label for s in stages)],
        [
            (
                "peak invocation",
                *(f"{s.peak.invocation.role} {s.peak.invocation.kind}" for s in stages),
            ),
            *(
                (c.replace("_", " "), *(format_bytes(getattr(s.peak.memory, c)) for s in stages))
                for c in comps
            ),
            ("total (device view)", *(format_bytes(s.memory_bytes_per_device) for s in stages)),
            ("allocated", *(format_bytes(s.allocated_bytes_per_device) for s in stages)),
            ("host per device", *(format_bytes(s.host_bytes_per_device) for s in stages)),
            ("capacity", *(format_bytes(s.hbm_bytes) for s in stages)),
        ],
        caption=_memory_caption(e),
        right=tuple(range(1, len(stages) + 1)),
    )
    _verdict(e, run)
    dominant = e.dominant_stage
    print(
        f"dominant stage: {dominant.label} "
        f"({e.stages[dominant].share:.0%} of the {format_seconds(e.time_lower_bound_s)} bound); "
        f"predicted iteration {format_seconds(e.time_s)} "
        f"(range {format_seconds(e.time_interval_s[0])} - {format_seconds(e.time_interval_s[1])}: "
        "kernel efficiency, engine and length tail, overhead constants)."
    )
    for line in e.notes:
        note(f"note: {line}")


def _memory_caption(e: Any) -> str:
    d = e.deployment
    w = e.workload
    text = (
        f"trainers: {_states(e)}; activations, KV cache: {w.activation_dtype}/{kv_words(e)}; "
        "buffers: "
        "ZeRO-3 gathers and, beside an engine, the weights in flight while it is refitted "
        "(one full tensor: TRL, OpenRLHF, verl; NeMo RL's refit buffer; under LoRA what the "
        "trainer gathers first, --lora-gather). "
    )
    if d.ideal:
        return text + (
            f"logits: one {w.logits_dtype} tensor. The paper's idealized iteration (--ideal): "
            "KV cache at the exact need, no engine reservation or overhead; datasheet capacity."
        )
    engine = ("Generation runs in Megatron-core's engine on the policy's weights, its KV "
              "cache a pool of --kv-buffer-gib per GPU" if d.engine.kind == "megatron" else
              "Generation runs in an engine that reserves --gpu-memory-utilization of the "
              "device (its KV cache is what is left after weights and workspace)")  # fmt: skip
    engine += ("; engine: its reservation while another model runs "
               f"({'it sleeps' if d.engine.sleep else 'no --sleep'})")  # fmt: skip
    if e.algorithm.offline:  # no Generation stage: no engine to reserve or sleep
        engine = "No engine: an offline method generates nothing (its responses are its data)"
    return text + (
        f"logits: the log-prob peak ({d.logits}: {w.activation_dtype} logits, "
        f"{w.logits_dtype} upcast, log-softmax and, training, their gradients). {engine}; "
        f"overhead: CUDA context, communicator buffers, allocator slack ({_slack(d)}). "
        "Capacity: what the device gives programs."
    )


def _slack(d: Any) -> str:
    """The allocator's slack in words (``Overhead.allocator_slack_for``)."""
    o = d.overhead
    if o.allocator_slack is not None:
        return f"{o.allocator_slack:.0%} as given"
    if o.expandable_segments:
        return f"{o.allocator_slack_for(False):.0%}, expandable segments"
    return (f"{o.allocator_slack_for(True):.0%} where generation and training share GPUs, else "
            f"{o.allocator_slack_for(False):.0%}; no expandable segments")  # fmt: skip


def _verdict(e: Any, run: Any) -> None:
    """Fits or not, the binding term, and answers checked by evaluating them."""
    from rlmcost.units import format_bytes

    cap = f"{format_bytes(e.capacity_bytes)} of one {e.device.name}"
    ev = e.evaluation
    for problem in ev.problems if ev is not None else ():
        print(f"problem: {problem}")
    if e.fits:
        peak = max(s.memory_bytes_per_device for s in e.stages.values())
        print(f"fits: peak {format_bytes(peak)} per device of {cap}.")
        if run is not None and not e.deployment.ideal:
            from rlmcost.evaluation.advice import max_response_len

            longest = max_response_len(run, e)
            if longest.stopped_by == "past context":
                print(f"longest response: none searched past the run's {longest.response_len:,}"
                      f" tokens, which fit; {longest.describe()}.")  # fmt: skip
            else:
                print(f"longest response that still fits: {longest.response_len:,} tokens "
                      f"(--response-len; {longest.describe()}).")  # fmt: skip
            frac = e.to_json()["recommended_gpu_memory_utilization"]
            if frac is not None:
                print(f"largest engine reservation that still fits: --gpu-memory-utilization "
                      f"{frac:.2f}.")  # fmt: skip
            from rlmcost.cli.fit_hints import render_pool_hints

            render_pool_hints(run, e)
        if e.host_memory_bytes_per_node:
            from rlmcost.cli.placement_render import host_memory_line

            ev = e.evaluation
            print(host_memory_line(ev) if ev is not None else "host memory per node for "
                  f"offloaded states: {format_bytes(e.host_memory_bytes_per_node)}.")  # fmt: skip
        return
    worst = max(e.stages.values(), key=lambda s: s.shortfall_bytes)
    bad = [s.stage.label for s in e.stages.values() if not s.fits]
    if bad:
        print(
            f"DOES NOT FIT: {', '.join(bad)} {'exceeds' if len(bad) == 1 else 'exceed'} the "
            f"{cap}; {worst.stage.label} needs {format_bytes(worst.memory_bytes_per_device)} "
            f"per device, {format_bytes(worst.shortfall_bytes)} too much (largest term: "
            f"{worst.binding_term.replace('_', ' ')}). The times assume it fit."
        )
    if run is not None:
        from rlmcost.cli.fit_hints import render_hints

        render_hints(run, e)


def _caption(e: Any) -> str:
    i = e.inputs()
    knobs = "".join(f", {k}={v}" for k, v in i.items() if k not in ("B", "K", "S", "T", "dtypes"))
    k = f", K={i['K']}" if i["K"] is not None else ""
    others = {str(r): m for r, m in e.models.items() if str(r) != "actor"}
    models = "".join(f", {r}={m}" for r, m in others.items()) or " only"
    return (
        f"B={i['B']}{k}, S={i['S']}, T={i['T']}{knobs} (defaults: B=64, S=T=1024, K per "
        f"algorithm). Models: actor={e.model}{models}. Reward: {e.reward}. "
        f"{_dtypes(e)}. Placement: all models co-located on the same "
        f"{e.gpus} GPU{'s' if e.gpus > 1 else ''}. "
        f"time = predicted (kernel efficiency by shape, exposed communication, bubbles, the "
        f"engine's decode steps); time >= = roofline bound, {e.calibration}, attention counted "
        f"{e.counting}, at link bandwidth the forwards' ZeRO-3 gathers, weight sync and host "
        f"offload, no other communication (bound: link where those transfers are most of it). "
        f"FLOP = add or mul; depth = GEMM reduction levels."
    )


def fleet(e: Any) -> str:
    """``16 x h20 + 8 x h100-sxm``: the GPUs of an evaluation per accelerator."""
    ev = getattr(e, "evaluation", e)
    return ev.fleet_text if ev is not None else f"{e.gpus} x {e.hardware.name}"


def cost_text(ev: Any) -> str:
    """`` $0.58 per iteration, $0.56 per 1M trained tokens (USD per GPU-hour: h20 1.2, ...)``,
    or, where an accelerator has no price, ``Cost: not priced`` and the ``--price`` to give."""
    if ev is None:
        return ""
    c = ev.cost_json()
    prices = ", ".join(f"{hw} {p:g}" if p is not None else f"{hw} none"
                       for hw, p in c["usd_per_gpu_hour"].items())  # fmt: skip
    if c["per_iteration_usd"] is None:
        unpriced = ",".join(f"{hw}=USD" for hw, p in c["usd_per_gpu_hour"].items() if p is None)
        return f" Cost: not priced (USD per GPU-hour: {prices}; give --price {unpriced})."
    per_m = c["per_million_tokens_usd"]
    tokens = f", ${per_m:,.3f} per 1M trained tokens" if per_m is not None else ""
    return (f" Cost: ${c['per_iteration_usd']:,.4f} per iteration{tokens} (USD per GPU-hour: "
            f"{prices}).")  # fmt: skip


def render_phases(phases: Any, total_s: float, tokens_per_s_per_gpu: float, mfu: float,
                  ev: Any = None) -> None:  # fmt: skip
    """The iteration's phases by the names frameworks print, predicted and bound seconds, and
    the iteration's cost in USD when ``ev`` (the deployment's evaluation) is given."""
    from rlmcost.units import format_seconds

    print_table(
        "Phases (as verl / OpenRLHF / NeMo RL time them)",
        ["phase", "verl key", "time", "time >=", "of iteration"],
        [
            (
                p.name,
                p.key or "-",
                format_seconds(p.time_s),
                format_seconds(p.time_lower_bound_s),
                f"{p.time_s / total_s:.0%}" if total_s else "-",
            )
            for p in phases
        ],
        caption=(
            f"tokens/s/GPU {tokens_per_s_per_gpu:,.0f} (prompt + response tokens trained per "
            f"iteration / (predicted time x GPUs)); MFU {mfu:.1%} (iteration FLOPs, FLOP = add "
            "or mul, / (predicted time x GPUs x dense peak)). Phases on different device groups "
            "overlap, so their sum can exceed the iteration." + cost_text(ev)
        ),
        right=(2, 3, 4),
    )


def render_comparison(c: Any) -> None:
    from rlmcost.algorithms.kinds import Stage
    from rlmcost.cli.placement_render import fit_text
    from rlmcost.units import format_bytes, format_flops, format_seconds

    es = c.estimates
    rows: list[tuple[str, ...]] = []
    for stage in Stage:
        for label, get in (
            ("work", lambda s: format_flops(s.work_flops)),
            ("depth", lambda s: f"{s.depth:,}"),
            ("memory/device", lambda s: format_bytes(s.memory_bytes_per_device)),
            ("time >=", lambda s: format_seconds(s.time.bound_s)),
            ("share", lambda s: f"{s.share:.0%}"),
        ):
            rows.append(
                (
                    f"{stage.label} {label}",
                    *(get(e.stages[stage]) if stage in e.stages else "- (offline)"
                      if stage is Stage.GENERATION else "- (none)" for e in es),  # ORPO
                )
            )
    rows.append(("Iteration work", *(format_flops(e.work_flops) for e in es)))
    rows.append(("Iteration time", *(format_seconds(e.time_s) for e in es)))
    rows.append(("Iteration time >=", *(format_seconds(e.time_lower_bound_s) for e in es)))
    rows.append(("USD per iteration", *(_usd(e, "per_iteration_usd") for e in es)))
    rows.append(("USD per 1M tokens", *(_usd(e, "per_million_tokens_usd") for e in es)))
    rows.append(("K (responses/prompt)", *(str(e.inputs()["K"] or "-") for e in es)))
    rows.append(("models", *(", ".join(str(r) for r in e.models) for e in es)))
    rows.append(("fits", *(fit_text(e, paren=True) for e in es)))
    first = es[0]
    print_table(
        f"Side by side on {first.model}, {first.gpus} x {first.hardware.name}",
        ["", *(e.algorithm.name for e in es)],
        rows,
        caption=_compare_caption(first),
        right=tuple(range(1, len(es) + 1)),
    )


def _usd(e: Any, key: str) -> str:
    """``e``'s cost ``key`` (``cost_json``) as text; ``-`` where no price is known."""
    ev = e.evaluation
    value = ev.cost_json()[key] if ev is not None else None
    return "-" if value is None else f"{value:,.4f}"


def _compare_caption(e: Any) -> str:
    i, dep = e.inputs(), e.run.deployment
    placed = ("All models co-located" if not e.run.grouped else "Models on the deployment's "
              "groups" if dep.groups else f"Placement {dep.placement}")  # fmt: skip
    return (
        f"B={i['B']}, S={i['S']}, T={i['T']} (defaults: B=64, S=T=1024); K and knobs per "
        "algorithm (its default unless given). models: the roles each algorithm runs under "
        "its framework's preset, each the actor's model unless given (no reward: a verifier, or "
        f"an offline method's data). {placed}; Iteration time = predicted; time >= = roofline "
        f"lower bound, {e.calibration}; {_dtypes(e)}; USD at --price or the cited list price "
        "per GPU-hour (-: not priced)."
    )


def _dtypes(e: Any) -> str:
    """The dtypes the estimate was built with, in words (from its workload)."""
    w = e.workload
    return (
        f"{_states(e)}, {w.activation_dtype} activations, {kv_words(e)} KV, "
        f"{w.logits_dtype} logits"
    )


def _states(e: Any) -> str:
    """The trainers' model states in words (the deployment's ``train.param_dtype`` and its
    trainer's gradient buffer, :func:`~rlmcost.placement.grad_buffer.grad_dtype`)."""
    from rlmcost.parallel.zero import states_in_words
    from rlmcost.placement.grad_buffer import grad_dtype

    d = e.deployment
    stored = None if d is None or d.ideal else d.train.param_dtype
    return states_in_words(e.workload.weight_dtype, stored, None if d is None else grad_dtype(d))


def render_evaluation(e: Any) -> None:
    """An algorithm command's text report of an :class:`~rlmcost.evaluation.view.Evaluation`:
    the per-stage tables with the advice (which re-evaluates the Run with changes), or, for a
    placement, device groups or a length distribution, the placement's per-group report."""
    run = e.run
    d = run.deployment
    placed = (d.placement is not None or d.groups or d.staleness is not None
              or run.workload.length_dist is not None)  # fmt: skip

    def rerun(**changes: Any) -> Any:
        from rlmcost.reports.estimate import estimate

        return estimate(base=run, **changes)

    if placed:
        from rlmcost.cli.placement_render import render_estimate

        render_estimate(e.evaluation, rerun)
    else:
        render(e, rerun)
    from rlmcost.cli.deployment_line import deployment_line, split_note

    line = split_note(e)
    if line:
        note(f"note: {line}")
    note(deployment_line(run))


def render_timeline(e: Any) -> None:
    """The memory timeline (:mod:`rlmcost.reports.timeline`): one table per device group, a
    column per entry (init, first optimizer step, each phase), a row per term and view."""
    from rlmcost.reports.timeline import TERMS, memory_timeline
    from rlmcost.units import format_bytes, format_span

    note("memory timeline (bytes per device):")
    for tl in memory_timeline(e.evaluation):
        entries = tl.entries

        def when(x: Any) -> str:
            return "-" if x.start_s is None else format_span(x.start_s, x.end_s)

        rows = [
            ("seconds", *(when(x) for x in entries)),
            *(
                (t.replace("_", " "), *(format_bytes(getattr(x.memory, t)) for x in entries))
                for t in TERMS
                if any(getattr(x.memory, t) for x in entries)
            ),
            ("allocated", *(format_bytes(x.allocated_bytes) for x in entries)),
            ("reserved", *(format_bytes(x.reserved_bytes) for x in entries)),
            ("nvidia-smi", *(format_bytes(x.device_bytes) for x in entries)),
        ]
        print_table(
            f"Memory timeline of {tl.group} ({tl.gpus} GPUs, per device)",
            ["", *(x.phase for x in entries)],
            rows,
            caption=(
                "; ".join(f"{x.phase}: {x.what}" for x in entries[:2])
                + " (torch AdamW creates its states at the first step()); then each phase as "
                "the steady state holds it, seconds as predicted. reserved = "
                "allocated + allocator slack; nvidia-smi = reserved + CUDA context + "
                f"communicator buffers. Steady-state peak {format_bytes(tl.steady_peak_bytes)} "
                f"of {format_bytes(tl.capacity_bytes)}."
            ),
            right=tuple(range(1, len(entries) + 1)),
        )
