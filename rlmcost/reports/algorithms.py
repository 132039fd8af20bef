"""The symbolic Table IV rows of an algorithm (`rlmcost ppo --symbolic`, `rlmcost tables`).

Each stage row gives its cost three ways, from the same invocations:

* in the notation of the Table III blocks (``B K (S + T) C_f^tok(R_phi)``, ``D_f``, ``|M|``,
  ``M_KV``), written from each invocation's kind, role and token counts;
* expanded on the paper's canonical model (every role CANONICAL: MHA, 2-projection FFN);
* as Big-O under d_ff = O(d), derived from the expanded form by ``blocks.big_o``.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.cost import StageCost, symbolic_costs
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation
from rlmcost.algorithms.notation import (
    Term,
    depth_term,
    join_terms,
    memory_terms,
    work_term,
)
from rlmcost.algorithms.options import Options, configure
from rlmcost.frozen import dataclass


def _sum(terms: list[Term]) -> Term:
    """Terms joined by +, a repeated term once with its count (``2 x ...``)."""
    counts: dict[Term, int] = {}
    for t in terms:
        if t.text:
            counts[t] = counts.get(t, 0) + 1
    if not counts:
        return Term("0", "0")
    parts = [
        t if n == 1 else Term(f"{n} x {t.text}", rf"{n} \times {t.latex}")
        for t, n in counts.items()
    ]
    return join_terms(*parts, sep=" + ")


def _max(terms: list[Term]) -> Term:
    unique = list(dict.fromkeys(t for t in terms if t.text))
    if len(unique) <= 1:
        return unique[0] if unique else Term("0", "0")
    inner = join_terms(*unique, sep=", ")
    return Term(f"max({inner.text})", rf"\max({inner.latex})")


@dataclass(frozen=True)
class SymbolicStage:
    """One Table IV row: a stage of one algorithm, in notation, expanded and Big-O."""

    algorithm: str
    stage: Stage
    work: Term
    depth_disaggregated: Term
    depth_colocated: Term
    memory: Term
    cost: StageCost | None  # None: the stage is not in the loop (offline generation)

    def big_o(self) -> dict[str, sp.Expr]:
        return self.cost.big_o() if self.cost else {}

    def to_json(self, latex: bool = False) -> dict[str, Any]:
        show = sp.latex if latex else str
        pick = (lambda t: t.latex) if latex else (lambda t: t.text)
        out: dict[str, Any] = {
            "algorithm": self.algorithm,
            "stage": str(self.stage),
            "work": pick(self.work),
            "depth": pick(self.depth_disaggregated),
            "depth_colocated": pick(self.depth_colocated),
            "memory": pick(self.memory),
        }
        if self.cost:
            out["explicit"] = {
                "work_flops": show(self.cost.work),
                "depth_colocated": show(self.cost.depth_colocated),
                "depth_disaggregated": show(self.cost.depth_disaggregated),
                "memory_elements_colocated": show(self.cost.memory_colocated),
                "memory_elements_disaggregated": show(self.cost.memory_disaggregated),
            }
            out["big_o"] = {k: f"O({show(v)})" for k, v in self.big_o().items()}
        return out


OFFLINE = Term("- (offline †: before the loop)", r"\text{-- (offline \dag)}")


def symbolic_stages(
    algorithm: str | Algorithm, options: Options | None = None
) -> list[SymbolicStage]:
    """The three stage rows of ``algorithm`` on the canonical model (Table IV)."""
    base = get_algorithm(algorithm)
    alg = configure(base, options or Options())
    costs = symbolic_costs(base, options)  # it applies the options itself: not twice
    rows = []
    for stage in Stage:
        invs = alg.stage(stage)
        if not invs:
            rows.append(SymbolicStage(alg.name, stage, OFFLINE, OFFLINE, OFFLINE, OFFLINE, None))
            continue
        transients = [memory_terms(i)[1] for i in invs]
        states = [_role_state(role, invs) for role in dict.fromkeys(i.role for i in invs)]
        depths = [depth_term(i) for i in invs]
        rows.append(
            SymbolicStage(
                alg.name,
                stage,
                _sum([work_term(i) for i in invs]),
                _max(depths),
                _sum(depths),
                _sum(states + transients),
                costs[stage],
            )
        )
    return rows


def _role_state(role: Role, invs: tuple[Invocation, ...]) -> Term:
    mine = [i for i in invs if i.role is role]
    inv = next((i for i in mine if i.kind is Kind.TRAIN), mine[0])
    return memory_terms(inv)[0]
