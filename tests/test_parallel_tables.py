"""Tables V-VIII: the Big-O and explicit forms agree with the exact costs they come from."""

import pytest
import sympy as sp

from rlmcost import symbols as sy
from rlmcost.logs import clog2
from rlmcost.parallel.asymptotics import big_o_parallel, leading_order
from rlmcost.parallel.paper import PAPER_ROWS, REGIME, paper_costs, table_entries
from rlmcost.tables import table_05_08

# Every symbol grows as a power of one variable n (the degrees more slowly than what they split)
# so that "leading order / exact -> 1" is a one-variable limit.
n = sp.Symbol("n", positive=True)
GROWTH = {
    sy.B: n, sy.m: n**2, sy.L: n, sy.d: n**3, sy.d_ff: 4 * n**3, sy.h: n, sy.V: n**3,
    sy.E: n, sy.k: 2, sy.d_e: n**3, sy.P_d: n, sy.P_t: n, sy.P_p: n, sy.P_c: n, sy.P_e: n,
    sy.P_z: n, sy.kappa_ckpt: sp.Rational(1, 2),
}  # fmt: skip


def test_four_tables_with_every_row():
    tables = table_05_08.build()
    assert [t.name for t in tables] == ["table_05", "table_06", "table_07", "table_08"]
    for t in tables:
        assert [r[0] for r in t.rows] == [row.label for row in PAPER_ROWS]


@pytest.mark.parametrize("scope", ["per_rank", "global"])
def test_explicit_leading_order_is_the_exact_cost_to_first_order(scope):
    # Table VII/VIII entries / exact Table V-VI sources -> 1 as every size grows together.
    for (row, cost), (_, work, _, memory) in zip(
        paper_costs(), table_entries(scope, "explicit"), strict=True
    ):
        for exact, lead in ((getattr(cost, f"work_{scope}"), work),
                            (getattr(cost, f"memory_{scope}"), memory)):  # fmt: skip
            ratio = sp.limit(sp.simplify(lead.xreplace(GROWTH) / exact.xreplace(GROWTH)), n, sp.oo)
            assert ratio == 1, (row.label, scope)


def test_big_o_of_explicit_equals_big_o_of_exact():
    for (row, cost), (_, work, depth, memory) in zip(
        paper_costs(), table_entries("per_rank", "big_o"), strict=True
    ):
        assert sp.simplify(big_o_parallel(cost.work_per_rank, REGIME) - work) == 0, row.label
        assert sp.simplify(big_o_parallel(cost.depth_per_rank, REGIME) - depth) == 0, row.label
        lead = leading_order(cost.memory_per_rank)
        assert sp.simplify(big_o_parallel(lead, REGIME) - memory) == 0, row.label


def test_rows_state_the_paper_claims():
    entries = {row.label: (w, dp, mem) for row, w, dp, mem in table_entries("per_rank", "big_o")}
    # TP: hidden-dimension depth terms become log(d/P_t) (§III-G)
    assert entries["TP"][1].has(sp.log(sy.d / sy.P_t))
    # PP*: the V d term is not divided by P_p (boundary rank)
    assert sy.V * sy.d in sp.Add.make_args(entries["PP*"][2])
    # ZeRO-3 divides the model states by P_z, activations stay split by the batch
    assert sy.L * sy.d**2 / sy.P_z in sp.Add.make_args(entries["DP + ZeRO-3 / FSDP"][2])
    # explicit checkpointing row: extra forward of the body, 4 instead of 3 passes
    explicit = {row.label: w for row, w, _, _ in table_entries("per_rank", "explicit")}
    base, ckpt = explicit["Baseline (dense)†"], explicit["Checkpointing (full)"]
    assert base.coeff(sy.B * sy.L * sy.d**2 * sy.m) == 24
    assert ckpt.coeff(sy.B * sy.L * sy.d**2 * sy.m) == 32
    # explicit per-rank TP depth keeps the exact ceil(log2(d_ff/P_t)) terms
    depth = {row.label: dp for row, _, dp, _ in table_entries("per_rank", "explicit")}["TP"]
    assert depth.coeff(clog2(sy.d_ff / sy.P_t)) == 2 * sy.L
