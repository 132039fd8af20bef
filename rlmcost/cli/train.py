"""`rlmcost train`: memory per rank, work, communication, bubbles and predicted step time.

The model, GPUs, layout (dp, tp, pp, cp, ep, sp, ZeRO, checkpointing, micro-batch), hardware
and calibration options are the query commands' (the flag table, :mod:`rlmcost.cli._flags`);
the step's own (global batch in sequences, sequence length, pipeline schedule, attention
kernel, overlap, FSDP1 backward prefetch, optimizer offload, host link) are declared here.
"""

# No `from __future__ import annotations`: typer reads the Annotated options at run time.

from typing import TYPE_CHECKING, Annotated, Any

import typer

from rlmcost.cli._deploy_pipeline import layout_split, pipeline_split_options
from rlmcost.cli._flags import flag_table, in_panel, pick, signature
from rlmcost.cli._fp8 import fp8_options, fp8_recipe
from rlmcost.cli._moe_capacity import capacity_fields, moe_capacity_options
from rlmcost.cli._mtp import mtp_options
from rlmcost.cli._render import note, print_json, print_table
from rlmcost.cli._train_memory import train_memory_fields, train_memory_options
from rlmcost.parallel.layout import Checkpointing, PipelineSchedule, ZeroStage

if TYPE_CHECKING:
    from rlmcost.reports.train import TrainReport


LAYOUT = (
    "model", "gpus", "dp", "tp", "pp", "cp", "ep", "etp", "sp", "zero", "zero_shard", "ckpt",
    "micro_batch",
)  # fmt: skip
"""The flag-table options of `rlmcost train` before its own, then ``hardware``, then
``calibration`` and ``json_out``."""

_HELPS = {
    "model": "Built-in name or alias (see `rlmcost models`) or a config.json path.",
    "gpus": "GPUs of the job (default: dp*tp*pp*cp; EP is folded inside dp*tp*cp).",
    "dp": "Data-parallel degree (default: gpus / (tp*pp*cp), else 1).",
    "tp": "Tensor-parallel degree (default 1).",
    "pp": "Pipeline-parallel degree (default 1).",
    "cp": "Context-parallel degree (default 1).",
    "ep": "Expert-parallel degree (MoE), folded inside dp*tp*cp as Megatron-core folds it: no "
    "extra GPUs (TP 4 x EP 8 runs on 8 GPUs with --etp 1); etp*ep must divide tp*cp*dp; "
    "tokens routed evenly (default 1).",
    "etp": "Expert tensor-parallel degree: ranks that split each routed expert (default: tp, "
    "Megatron-core's).",
    "sp": "Sequence parallelism inside TP (default off).",
    "zero": "ZeRO stage over the data-parallel ranks (default 0; 3 = FSDP).",
    "ckpt": "Activation checkpointing (default none).",
    "micro_batch": "Sequences per micro-batch (default 1).",
    "calibration": "Measured profile (JSON from `rlmcost calibrate --out FILE`) that replaces "
    "the default per-accelerator efficiencies of the step-time prediction.",
}


def _own_step() -> dict[str, tuple[Any, Any]]:
    return {
        "batch": (Annotated[int | None, typer.Option(
            help="Global batch in sequences (default: one micro-batch per data-parallel "
            "rank, or 4 per pipeline stage when --pp > 1).", min=1)], None),
        "seq": (Annotated[int, typer.Option(help="Tokens per sequence (m = S + T).", min=1)],
                4096),
        "schedule": (Annotated[PipelineSchedule, typer.Option(help="Pipeline schedule.")],
                     PipelineSchedule.ONE_F_ONE_B),
        "virtual_stages": (Annotated[int, typer.Option(
            help="Model chunks per pipeline rank (Megatron's virtual_pipeline_model_parallel_"
            "size) under --schedule interleaved: v > 1 needs --pp > 1 and the layers "
            "divisible by pp x v.", min=1)], 1),
        **pipeline_split_options(),
        **moe_capacity_options(), **train_memory_options(), "train_fp8": fp8_options()["train_fp8"],
        **mtp_options(),
    }  # fmt: skip


