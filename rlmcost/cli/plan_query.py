"""`rlmcost plan`'s query from its options: the space's value lists, and for an RL algorithm
the base Run, the space and the base Run of each family another framework launches.

:mod:`rlmcost.cli.plan` searches what :func:`rl_query` returns; so does
``benchmarks/bench_plan.py``, from a command line :func:`parsed` reads as the command does, so
the benchmark times exactly what `rlmcost plan ...` runs (each family under its launcher's
preset: :data:`rlmcost.plan.families.LAUNCHED_BY`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.plan.distributed import Compute
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.plan.search import PlanResult
    from rlmcost.run.spec import Run

RUN_FACTS = ("image_tokens", "turns", "observation_tokens", "tool_latency", "turn_schedule",
             "rank_order", "staleness", "ideal", "lora_rank", "lora_targets",
             "freeze_vision_tower", "mtp_layers", "mtp_repeated", "mtp_detach_heads",
             "train_fp8", "train_fp8_param",
             "disable_dropout", "padded", "packing", "fused_loss", "prefix_grouper",
             "activation_offload", "lora_gather",
             "max_tokens_per_gpu", "forward_max_tokens_per_gpu", "forward_micro_batch",
             "expandable_segments", "grad_reduce_dtype", "init_load", "init_on_gpu",
             "offload_idle", "router_dtype", "ep_dispatcher", "moe_permute_fusion",
             "swiglu_fusion", "moe_capacity_factor", "moe_pad_to_capacity", "routing_replay",
             "enforce_eager", "prefix_caching", "context_length", "schedule_policy",
             "dp_attention",
             "max_num_batched_tokens", "env_workers", "sequences_per_call",
             "speculative_tokens", "speculative_draft", "speculative_acceptance",
             "refit", "vllm_version", "kv_cache_dtype", "rollout_weights")  # fmt: skip
"""The run-level flags of the algorithm commands that `rlmcost plan` takes as they are: facts
of the cluster (``--rank-order``), the workload (``--image-tokens``), the trainer's and the
engine's settings that no candidate changes (its batching budget, LoRA, allocator, kernels,
the engine's own knobs) and the staleness its overlapped families run at. Each goes into the
base Run, which every candidate keeps outside the fields it sets
(:func:`rlmcost.plan.rl_runs.candidate_sections`), so each row's command repeats it."""

NOT_TAKEN = ("gpus, dp, tp, pp, cp, ep, sp, zero, ckpt, micro-batch, offload, "
             "gpu-memory-utilization, rollout-tp, placement and groups are searched (the "
             "plan's own --gpus, --tp, ... --groups give their lists); etp, zero-shard, "
             "rollout-pp, rollout-ep, pp-first/last-layers, pp-embedding/loss-slot, pp-layout, "
             "virtual-stages, pp-overlap-p2p, module-ckpt, recompute-early-stop, "
             "tp-gather-layers, partial-rollout and in-flight-batches hold only for one "
             "searched layout or family; sized-defaults and deployment-file would fix the "
             "placement and layout the search picks; symbolic is no deployment")
"""The algorithm commands' options `rlmcost plan` does not take, and why (its --help says
it)."""

SHARED = ("model", "critic", "reward", "ref", "judge", "teacher", "batch", "group", "prompt_len",
          "response_len", "length_dist", "epochs", "mini_batches", "global_batch", "oversample",
          "prm_steps", "judge_len", "recompute_logprobs", "kv_scale_calibration", "no_kl",
          "ref_precomputed", "framework",
          "hardware", "calibration", "host_bandwidth", "host_memory_gib", "attention", "logits",
          "no_sleep", "max_num_seqs", "rollout_dtype", "price", "param_dtype", "json_out",
          "engine", "kv_buffer_gib", *RUN_FACTS)  # fmt: skip
"""The flag-table options of `rlmcost plan` (the base Run's fields the search holds fixed)."""

TRAIN_SHARED = ("model", "batch", "hardware", "json_out")
"""Of those, the ones `rlmcost plan train` reads."""

DEFAULT_BUDGET = "8..64"
"""`rlmcost plan`'s GPU budget where neither --gpus nor --groups that keep every count give
one."""


def gpu_budget(opts: dict[str, Any]) -> str:
    """The GPU budget of `rlmcost plan`'s options ``opts``: --gpus; without it, the sum of
    --groups where every group keeps its count (``rollout=16@h20,actor+reference=8@h100``
    runs on 24 GPUs, which the default 8..64 does not search), else :data:`DEFAULT_BUDGET`.
    SpecError where --gpus leaves out the sum of such groups: the search would find no valid
    deployment and advise raising --gpus."""
    from rlmcost.errors import SpecError
    from rlmcost.plan.families import free_groups
    from rlmcost.plan.kinds import parse_gpus

    given, groups = opts.get("gpus"), opts.get("groups")
    fixed = free_groups(groups).fixed if groups else ()
    total = sum(n for n in fixed if n is not None) if fixed and None not in fixed else None
    if given is None:
        return str(total) if total is not None else DEFAULT_BUDGET
    if total is not None and total not in parse_gpus(given):
        counts = ", ".join(str(n) for n in parse_gpus(given))
        raise SpecError(f"--groups {groups!r} keeps every count, {total} GPUs in all, which "
                        f"--gpus {given} ({counts}) does not search; give --gpus {total}, "
                        "leave --gpus out, or write '?' for the counts to search")  # fmt: skip
    return str(given)


