"""Evaluation: compiled sweeps agree exactly with sympy; formatting has units."""

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost import blocks as bl
from rlmcost.arch import CANONICAL
from rlmcost.logs import clog2, numpy_clog2
from rlmcost.specs import get_model
from rlmcost.substitute import arch_substitutions, exact, grid_product, sweep, to_int
from rlmcost.symbols import B, S, T, m
from rlmcost.units import format_bytes, format_flops, format_seconds

ARCH_70B = get_model("llama-3.1-70b").arch()


def test_substituting_the_canonical_form_equals_building_on_numbers():
    # GPT-2 has the canonical shape (MHA, 2-projection FFN): substituting its numbers into the
    # symbolic KV cache gives 2 (K, V) x 12 layers x 768 x 300 tokens
    gpt2 = get_model("gpt-2").arch()
    subs = arch_substitutions(CANONICAL, gpt2)
    assert all(isinstance(v, int) for v in subs.values())
    expr = bl.memory_kv_cache(CANONICAL, B * m)
    assert to_int(exact(expr, {**subs, B: 3, m: 100})) == 2 * 12 * 768 * 300
    assert to_int(exact(expr, {**subs, B: 3, m: 100})) == int(bl.memory_kv_cache(gpt2, 300))


def test_sweep_is_exact_int64_and_matches_sympy():
    expr = bl.work_train(ARCH_70B, B, m)
    grid = grid_product({B: [1, 7, 64], m: [1, 1000, 32768]})
    frame = sweep({"train": expr}, grid)
    assert frame["train"].dtype == np.int64
    for b, mm, v in zip(frame["B"], frame["m"], frame["train"], strict=True):
        assert int(v) == int(expr.xreplace({B: int(b), m: int(mm)}))


def test_sweep_of_depth_with_clog2_is_exact():
    expr = bl.depth_generation(ARCH_70B, S, T)
    grid = grid_product({S: [1, 100, 1024], T: [1, 999, 32768]})
    frame = sweep({"depth": expr}, grid)
    for s, t, v in zip(frame["S"], frame["T"], frame["depth"], strict=True):
        assert int(v) == int(expr.xreplace({S: int(s), T: int(t)}))


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=2**62))
def test_numpy_clog2_matches_exact(x):
    assert int(numpy_clog2(np.array([x]))[0]) == int(clog2(sp.Integer(x)))


def test_formatting_units_and_bases():
    assert format_flops(2.5e15) == "2.50 PFLOP"  # base 1000
    assert format_bytes(3 * 2**30) == "3.00 GiB"  # base 1024
    assert format_bytes(80 * 10**9) == "74.5 GiB"
    assert format_seconds(0.5) == "500.00 ms"
    assert format_seconds(90) == "1.50 min"


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 64), st.integers(1, 8192))
def test_doubling_the_batch_doubles_work_and_memory(b, seq):
    assert bl.work_train(ARCH_70B, 2 * b, seq) == 2 * bl.work_train(ARCH_70B, b, seq)
    tokens_2 = bl.memory_activations_bytes(ARCH_70B, 2 * b * seq)
    assert tokens_2 == 2 * bl.memory_activations_bytes(ARCH_70B, b * seq)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 4096), st.integers(1, 4096))
def test_causal_never_exceeds_full(s, b):
    from rlmcost.choices import AttnCounting

    full = bl.work_forward(ARCH_70B, b, s)
    causal = bl.work_forward(ARCH_70B, b, s, AttnCounting.CAUSAL)
    assert causal <= full
