"""The numeric twin of an invocation's cost (rlmcost.compiled.invocation, rlmcost.algorithms.counts)
equals the symbolic invocation cost (rlmcost.algorithms.cost, sympy) for every invocation of the
catalog; numeric RL queries load no sympy."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from compiled_strategies import SYNTHETIC, spec
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost.algorithms import cost as symbolic
from rlmcost.algorithms.catalog import algorithms
from rlmcost.algorithms.counts import count
from rlmcost.algorithms.kinds import Kind
from rlmcost.choices import AttnCounting, Head
from rlmcost.compiled import invocation as twin
from rlmcost.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v2-lite", "gpt-2", *SYNTHETIC]
INVOCATIONS = sorted(
    {i for a in algorithms().values() for i in a.invocations if i.kind is not Kind.VERIFY},
    key=lambda i: i.describe() + str(i.stage) + str(i.head),
)
FIELDS = ("sequences", "prompt", "response", "passes", "steps", "prefixes")
FORMULAS = sorted({getattr(i, f) for i in INVOCATIONS for f in FIELDS})

values_st = st.fixed_dictionaries({
    "B": st.integers(1, 64), "K": st.integers(1, 16), "S": st.integers(1, 4096),
    "T": st.integers(1, 4096), "E_ppo": st.integers(1, 4), "N_mini": st.integers(1, 8),
    "rho": st.fractions(1, 4, max_denominator=4), "N_step": st.integers(1, 9),
    "T_j": st.integers(1, 512),
})  # fmt: skip


def _exact(x: int | Fraction) -> sp.Expr:
    return sp.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else sp.Integer(x)


@settings(max_examples=40, deadline=None)
@given(values=values_st)
def test_counts_equal_the_sympy_counts(values):
    for text in FORMULAS:
        # Independent: algorithms.cost.count parses the formula with sympy.
        assert _exact(count(text, values)) == symbolic.count(text, values), text


@pytest.mark.parametrize("model", MODELS, ids=lambda m: getattr(m, "name", m))
@pytest.mark.parametrize("counting", list(AttnCounting))
def test_work_and_depth_equal_the_symbolic_invocation_cost(model, counting):
    arch = spec(model).arch()
    values = {"B": 3, "K": 5, "S": 37, "T": 101, "E_ppo": 2, "N_mini": 4, "rho": Fraction(3, 2),
              "N_step": 3, "T_j": 13}  # fmt: skip
    for inv in INVOCATIONS:
        want = symbolic.invocation_cost(inv, arch, values, counting)
        # Independent: the sympy blocks composed by algorithms.cost.invocation_cost.
        assert _exact(twin.invocation_work(inv, arch, values, counting)) == want.work, inv
        assert _exact(twin.invocation_depth(inv, arch, values)) == want.depth, inv


@pytest.mark.parametrize("model", ["llama-3.1-8b", "deepseek-v2-lite", SYNTHETIC[0]],
                         ids=lambda m: getattr(m, "name", m))  # fmt: skip
def test_work_polynomial_in_t_is_the_sympy_polynomial(model):
    arch = spec(model).arch()
    values = {"B": 2, "K": 3, "S": 50, "E_ppo": 2, "N_mini": 2, "rho": Fraction(5, 4),
              "N_step": 4, "T_j": 7}  # fmt: skip
    knobs = tuple(sorted(values.items()))
    for inv in INVOCATIONS:
        for counting in AttnCounting:
            got = twin.work_poly_in_t(inv, arch, knobs, counting)
            per_seq = symbolic.invocation_cost(inv, arch, values, counting).work / symbolic.count(
                inv.sequences, values
            )
            # Independent: sympy's Poly of the symbolic work per sequence in T.
            want = sp.Poly(sp.expand(per_seq), sp.Symbol("T", positive=True, integer=True))
            coeffs = [Fraction(int(c.p), int(c.q)) for c in want.all_coeffs()[::-1]]
            assert list(got) == coeffs + [Fraction(0)] * (len(got) - len(coeffs)), inv


def test_single_blocks_equal_the_symbolic_blocks():
    from rlmcost import blocks as bl
    from rlmcost.compiled import blocks as numeric

    for model in MODELS:
        arch = spec(model).arch()
        for head in Head:
            # Independent: the sympy blocks themselves.
            assert numeric.params(arch, head) == bl.params(arch, head)
            assert numeric.work_head_per_token(arch, head) == bl.work_head_per_token(arch, head)
        for counting in AttnCounting:
            assert numeric.work_prefill(arch, 300, 2, counting) == bl.work_prefill(
                arch, 300, 2, counting
            )


def test_interpolation_recovers_a_known_polynomial():
    # Hand check: 3 - 2 T + T^2 / 2 through four points, plus a zero cubic coefficient.
    xs = [1, 2, 3, 4]
    ys = [Fraction(3) - 2 * x + Fraction(x * x, 2) for x in xs]
    assert twin._interpolate(xs, ys) == [3, -2, Fraction(1, 2), 0]


@pytest.mark.parametrize(
    ("text", "values", "message"),
    [("B*K", {"B": 2}, "needs a value for K"), ("B*K", {"B": 2, "K": 1.5}, "integer or a fraction"),
     ("B**2", {"B": 2}, "may use only"), ("B*(K", {"B": 2, "K": 2}, "is not a formula")],
)  # fmt: skip
def test_bad_counts_are_one_line_spec_errors(text, values, message):
    with pytest.raises(SpecError, match=message):
        count(text, values)


@pytest.mark.parametrize(
    "args",
    [["ppo", "--model", "70b", "--tp", "8", "--json"],
     ["grpo", "--model", "8b", "--gpus", "16", "--placement", "disaggregated", "--json"],
     ["dpo", "--model", "qwen3-30b-a3b", "--gpus", "8", "--zero", "3", "--json"],
     ["train", "--model", "405b", "--gpus", "1024", "--tp", "8", "--pp", "16", "--json"],
     ["compare", "ppo", "grpo", "--model", "8b", "--json"],
     ["placements", "--model", "8b", "--gpus", "16", "--json"],
     ["placements", "--model", "8b", "--gpus", "16", "--placement", "hybrid", "--json"],
     ["blocks", "--model", "deepseek-v3", "--json"],
     ["grpo", "--model", "8b", "--length-dist", "lognormal:1024,0.5", "--placement", "fusion",
      "--json"]],
)  # fmt: skip
def test_numeric_queries_load_no_sympy_or_numpy(args):
    # The compiled twins replace the symbolic core on these paths (tests above: equal), and
    # the decode timeline is plain Python (tests/test_rollout_runs.py).
    code = (
        "import sys\n"
        "from rlmcost.cli import app\n"
        "try:\n"
        f"    app({args!r})\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(sorted(m for m in ('sympy', 'numpy', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    # `placements` without --placement sizes every configuration's groups by the planner's
    # search, whose screen is vectorized (numpy); sympy stays out there too
    allowed = ["numpy"] if args[0] == "placements" and "--placement" not in args else []
    assert out.stdout.strip().splitlines()[-1] in ("[]", repr(allowed))


@pytest.mark.parametrize("model", ["llama-3.1-70b", "deepseek-v3", "mixtral-8x7b", "gpt-2",
                                   SYNTHETIC[1]], ids=lambda m: getattr(m, "name", m))  # fmt: skip
@pytest.mark.parametrize("counting", list(AttnCounting))
def test_the_numeric_blocks_module_equals_rlmcost_blocks_on_every_report_quantity(model, counting):
    from rlmcost import blocks as bl
    from rlmcost.choices import Dtype, MlaDecode
    from rlmcost.compiled import blocks as numeric
    from rlmcost.reports.blocks import QUANTITIES, BlockInputs

    arch = spec(model).arch()
    for dtype in (Dtype.BF16, Dtype.FP32):
        w = BlockInputs(3, 1000, 777, 300, 500, dtype, counting)
        for q in QUANTITIES:
            # Independent: the same definition evaluated on the sympy blocks.
            assert q.build(numeric, arch, w) == q.build(bl, arch, w), q.key
    for mla in MlaDecode:
        assert numeric.work_decode_step(arch, 4097, 2, mla) == bl.work_decode_step(
            arch, 4097, 2, mla
        )
