"""Option parsers and help texts shared by the commands."""

from __future__ import annotations

from fractions import Fraction

import typer


def parse_fraction(text: str | None, param_hint: str = "--oversample") -> Fraction | None:
    """'3', '1.5' or '3/2' as an exact Fraction; None stays None; else a one-line error."""
    if text is None:
        return None
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise typer.BadParameter(
            f"{text!r} is not a number (e.g. 3, 1.5 or 3/2)", param_hint=param_hint
        ) from None


CALIBRATION_HELP = (
    "Calibration profile (JSON from `rlmcost calibrate --out FILE`) for the time model "
    "(default: the profile shipped for --hardware, else datasheet peaks: a true lower bound)."
)
"""One help text for every command's --calibration option."""

GROUPS_HELP = (
    "Device groups by hand (partial colocation): ROLE[:KIND][+ROLE...]=GPUS\\[@HARDWARE]\\[KEYS]"
    ",... e.g. rollout=16@h20\\[tp=4;gmu=0.85],actor+reference=32\\[zero=3;padded] "
    "(HARDWARE: the group's GPU, a name of `rlmcost hardware`; default "
    "--hardware). ROLE: actor, critic, reward, reference (ref), cost, cost-critic, prm, judge, "
    "teacher; "
    "KIND: generate, forward, train; rollout = actor:generate. KEYS (optional, ';'-separated "
    "KEY=VALUE, a boolean KEY alone = true, KEY=false), for that group: layout tp, pp, cp, ep, "
    "zero, ckpt, mb (micro-batch), offload (tp/pp/ep also lay out a rollout group's engine); "
    "engine, on a rollout or judge group (its own engine: verl's reward loop), (its flag "
    "without dashes) engine, gmu (--gpu-memory-utilization), max-num-seqs, "
    "max-num-batched-tokens, eager, prefix-caching, sleep, rollout-dtype, context-length, "
    "schedule-policy, sequences-per-call, vllm-version, kv-cache-dtype, rollout-weights; "
    "trainer "
    "max-tokens-per-gpu, packing, padded, prefix-grouper, activation-offload, fused-loss, "
    "router-dtype, "
    "ep-dispatcher, kernels, "
    "moe-permute-fusion, moe-capacity-factor (none: dropless), moe-pad-to-capacity, "
    "virtual-stages (sets the schedule as --virtual-stages does), schedule (over the run's "
    "trainer layout). A key is given even at its default, as in a deployment file's "
    "groups\\[].engine/train. Every "
    "invocation in exactly one group; GPUs add up to --gpus. Over a --deployment file, a group "
    "of the same roles keeps the file's own engine and trainer settings, the keys over them."
)
LENGTH_HELP = (
    "Response lengths: fixed (T for all, the default), reasoning (long-tailed under the cap T: "
    "lognormal around min(0.7 T, 5,350) tokens, sigma 0.67, 2.5 % at T from 16K up; sourced "
    "constants), uniform:LO,HI, lognormal:MEAN,SIGMA[,MAX[,CLIP]] or file:PATH (whole "
    "numbers). Exact quantiles, deterministic."
)
"""Help of --groups and --length-dist: `rlmcost placements` and the algorithm commands."""


def framework_default(bare: str) -> str:
    """The end of the help of an option a framework preset sets: whose value a query takes
    when the flag is not given. Without --framework an algorithm command follows the default
    deployment's preset (:data:`rlmcost.frameworks.preset_model.DEFAULT_FRAMEWORK`) and `plan`
    each family's framework, as their --framework help says; so the value of rlmcost's bare
    layout, ``bare``, is the default only under ``--framework none``."""
    return (f"Default: the preset's of the framework the query follows (see --framework; "
            f"`rlmcost frameworks`); {bare} under --framework none.")  # fmt: skip

TURNS_HELP = (
    "Assistant turns N per sample, an agentic rollout (default: 1): after each turn but the "
    "last the environment returns --observation-tokens, part of --response-len, which the "
    "engine prefills on the cached context; trained sequences stay S + T."
)
OBSERVATION_HELP = (
    "Tokens O the environment returns after each turn but the last (default: 0): prefilled, "
    "not decoded. Needs (N - 1) x O + N <= T."
)
TOOL_LATENCY_HELP = (
    "Seconds L each environment (tool) call takes (default: 0): (N - 1) x L on a sample's "
    "own chain."
)
TURN_SCHEDULE_HELP = (
    "How turns meet the environment: per-sample (a task per trajectory, the engine busy with "
    "others while one waits: verl's agent loop, slime) or turn-synchronous (every sample's "
    "turn one batch, then one environment step: NeMo RL's run_multi_turn_rollout). Default: "
    "turn-synchronous under NeMo RL without --partial-rollout, else per-sample."
)