def _own_time() -> dict[str, tuple[Any, Any]]:
    return {
        "attention": (Annotated[str, typer.Option(
            help="Attention kernel of the step-time prediction: flash (fused, causal; the "
            "device's best kernel, FlashAttention-3 / cuDNN class on Hopper), flash2 "
            "(FlashAttention-2 or PyTorch SDPA, as Hugging Face models run: 0.35 of peak on "
            "Hopper) or materialized (s x s scores in HBM, as Megatron-LM before fused "
            "attention).")],
            "flash"),
        "selective": (Annotated[str, typer.Option(
            help="What --ckpt selective recomputes: attention-core (Korthikanti et al. 2022, "
            "Megatron-LM), every-second-mm (torchtitan's op-level SAC: wk, wo, w3 of a "
            "dense block; the attention core saved) or modules (Megatron-core's "
            "--recompute-modules, given by --recompute-modules).")], "attention-core"),
        "recompute_modules": (Annotated[str, typer.Option(
            help="With --selective modules: Megatron-core's recomputed modules, comma-separated "
            "(core_attn, layernorm, moe_act, moe, shared_experts, mlp, mla_up_proj; "
            "rlmcost.perf.selective_ac).")], "core_attn"),
        "recompute_early_stop": (Annotated[bool, typer.Option(
            help="Under --ckpt full: PyTorch's non-reentrant checkpoint (use_reentrant=False, "
            "checkpoint_wrapper NO_REENTRANT), whose early stop ends each dense layer's rerun "
            "before the FFN's down projection (llm-foundry's MPT runs; off: the whole forward "
            "again, as Megatron's reentrant checkpoint; rlmcost.perf.ckpt_early_stop).")], False),
        "ep_dispatcher": (Annotated[str, typer.Option(
            help="How MoE tokens reach their experts: alltoall (NCCL all-to-all, then at EP > 1 "
            "a sort of the received tokens by local expert and back where a rank holds several: "
            "rlmcost.perf.moe_sort_chunks), "
            "deepep (DeepEP: once per remote node, then NVLink) or allgather (Megatron-core's "
            "default: all-gather over expert-TP x EP; rlmcost.perf.ep_dispatch).")], "alltoall"),
        "moe_permute_fusion": (Annotated[bool, typer.Option(
            help="TE's fused MoE permute (Megatron-core moe_permute_fusion); off: Megatron-"
            "core's default unfused kernels, atomic scatter-adds each way "
            "(rlmcost.perf.moe_permute).")], True),
        "overlap_grad_reduce": (Annotated[bool, typer.Option(
            help="Overlap the data-parallel gradient reduction with the last backward.")],
            True),
        "pp_overlap_p2p": (Annotated[bool, typer.Option(
            help="Under --schedule interleaved with --virtual-stages > 1: Megatron's "
            "overlap_p2p_comm (Megatron-LM's default): the steady 1F1B's pipeline sends behind "
            "the opposite pass, only the warm-up's and the flush's 2 (p v - 1) exposed "
            "(rlmcost.perf.megatron_pipe); off: every send exposed in its slot.")], True),
        "fsdp_backward_prefetch": (Annotated[str, typer.Option(
            help="FSDP1's backward_prefetch under --zero 3: pre (BACKWARD_PRE, PyTorch's "
            "default) or post (BACKWARD_POST, Composer's default: composer/trainer/"
            "dist_strategy.py @v0.16.4) hide the next all-gather behind the backward alike "
            "on the GPU; none gathers on demand behind the reduce-scatter, both exposed "
            "(torch/distributed/fsdp/_runtime_utils.py; rlmcost.perf.fsdp_prefetch).")],
            "pre"),
        "fsdp1_post_backward": (Annotated[bool, typer.Option(
            help="Under --zero 3 as PyTorch FSDP1: price its post-backward hook's kernels on "
            "each layer's unsharded gradient before the reduce-scatter (the cast to the reduce "
            "dtype where it differs, the pre-divide by gradient_predivide_factor: 4 bytes per "
            "parameter and micro-batch in bf16, 14 with an fp32 reduce; torch 2.0 "
            "_runtime_utils.py _post_backward_hook; rlmcost.perf.fsdp_prefetch).")], False),
        "grad_reduce_dtype": (Annotated[str, typer.Option(
            help="The gradient buffer micro-batches accumulate into and the data-parallel "
            "reduce moves: param (the weights' dtype; default) or fp32 (Megatron-core's "
            "grad_reduce_in_fp32, which Megatron-LM turns on for bf16: 4 B/param, whole on "
            "each rank under --zero 1; rlmcost.placement.grad_buffer).")], "param"),
        "offload_optimizer": (Annotated[bool, typer.Option(
            "--offload-optimizer",
            help="Adam on the host (ZeRO-Offload): gradients and weights cross the host "
            "link.")], False),
        "host_link_gb_s": (Annotated[float | None, typer.Option(
            "--host-link-gb-s",
            help="Host link per GPU and direction in GB/s (default: the hardware spec's, "
            "else 25 GB/s, PCIe Gen4 x16 achieved).", min=0.001)], None),
    }  # fmt: skip


