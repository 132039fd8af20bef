"""Prediction intervals (rlmcost.perf.interval): the interval holds the point prediction and
never dips below the roofline bound, for any deployment (hypothesis over models, GPUs,
placements and length tails). Independent check: the schedule's period is monotone in its
weights, so scaling every unit by its low / high factor brackets the point (exact property)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmcost.perf.interval import SPREADS, Spread
from rlmcost.reports.estimate import estimate


def test_spread_rejects_an_inverted_range() -> None:
    with pytest.raises(ValueError, match="low <= 1 <= high"):
        Spread(1.2, 1.5, "x")
    assert Spread(0.5, 2.0, "x").of(10.0) == (5.0, 20.0)
    assert all(s.source for s in SPREADS.values())


#: Every framework preset (the deployments users get) beside rlmcost's bare layout.
FRAMEWORKS = st.sampled_from(["none", "nemo-rl", "verl", "openrlhf", "trl", "slime"])


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    alg=st.sampled_from(["ppo", "grpo"]),
    gpus=st.sampled_from([8, 16]),
    placement=st.sampled_from(["baseline", "disaggregated", "async", "hybrid"]),
    sigma=st.sampled_from([None, "lognormal:300,0.5,1024", "lognormal:300,1.0,1024",
                           "reasoning"]),
    framework=FRAMEWORKS,
    engine=st.sampled_from([None, {"kv_cache_dtype": "fp8"}, {"weight_format": "nvfp4"},
                            {"weight_format": "int4-g128", "weight_parts": "mlp"}]),
)
def test_interval_holds_the_prediction(alg: str, gpus: int, placement: str,
                                       sigma: str | None, framework: str,
                                       engine: dict | None) -> None:  # fmt: skip
    # also with an engine's FP8 KV cache and 4-bit weights (their bytes in the bound too)
    more = {} if engine is None else {"deployment": {"engine": engine}}
    e = estimate(alg, "qwen2.5-0.5b", gpus=gpus, placement=placement, batch=16,
                 response_len=1024, length_dist=sigma, framework=framework, **more)  # fmt: skip
    low, high = e.time_interval_s
    assert e.time_lower_bound_s <= low + 1e-9
    assert low <= e.time_s <= high
    assert high > low


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lo=st.integers(16, 256), hi=st.integers(300, 900), more=st.integers(1, 600),
       framework=FRAMEWORKS, alg=st.sampled_from(["ppo", "grpo"]),
       placement=st.sampled_from([None, "async", "disaggregated"]))
def test_a_longer_length_tail_never_shortens_generation(lo: int, hi: int, more: int,
                                                        framework: str, alg: str,
                                                        placement: str | None) -> None:  # fmt: skip
    # uniform:LO,HI+more dominates uniform:LO,HI sample by sample (the midpoint quantiles of
    # lengths.py): every response is at least as long, so the rollout cannot end earlier,
    # under every framework's engine settings and with the engines apart or overlapped.
    def gen(dist: str) -> float:
        e = estimate(alg, "qwen2.5-0.5b", gpus=8, batch=16, response_len=hi + more,
                     length_dist=dist, framework=framework, placement=placement)  # fmt: skip
        return next(p.time_s for p in e.evaluation.phases if p.name == "generation")

    assert gen(f"uniform:{lo},{hi + more}") >= gen(f"uniform:{lo},{hi}")
