"""A task's exact work and depth, keyed by a query's values (never changed), memoized (the
deployments of a query ask for the same ones).

A work formula is a polynomial in T, so its sum over the sequences' own response lengths is
its coefficients times the power sums of the lengths, exact (with fixed lengths, exactly
``algorithms.cost.invocation_cost``). Numbers come from the compiled twin of the invocation
cost (``compiled.invocation``, no sympy)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import cache
from typing import Any

from rlmcost.algorithms.counts import count
from rlmcost.algorithms.kinds import Kind
from rlmcost.algorithms.model import Invocation
from rlmcost.arch import Arch
from rlmcost.choices import AttnCounting, Head
from rlmcost.compiled.blocks import work_head_per_token
from rlmcost.compiled.invocation import invocation_depth, work_poly_in_t
from rlmcost.memo import memoized, per_object
from rlmcost.perf.rl_step import length_counts
from rlmcost.placement.device_groups import Task


def frozen_values(values: Mapping[str, object], keep_t: bool = False) -> tuple:
    return tuple(sorted((k, v) for k, v in values.items() if keep_t or k != "T"))


def frozen_at(values: Mapping[str, object], t: int | None = None) -> tuple:
    """``frozen_values({**values, "T": t}, keep_t=True)`` (of ``values`` itself when ``t`` is
    None), kept per ``values`` object (a query's values, never changed) and ``t``."""
    table = values_table(values)
    key = ("frozen", t)
    out = table.get(key)
    if out is None:
        out = frozen_values(values if t is None else {**values, "T": t}, keep_t=True)
        table[key] = out
    return out


@per_object()
def values_table(values: Mapping[str, object]) -> dict[Any, Any]:
    """A table of values derived from a query's ``values`` (never changed), filled by its
    users (:func:`frozen_at`, ``GroupTasks._int``); a fresh one each time inside
    :func:`rlmcost.memo.plain`."""
    return {}


@cache
def count_of(text: str, values: tuple) -> int | Fraction:
    return count(text, dict(values))


@cache
def depth_of(inv: Invocation, arch: Arch, values: tuple) -> int:
    """The invocation's depth (``algorithms.cost``, compiled), memoized: the GPU-split search
    asks for the same ones many times."""
    return int(invocation_depth(inv, arch, dict(values)))


def sequence_work(
    inv: Invocation,
    arch: Arch,
    values: Mapping[str, Any],
    t: int,
    counting: AttnCounting = AttnCounting.FULL,
) -> Fraction:
    """Work of one sequence of the invocation whose response has ``t`` tokens."""
    coeffs = work_poly_in_t(inv, arch, frozen_values(values), counting)
    return sum((c * t**k for k, c in enumerate(coeffs)), Fraction(0))


def work_over_lengths(task: Task, arch: Arch, values: Mapping[str, Any], lengths: Sequence[int],
                      counting: AttnCounting = AttnCounting.FULL) -> int:  # fmt: skip
    """Exact FLOPs of the task over sequences with these response lengths (power sums);
    teacher-forced attention counted per ``counting`` (memoized: the deployments of a query
    ask for the same ones; values keyed with their types)."""
    table = values_table(values)
    typed = table.get("typed")
    if typed is None:
        typed = table["typed"] = tuple((k, v, type(v)) for k, v in frozen_values(values,
                                                                                keep_t=True))
    return _work_over_lengths(task, arch, typed, tuple(lengths), counting)


@memoized()
def _work_over_lengths(
    task: Task,
    arch: Arch,
    typed: tuple[tuple[str, Any, type], ...],
    lengths: tuple[int, ...],
    counting: AttnCounting,
) -> int:
    values = {k: v for k, v, _ in typed}
    inv = task.invocation
    coeffs = work_poly_in_t(inv, arch, frozen_values(values), counting)
    many = length_counts(lengths)  # power sums over the distinct lengths (exact ints)
    total = sum((c * sum(m * t**k for t, m in many) for k, c in enumerate(coeffs)), Fraction(0))
    if task.value_head:  # the shared backbone's d x 1 value head
        head = work_head_per_token(arch, Head.VALUE)
        if inv.kind is Kind.GENERATE:
            total += head * sum(lengths)
        else:
            passes = int(count(inv.passes, values))
            total += passes * 3 * head * (int(values["S"]) * len(lengths) + sum(lengths))
    if total.denominator != 1:
        raise AssertionError(f"non-integral work {total} for {inv.describe()}")
    return int(total)