def options() -> dict[str, tuple[Any, Any]]:
    """Every option of `rlmcost train`, in help order."""
    table = flag_table(None)
    shared = in_panel(pick(table, LAYOUT, _HELPS), None)
    return {**shared, **_own_step(), **pick(table, ("hardware",)), **_own_time(),
            **pick(table, ("calibration", "json_out"), _HELPS)}  # fmt: skip


def train(**opts: Any) -> None:
    from rlmcost.calibrate.profile import load_profile
    from rlmcost.cli._run import require_model
    from rlmcost.errors import SpecError
    from rlmcost.parallel.layout import Layout, dp_unit
    from rlmcost.parallel.moe_capacity import check_pad_dispatcher
    from rlmcost.perf.ep_dispatch import EpDispatcher
    from rlmcost.perf.fsdp_prefetch import BackwardPrefetch
    from rlmcost.perf.selective_ac import SelectiveRecompute
    from rlmcost.perf.train_step import AttentionKernel, StepOptions
    from rlmcost.reports.train import train_report
    from rlmcost.specs import get_hardware

    model, hardware, gpus = require_model(opts), opts["hardware"], opts["gpus"]
    kernels = [k.value for k in AttentionKernel]
    if opts["attention"] not in kernels:
        raise SpecError(f"--attention {opts['attention']!r} is not one of: {', '.join(kernels)}")
    kinds = [k.value for k in SelectiveRecompute]
    if opts["selective"] not in kinds:
        raise SpecError(f"--selective {opts['selective']!r} is not one of: {', '.join(kinds)}")
    prefetches = [k.value for k in BackwardPrefetch]
    if opts["fsdp_backward_prefetch"] not in prefetches:
        raise SpecError(f"--fsdp-backward-prefetch {opts['fsdp_backward_prefetch']!r} is not "
                        f"one of: {', '.join(prefetches)}")  # fmt: skip
    dispatchers = [str(k) for k in EpDispatcher]
    if opts["ep_dispatcher"] not in dispatchers:
        raise SpecError(f"--ep-dispatcher {opts['ep_dispatcher']!r} is not one of: "
                        f"{', '.join(dispatchers)}")  # fmt: skip
    check_pad_dispatcher(bool(opts.get("moe_pad_to_capacity")), opts["ep_dispatcher"])
    if opts["grad_reduce_dtype"] not in ("param", "fp32"):
        raise SpecError(f"--grad-reduce-dtype {opts['grad_reduce_dtype']!r} is not one of: "
                        "param, fp32")  # fmt: skip
    if opts["recompute_early_stop"] and opts["ckpt"] is not Checkpointing.FULL:
        raise SpecError("--recompute-early-stop prices full recomputation's rerun; it needs "
                        "--ckpt full (there is no rerun to stop otherwise)")  # fmt: skip
    fp32_grads = opts["grad_reduce_dtype"] == "fp32"
    host = opts["host_link_gb_s"]
    options = StepOptions(
        attention=AttentionKernel(opts["attention"]),
        selective=SelectiveRecompute(opts["selective"]),
        recompute_early_stop=opts["recompute_early_stop"],
        recompute_modules=tuple(m.strip() for m in opts["recompute_modules"].split(",") if m),
        ep_dispatcher=EpDispatcher(opts["ep_dispatcher"]),
        moe_permute_fusion=opts["moe_permute_fusion"],
        overlap_grad_reduce=opts["overlap_grad_reduce"],
        pp_overlap_p2p=opts["pp_overlap_p2p"],
        fsdp_backward_prefetch=BackwardPrefetch(opts["fsdp_backward_prefetch"]),
        fsdp1_post_backward=opts["fsdp1_post_backward"],
        offload_optimizer=opts["offload_optimizer"],
        host_link_bytes_per_s=host * 1e9 if host is not None else None,
        grad_reduce_bytes=4 if fp32_grads else 0, fp8=fp8_recipe(opts["train_fp8"]),
        mtp_layers=opts["mtp_layers"] or 0, mtp_repeated=opts["mtp_repeated"],
        mtp_detach_heads=opts["mtp_detach_heads"],
    )
    calibration = opts["calibration"]
    measured = load_profile(calibration, get_hardware(hardware)) if calibration else None
    deg: dict[str, Any] = {k: opts[k] or 1 for k in ("tp", "pp", "cp", "ep")}  # None: 1
    rest = deg["tp"] * deg["pp"] * deg["cp"]  # EP is folded inside dp*tp*cp
    dp = opts["dp"]
    if dp is None:
        if gpus is not None and gpus % rest:
            from rlmcost.deployment.resolve import divide_fix
            from rlmcost.parallel.validate import tp_widths
            from rlmcost.run.defaults import actor_spec

            spec = actor_spec(model)  # its heads and widths take the TP degrees named
            widths = () if spec is None else tp_widths(spec.arch())
            raise SpecError(divide_fix(gpus, deg["tp"], deg["pp"], deg["cp"], widths))
        dp = gpus // rest if gpus is not None else dp_unit(deg["tp"], deg["cp"], deg["ep"],
                                                            opts["etp"])  # fmt: skip
    layout = Layout(
        dp=dp, **deg, etp=opts["etp"], sp=bool(opts["sp"]), zero=opts["zero"] or ZeroStage.NONE,
        ckpt=opts["ckpt"] or Checkpointing.NONE, micro_batch=opts["micro_batch"] or 1,
        schedule=opts["schedule"], virtual_stages=opts["virtual_stages"],
        zero_shard=opts["zero_shard"],
    ).with_(**layout_split(opts), **capacity_fields(opts), **train_memory_fields(opts))
    from rlmcost.choices import Dtype
    from rlmcost.specs import Workload

    def rerun(lay: Layout, n: int | None = gpus) -> "TrainReport":
        return train_report(model, lay, hardware, n, opts["seq"], opts["batch"], options=options,
                            calibration=measured,
                            workload=Workload(grad_dtype=Dtype.FP32) if fp32_grads else None)

    report = rerun(layout)
    if opts["json_out"]:
        from rlmcost.reports.train_advice import report_fixes

        fixes = [] if report.fits else report_fixes(report, rerun)
        print_json({**report.to_json(), "fit_advice": [f.to_json() for f in fixes]})
        return
    _render(report)
    if not report.fits:
        _render_fixes(report, rerun)


