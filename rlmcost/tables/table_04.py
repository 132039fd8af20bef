"""Table IV: work, depth and memory of PPO, GRPO and DPO per stage (seed paper §II-E).

Two files: ``table_04`` in the notation of the Table III blocks with Big-O forms (the
paper's table), and ``table_04_expanded`` with every entry expanded on the canonical model.
"""

from __future__ import annotations

from rlmcost.reports.algorithms import SymbolicStage, symbolic_stages
from rlmcost.tables import Cell, Table, big_o_cell, expr_cell

ALGORITHMS = ("ppo", "grpo", "dpo")

NOTES = [
    "C_tr^tok(M) = C_f^tok(M) + C_b^tok(M) = 3 C_f^tok(M); D_tr(M) = D_f(M) + D_b(M) "
    "(Table IV caption); C_gen^roll, C_f^tok, D_gen, D_f from Table III. Work scales with "
    "the S + T tokens of each sequence; only Generation has a T-step sequential chain.",
    "† DPO is offline: its preference pairs (B chosen/rejected, 2B sequences) are generated "
    "before the training loop.",
    "‡ depth: max over the stage's invocations when each model runs on its own devices "
    "(disaggregated); co-located execution adds them (table_04_expanded has both).",
    "Memory in elements: |M| parameters; 4|M| Adam model states (parameters, gradients, two "
    "moments); M_KV KV cache, M_Inf inference buffer, M_Act activations. The reference and "
    "the reward model never hold M_Act. Memory column: total over the stage's models "
    "(disaggregated); co-located, the transients are freed in between (their max).",
    "E_ppo epochs of N_mini optimizer steps each over the B K sampled sequences; sample-time "
    "log-probs come from generation (no extra actor forward).",
    "Big-O: every role on the canonical model (MHA, 2-projection FFN), d_ff = O(d); derived "
    "from the expanded forms by blocks.big_o.",
]


def _o(row: SymbolicStage, key: str) -> Cell:
    if row.cost is None:
        return Cell("-", "-")
    return big_o_cell(row.big_o()[key])


def _expr(row: SymbolicStage, attr: str) -> Cell:
    if row.cost is None:
        return Cell("-", "-")
    return expr_cell(getattr(row.cost, attr))


def build() -> list[Table]:
    rows = [r for name in ALGORITHMS for r in symbolic_stages(name)]
    notation: list[list[Cell | str]] = [
        [
            r.algorithm.upper(),
            r.stage.label,
            Cell(r.work.text, r.work.latex),
            _o(r, "work"),
            Cell(r.depth_disaggregated.text, r.depth_disaggregated.latex),
            _o(r, "depth"),
            Cell(r.memory.text, r.memory.latex),
            _o(r, "memory"),
        ]
        for r in rows
    ]
    expanded: list[list[Cell | str]] = [
        [
            r.algorithm.upper(),
            r.stage.label,
            _expr(r, "work"),
            _expr(r, "depth_colocated"),
            _expr(r, "depth_disaggregated"),
            _expr(r, "memory_colocated"),
            _expr(r, "memory_disaggregated"),
        ]
        for r in rows
    ]
    return [
        Table(
            name="table_04",
            number="IV",
            title="work, depth and memory of PPO, GRPO and DPO per stage",
            columns=[
                "algorithm",
                "stage",
                "work",
                "Big-O work",
                "depth ‡",
                "Big-O depth",
                "memory",
                "Big-O memory",
            ],
            rows=notation,
            notes=NOTES,
            widths=(0.075, 0.085, 0.125, 0.145, 0.17, 0.175, 0.11, 0.115),
            size="scriptsize",
        ),
        Table(
            name="table_04_expanded",
            number="IV",
            title="work, depth and memory per stage expanded on the canonical model (MHA, "
            "2-projection FFN, h d_h = d)",
            columns=[
                "algorithm",
                "stage",
                "work [FLOP]",
                "depth, co-located",
                "depth, disaggregated",
                "memory [elements], co-located",
                "memory [elements], disaggregated",
            ],
            rows=expanded,
            widths=(0.075, 0.085, 0.19, 0.2, 0.19, 0.13, 0.13),
            notes=[
                "FLOP = one add or one multiply; matrix products only; teacher-forced "
                "attention counted full ((S+T)^2 pairs), as torch FlopCounterMode counts.",
                "clog2(x) = ceil(log2 x); depths count GEMM reduction levels; D_gen is "
                "summed exactly over the T decode steps.",
                "Co-located: depths add, memory = model states + the largest transient. "
                "Disaggregated: depth = the longest invocation, memory = the total over "
                "the stage's devices.",
                "E_ppo epochs, N_mini mini-batches per epoch; every role on the canonical "
                "model; memory in elements (4|M| Adam model states).",
            ],
        ),
    ]