def parsed(argv: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The target and the options `rlmcost plan ARGV` hands its command: click's own parsing
    of the command's options, the defaults filled in as on the command line."""
    import typer
    import typer.main

    from rlmcost.cli import app

    group: Any = typer.main.get_command(app)  # a group (rlmcost.cli._lazy.LazyCommands)
    with typer.Context(group, info_name="rlmcost") as ctx:
        command = group.get_command(ctx, "plan")
        opts = dict(command.make_context("plan", list(argv), parent=ctx).params)
    opts["gpus"] = gpu_budget(opts)
    return opts.pop("target"), opts


def rl_plan(target: str, opts: dict[str, Any], compute: Compute | None = None) -> PlanResult:
    """`rlmcost plan TARGET`'s RL search (all but ``--max-response-len``) on ``compute``
    (default this process): :func:`rlmcost.plan.rl.plan_rl` of :func:`rl_query`."""
    from rlmcost.plan.rl import plan_rl

    base, space, bases = rl_query(target, opts)
    return plan_rl(base, opts["gpus"], objective=opts["objective"], top=opts["top"],
                   space=space, min_gpus=opts["min_gpus"], compute=compute,
                   bases=bases)  # fmt: skip


def rl_query(target: str, opts: dict[str, Any]) -> tuple[Run, RLSpace, dict[str, Run] | None]:
    """The RL plan's base Run, space and per-family base Runs (``plan_rl``'s ``bases``; None
    with ``--framework``) from `rlmcost plan TARGET`'s options ``opts``."""
    from dataclasses import replace

    from rlmcost.cli._run import run_from_options
    from rlmcost.plan.kinds import parse_ints, parse_pool
    from rlmcost.plan.rl import RLSpace
    from rlmcost.plan.rl_space import check_staleness

    pool = parse_pool(opts["hardware"])  # h20:32,h100:16: the search assigns the groups
    shared = {k: opts[k] for k in SHARED}
    if pool:
        shared["hardware"] = pool[0][0]
    base = run_from_options(shared, target)
    rl_space = RLSpace(**space_fields(opts), pool=pool)
    if opts["rollout_tp"] is not None:
        rl_space = replace(rl_space, rollout_tp=parse_ints(opts["rollout_tp"], "rollout-tp"))
    if opts["cp"] is not None:
        rl_space = replace(rl_space, cp=parse_ints(opts["cp"], "cp"))
    if opts["ep"] is not None:
        rl_space = replace(rl_space, ep=parse_ints(opts["ep"], "ep"))
    rl_space = replace(rl_space, placements=_families(opts, base), groups=opts["groups"])
    check_staleness(base.deployment.staleness, rl_space.placements)
    return base, rl_space, _launchers(shared, target, rl_space.placements, base)


def _launchers(shared: dict[str, Any], target: str, families: tuple[str, ...],
               base: Any) -> dict[str, Any] | None:  # fmt: skip
    """Without ``--framework`` (nor ``--ideal``): each family the default framework cannot
    launch -> the base Run of the framework that does, built from the same options as
    `rlmcost <algorithm> --framework X` would (:func:`rlmcost.plan.families.launcher_bases`;
    empty where none is needed); None with ``--framework`` or ``--ideal``."""
    from rlmcost.cli._run import run_from_options
    from rlmcost.frameworks.presets import FrameworkChoice
    from rlmcost.plan.families import launcher_bases

    if shared.get("framework") is not None or shared.get("ideal"):
        return None
    return launcher_bases(base, families, lambda fw: run_from_options(
        {**shared, "framework": FrameworkChoice(fw)}, target)) or {}


def _families(opts: dict[str, Any], base: Run) -> tuple[str, ...]:
    """The families to search (:func:`rlmcost.plan.families.searched_families`): ``--placements``;
    else none beside ``--groups``; else NeMo RL's with ``--engine megatron``; else those
    ``--framework`` launches; else the default ones (for an offline algorithm, ``base``'s,
    those without generation)."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.errors import SpecError
    from rlmcost.plan.families import searched_families

    for name, example in (("placements", "baseline,roles"), ("groups", "rollout=?,actor=?")):
        if opts[name] is not None and not opts[name].replace(",", "").strip():
            raise SpecError(f"--{name} is empty: give a list such as --{name} {example}, "
                            "or leave the option out")  # fmt: skip
    placements = None if opts["placements"] is None else tuple(
        p.strip() for p in opts["placements"].split(",") if p.strip())
    fw, engine = opts["framework"], opts["engine"]
    return searched_families(placements, opts["groups"], None if fw is None else str(fw),
                             None if engine is None else str(engine),
                             offline=get_algorithm(base.algorithm.name).offline)  # fmt: skip


def space_fields(opts: dict[str, Any]) -> dict[str, Any]:
    """The space's value lists the options give (``--tp 1,2,4`` ...)."""
    from rlmcost.errors import SpecError
    from rlmcost.parallel.layout import Checkpointing, ZeroStage
    from rlmcost.plan.kinds import parse_ints

    out: dict[str, Any] = {}
    for name in ("tp", "pp", "micro_batch"):
        values = parse_ints(opts[name], name.replace("_", "-"))
        if values is not None:
            out[name] = values
    for name, enum in (("zero", ZeroStage), ("ckpt", Checkpointing)):
        text = opts[name]
        if text is None:
            continue
        have = ", ".join(m.value for m in enum)
        try:
            out[name] = tuple(enum(w.strip()) for w in text.split(",") if w.strip())
        except ValueError:
            raise SpecError(f"--{name} {text!r}: use any of {have}, comma-separated") from None
        if not out[name]:
            raise SpecError(f"--{name} {text!r} names no value; use any of {have}, "
                            "comma-separated")  # fmt: skip
    return out