def _render_fixes(report: "TrainReport", rerun: Any) -> None:
    """The changes that make ``report`` fit (:mod:`rlmcost.reports.train_advice`), as the
    RL commands print theirs; else that nothing tried does."""
    from rlmcost.reports.train_advice import report_fixes
    from rlmcost.units import format_bytes

    m = report.memory
    terms = ("weights", "gradients", "optimizer", "activations", "logits", "buffers")
    print(f"DOES NOT FIT: {format_bytes(m.total)} per rank, "
          f"{format_bytes(m.total - report.hbm_bytes)} too much (largest term: "
          f"{max(terms, key=lambda t: getattr(m, t))}).")  # fmt: skip
    fixes = report_fixes(report, rerun)
    for f in fixes:
        print(f"  fits with {f.flags}: peak {format_bytes(f.peak_bytes)} per rank.")
    if not fixes:
        print("  no change of the layout, nor more GPUs, makes it fit here.")


train.__signature__ = signature(options())  # type: ignore[attr-defined]
train.__doc__ = (
    "Will the model train on these GPUs with this layout? Memory per rank by component, "
    "work, communication bytes and time per collective, pipeline bubble, and the predicted "
    "step time with its breakdown, TFLOP/s per GPU and MFU."
)


def _render(report: "TrainReport") -> None:
    from rlmcost.reports.train import HOST_ADAM_NOTE
    from rlmcost.units import format_bandwidth, format_bytes, format_flops, format_seconds

    r = report
    lay = r.layout
    m = r.memory
    fits = "fits" if r.fits else "DOES NOT FIT"
    w = r.workload
    recompute = "no recompute" if lay.ckpt is Checkpointing.NONE else f"{lay.ckpt} recompute"
    print_table(
        f"{r.model} on {r.gpus} x {r.hardware} ({r.nodes} node(s)): memory per rank, "
        f"stage {r.memory_stage}",
        ["component", "bytes", "dtype"],
        [
            ("weights", format_bytes(m.weights), str(w.weight_dtype)),
            ("gradients", format_bytes(m.gradients), str(w.gradient_dtype)),
            ("optimizer", format_bytes(m.optimizer), "fp32 master + m + v (12 B/param)"
             + (", on the host" if HOST_ADAM_NOTE in r.notes else "")),
            ("activations", format_bytes(m.activations), f"{w.activation_dtype}, {recompute}"),
            ("logits", format_bytes(m.logits), str(w.logits_dtype)),
            ("buffers", format_bytes(m.buffers), "ZeRO-3 gather"),
            ("total", format_bytes(m.total), f"{fits} in {format_bytes(r.hbm_bytes)} HBM"),
        ],
        caption=f"dp={lay.dp} tp={lay.tp} pp={lay.pp} cp={lay.cp} ep={lay.ep} "
        f"etp={lay.expert_tp} "
        f"sp={'on' if lay.sp else 'off'} zero={lay.zero} ckpt={lay.ckpt}; batch {r.batch} x "
        f"{r.seq} tokens, micro-batch {lay.micro_batch}, {r.micro_batches} micro-batch"
        f"{'es' if r.micro_batches != 1 else ''} per "
        f"data shard, {lay.schedule} schedule. Bytes base 1024.",
        right=(1,),
    )
    print_table(
        "communication per rank per iteration",
        ["strategy", "collective", "ranks", "calls", "bytes sent", "link", "time >="],
        [
            (
                t.strategy,
                str(t.collective),
                t.ranks,
                t.calls,
                format_bytes(t.bytes_per_rank),
                f"{'intra' if t.intra_node else 'inter'} "
                # the train report times every collective: both are set
                f"{format_bandwidth(t.bandwidth_bytes_per_s)}",  # type: ignore[arg-type]
                format_seconds(t.time_s),  # type: ignore[arg-type]
            )
            for t in r.traffic
        ]
        + [
            (
                "total",
                "",
                "",
                "",
                format_bytes(r.communication_bytes_per_rank),
                "",
                format_seconds(r.communication_time_s),
            )
        ],  # fmt: skip
        caption="Ring algorithms; time >= = bytes / per-direction link bandwidth, no "
        "overlap, no latency: a lower bound. The predicted step below times each collective "
        "at NCCL's bus efficiency with its per-step latency (rlmcost.perf.collectives; a "
        "calibration's measured rates), so its exposed comm can exceed this"
        + ("; the recomputed forward's collectives count here and in its recomputation row"
           if str(lay.ckpt) != "none" else "") + ". TP innermost, then CP, EP, DP, PP.",
        right=(2, 3, 4, 6),
    )
    print_table(
        "work and pipeline",
        ["quantity", "value"],
        [
            ("work per rank", format_flops(r.work_per_rank_flops)),
            ("work global", format_flops(r.work_global_flops)),
            (f"compute time at {w.compute_dtype} peak", format_seconds(r.compute_time_s)),
            ("bubble fraction", f"{float(r.bubble_fraction):.3f}"),
        ],
        caption="FLOP = add or mul, matrix products, attention counted full; forward + "
        "backward (+ recomputation). Bubble = idle / ideal time (Narayanan et al. 2021).",
        right=(1,),
    )
    _render_step(r)
    for line in r.notes:
        note(f"note: {line}")


