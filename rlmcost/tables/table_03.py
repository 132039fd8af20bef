"""Table III: computational building blocks of the canonical Transformer."""

from __future__ import annotations

import sympy as sp

from rlmcost.reports.blocks import symbolic_blocks
from rlmcost.tables import Cell, Table, big_o_cell


def build() -> list[Table]:
    rows = [
        [key, q.label, Cell(str(e), sp.latex(e)), big_o_cell(o), q.unit]
        for key, (q, e, o) in symbolic_blocks().items()
    ]
    return [
        Table(
            name="table_03",
            title="Table III: building blocks (canonical MHA, 2-projection FFN, h d_h = d)",
            columns=["quantity", "symbol", "explicit", "Big-O (d_ff = O(d))", "unit"],
            rows=rows,
            notes=[
                "FLOP = one add or one multiply; matrix products only; teacher-forced "
                "attention counted full (m^2 pairs), as torch FlopCounterMode counts.",
                "Workload: B sequences of m tokens; decode context c; prompt S, response T.",
                "clog2(x) = ceil(log2 x); depths count GEMM reduction levels; normalization, "
                "softmax, sampling and collective reductions are suppressed.",
                "Bytes: bf16 weights/activations/KV cache, fp32 logits, mixed-precision Adam "
                "(16 bytes per parameter, Rajbhandari et al. 2020).",
            ],
        )
    ]
