"""Every memory cell of Tables V-VIII, derived by hand from the seed paper's text.

Nothing here calls the cost model: the expected expressions are written out below from
§III-G (the assumptions paragraph and the Table V caption), §III-G1 (ZeRO/FSDP model states)
and §III-G2 (activation checkpointing), and compared with the cells of the committed
tables/table_05.csv ... table_08.csv (which tests/test_tables.py keeps equal to a fresh build).

Hand derivation, canonical model (MHA with h d_h = d, 2-projection FFN, untied embedding and
LM head), leading order (norm vectors, O(L d), dropped):

* P, the parameter count (§III-G1's P): per layer Q, K, V, O (4 d^2) and the FFN (2 d d_ff),
  plus the embedding and the LM head (V d each): P = 4 L d^2 + 2 L d d_ff + 2 V d.
  MoE: every FFN is E experts of width d_e, so 2 E L d d_e replaces 2 L d d_ff.
* Adam model states (§III-G1): 4P per replica; ZeRO-1 P + P + 2P/P_z; ZeRO-2 P + 3P/P_z;
  ZeRO-3/FSDP 4P/P_z.
* Activations (§III-G): A = B (S + T) L d = B m L d, split by whatever splits the tokens (DP,
  CP, the coupled EP of 5D) or the hidden dimension (TP, idealized shardable activations) or
  the layers (PP); checkpointing keeps kappa_ckpt A (§III-G2).
* PP* (Table V caption): the peak rank is a boundary stage, L / P_p layers plus one V d
  matrix (the embedding or the head), not divided by P_p.
* Isolated EP (§III-G): experts split over P_e, the dense path (and its activations)
  replicated on each of the P_e ranks; 5D: EP ranks own disjoint tokens (Table V caption).
* Global (§III-G): the sum over all ranks, replication included: DP, CP and EP replicate what
  they do not split; TP and PP split without replication.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import sympy as sp

from rlmcost import symbols as sy

ROOT = Path(__file__).resolve().parents[1]

B, L, d, d_ff, V, m = sy.B, sy.L, sy.d, sy.d_ff, sy.V, sy.m
E, d_e = sy.E, sy.d_e
P_d, P_t, P_p, P_c, P_e, P_z = sy.P_d, sy.P_t, sy.P_p, sy.P_c, sy.P_e, sy.P_z
kappa = sy.kappa_ckpt

A = B * m * L * d  # activations B (S + T) L d (§III-G)
LAYERS = 4 * L * d**2 + 2 * L * d * d_ff  # attention + FFN weights of the L layers
P = LAYERS + 2 * V * d  # + embedding + LM head
ATTN = 4 * L * d**2  # MoE: the dense part of the layers
EXPERTS = 2 * E * L * d * d_e  # MoE: the E experts of every layer
P_MOE = ATTN + EXPERTS + 2 * V * d

# Table VII: explicit leading order per rank.
PER_RANK = {
    "Baseline (dense)†": A + 4 * P,
    "DP": A / P_d + 4 * P,
    "DP + ZeRO-1": A / P_d + P + P + 2 * P / P_z,
    "DP + ZeRO-2": A / P_d + P + 3 * P / P_z,
    "DP + ZeRO-3 / FSDP": A / P_d + 4 * P / P_z,
    "TP": A / P_t + 4 * P / P_t,
    "TP + SP": A / P_t + 4 * P / P_t,
    "CP": A / P_c + 4 * P,
    "PP*": A / P_p + 4 * LAYERS / P_p + 4 * V * d,
    "Baseline (MoE)†": A + 4 * P_MOE,
    "EP (isolated)": A + 4 * (ATTN + 2 * V * d) + 4 * EXPERTS / P_e,
    "3D‡": A / (P_d * P_p * P_t) + 4 * LAYERS / (P_p * P_t) + 4 * V * d / P_t,
    "5D‡": A / (P_d * P_p * P_t * P_c * P_e)
    + 4 * ATTN / (P_p * P_t)
    + 4 * EXPERTS / (P_e * P_p * P_t)
    + 4 * V * d / P_t,
    "Checkpointing (full)": kappa * A + 4 * P,
}

# Table VIII: explicit leading order, summed over every rank.
GLOBAL = {
    "Baseline (dense)†": A + 4 * P,
    "DP": A + P_d * 4 * P,
    "DP + ZeRO-1": A + P_d * (P + P + 2 * P / P_z),
    "DP + ZeRO-2": A + P_d * (P + 3 * P / P_z),
    "DP + ZeRO-3 / FSDP": A + P_d * 4 * P / P_z,
    "TP": A + 4 * P,
    "TP + SP": A + 4 * P,
    "CP": A + P_c * 4 * P,
    "PP*": A + 4 * P,  # every layer on one stage; the embedding first, the head last
    "Baseline (MoE)†": A + 4 * P_MOE,
    "EP (isolated)": P_e * A + P_e * 4 * (ATTN + 2 * V * d) + 4 * EXPERTS,
    "3D‡": A + P_d * 4 * P,
    "5D‡": A + P_d * P_c * P_e * 4 * (ATTN + 2 * V * d) + P_d * P_c * 4 * EXPERTS,
    "Checkpointing (full)": kappa * A + 4 * P,
}

# Tables V and VI: the same by hand in Big-O, d_ff = O(d), constants dropped; a term another
# outgrows for every degree in its range (P_t <= d, ...) is dropped, so ZeRO-1/2's P + cP/P_z
# is O(P).
BIG_O_PER_RANK = {
    "Baseline (dense)†": A + L * d**2 + V * d,
    "DP": A / P_d + L * d**2 + V * d,
    "DP + ZeRO-1": A / P_d + L * d**2 + V * d,
    "DP + ZeRO-2": A / P_d + L * d**2 + V * d,
    "DP + ZeRO-3 / FSDP": A / P_d + (L * d**2 + V * d) / P_z,
    "TP": (A + L * d**2 + V * d) / P_t,
    "TP + SP": (A + L * d**2 + V * d) / P_t,
    "CP": A / P_c + L * d**2 + V * d,
    "PP*": (A + L * d**2) / P_p + V * d,
    "Baseline (MoE)†": A + E * L * d * d_e + L * d**2 + V * d,
    "EP (isolated)": A + E * L * d * d_e / P_e + L * d**2 + V * d,
    "3D‡": A / (P_d * P_p * P_t) + L * d**2 / (P_p * P_t) + V * d / P_t,
    "5D‡": A / (P_d * P_p * P_t * P_c * P_e)
    + E * L * d * d_e / (P_e * P_p * P_t)
    + L * d**2 / (P_p * P_t)
    + V * d / P_t,
    "Checkpointing (full)": kappa * A + L * d**2 + V * d,
}

BIG_O_GLOBAL = {
    "Baseline (dense)†": A + L * d**2 + V * d,
    "DP": A + P_d * (L * d**2 + V * d),
    "DP + ZeRO-1": A + P_d * (L * d**2 + V * d),
    "DP + ZeRO-2": A + P_d * (L * d**2 + V * d),
    "DP + ZeRO-3 / FSDP": A + P_d * (L * d**2 + V * d) / P_z,
    "TP": A + L * d**2 + V * d,
    "TP + SP": A + L * d**2 + V * d,
    "CP": A + P_c * (L * d**2 + V * d),
    "PP*": A + L * d**2 + V * d,
    "Baseline (MoE)†": A + E * L * d * d_e + L * d**2 + V * d,
    "EP (isolated)": P_e * (A + L * d**2 + V * d) + E * L * d * d_e,
    "3D‡": A + P_d * (L * d**2 + V * d),
    "5D‡": A + P_d * P_c * (P_e * (L * d**2 + V * d) + E * L * d * d_e),
    "Checkpointing (full)": kappa * A + L * d**2 + V * d,
}

EXPECTED = {
    "table_05": BIG_O_PER_RANK,
    "table_06": BIG_O_GLOBAL,
    "table_07": PER_RANK,
    "table_08": GLOBAL,
}

NAMES = {s.name: s for s in vars(sy).values() if isinstance(s, sp.Symbol)}


def _memory_cells(name: str) -> dict[str, sp.Expr]:
    """strategy -> the memory cell of tables/<name>.csv, parsed (the O(.) of Big-O cells
    stripped)."""
    lines = (ROOT / "tables" / f"{name}.csv").read_text().splitlines()
    rows = list(csv.reader(line for line in lines if not line.startswith("#")))
    col = rows[0].index("memory")
    out = {}
    for row in rows[1:]:
        text = row[col]
        if text.startswith("O(") and text.endswith(")"):
            text = text[2:-1]
        out[row[0]] = sp.sympify(text, locals=NAMES)
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_memory_cell_equals_the_hand_derivation(name):
    cells = _memory_cells(name)
    assert cells.keys() == EXPECTED[name].keys()
    for label, want in EXPECTED[name].items():
        # independent: §III-G / §III-G1 / §III-G2 written out above, exact sympy identity
        assert sp.simplify(cells[label] - want) == 0, (name, label, cells[label])


def test_zero_rows_state_section_iii_g1():
    # §III-G1 verbatim: ZeRO-1 P + P + 2P/P_z, ZeRO-2 P + 3P/P_z per replica; the P_d
    # replicas of plain ZeRO-DP (P_z = P_d) hold 2 P_d P + 2P and P_d P + 3P in all.
    per_rank, total = _memory_cells("table_07"), _memory_cells("table_08")
    for label, states in (("DP + ZeRO-1", P + P + 2 * P / P_z), ("DP + ZeRO-2", P + 3 * P / P_z)):
        assert sp.simplify(per_rank[label] - A / P_d - states) == 0, label
        at_pz_pd = total[label].subs(P_z, P_d) - A
        assert sp.simplify(at_pz_pd - (P_d * states).subs(P_z, P_d)) == 0, label
    assert sp.simplify(total["DP + ZeRO-1"].subs(P_z, P_d) - A - (2 * P_d * P + 2 * P)) == 0
    assert sp.simplify(total["DP + ZeRO-2"].subs(P_z, P_d) - A - (P_d * P + 3 * P)) == 0