def _render_step(r: "TrainReport") -> None:
    from rlmcost.perf.interval import TEACHER_FORCED
    from rlmcost.units import format_seconds

    st = r.step
    names = {"gemm": "GEMMs", "attention": "attention core", "elementwise": "norms, "
             "activations, residuals (memory-bound)", "recompute": "recomputation",
             "host": "MoE layers waiting on the host (launches, dispatcher sync)"}  # fmt: skip
    rows = [(f"compute: {names[k]}", format_seconds(v)) for k, v in st.compute_s.items() if v]
    rows += [(f"exposed comm: {k}", format_seconds(v)) for k, v in st.exposed_comm_s.items()]
    rows += [
        ("pipeline bubble", format_seconds(st.bubble_s)),
        ("optimizer step", format_seconds(st.optimizer_s)),
        ("offload transfers", format_seconds(st.offload_s)),
        ("step time", format_seconds(st.step_s)),
        ("step time interval", " - ".join(format_seconds(t) for t in st.interval_s)),
        ("TFLOP/s per GPU", f"{st.tflops_per_gpu:.1f}"),
        ("MFU", f"{100 * st.mfu:.1f} %"),
        ("roofline bound (peak, causal attention, no comm)", format_seconds(st.roofline_bound_s)),
    ]
    print_table(
        f"predicted step time (stage {st.slowest_stage} sets the pace)",
        ["part", "time"],
        rows,
        caption=f"Efficiencies: {st.efficiency_source}. MFU = model FLOPs / (step x GPUs x "
        f"dense peak); model FLOPs = exact matrix products of forward + backward, attention "
        f"full S x S, no recomputation ({st.model_flops:.3e} FLOP). Exposed comm = what "
        "overlap does not hide (TP/SP, EP all exposed; CP, DP/ZeRO behind compute), each "
        "collective at the bus efficiency and latency NCCL reaches, not the communication "
        "table's link-bandwidth bound. "
        f"Interval: {TEACHER_FORCED.low:g}-{TEACHER_FORCED.high:g} x the step "
        f"({TEACHER_FORCED.source}), never below the roofline bound.",
        right=(1,),
    )


def register(app: typer.Typer) -> None:
    app.command("train")(train)
