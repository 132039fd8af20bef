"""The cycle means' loop (a schedule's first calls) against its compiled function (the
later calls): the same numbers, bit for bit, for ints, floats and their mix, the largest mean
and the vectors' largest means (rlmcost.placement.cycle_means). The reference is the
definition, Cycle.mean: ``sum((w_a, w_b, ...), 0) / shift``."""

import random

import pytest

from rlmcost.placement.cycle_means import COMPILE_AT, _means_compiled, means_function
from rlmcost.placement.schedule import Cycle


def _case(seed: int) -> tuple[tuple[str, ...], tuple[Cycle, ...]]:
    rng = random.Random(seed)
    keys = tuple(f"u{i}" for i in range(rng.randint(2, 9)))
    cycles = []
    for _ in range(rng.randint(1, 12)):  # prefixes shared and not, repeated keys too
        n = rng.randint(1, len(keys))
        cycles.append(Cycle(tuple(rng.choice(keys) for _ in range(n)), rng.randint(1, 4)))
    return keys, tuple(cycles)


def _weights(rng: random.Random, keys: tuple[str, ...], kind: str) -> dict[str, object]:
    pick = {"int": lambda: rng.randint(0, 10**20),
            "float": lambda: rng.random() * 10 ** rng.randint(-9, 3),
            "mixed": lambda: rng.choice((rng.randint(0, 2**60), rng.random()))}[kind]  # fmt: skip
    return {k: pick() for k in keys}


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("kind", ["int", "float", "mixed"])
def test_the_loop_gives_the_compiled_numbers(seed: int, kind: str) -> None:
    keys, cycles = _case(seed)
    rng = random.Random(seed)
    index = {k: repr(k) for k in keys}  # as the schedule's own (a mapping by key)
    for largest in (False, True):
        means = means_function(keys, cycles, index, largest=largest)
        compiled = _means_compiled(keys, cycles, index, largest=largest)
        for call in range(COMPILE_AT + 1):  # the loop's calls, then the compiled ones
            w = _weights(rng, keys, kind)
            got, want = means(w), compiled(w)
            assert repr(got) == repr(want), (call, got, want)
            if not largest:
                assert got == [c.mean(w) for c in cycles]


@pytest.mark.parametrize("seed", range(20))
def test_the_vectors_largest_means_by_position(seed: int) -> None:
    """Weights by position (the template's index), three vectors at once."""
    keys, cycles = _case(seed)
    rng = random.Random(seed)
    index = {k: str(i) for i, k in enumerate(keys)}
    means = means_function(keys, cycles, index, largest=True, vectors=3)
    compiled = _means_compiled(keys, cycles, index, largest=True, vectors=3)
    for _ in range(COMPILE_AT + 1):
        ws = [[rng.random() for _ in keys] for _ in range(3)]
        got = means(*ws)
        assert got == compiled(*ws)
        assert got == tuple(max(c.mean(dict(zip(keys, w, strict=True))) for c in cycles)
                            for w in ws)  # fmt: skip


def test_no_cycle_has_no_largest_mean() -> None:
    for f in (means_function(("a",), (), {"a": "'a'"}, largest=True),
              _means_compiled(("a",), (), {"a": "'a'"}, largest=True)):  # fmt: skip
        with pytest.raises(ValueError):
            f({"a": 1.0})


def test_keys_with_quotes_and_backslashes_read_back() -> None:
    """The loop reads each key's subscript back from the index's text (``repr`` of the key)."""
    keys = ("it's", 'a"b', "x\\y", "plain")
    cycles = (Cycle(keys, 2), Cycle(keys[:2], 1))
    index = {k: repr(k) for k in keys}
    w = {k: float(i + 1) for i, k in enumerate(keys)}
    assert means_function(keys, cycles, index)(w) == _means_compiled(keys, cycles, index)(w)
