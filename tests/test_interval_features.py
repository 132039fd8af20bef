"""Issue 18's hypothesis properties over the features added since tests/test_interval.py drew
its dense model: predicted >= bound (iteration, stage and phase), the interval holds the point
prediction, and a longer length tail never shortens generation, drawn over an MoE with its
capacity factor, padding and unfused permutation (Qwen3-30B-A3B, TP 2 x EP 8, Megatron-core's
rules), a virtual pipeline (Qwen2.5-0.5B, PP 2 x v), sliding-window attention (Gemma-2/3) and
device groups with their own hardware and engine settings (`--groups` brackets), under NeMo
RL's Megatron trainer, verl's and rlmcost's bare layout.

Independent reasoning: the bound is exact arithmetic on datasheet peaks and the prediction
only adds inefficiency and exposed time to it; the interval scales each unit by its low/high
spread around 1 in a schedule monotone in its weights; and uniform:LO,HI+more dominates
uniform:LO,HI sample by sample (the midpoint quantiles of rlmcost.placement.lengths), so every
response is at least as long and the rollout cannot end earlier."""

from __future__ import annotations

import shlex

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmcost import evaluate
from rlmcost.cli.validate import run_from_argv

BASE = "-H h100 --gpus 16 -B 16 -K 4 -S 256"
FRAMEWORKS = {
    "nemo-rl": "--framework nemo-rl --zero 1 --param-dtype bf16",  # its Megatron trainer
    "verl": "--framework verl",
    "none": "--framework none",
}
MOE = st.tuples(
    st.just("-m qwen3-30b-a3b --tp 2 --ep 8 --etp 1"),
    st.sampled_from(["", "--moe-capacity-factor 1.0",
                     "--moe-capacity-factor 1.25 --moe-pad-to-capacity"]),
    st.sampled_from(["", "--no-moe-permute-fusion"]),
).map(" ".join)
VIRTUAL = st.sampled_from([1, 2]).map(lambda v: f"-m qwen2.5-0.5b --pp 2 --virtual-stages {v}")
WINDOW = st.sampled_from(["-m gemma-2-2b", "-m gemma-3-1b"])
ROLES = {"nemo-rl": "actor+reference", "verl": "actor", "none": "actor+reference+reward"}
"""The models each framework's GRPO runs beside the engines (verl's preset drops the KL
reference; rlmcost's bare GRPO scores with a reward model)."""
GROUPS = st.sampled_from([
    "",
    "--groups 'rollout=8@h20[tp=2],{roles}=8'",  # a group on other hardware, its engine TP
    "--groups 'rollout=8[max-num-seqs=64],{roles}=8@a100-80gb'",  # its own engine cap
])
LENGTHS = st.sampled_from(["", "--length-dist lognormal:300,0.5,1024",
                           "--length-dist lognormal:300,1.0,1024", "--length-dist reasoning"])


def _evaluate(*parts: str):  # noqa: ANN202
    """The evaluation of `rlmcost grpo` with these flags (every drawn combination is valid:
    a SpecError fails the test, so no feature silently drops out of the draw)."""
    return evaluate(run_from_argv("grpo", shlex.split(" ".join(parts))))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(feature=st.one_of(MOE, VIRTUAL, WINDOW), framework=st.sampled_from(list(FRAMEWORKS)),
       groups=GROUPS, lengths=LENGTHS)
def test_prediction_holds_the_bound_and_the_interval_holds_it(
    feature: str, framework: str, groups: str, lengths: str
) -> None:
    e = _evaluate(feature, BASE, "-T 1024", FRAMEWORKS[framework],
                  groups.format(roles=ROLES[framework]), lengths)  # fmt: skip
    low, high = e.time_interval_s
    assert e.time_lower_bound_s <= low * (1 + 1e-9)
    assert low <= e.time_s <= high
    assert e.time_s >= e.time_lower_bound_s * (1 - 1e-12)
    out = e.to_json()  # each stage's and phase's prediction beside its bound, as printed
    for name, stage in out["stages"].items():
        assert stage["time_s"] >= stage["time_lower_bound_s"] * (1 - 1e-12), name
    for phase in out["phases"]:
        assert phase["time_s"] >= phase["time_lower_bound_s"] * (1 - 1e-12), phase["name"]


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(feature=st.one_of(MOE, VIRTUAL, WINDOW), framework=st.sampled_from(list(FRAMEWORKS)),
       groups=GROUPS, lo=st.integers(16, 256), hi=st.integers(300, 900),
       more=st.integers(1, 600))
def test_a_longer_length_tail_never_shortens_generation(feature: str, framework: str,
                                                        groups: str, lo: int, hi: int,
                                                        more: int) -> None:  # fmt: skip
    def gen(dist: str) -> float:
        e = _evaluate(feature, BASE, f"-T {hi + more}", FRAMEWORKS[framework],
                      groups.format(roles=ROLES[framework]), f"--length-dist {dist}")  # fmt: skip
        return next(p.time_s for p in e.evaluation.phases if p.name == "generation")

    assert gen(f"uniform:{lo},{hi + more}") >= gen(f"uniform:{lo},{hi}") * (1 - 1e-12)
