"""Table III block notation of one invocation's cost: the terms the symbolic Table IV and
Table IX rows are written in (``B K (S + T) C_f^tok(R_phi)``, ``D_f``, ``|M|``, ``M_KV``),
from the invocation's kind, role and token counts, as plain text and LaTeX. No sympy.
"""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind
from rlmcost.algorithms.model import Invocation
from rlmcost.frozen import dataclass

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


def join_terms(*parts: Term, sep: str = " ") -> Term:
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
        return join_terms(
            n, Term(f"C_gen^roll({r.symbol}{args})", rf"C_{{gen}}^{{roll}}({r.latex}{largs})")
        )
    if inv.kind is Kind.FORWARD:
        if inv.prefixes != "1":
            k = _formula(inv.prefixes)
            return join_terms(
                n,
                Term(
                    f"sum_j=1..{k.text} (S + j T/{k.text}) C_f^tok({r.symbol})",
                    rf"\sum_{{j=1}}^{{{k.latex}}} (S + jT/{k.latex})\, C_f^{{tok}}({r.latex})",
                ),
            )
        return join_terms(n, _tokens(inv), Term(f"C_f^tok({r.symbol})", rf"C_f^{{tok}}({r.latex})"))
    return join_terms(
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
    return join_terms(
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
