"""Work and depth of one algorithm invocation on a numeric model, without sympy.

The numeric twin of :func:`rlmcost.algorithms.cost.invocation_cost` (its docstring gives the
rules; the symbolic form stays the source of truth): the same Table III blocks, from
:mod:`rlmcost.compiled.blocks` (``rlmcost.blocks``' names, compiled), composed the same way,
exact on Python ints and Fractions. Tests check work, depth and the work's polynomial in T
against the symbolic invocation cost for every invocation of the catalog.

* :func:`invocation_work` / :func:`invocation_depth`: W and D of one invocation at ``values``
  (B, K, S, T and the knobs), exact.
* :func:`work_poly_in_t`: the coefficients of the work per sequence as a polynomial in the
  response length T, exact, found by interpolation at a few lengths (work is a polynomial of
  degree at most 2 in T: attention pairs grow with the square of the context); the placement
  model sums it over a distribution of response lengths by power sums.
Decode steps of MLA models use the absorbed convention (``MlaDecode.ABSORBED``), the default of
the symbolic blocks and of vLLM/SGLang.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import cache
from typing import Any

from rlmcost.algorithms.counts import Number, count
from rlmcost.algorithms.kinds import Kind
from rlmcost.algorithms.model import Invocation
from rlmcost.choices import AttnCounting
from rlmcost.compiled import blocks as nb
from rlmcost.errors import SpecError

MAX_DEGREE_IN_T = 2
"""Work per sequence is at most quadratic in T (attention over the context); one extra
interpolation point checks it."""


def invocation_work(
    inv: Invocation,
    arch: Any,
    values: Mapping[str, object],
    counting: AttnCounting = AttnCounting.FULL,
) -> Number:
    """W of ``inv`` at ``values`` [FLOP], exact (``algorithms.cost.invocation_cost``'s work)."""
    if inv.kind is Kind.VERIFY:
        return 0
    head = inv.model_head
    n = count(inv.sequences, values)
    prompt, response = count(inv.prompt, values), count(inv.response, values)
    if inv.kind is Kind.GENERATE:
        return _whole(n * nb.work_rollout(arch, prompt, response, counting))
    if inv.kind is Kind.FORWARD:
        prefixes = count(inv.prefixes, values)
        if not isinstance(prefixes, int):
            raise SpecError(f"{inv.prefixes} = {prefixes} prefix passes must be a whole number")
        lengths = [prompt + Fraction(j * response, prefixes) for j in range(1, prefixes + 1)]
        work = sum((nb.work_forward(arch, n, m, counting, head) for m in lengths), Fraction(0))
        return _whole(work)
    passes = count(inv.passes, values)
    return _whole(passes * nb.work_train(arch, n, prompt + response, counting, head))


def invocation_depth(inv: Invocation, arch: Any, values: Mapping[str, object]) -> Number:
    """D of ``inv`` at ``values`` [levels], exact (``algorithms.cost.invocation_cost``'s depth:
    closed-form D_gen for generation, D_f per prefix pass side by side, E N_mini D_tr)."""
    if inv.kind is Kind.VERIFY:
        return 0
    head = inv.model_head
    prompt, response = count(inv.prompt, values), count(inv.response, values)
    m = prompt + response
    if inv.kind is Kind.GENERATE:
        return nb.depth_generation(arch, prompt, response)
    if inv.kind is Kind.FORWARD:
        return nb.depth_forward(arch, m, head)
    n = count(inv.sequences, values)
    passes, steps = count(inv.passes, values), count(inv.steps, values)
    step_tokens = _whole(Fraction(n * m) / steps)
    return _whole(passes * steps * nb.depth_train(arch, m, step_tokens, head))


def _whole(x: Number) -> Number:
    return x.numerator if isinstance(x, Fraction) and x.denominator == 1 else x


@cache
def work_poly_in_t(
    inv: Invocation, arch: Any, knobs: tuple, counting: AttnCounting = AttnCounting.FULL
) -> tuple[Fraction, ...]:
    """Coefficients (ascending powers of T) of the invocation's work per sequence, exact.

    ``knobs``: the values other than T as sorted (name, value) pairs. Lagrange interpolation
    at T = 1 .. MAX_DEGREE_IN_T + 2 over the rationals; the extra point must give a zero top
    coefficient (else the work is not the polynomial assumed, an AssertionError).
    """
    values = dict(knobs)
    points = range(1, MAX_DEGREE_IN_T + 3)
    ys = []
    for t in points:
        values["T"] = t
        work = Fraction(invocation_work(inv, arch, values, counting))
        ys.append(work / count(inv.sequences, values))
    coeffs = _interpolate(list(points), ys)
    if coeffs[-1]:
        raise AssertionError(f"work of {inv.describe()} is not a polynomial of degree 2 in T")
    return tuple(coeffs[:-1])


def _interpolate(xs: list[int], ys: list[Fraction]) -> list[Fraction]:
    """Coefficients (ascending) of the polynomial of degree < len(xs) through the points:
    Newton's divided differences, expanded, exact."""
    n = len(xs)
    diffs = list(ys)
    for level in range(1, n):
        for i in range(n - 1, level - 1, -1):
            diffs[i] = (diffs[i] - diffs[i - 1]) / (xs[i] - xs[i - level])
    coeffs = [Fraction(0)] * n
    basis = [Fraction(1)]  # prod_{k < i} (T - x_k), ascending coefficients
    for i in range(n):
        for k, b in enumerate(basis):
            coeffs[k] += diffs[i] * b
        basis = [Fraction(0), *basis]
        for k in range(len(basis) - 1):
            basis[k] -= xs[i] * basis[k + 1]
    return coeffs
