"""The symbolic Table IV rows of an algorithm (`rlmcost ppo --symbolic`, `rlmcost tables`).

Each stage row gives its cost three ways, from the same invocations:

* in the notation of the Table III blocks (``B K (S + T) C_f^tok(R_phi)``, ``D_f``, ``|M|``,
  ``M_KV``), written from each invocation's kind, role and token counts;
* expanded on the paper's canonical model (every role CANONICAL: MHA, 2-projection FFN);
* as Big-O under d_ff = O(d), derived from the expanded form by ``blocks.big_o``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy as sp

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.cost import StageCost, symbolic_costs
from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation
from rlmcost.algorithms.options import Options, configure

_LATEX_NAMES = {
    "rho": r"\rho",
    "E_ppo": r"E_{\mathrm{ppo}}",
    "N_mini": r"N_{\mathrm{mini}}",
    "N_step": r"N_{\mathrm{step}}",
    "T_j": r"T_j",
}


# --------------------------------------------------------------------------------------------
# Notation of the Table III blocks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """A notation term as plain text and LaTeX."""

    text: str
    latex: str


def _formula(text: str) -> Term:
    """``"rho*B*K"`` -> ``rho B K`` / ``\\rho B K``; ``"1"`` -> empty."""
    if text == "1":
        return Term("", "")
    words = text.replace("*", " ")
    latex = " ".join(_LATEX_NAMES.get(w, w) for w in words.split(" "))
    return Term(words, latex)


def _join(*parts: Term, sep: str = " ") -> Term:
    parts = tuple(p for p in parts if p.text)
    return Term(sep.join(p.text for p in parts), sep.join(p.latex for p in parts))


def _tokens(inv: Invocation) -> Term:
    text = f"({inv.prompt} + {inv.response})".replace("*", " ")
    latex = " ".join(_LATEX_NAMES.get(w, w) for w in text.split(" "))
    return Term(text, latex)


def work_term(inv: Invocation) -> Term:
    """The invocation's work in block notation, e.g. ``E_ppo B K (S + T) C_tr^tok(pi_theta)``."""
    r = inv.role
    n = _formula(inv.sequences)
    if inv.kind is Kind.VERIFY:
        return Term("verifier (CPU program, not modelled)", r"\text{verifier (CPU)}")
    if inv.kind is Kind.GENERATE:
        args = "" if (inv.prompt, inv.response) == ("S", "T") else f"; {inv.prompt}, {inv.response}"
        largs = "".join(_LATEX_NAMES.get(w, w) for w in args)
        return _join(
            n, Term(f"C_gen^roll({r.symbol}{args})", rf"C_{{gen}}^{{roll}}({r.latex}{largs})")
        )
    if inv.kind is Kind.FORWARD:
        if inv.prefixes != "1":
            k = _formula(inv.prefixes)
            return _join(
                n,
                Term(
                    f"sum_j=1..{k.text} (S + j T/{k.text}) C_f^tok({r.symbol})",
                    rf"\sum_{{j=1}}^{{{k.latex}}} (S + jT/{k.latex})\, C_f^{{tok}}({r.latex})",
                ),
            )
        return _join(n, _tokens(inv), Term(f"C_f^tok({r.symbol})", rf"C_f^{{tok}}({r.latex})"))
    return _join(
        _formula(inv.passes),
        n,
        _tokens(inv),
        Term(f"C_tr^tok({r.symbol})", rf"C_{{tr}}^{{tok}}({r.latex})"),
    )


def depth_term(inv: Invocation) -> Term:
    """The invocation's depth in block notation: D_gen, D_f, or E_ppo N_mini D_tr."""
    r = inv.role
    if inv.kind is Kind.VERIFY:
        return Term("", "")
    if inv.kind is Kind.GENERATE:
        return Term(f"D_gen({r.symbol})", rf"D_{{gen}}({r.latex})")
    if inv.kind is Kind.FORWARD:
        return Term(f"D_f({r.symbol})", rf"D_f({r.latex})")
    return _join(
        _formula(inv.passes),
        _formula(inv.steps),
        Term(f"D_tr({r.symbol})", rf"D_{{tr}}({r.latex})"),
    )


def memory_terms(inv: Invocation) -> tuple[Term, Term]:
    """(state, transient) in block notation: |M| or 4|M|; M_KV, M_Inf or M_Act."""
    r = inv.role
    if inv.kind is Kind.VERIFY:
        return Term("", ""), Term("", "")
    if inv.kind is Kind.TRAIN:
        return (
            Term(f"4|{r.symbol}|", rf"4|{r.latex}|"),
            Term(f"M_Act({r.symbol})", rf"M_{{Act}}({r.latex})"),
        )
    transient = (
        Term(f"M_KV({r.symbol})", rf"M_{{KV}}({r.latex})")
        if inv.kind is Kind.GENERATE
        else Term(f"M_Inf({r.symbol})", rf"M_{{Inf}}({r.latex})")
    )
    return Term(f"|{r.symbol}|", rf"|{r.latex}|"), transient


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
    return _join(*parts, sep=" + ")


def _max(terms: list[Term]) -> Term:
    unique = list(dict.fromkeys(t for t in terms if t.text))
    if len(unique) <= 1:
        return unique[0] if unique else Term("0", "0")
    inner = _join(*unique, sep=", ")
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
    alg = configure(get_algorithm(algorithm), options or Options())
    costs = symbolic_costs(alg, options)
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
