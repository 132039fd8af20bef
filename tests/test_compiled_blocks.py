"""The generated blocks (rlmcost/compiled/blocks_gen/) are the symbolic core's, exactly."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sp
from compiled_strategies import models
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmcost import blocks as bl
from rlmcost.compiled import arch_numbers, generate
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.runtime import clog2, div
from rlmcost.logs import clog2 as clog2_symbolic
from rlmcost.specs import get_model


def test_the_committed_package_is_what_the_generator_writes(tmp_path):
    out = tmp_path / "blocks_gen"
    assert generate.main(["--output", str(out)]) == 0
    # Independent: the committed files; regenerate after changing blocks/arch/activations.
    assert generate.read(out) == generate.read(generate.OUTPUT), (
        f"{generate.OUTPUT} is stale; run `{generate.COMMAND}`"
    )


def test_check_mode_reports_a_stale_package(tmp_path, monkeypatch, capsys):
    files = {"__init__.py": "current\n", "_f.py": "def f(): ...\n"}
    monkeypatch.setattr(generate, "render", lambda: files)
    out = tmp_path / "blocks_gen"
    out.mkdir()
    (out / "__init__.py").write_text("old\n")
    assert generate.main(["--check", "--output", str(out)]) == 1
    assert generate.COMMAND in capsys.readouterr().err
    (out / "_gone.py").write_text("def gone(): ...\n")  # a function no longer generated
    assert generate.main(["--output", str(out)]) == 0
    assert generate.read(out) == files
    assert generate.main(["--check", "--output", str(out)]) == 0


def test_functions_load_on_first_use():
    """Each generated function is the one of its module, imported on first use: FUNCTIONS
    and the package's names give the same functions, in the generator's order."""
    assert list(g.FUNCTIONS) == list(g.NAMES) == [b.name for b in generate.blocks()]
    assert len(g.FUNCTIONS) == len(set(g.NAMES))
    for name in g.NAMES:
        f = g.FUNCTIONS[name]
        assert f is getattr(g, name) and f.__name__ == name
        assert f.__module__ == f"rlmcost.compiled.blocks_gen._{name}"
    with pytest.raises(KeyError):
        g.FUNCTIONS["no_such_block"]
    with pytest.raises(AttributeError):
        g.no_such_block  # noqa: B018


def _tp_options(spec) -> list[int]:
    widths = [spec.n_heads, spec.n_kv_heads, spec.d_ff]
    if spec.is_moe:
        widths += [spec.d_expert] + ([spec.d_shared_expert] if spec.n_shared_experts else [])
    return [t for t in (1, 2, 3, 4, 8) if all(w % t == 0 for w in widths)]


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    model=models,
    sizes=st.fixed_dictionaries(
        {n: st.integers(1, 5000) for n in ("context", "seqs", "seq", "prompt", "response",
                                             "tokens")} | {"act_bytes": st.sampled_from([1, 2, 4]),
                                                           "fused_glu": st.sampled_from([0, 1])}
    ),
)  # fmt: skip
def test_every_generated_function_equals_its_symbolic_block(data, model, sizes):
    arch = model.arch()
    tp = data.draw(st.sampled_from(_tp_options(model)))
    a = arch_numbers(arch)
    symbolic_sizes = SimpleNamespace(
        tp=tp, vocab_tp=-(-arch.vocab // tp), ple_vocab_tp=-(-arch.ple_vocab // tp),
        **{k: sp.Integer(v) for k, v in sizes.items()},
    )
    for block in generate.blocks():
        want = block.build(arch, symbolic_sizes)
        args = [tp if s == "tp" else sizes[s] for s in block.sizes]
        got = g.FUNCTIONS[block.name](a, *args)
        # Independent: the symbolic core (rlmcost.blocks / parallel.activations) on this arch.
        assert sp.Rational(got.numerator, got.denominator) == want if isinstance(
            got, Fraction) else (got == want and type(got) is int), block.name  # fmt: skip


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("llama-3.1-70b", 70_553_706_496),  # = sum(p.numel()) of transformers' LlamaForCausalLM
        ("llama-3.1-8b", 8_030_261_248),  # README / test_torch_exact
    ],
)
def test_parameter_counts_match_the_published_models(name, params):
    a = arch_numbers(get_model(name))
    # Independent: parameter counts of the transformers models built from their configs.
    assert g.params_lm(a) == params
    assert g.params_lm(a) == int(bl.params(get_model(name).arch()))


def test_numpy_arrays_evaluate_elementwise():
    a = arch_numbers(get_model("mixtral-8x7b"))
    tp = np.array([1.0, 2.0, 4.0, 8.0])
    seqs, seq = np.array([1.0, 7.0, 64.0, 512.0]), np.array([128.0, 1000.0, 4096.0, 32768.0])
    for i in range(4):
        t, n, m = int(tp[i]), int(seqs[i]), int(seq[i])
        # Independent: the exact scalar evaluation (ints) of the same function.
        assert g.params_layer_moe(a, tp)[i] == g.params_layer_moe(a, t)
        assert g.saved_bytes_per_token_layer_selective_sp_moe(a, tp, 2)[i] == pytest.approx(
            float(g.saved_bytes_per_token_layer_selective_sp_moe(a, t, 2)), rel=1e-15
        )
        assert g.work_train_full_lm(a, seqs, seq)[i] == pytest.approx(
            g.work_train_full_lm(a, n, m), rel=1e-15
        )
        assert g.depth_generation(a, seq, seq)[i] == g.depth_generation(a, m, m)


@pytest.mark.parametrize("x", [1, 2, 3, 4, 5, 1000, 1024, 1025, 2**40, 2**40 + 1])
def test_clog2_matches_the_symbolic_ceiling_log(x):
    # Independent: rlmcost.logs.clog2 (sympy), exact integer bit lengths.
    assert clog2(x) == int(clog2_symbolic(sp.Integer(x)))
    assert clog2(np.array([float(x)]))[0] == int(clog2_symbolic(sp.Integer(x)))
    if x < 2**20:  # logs.clog2 takes ceiling(log(x, 2)) of a non-integer numerically
        assert clog2(Fraction(2 * x - 1, 2)) == int(clog2_symbolic(sp.Rational(2 * x - 1, 2)))


def test_div_is_exact_for_ints_and_true_division_for_arrays():
    assert div(12, 4) == 3 and type(div(12, 4)) is int
    assert div(10, 4) == Fraction(5, 2)
    assert div(np.array([10.0]), 4)[0] == 2.5


def _submasks(m: int) -> list[int]:
    return [t for t in range(m + 1) if t & m == t]


def test_moebius_support_is_the_nonzero_coefficients_of_a_multilinear_function():
    """``paths.moebius_support`` (the subset transform) finds the S with a_S != 0 of a random
    multilinear function given by its values at the corners, f(T) = sum over S in T of a_S;
    independent: the coefficients the function was built from, and the definition
    a_S = sum over T in S of (-1)^{|S|-|T|} f(T) (``compiler._moebius``) one corner at a time."""
    from rlmcost.compiled.generate import paths
    from rlmcost.compiled.generate.compiler import _moebius

    rng = np.random.default_rng(7)
    n = 6
    coeffs = {m: int(rng.integers(-3, 4)) * int(rng.integers(0, 2)) for m in range(1 << n)}
    coeffs[0b101101] = Fraction(1, 3)  # an exact fraction, as a block may hold
    values = {m: sp.Rational(sum(coeffs[s] for s in _submasks(m))) for m in range(1 << n)}
    nonzero = {m for m, c in coeffs.items() if c != 0}
    assert paths.moebius_support(values, n) == nonzero
    names = tuple("abcdef")

    def corner(m):
        return frozenset(x for i, x in enumerate(names) if m >> i & 1)

    as_sets = {corner(m): v for m, v in values.items()}
    for m in range(1 << n):
        assert _moebius(corner(m), as_sets) == coeffs[m]
    # corners closed under subsets (an enum's members exclusive: bits 0 and 1 never both set)
    valid = {m: v for m, v in values.items() if m & 0b11 != 0b11}
    assert paths.moebius_support(valid, n) == {m for m in nonzero if m & 0b11 != 0b11}


def test_paths_give_every_corner_its_value_from_one_evaluation_per_path():
    """``paths.explore`` and ``paths.cube`` of a program that branches on switches in Python
    equal the program run at every corner (the brute force), with one run per path."""
    from rlmcost.compiled.generate import paths

    options = {"a": (frozenset(), frozenset({"a"})), "b": (frozenset(), frozenset({"b"})),
               "c": (frozenset(), frozenset({"c"})),
               "e": (frozenset(), frozenset({"e1"}), frozenset({"e2"}))}  # fmt: skip
    runs = []

    def run(on):  # reads b only when a is set; e only when s (structural) is; c never
        runs.append(on)
        read = {"a"}
        value = 5 if "a" in on else 2
        if "a" in on:
            read.add("b")
            value *= 3 if "b" in on else 1
        if "s" in on:
            read.add("e")
            value += 7 if "e1" in on else 11 if "e2" in on else 0
        return value, read

    bases = [frozenset(), frozenset({"s"})]
    leaves = paths.explore(run, bases, options)
    assert len(runs) == len(leaves) == 3 + 3 * 3  # a=0; a=1,b; times e where s is set
    assert paths.read_groups(leaves) == {"a", "b", "e"}
    flags = ("s", "a", "b", "e1", "e2")
    kept = {g: o for g, o in options.items() if g != "c"}
    values = paths.cube(leaves, flags, kept, lambda on: on, bases)
    corners = [m for m in range(1 << len(flags)) if m & 0b11000 != 0b11000]
    assert set(values) == set(corners)
    for m in corners:
        on = frozenset(f for i, f in enumerate(flags) if m >> i & 1)
        assert values[m] == run(on)[0]


def test_numeric_min_max_is_sympys_for_numbers_and_sympy_otherwise():
    from rlmcost.compiled.generate import paths

    x = sp.Symbol("x", positive=True)
    originals = sp.Min, sp.Max
    cases = [(3, sp.Integer(5)), (sp.Rational(7, 2), 3), (sp.Integer(4), 4), (x, 2), (x + 1, x)]
    expected = [(originals[0](*c), originals[1](*c)) for c in cases]
    with paths.numeric_min_max():
        got = [(sp.Min(*c), sp.Max(*c)) for c in cases]
    assert (sp.Min, sp.Max) == originals
    for (lo, hi), (elo, ehi) in zip(got, expected, strict=True):
        assert lo == elo and hi == ehi and type(lo) is type(elo) and type(hi) is type(ehi)


def test_a_switch_read_past_the_trace_stops_the_generator():
    """A block that reads a switch through ``vars`` on some paths (the trace sees only attribute
    reads) gives corners whose path value is wrong; the spot check finds one."""
    from rlmcost.arch import is_zero
    from rlmcost.compiled.generate.catalog import Block
    from rlmcost.compiled.generate.compiler import Compiler

    def build(a, s):
        if is_zero(a.n_experts):
            return sp.Integer(2 if a.mlp_bias else 1)  # traced: mlp_bias is a flag
        return sp.Integer(3 + vars(a)["mlp_bias"])  # untraced read on the MoE paths

    comp = Compiler()
    comp.CHECKS = 64
    with pytest.raises(RuntimeError, match="does not trace"):
        comp.screen(Block("hidden_read", (), build, "a block reading past the trace"))
    honest = Block("honest", (), lambda a, s: sp.Integer(2 if a.mlp_bias else 1), "traced")
    flags, support = comp.screen(honest)
    assert "mlp_bias" in flags and support == {frozenset(), frozenset({"mlp_bias"})}
