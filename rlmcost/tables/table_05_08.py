"""Tables V-VIII: intra-model parallelism of one training iteration, per rank and global."""

from __future__ import annotations

import sympy as sp

from rlmcost.parallel.paper import table_entries
from rlmcost.tables import Cell, Table, big_o_cell, expr_cell

_TITLES = {
    ("per_rank", "big_o"): ("table_05", "V", "complexity analysis (per rank), Big-O"),
    ("global", "big_o"): ("table_06", "VI", "complexity analysis (global), Big-O"),
    ("per_rank", "explicit"): (
        "table_07",
        "VII",
        "complexity analysis (per rank), explicit leading order",
    ),
    ("global", "explicit"): (
        "table_08",
        "VIII",
        "complexity analysis (global), explicit leading order",
    ),
}

_NOTES = [
    "One training iteration (forward + backward) over B sequences of m := S + T tokens; "
    "work in FLOPs (add or mul; teacher-forced attention counted full, m^2 pairs), depth in "
    "GEMM reduction levels (clog2 = ceil log2), memory in elements (Adam model states 4|M|, "
    "parameters + gradients + two moments, plus activations B m L d; no checkpointing unless "
    "the row says so).",
    "Canonical model: MHA (h d_h = d), 2-projection FFN of width d_ff, no biases; MoE rows: "
    "every FFN is E routed experts of width d_e, top-k; router, softmax/top-k and load "
    "balancing omitted (§III-G).",
    "Per rank: the most loaded rank. † baseline without parallelism. * PP: the V d term is "
    "the embedding/LM-head state of a boundary stage (the peak rank), not replicated over "
    "P_p; work and memory of the LM head sit on the last stage. ‡ 3D: P_d P_p P_t = N; 5D: "
    "P_d P_p P_t P_c P_e = N with the EP ranks owning disjoint token shards of the shared "
    "path; isolated EP replicates the dense path on its P_e ranks.",
    "Global: work and memory summed over all N ranks, replication included; depth is the "
    "critical path of the whole distributed computation: the baseline's DAG (PP still "
    "traverses all L layers, CP's queries still reduce over all m keys, TP's partial sums "
    "complete the same reduction trees), plus recomputation under checkpointing.",
    "Suppressed (§III-G): communication, synchronization, pipeline bubbles and "
    "micro-batching, load imbalance, communication workspaces, replicated token-wise "
    "activations (TP activations count as fully sharded; SP realizes this), precision-"
    "specific byte factors. ZeRO rows shard model states over P_z (§III-G1): per rank "
    "ZeRO-1 P + P + 2P/P_z, ZeRO-2 P + 3P/P_z, ZeRO-3 4P/P_z with P = |M|, P_z = P_d for plain "
    "ZeRO data parallelism; the checkpointing row keeps kappa_ckpt of the activations and "
    "recomputes the body once (§III-G2).",
    "Big-O tables use d_ff = O(d) and the degree bounds P_t <= d, P_p <= L, P_c <= m, "
    "P_e <= E, P_d <= B; explicit tables keep, with its exact coefficient, every term that "
    "no other term outgrows in a size (a term smaller only by a degree, as ZeRO's P/P_z "
    "beside P, stays).",
]


def _cell(expr: sp.Expr, big_o: bool) -> Cell:
    if big_o:
        return big_o_cell(expr)
    return expr_cell(expr)


def build() -> list[Table]:
    tables = []
    for (scope, form), (name, number, title) in _TITLES.items():
        big_o = form == "big_o"
        rows: list[list[Cell | str]] = [
            [row.label, row.arch.name, _cell(w, big_o), _cell(dp, big_o), _cell(mem, big_o)]
            for row, w, dp, mem in table_entries(scope, form)
        ]
        tables.append(
            Table(
                name=name,
                number=number,
                title=f"{title}, m = S + T",
                columns=["strategy", "model", "work", "depth", "memory"],
                rows=rows,
                notes=_NOTES,
                widths=(0.11, 0.08, 0.28, 0.28, 0.25),
            )
        )
    return tables
