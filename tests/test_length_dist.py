"""``--length-dist lognormal:MEAN,SIGMA,MAX[,CLIP]``: MEAN is the mean after the cap, CLIP
the share of responses truncated at it.

Frameworks log the mean response length over the responses as generated, truncated ones at the
cap (e.g. NeMo RL's 'G-Average Seq len'); the distribution must realise that mean, not the mean
of the uncapped lognormal. Independent check: a Monte Carlo draw with numpy's generator.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost.errors import SpecError
from rlmcost.placement.lengths import (
    LengthDist,
    capped_lognormal_mean,
    lognormal_mu,
    max_clip,
    parse_length_dist,
)


@pytest.mark.parametrize(
    ("mean", "sigma", "cap"),
    # NeMo RL performance summary v0.5 rows (G-Average Seq len under the 4,096 - prompt cap),
    # and a short-response GSM8K-like case
    [(3251, 0.67, 3988), (1066, 0.67, 3966), (5719, 0.67, 8192), (300, 1.0, 2048)],
)
def test_partial_expectation_matches_monte_carlo(mean: int, sigma: float, cap: int) -> None:
    mu = lognormal_mu(mean, sigma, cap)
    draws = np.random.default_rng(0).lognormal(mu, sigma, 2_000_000)
    assert np.minimum(draws, cap).mean() == pytest.approx(mean, rel=3e-3)


def test_realised_mean_is_the_published_mean() -> None:
    # NeMo RL v0.5, Qwen3-32B GRPO on 32 H100: mean 3,251 tokens, cap 3,988 (4,096 - 108 prompt)
    lengths = LengthDist("lognormal", (3251, 0.67, 3988)).lengths(2048, 0)
    assert sum(lengths) / len(lengths) == pytest.approx(3251, abs=1)
    # the uncapped formula mu = ln(MEAN) - SIGMA^2 / 2 would have realised about 2,628 tokens
    old_mu = math.log(3251) - 0.67**2 / 2
    assert capped_lognormal_mean(old_mu, 0.67, 3988) == pytest.approx(2628, abs=5)


def test_no_cap_keeps_the_lognormal_mean() -> None:
    assert lognormal_mu(1000, 0.5, None) == pytest.approx(math.log(1000) - 0.125)


def test_mean_at_or_above_the_cap_is_an_error() -> None:
    with pytest.raises(SpecError, match="fixed"):
        parse_length_dist("lognormal:4096,0.5,4096")


@settings(max_examples=60, deadline=None)
@given(
    frac=st.floats(0.05, 0.95),
    sigma=st.floats(0.05, 1.5),
    cap=st.integers(64, 65_536),
)
def test_capped_mean_solved_for_any_input(frac: float, sigma: float, cap: int) -> None:
    mean = max(1.0, frac * cap)
    mu = lognormal_mu(mean, sigma, cap)
    assert capped_lognormal_mean(mu, sigma, cap) == pytest.approx(mean, rel=1e-9)
    assert mu >= math.log(mean) - sigma * sigma / 2 - 1e-12  # a cap only lowers the mean


# --- lognormal:MEAN,SIGMA,MAX,CLIP: a share CLIP of the responses truncated at MAX -------------


@pytest.mark.parametrize(
    ("n", "clip", "at_cap"),
    # k = floor(n x CLIP + 1/2), n x CLIP rounded half up (lengths.py docstring): 8,192 responses
    # (512 x 16, verl's and AReaL's batches in rl_runs.json) at 2.5% -> 204.8 -> 205; exact
    # halves round up (16 x 0.03125 = 0.5 -> 1); below a half none (16 x 0.03 = 0.48 -> 0)
    [(8192, 0.025, 205), (8192, 0.001, 8), (8192, 0.05, 410), (16, 0.03125, 1), (16, 0.03, 0),
     (1000, 0.02, 20), (3, 0.5, 2)],
)
def test_top_clip_share_of_quantiles_sits_at_the_cap(n: int, clip: float, at_cap: int) -> None:
    # the others' mean 1,000 under 28,672 at sigma 0.67: the lognormal's own tail never reaches
    # the cap (P(X >= 28,672) < 1e-6), so every response at the cap is one of the CLIP share
    mean = clip * 28672 + (1 - clip) * 1000
    lengths = LengthDist("lognormal", (mean, 0.67, 28672, clip)).lengths(n, 0)
    assert lengths.count(28672) == at_cap
    assert lengths[n - at_cap :] == (28672,) * at_cap
    assert list(lengths) == sorted(lengths) and min(lengths) >= 1


def test_clipped_mean_is_the_published_mean() -> None:
    # verl Qwen2.5-Math-7B DAPO (rl_runs.json): mean 1,000 under 28,672, 2.5% at the cap
    mean, sigma, cap, clip = 1000, 0.67, 28672, 0.025
    lengths = LengthDist("lognormal", (mean, sigma, cap, clip)).lengths(8192, 0)
    assert sum(lengths) / len(lengths) == pytest.approx(mean, rel=1e-3)
    # independent check: Monte Carlo of the mixture "MAX with probability CLIP, else min(X, MAX)"
    mu = lognormal_mu(mean, sigma, cap, clip)
    rng = np.random.default_rng(1)
    draws = np.minimum(rng.lognormal(mu, sigma, 2_000_000), cap)
    draws[rng.random(draws.size) < clip] = cap
    assert draws.mean() == pytest.approx(mean, rel=3e-3)
    # the others' mean: (1,000 - 0.025 x 28,672) / 0.975 = 283.2 / 0.975 = 290.46 tokens
    assert capped_lognormal_mean(mu, sigma, cap) == pytest.approx(290.46, abs=0.01)


def test_zero_clip_is_the_three_value_spelling() -> None:
    three = LengthDist("lognormal", (3251, 0.67, 3988)).lengths(2048, 0)
    assert LengthDist("lognormal", (3251, 0.67, 3988, 0.0)).lengths(2048, 0) == three


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("lognormal:1000,0.67,28672,1", "0 <= CLIP < 1"),
        ("lognormal:1000,0.67,28672,-0.01", "0 <= CLIP < 1"),
        # 0.05 x 28,672 = 1,433.6 tokens > the mean of 1,000: (1000 - 1) / 28671 = 0.03484
        ("lognormal:1000,0.67,28672,0.05", "lower CLIP below 0.03484"),
        ("lognormal:1000,0.67,28672,0.02,3", "expected fixed"),
        ("lognormal:28672,0.67,28672,0.02", "below MAX"),
    ],
)
def test_clip_parse_errors_are_one_line(text: str, match: str) -> None:
    with pytest.raises(SpecError, match=match) as err:
        parse_length_dist(text)
    assert "\n" not in str(err.value)


def test_clip_spelling_round_trips() -> None:
    for text in ("lognormal:1000,0.67,28672,0.025", "lognormal:6700,0.67,31744,0.001"):
        dist = parse_length_dist(text)
        assert dist.describe() == text and parse_length_dist(dist.describe()) == dist


@settings(max_examples=60, deadline=None)
@given(
    frac=st.floats(0.02, 0.9),
    sigma=st.floats(0.05, 1.5),
    cap=st.integers(64, 65_536),
    share=st.floats(0.0, 0.95),
    n=st.integers(1, 3000),
)
def test_clipped_mean_solved_for_any_input(
    frac: float, sigma: float, cap: int, share: float, n: int
) -> None:
    mean = max(1.0, frac * cap)
    clip = share * max_clip(mean, cap)  # any share the mean can hold
    mu = lognormal_mu(mean, sigma, cap, clip)
    rest = capped_lognormal_mean(mu, sigma, cap)
    assert clip * cap + (1 - clip) * rest == pytest.approx(mean, rel=1e-9)
    lengths = LengthDist("lognormal", (mean, sigma, cap, clip)).lengths(n, 0)
    k = math.floor(n * clip + 0.5)
    assert len(lengths) == n and lengths[n - k :] == (cap,) * k
    assert all(1 <= t <= cap for t in lengths) and list(lengths) == sorted(lengths)


# --- `reasoning`: the assumed long-tailed lengths under a cap ------------------------------


def test_reasoning_is_the_sourced_rule_under_the_cap() -> None:
    from rlmcost.perf.rl_constants import (
        RESPONSE_CLIP_FRACTION,
        RESPONSE_MEAN_CEILING_TOKENS,
        RESPONSE_MEAN_OVER_MAX_FRACTION,
    )
    from rlmcost.placement.length_defaults import reasoning

    dist = parse_length_dist("reasoning")
    # a short cap: 0.7 x T (NeMo RL's mean/max), no truncated share beyond the lognormal's
    short = dist.lengths(2048, 4096)
    assert short == reasoning(4096).lengths(2048, 4096)
    assert sum(short) / len(short) == pytest.approx(
        RESPONSE_MEAN_OVER_MAX_FRACTION.value * 4096, abs=1)
    # a long cap: the ceiling, and RESPONSE_CLIP_FRACTION of the responses at T
    long = dist.lengths(8192, 28672)
    assert sum(long) / len(long) == pytest.approx(RESPONSE_MEAN_CEILING_TOKENS.value, abs=1)
    # (the lognormal's own tail adds a few more at the cap)
    assert sum(x == 28672 for x in long) >= round(8192 * RESPONSE_CLIP_FRACTION.value)
    assert dist.describe(28672) == f"reasoning ({reasoning(28672).describe()})"


def test_reasoning_round_trips_through_the_command_line() -> None:
    import json
    import shlex

    from typer.testing import CliRunner

    from rlmcost.cli import app
    from rlmcost.run import Run

    runner = CliRunner()
    out = json.loads(runner.invoke(app, ["grpo", "-m", "qwen2.5-0.5b", "-T", "2048",
                                         "--length-dist", "reasoning", "--json"]).stdout)
    assert out["run"]["workload"]["length_dist"] == "reasoning"
    line = Run.from_data(out["run"]).to_command()
    again = json.loads(runner.invoke(app, [*shlex.split(line)[1:], "--json"]).stdout)
    assert again == out
