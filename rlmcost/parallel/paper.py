"""The rows of Tables V-VIII: one training iteration under each strategy, symbolic.

Every row is :func:`~rlmcost.parallel.cost.training_cost` on the paper's canonical model
(``CANONICAL``; ``CANONICAL_MOE`` for the EP and 5D rows) with some degrees set, m = S + T.
Tables V/VI give the Big-O forms (regime d_ff = O(d)), VII/VIII the explicit leading order.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from rlmcost import symbols as sy
from rlmcost.arch import CANONICAL, CANONICAL_MOE, Arch
from rlmcost.frozen import dataclass
from rlmcost.parallel.asymptotics import big_o_parallel, leading_order
from rlmcost.parallel.cost import Cost, Degrees, training_cost
from rlmcost.parallel.layout import Checkpointing, ZeroStage

REGIME = {sy.d_ff: sy.d}
"""The tables' work regime, d_ff = O(d) (Table V caption)."""


@dataclass(frozen=True)
class PaperRow:
    """One strategy row: its label, model and degrees, and what it assumes."""

    label: str
    arch: Arch
    degrees: Degrees
    note: str = ""


PAPER_ROWS: tuple[PaperRow, ...] = (
    PaperRow("Baseline (dense)†", CANONICAL, Degrees(), "no parallelism"),
    PaperRow("DP", CANONICAL, Degrees(dp=sy.P_d), "batch split; model replicated"),
    PaperRow(
        "DP + ZeRO-1", CANONICAL, Degrees(dp=sy.P_d, zero=ZeroStage.OS, zero_degree=sy.P_z),
        "optimizer moments sharded over P_z (§III-G1)",
    ),
    PaperRow(
        "DP + ZeRO-2", CANONICAL, Degrees(dp=sy.P_d, zero=ZeroStage.OS_G, zero_degree=sy.P_z),
        "+ gradients sharded",
    ),
    PaperRow(
        "DP + ZeRO-3 / FSDP", CANONICAL,
        Degrees(dp=sy.P_d, zero=ZeroStage.OS_G_P, zero_degree=sy.P_z),
        "+ parameters sharded (transient all-gather buffers omitted)",
    ),
    PaperRow("TP", CANONICAL, Degrees(tp=sy.P_t), "Megatron column/row split"),
    PaperRow(
        "TP + SP", CANONICAL, Degrees(tp=sy.P_t),
        "= TP in the idealized model (TP activations already counted sharded); SP makes "
        "the replicated token-wise activations shard too (Korthikanti et al. 2022)",
    ),
    PaperRow("CP", CANONICAL, Degrees(cp=sy.P_c), "ring attention; queries split, keys global"),
    PaperRow("PP*", CANONICAL, Degrees(pp=sy.P_p), "L/P_p layers; boundary rank is the peak"),
    PaperRow("Baseline (MoE)†", CANONICAL_MOE, Degrees(), "E experts of width d_e, top-k"),
    PaperRow(
        "EP (isolated)", CANONICAL_MOE, Degrees(ep=sy.P_e, coupled_ep=False),
        "experts split; dense path replicated on the P_e ranks",
    ),
    PaperRow(
        "3D‡", CANONICAL, Degrees(dp=sy.P_d, tp=sy.P_t, pp=sy.P_p), "P_d P_p P_t = N"
    ),
    PaperRow(
        "5D‡", CANONICAL_MOE,
        Degrees(dp=sy.P_d, tp=sy.P_t, pp=sy.P_p, cp=sy.P_c, ep=sy.P_e),
        "P_d P_p P_t P_c P_e = N; EP ranks own disjoint token shards",
    ),
    PaperRow(
        "Checkpointing (full)", CANONICAL, Degrees(ckpt=Checkpointing.FULL),
        "activations x kappa_ckpt; + one body forward in work and depth (§III-G2)",
    ),
)  # fmt: skip


@cache
def paper_costs() -> tuple[tuple[PaperRow, Cost], ...]:
    """Each row with its :class:`Cost` (symbolic, m = S + T)."""
    return tuple((row, training_cost(row.arch, row.degrees)) for row in PAPER_ROWS)


def table_entries(scope: str, form: str) -> list[tuple[PaperRow, sp.Expr, sp.Expr, sp.Expr]]:
    """(row, work, depth, memory) for ``scope`` 'per_rank' or 'global' and ``form`` 'big_o'
    (Tables V/VI, d_ff = O(d)) or 'explicit' (leading order, Tables VII/VIII)."""
    if scope not in ("per_rank", "global") or form not in ("big_o", "explicit"):
        raise ValueError(f"scope={scope!r}, form={form!r}")

    def shape(e: sp.Expr) -> sp.Expr:
        return big_o_parallel(e, REGIME) if form == "big_o" else leading_order(e)

    out = []
    for row, cost in paper_costs():
        w, dpt, mem = (getattr(cost, f"{q}_{scope}") for q in ("work", "depth", "memory"))
        out.append((row, shape(w), shape(dpt), shape(mem)))
    return out
