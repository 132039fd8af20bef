"""``--groups`` brackets round trip: a command line's Run -> ``Run.to_command`` -> the
command's Run is the same Run (rlmcost.deployment.group_brackets ``bracket_text``), for random
combinations of engine, layout and trainer keys, a group on hardware of its own and run-wide
virtual-stages or capacity flags (hypothesis). A combination the specs refuse is a one-line
SpecError and is skipped; one they take must have its command."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError

MOE = ("-m", "qwen3-30b-a3b", "--reward", "rule", "--framework", "none", "-B", "8", "-K", "4",
       "-S", "256", "-T", "512", "--gpus", "16", "--tp", "2", "--pp", "2", "--ep", "4")  # fmt: skip
"""A MoE actor on Megatron-core's layout, a pipeline of 2 (as tests/test_group_brackets.py)."""


def _round_trip(groups: str, flags: tuple[str, ...] = ()) -> None:
    try:
        run = run_from_argv("grpo", [*MOE, *flags, "--groups", groups])
    except SpecError:
        return  # refused up front: nothing to write back
    line = run.to_command()  # a Run built from brackets has its command
    again = run_from_argv("grpo", shlex.split(line)[2:])
    assert again == run, line
    for mine, back in zip(run.deployment.groups, again.deployment.groups, strict=True):
        for part in ("engine", "train"):
            a, b = getattr(mine, part), getattr(back, part)
            assert (a is None) == (b is None), (part, line)
            assert a is None or a.model_fields_set == b.model_fields_set, (part, line)


@pytest.mark.parametrize(("groups", "flags"), [
    # a trainer key at the run's value alone: before, no word was written and the command's
    # group had no trainer layout of its own
    ("rollout=8,actor=8[moe-pad-to-capacity=false]", ()),
    # a schedule at the run's value beside a virtual-stages word that implies another
    ("rollout=8,actor=8[virtual-stages=2;schedule=1f1b]", ()),
    ("rollout=8,actor=8[virtual-stages=1;schedule=interleaved;pp=1]", ("--virtual-stages", "2")),
])  # fmt: skip
def test_found_cases_round_trip(groups: str, flags: tuple[str, ...]) -> None:
    _round_trip(groups, flags)


def _words(options: dict[str, list[str]]) -> st.SearchStrategy[str]:
    items = st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in options.items()})
    return items.map(lambda d: ";".join(k if v == "" else f"{k}={v}" for k, v in d.items()))


ENGINE = _words({
    "gmu": ["0.5", "0.85"], "max-num-seqs": ["1", "64"], "max-num-batched-tokens": ["8192"],
    "eager": ["", "false"], "prefix-caching": ["", "off"], "sleep": ["", "false"],
    "engine": ["vllm", "sglang"], "rollout-dtype": ["bf16", "fp8"], "tp": ["1", "2", "4"],
    "schedule-policy": ["fcfs", "priority"], "sequences-per-call": ["4"],
})  # fmt: skip
TRAINER = _words({
    "max-tokens-per-gpu": ["4096"], "packing": ["", "false"], "padded": ["", "false"],
    "fused-loss": ["", "false"], "router-dtype": ["fp32", "fp64"],
    "ep-dispatcher": ["alltoall", "allgather"], "kernels": ["fused", "realhf"],
    "moe-permute-fusion": ["", "false"], "moe-capacity-factor": ["1.25", "none"],
    "moe-pad-to-capacity": ["", "false"], "virtual-stages": ["1", "2"],
    "schedule": ["1f1b", "interleaved"], "zero": ["1", "3"], "ckpt": ["none", "full"],
    "mb": ["1", "2"], "offload": ["optimizer"], "tp": ["1", "2"], "pp": ["1", "2"],
})  # fmt: skip


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(ENGINE, TRAINER, st.sampled_from(["", "@h20"]),
       st.sampled_from([(), ("--virtual-stages", "2"), ("--moe-capacity-factor", "1.5")]))
def test_random_brackets_round_trip(engine: str, trainer: str, hardware: str,
                                    flags: tuple[str, ...]) -> None:  # fmt: skip
    groups = (f"rollout=8{hardware}" + (f"[{engine}]" if engine else "") + ",actor=8"
              + (f"[{trainer}]" if trainer else ""))  # fmt: skip
    _round_trip(groups, flags)
