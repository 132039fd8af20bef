"""The flag table: every option a query command takes, declared once (DESIGN.md, "One Run").

:func:`flag_table` gives the options of the algorithm commands (`rlmcost ppo|grpo|...`), and
`compare` and `placements` take theirs from it (``placements`` with its own defaults: TP per
model, ZeRO-3, 8 GPUs; see :func:`rlmcost.cli._run.run_from_options`); `plan` and `train` take
the options they share with them (:func:`pick`: model, workload, hardware, layout) and add
their own. The deployment options come from :func:`rlmcost.cli._deploy.deployment_options`.
Each entry is ``name -> (annotation, default)``, the form typer reads from a signature
(:func:`signature`).
"""

# No `from __future__ import annotations`: the per-algorithm help texts in the Annotated
# options are built when each table is made.

import copy
import inspect
import typing
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

import typer

from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import DEFAULT_BATCH, DEFAULT_HARDWARE, DEFAULT_RESPONSE_LEN, KNOBS
from rlmcost.choices import AttnCounting, RankOrder, TurnSchedule
from rlmcost.cli._deploy import deployment_options
from rlmcost.cli._parse import (
    CALIBRATION_HELP,
    GROUPS_HELP,
    LENGTH_HELP,
    OBSERVATION_HELP,
    TOOL_LATENCY_HELP,
    TURN_SCHEDULE_HELP,
    TURNS_HELP,
    framework_default,
)
from rlmcost.frameworks.preset_model import FrameworkChoice
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
        "oversample": "rho: generated / kept sequences (DAPO dynamic sampling; in verl "
                      "rounds x data.gen_batch_size / data.train_batch_size, e.g. 3 for one "
                      "round of 1536 prompts kept down to 512; 1 = no oversampling)",
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
    if alg is not None and alg.min_group > 1:
        from rlmcost.frameworks.presets import GROUP_OF_ONE, group_of_one

        ones = [f.value for f in GROUP_OF_ONE if group_of_one(f.value, alg)]
        group_help += (f" At least {alg.min_group} (the group baseline)"
                       + (f"; 1 under --framework {' or '.join(ones)}, which runs a group of "
                          "one (verl: mean 0, std 1)" if ones else "") + ".")  # fmt: skip
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
                help="Reward model (also cost model / PRM), or `rule`: a rule-based verifier, "
                "no reward model (most GRPO/DAPO runs). Default: the actor's model; `rule` for "
                "GRPO and its family under a framework whose preset scores with a verifier "
                "(`rlmcost frameworks`: rule_reward; nemo-rl's, the default deployment, "
                "does); PPO keeps its reward model."
            ),
        ] = None,
        ref: Annotated[
            str | None, typer.Option(help="Reference model (default: the actor's model).")
        ] = None,
        judge: Annotated[
            str | None, typer.Option(help="Judge model (d-rlaif) (default: the actor's).")
        ] = None,
        teacher: Annotated[
            str | None, typer.Option(help="Teacher model (opd: on-policy distillation), which "
                                     "scores each student token (default: the actor's); on "
                                     "another online algorithm its forward joins the loop "
                                     "(slime's --use-opd: a KL term beside the advantage).")
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
                "--response-len", "-T", help=f"Response tokens T (default: {DEFAULT_LEN}): "
                "every response's under --length-dist fixed, the cap under reasoning; "
                "uniform, lognormal and file give their own.", **Pos
            ),
        ] = None,
        image_tokens: Annotated[
            int | None,
            typer.Option(
                "--image-tokens",
                help="Tokens of one image in each prompt (part of --prompt-len) that a "
                "vision-language model's tower encodes in every pass (Qwen2-VL, Qwen2.5-VL "
                "config.json). Default: 0, text only.",
                min=0,
            ),
        ] = None,
        turns: Annotated[int | None, typer.Option(help=TURNS_HELP, **Pos)] = None,
        observation_tokens: Annotated[
            int | None, typer.Option(help=OBSERVATION_HELP, min=0)] = None,
        tool_latency: Annotated[float | None, typer.Option(help=TOOL_LATENCY_HELP, min=0)] = None,
        turn_schedule: Annotated[
            TurnSchedule | None, typer.Option(help=TURN_SCHEDULE_HELP)] = None,
        epochs: Annotated[int | None, typer.Option(help=_knob_help("epochs", alg), **Pos)] = None,
        mini_batches: Annotated[
            int | None, typer.Option(help=_knob_help("mini_batches", alg), **Pos)
        ] = None,
        global_batch: Annotated[
            int | None,
            typer.Option(
                help="Samples (B x K) per optimizer step: N_mini = B x K / this (one step "
                "under it), as NeMo RL's policy.train_global_batch_size counts them (its "
                "preset: 512, where it divides B x K). Not with --mini-batches. "
                + framework_default("none (--mini-batches steps per epoch)"),
                **Pos,
            ),
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
        kv_scale_calibration: Annotated[
            bool | None,
            typer.Option(
                "--kv-scale-calibration/--no-kv-scale-calibration",
                help="After each update the actor runs a forward over the step's samples to "
                "calibrate the engines' FP8 KV-cache scales (NeMo RL with vllm_cfg."
                "kv_cache_dtype fp8: grpo.py recompute_kv_scales, calibrate_qkv_fp8_scales), "
                "priced as an actor forward in the 'kv scales' phase (default: on where the "
                "query follows NeMo RL, --framework nemo-rl or none given, with an FP8 "
                "--kv-cache-dtype; else off).",
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
            FrameworkChoice | None,
            typer.Option(
                help="Start from a framework's defaults (engine reservation and sleep, "
                "ZeRO/FSDP, checkpointing, micro-batch or token budget, recomputed log-probs, "
                "reference, reward kind); explicit flags override them. Default: a "
                "--deployment file's framework, else nemo-rl (the default deployment); none: "
                "rlmcost's bare layout. See `rlmcost frameworks`.",
            ),
        ] = None,
        sized_defaults: Annotated[
            bool,
            typer.Option(
                "--sized-defaults/--no-sized-defaults",
                help="Take --framework's defaults for the actor's size: from a size on, those "
                "of its example for larger models (verl's Qwen2-72B script: rollout TP 16, "
                "host offload; OpenRLHF's and TRL's 70B examples' device groups, scaled to "
                "--gpus, where no --placement nor --groups is given; `rlmcost frameworks` "
                "lists each), or of its example for the actor's own model where it ships one "
                "(NeMo RL's Nemotron 3 Super recipe), each degree the actor cannot take "
                "lowered to the largest of its divisors that holds (said in the deployment line). "
                "--no-sized-defaults keeps its own defaults at any size, "
                "co-located, as `rlmcost import` states a config.",
            ),
        ] = True,
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
            int | None,
            typer.Option(help="Tensor-parallel degree. " + framework_default("1"), **Pos),
        ] = None,
        pp: Annotated[
            int | None,
            typer.Option(help="Pipeline-parallel degree. " + framework_default("1"), **Pos),
        ] = None,
        dp: Annotated[
            int | None,
            typer.Option(help="Data-parallel degree (default: gpus/(tp*pp) or 1).", **Pos),
        ] = None,
        zero: Annotated[
            ZeroStage | None,
            typer.Option(help="ZeRO stage over the data-parallel ranks (3 = FSDP). "
                        + framework_default("0")),
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
        host_bandwidth: Annotated[
            float | None,
            typer.Option(
                help="Host link GB/s per direction (default: the device's, e.g. 64 for PCIe 5, "
                "32 for A100).",
            ),
        ] = None,
        host_memory_gib: Annotated[
            float | None,
            typer.Option(
                help="Host (CPU) memory of one host in GiB, for every accelerator of the run "
                "(default: the reference system's, e.g. 1862 for a DGX H100's 2 TB; unknown "
                "for HGX-only platforms). A node whose offloaded states exceed it does not "
                "fit.",
            ),
        ] = None,
        rank_order: Annotated[
            RankOrder | None,
            typer.Option(
                help="Hosts in rank order: topology (by NVLink domain, rlmcost's layout; the "
                "default) or random (the framework's order ignores racks: NeMo RL without "
                "cluster.segment_size sorts Ray's random node ids). Random, on more GPUs than "
                "one NVLink domain of hosts (GB200 NVL72: over 72), a group spanning several "
                "hosts talks over the inter-node link (rlmcost.placement.rank_order).",
            ),
        ] = None,
        price: Annotated[
            str | None,
            typer.Option(
                help="USD per GPU-hour by accelerator, over the cited on-demand list prices "
                "(rlmcost.specs.prices): h100=2.5,h20=1.2, or a JSON file {\"h20\": 1.2}. "
                "The cost per iteration and per 1M trained tokens comes from them.",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Collects the options; the caller (one command per algorithm, or compare) runs."""
        return dict(locals())

    return command


PLACEMENT_OPTIONS = ("placement", "groups", "staleness", "length_dist")
"""Options that route an algorithm query through the placement model."""


def flag_table(alg: Algorithm | None) -> dict[str, tuple[Any, Any]]:
    """Every option of the command of ``alg`` (None: `compare`'s, for each algorithm), the
    deployment options included: name -> (annotation, default)."""
    sig = inspect.signature(_make_command(alg))
    out = {p.name: (p.annotation, p.default) for p in sig.parameters.values()}
    return {**out, **deployment_options()}


def pick(
    table: dict[str, tuple[Any, Any]], names: Iterable[str], helps: dict[str, str] | None = None
) -> dict[str, tuple[Any, Any]]:
    """The entries ``names`` of ``table``, in that order; ``helps``: name -> a help text of
    the command's own for that option (same flag, type and default; names not picked are
    passed over). KeyError for a name the table lacks."""
    out = {name: table[name] for name in names}
    for name, text in (helps or {}).items():
        if name not in out:
            continue
        ann, default = out[name]
        kind, info, *rest = typing.get_args(ann)
        info = copy.copy(info)
        info.help = text
        out[name] = (Annotated[(kind, info, *rest)], default)
    return out


def in_panel(table: dict[str, tuple[Any, Any]], panel: str | None) -> dict[str, tuple[Any, Any]]:
    """``table`` with every option shown in the help panel ``panel`` (None: the command's
    main options)."""
    out = {}
    for name, (ann, default) in table.items():
        kind, info, *rest = typing.get_args(ann)
        info = copy.copy(info)
        info.rich_help_panel = panel
        out[name] = (Annotated[(kind, info, *rest)], default)
    return out


class FlagSignature(inspect.Signature):
    """The signature of a command built from the flag table (:func:`signature`)."""

    __slots__ = ()


def signature(
    table: dict[str, tuple[Any, Any]], first: Sequence[inspect.Parameter] = ()
) -> inspect.Signature:
    """A signature typer reads: ``first`` (arguments), then the table's options. Its command
    takes them as ``**opts``."""
    params = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann)
        for name, (ann, default) in table.items()
    ]
    return FlagSignature([*first, *params])
