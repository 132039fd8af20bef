"""The steady-state period (max cycle mean) against a brute-force simulation of the schedule."""

import random

import pytest
import sympy as sp

from rlmcost.algorithms.kinds import Stage
from rlmcost.placement.allocate import splits
from rlmcost.placement.schedule import Unit, edges, period, stage_spans
from rlmcost.placement.schedule_template import template

STAGES = (Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING)


def simulate(units, graph, iterations=800):
    """Earliest starts x_v(j) = max over edges (u -> v, shift s) of x_u(j - s) + w_u, iteration
    by iteration (units in order, which respects the shift-0 edges), written independently of
    the max cycle mean; returns the average iteration time over the second half."""
    weight = {u.key: u.weight for u in units}
    preds = {u.key: [] for u in units}
    for e in graph:
        preds[e.dst].append((e.src, e.shift))
    order = [u.key for u in units]
    starts: list[dict[str, float]] = []
    for j in range(iterations):
        now: dict[str, float] = {}
        for key in order:
            t = 0.0
            for src, shift in preds[key]:
                if j - shift < 0:
                    continue
                ref = starts[j - shift] if shift else now
                t = max(t, ref[src] + weight[src])
            now[key] = t
        starts.append(now)

    def finish(j):
        return max(starts[j][k] + weight[k] for k in order)

    half = iterations // 2
    return (finish(iterations - 1) - finish(half - 1)) / (iterations - half)


def random_units(rng, n_groups):
    units = []
    for i, stage in enumerate(STAGES):
        for k in range(rng.randint(1, 3)):
            units.append(Unit(f"{i}{k}", f"g{rng.randrange(n_groups)}", stage, rng.randint(1, 50)))
    return units


@pytest.mark.parametrize("seed", range(12))
def test_max_cycle_mean_matches_a_simulation(seed):
    rng = random.Random(seed)
    units = random_units(rng, rng.randint(1, 4))
    for k in (0, 1, 2):
        graph = edges(units, k)
        assert period(units, graph).value == pytest.approx(simulate(units, graph), rel=2e-3)


@pytest.mark.parametrize("seed", range(24))
def test_a_template_gives_the_units_period_and_spans_bit_for_bit(seed):
    """The per-shape template (weights apart from the shape) against ``period`` and
    ``stage_spans`` of the units themselves: float weights, transfers in front of tasks (no
    barrier) and a link unit of no stage, every staleness."""
    rng = random.Random(300 + seed)
    units = [Unit(u.key, u.resource, u.stage, rng.random() * 10 ** rng.randint(-3, 3))
             for u in random_units(rng, rng.randint(1, 4))]  # fmt: skip
    units.insert(1, Unit("reshard", units[1].resource, units[1].stage, rng.random(), False))
    units.append(Unit("sync", "link:sync", None, rng.random(), False))
    links = (("sync", units[-2].key, (units[0].key,)),)
    shape = tuple((u.key, u.resource, u.stage, u.barrier) for u in units)
    weights = [u.weight for u in units]
    for k in (0, 1, 2):
        plan = template(shape, k, links)
        want = period(units, edges(units, k, links))
        got = plan.period(weights)
        assert (got.value, got.cycle) == (want.value, want.cycle)
        assert repr(plan.stage_spans(weights)) == repr(stage_spans(units))


@pytest.mark.parametrize("seed", range(24))
def test_a_template_picks_the_same_critical_cycle_among_ties(seed):
    """Weights that tie cycles (small ints, zeros, the same float repeated; the planner's
    sweep ties 2,848 of its 3,264 periods): the template's cycle means in tie-break order give
    the cycle and number ``period`` picks over every cycle (the smallest shift, then the last
    keys); a NaN weight takes the plain tie-break (and its error, where a NaN mean leaves no
    cycle to pick)."""
    rng = random.Random(700 + seed)
    units = random_units(rng, rng.randint(1, 4))
    units.insert(1, Unit("reshard", units[1].resource, units[1].stage, 0, False))
    units.append(Unit("sync", "link:sync", None, 0, False))
    links = (("sync", units[-2].key, (units[0].key,)),)
    shape = tuple((u.key, u.resource, u.stage, u.barrier) for u in units)
    same = rng.random()
    for draw in (lambda: rng.randint(0, 2), lambda: rng.choice((0.0, same, 2 * same)),
                 lambda: float("nan") if rng.random() < 0.2 else 1.0):  # fmt: skip
        weighted = [Unit(u.key, u.resource, u.stage, draw(), u.barrier) for u in units]
        weights = [u.weight for u in weighted]
        for k in (0, 1, 2):
            got = _outcome(lambda: template(shape, k, links).period(weights))  # noqa: B023
            want = _outcome(lambda: period(weighted, edges(weighted, k, links)))  # noqa: B023
            assert got == want
            if all(type(w) is int for w in weights):  # kept per template: twice the same
                plan = template(shape, k, links)
                assert repr(plan.value(weights)) == repr(plan.value(list(weights))) == want[1]


def _outcome(compute):
    """A period's cycle and the repr of its value, or the error it raises (a NaN mean ties
    nothing: ``_critical`` finds no cycle, as before templates)."""
    try:
        p = compute()
    except ValueError as exc:
        return ("error", str(exc))
    return p.cycle, repr(p.value)


@pytest.mark.parametrize("seed", range(12))
def test_synchronous_period_is_the_sum_of_the_stage_spans(seed):
    rng = random.Random(100 + seed)
    units = random_units(rng, rng.randint(1, 4))
    sync = period(units, edges(units, 0)).value
    assert sync == sum(stage_spans(units).values())
    # staleness never makes an iteration longer
    assert period(units, edges(units, 1)).value <= sync


def test_rollout_and_trainer_overlap_to_the_slower_side():
    g, a, t = sp.symbols("G A T", positive=True)
    units = [
        Unit("g", "rollout", Stage.GENERATION, g),
        Unit("a", "rollout", Stage.ASSESSMENT, a),
        Unit("t", "trainer", Stage.TRAINING, t),
    ]
    assert period(units, edges(units, 0), symbolic=True).value == g + a + t
    assert set(period(units, edges(units, 1), symbolic=True).value.args) == {g + a, t}
    numbers = [
        Unit(u.key, u.resource, u.stage, w) for u, w in zip(units, (30, 10, 25), strict=True)
    ]
    assert period(numbers, edges(numbers, 1)).value == 40  # max(30 + 10, 25)
    assert period(numbers, edges(numbers, 0)).value == 65  # 30 + 10 + 25


def test_a_transfer_on_its_link_delays_the_next_rollout_only_when_synchronous():
    units = [
        Unit("g", "rollout", Stage.GENERATION, 30),
        Unit("t", "trainer", Stage.TRAINING, 20),
        Unit("sync", "link", None, 5, barrier=False),
    ]
    links = [("sync", "t", ["g"])]
    assert period(units, edges(units, 0, links)).value == 55  # 30 + 20 + 5
    assert period(units, edges(units, 1, links)).value == 30  # hidden behind the rollout


def test_splits_enumerate_every_multiple_of_the_units():
    assert splits(8, [2, 2]) == [(2, 6), (4, 4), (6, 2)]
    assert splits(6, [1, 2, 1]) == [(1, 2, 3), (1, 4, 1), (2, 2, 2), (3, 2, 1)]
    big = splits(64, [1] * 6)
    assert len(big) <= 500 and all(sum(c) == 64 for c in big)
