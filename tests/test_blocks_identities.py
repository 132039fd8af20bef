"""Exact sympy identities of the Table III building blocks (seed paper §II-E)."""

import dataclasses

import pytest
import sympy as sp

from rlmcost import blocks as bl
from rlmcost.arch import CANONICAL, CANONICAL_GQA, CANONICAL_MOE
from rlmcost.choices import AttnCounting, Head
from rlmcost.symbols import B, L, S, T, V, c, d, d_ff, h, m

ARCHS = [CANONICAL, CANONICAL_GQA, CANONICAL_MOE]


def zero(expr: sp.Expr) -> bool:
    return sp.simplify(expr) == 0


def test_canonical_has_no_numbers():
    for f in dataclasses.fields(CANONICAL):
        value = getattr(CANONICAL, f.name)
        if isinstance(value, sp.Expr) and f.name not in ("n_positions",):
            assert value.free_symbols, f.name
    sizes = ("n_layers", "d_model", "d_ff", "n_heads", "n_kv_heads", "head_dim", "vocab")
    assert all(getattr(CANONICAL, s).free_symbols for s in sizes)


def test_forward_per_token_closed_form():
    # Table III, MHA + 2-projection FFN: QKV 6d^2, O 2d^2, FFN 4 d d_ff, attention 4 m d per
    # layer, LM head 2 d V.
    expected = 2 * L * (4 * d**2 + 2 * d * d_ff + 2 * m * d) + 2 * d * V
    assert zero(bl.work_forward_per_token(CANONICAL, m) - expected)


def test_params_closed_form():
    # 4 d^2 attention + 2 d d_ff FFN + two LayerNorms (2d each) per layer; V d embedding and
    # untied head; final LayerNorm 2d.
    expected = L * (4 * d**2 + 2 * d * d_ff + 4 * d) + 2 * V * d + 2 * d
    assert zero(bl.params(CANONICAL) - expected)


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.name)
def test_gemm_backward_is_twice_forward(arch):
    assert zero(bl.work_backward_per_token(arch, m) - 2 * bl.work_forward_per_token(arch, m))
    assert zero(bl.work_backward(arch, B, m) - 2 * bl.work_forward(arch, B, m))
    assert zero(bl.work_train(arch, B, m) - 3 * bl.work_forward(arch, B, m))


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.name)
def test_decode_steps_sum_to_rollout_minus_prefill(arch):
    t = sp.Symbol("t", integer=True, positive=True)
    steps = sp.summation(bl.work_decode_step(arch, S + t), (t, 1, T))
    assert zero(bl.work_rollout(arch, S, T) - bl.work_prefill(arch, S) - steps)


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.name)
def test_full_forward_is_tokens_times_per_token(arch):
    assert zero(bl.work_forward(arch, B, m) - B * m * bl.work_forward_per_token(arch, m))


def test_causal_counting_is_the_unmasked_triangle():
    # full counts m^2 query-key pairs per sequence, causal m(m+1)/2
    diff = bl.work_forward(CANONICAL, B, m) - bl.work_forward(CANONICAL, B, m, AttnCounting.CAUSAL)
    assert zero(diff - 4 * L * d * B * (m**2 - m * (m + 1) / 2))


def test_decode_step_is_forward_per_token():
    assert zero(bl.work_decode_step(CANONICAL, c, B) - B * bl.work_forward_per_token(CANONICAL, c))


def test_value_head_replaces_vocab():
    diff = bl.work_forward_per_token(CANONICAL, m) - bl.work_forward_per_token(
        CANONICAL, m, Head.VALUE
    )
    assert zero(diff - 2 * d * (V - 1))
    assert zero(bl.params(CANONICAL) - bl.params(CANONICAL, Head.VALUE) - d * (V - 1))


def test_generation_depth_closed_form_equals_sum():
    # the closed form of sum_t ceil(log2(S+t)) against a direct sum, on numbers
    for s_val, t_val in [(1, 1), (7, 9), (100, 300), (1024, 1024), (1000, 4097)]:
        closed = bl.depth_generation(CANONICAL, S, T).xreplace(
            {S: s_val, T: t_val, L: 4, d: 512, d_ff: 2048, h: 8}
        )
        direct = bl.depth_prefill(CANONICAL, s_val) + sum(
            bl.depth_decode_step(CANONICAL, s_val + t) for t in range(1, t_val + 1)
        )
        direct = direct.xreplace({L: 4, d: 512, d_ff: 2048, h: 8})
        assert closed == direct
        assert closed.is_Integer


def test_generation_depth_bound_dominates_exact():
    subs = {S: 100, T: 1000, L: 4, d: 512, d_ff: 2048, h: 8}
    exact = bl.depth_generation(CANONICAL, S, T).xreplace(subs)
    bound = bl.depth_generation(CANONICAL, S, T, closed_form=False).xreplace(subs)
    assert exact <= bound


def test_big_o_over_explicit_tends_to_a_constant():
    # scale every symbol by x -> infinity along d_ff = 4d: the ratio has a finite, non-zero limit
    x = sp.Symbol("x", positive=True)
    expr = bl.work_forward_per_token(CANONICAL, m)
    big = bl.big_o(expr, {d_ff: d})
    scale = {L: x, d: x, d_ff: 4 * x, m: x, V: x, h: 1}
    ratio = sp.limit(big.xreplace(scale) / expr.xreplace(scale), x, sp.oo)
    assert ratio.is_positive and ratio.is_finite


def test_big_o_drops_lower_order_terms():
    assert bl.big_o(3 * L * d**2 + 5 * L * d + 7) == L * d**2
    assert bl.big_o(L * d**2 + V * d) == L * d**2 + V * d


def test_kv_cache_is_two_l_hkv_dh_per_token():
    from rlmcost.symbols import d_h, h_kv

    assert zero(bl.memory_kv_cache(CANONICAL_GQA, c) - 2 * L * h_kv * d_h * c)


def test_adam_states():
    P = sp.Symbol("P", positive=True)
    assert bl.memory_adam_states(P) == 4 * P
    # Rajbhandari et al. 2020 §3.1: 2 + 2 + 12 bytes per parameter (K = 12)
    assert bl.memory_adam_states_bytes_rajbhandari2020(P) == 16 * P


def test_integer_workloads_give_exact_integers_not_floats():
    # T (T + 1) / 2 and S (S + 1) / 2 with Python ints once made sympy Floats (15 digits);
    # past 2^53 FLOPs a float loses the last units. By hand for T = 2^40 + 1: T (T + 1) / 2 is
    # odd x (2^39 + 1), an integer that a double cannot hold.
    from rlmcost.specs import get_model

    arch = get_model("llama-3.1-8b").arch()
    t = 2**40 + 1
    for value in (bl.work_rollout(arch, 1024, t), bl.work_forward(arch, 1, t, AttnCounting.CAUSAL),
                  bl.work_rollout(get_model("deepseek-v3").arch(), 7, t)):  # fmt: skip
        assert isinstance(value, sp.Integer), type(value)
    pairs = 1024 * t + t * (t + 1) // 2
    per_token = int(bl.work_linear_per_token(arch) + bl.work_head_per_token(arch))
    decode = t * per_token + 4 * arch.n_layers * arch.q_width * pairs
    assert bl.work_rollout(arch, 1024, t) == int(bl.work_prefill(arch, 1024)) + decode
