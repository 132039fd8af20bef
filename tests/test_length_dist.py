"""``--length-dist lognormal:MEAN,SIGMA,MAX``: MEAN is the mean after the cap.

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
