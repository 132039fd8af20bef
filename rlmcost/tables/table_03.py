"""Table III: computational building blocks of the canonical Transformer."""

from __future__ import annotations

from rlmcost.reports.blocks import symbolic_blocks
from rlmcost.tables import Cell, Table, big_o_cell, expr_cell


def build() -> list[Table]:
    rows: list[list[Cell | str]] = [
        [key, Cell(q.label, q.latex), expr_cell(e), big_o_cell(o), q.unit_text()]
        for key, (q, e, o) in symbolic_blocks().items()
    ]
    return [
        Table(
            name="table_03",
            number="III",
            title="computational building blocks (canonical MHA, 2-projection FFN, h d_h = d)",
            columns=["quantity", "symbol", "explicit", "Big-O (d_ff = O(d))", "unit"],
            rows=rows,
            widths=(0.13, 0.14, 0.40, 0.19, 0.14),
            notes=[
                "FLOP = one add or one multiply; matrix products only; teacher-forced "
                "attention counted full (m^2 pairs), as torch FlopCounterMode counts.",
                "Workload: B sequences of m tokens; decode context c; prompt S, response T. "
                "Each symbol names what its row counts: per sequence (C_gen^roll, D_gen) or "
                "with the factor B (B C_prefill(S), B M_KV(c), ...).",
                "clog2(x) = ceil(log2 x); depths count GEMM reduction levels; normalization, "
                "softmax, sampling and collective reductions are suppressed. D_b(m, B m): the "
                "input gradients of an m-token pass, the last weight gradient reduced over "
                "all B m tokens.",
                "Memory in elements (one tensor entry, the paper's unit) first; bytes(X) "
                "beside it is X in bytes with the dtypes the unit column names. "
                "B M_Act^saved(m) counts every tensor saved for backward, more than the "
                "paper's leading term B M_Act(m) = B m L d; 16|M| is mixed-precision Adam "
                "(Rajbhandari et al. 2020).",
            ],
        )
    ]
