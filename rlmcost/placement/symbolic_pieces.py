"""Table IX's pieces: a quantity as notation and as an exact expression (:class:`Piece`), their
sum, max and Big-O, and one placed invocation's pieces (:func:`task_cost`: work, depth and the
transient it holds; :func:`role_state`: what its model keeps resident on a group;
:func:`second_layout`: the extra copy of hybrid execution). :mod:`rlmcost.placement.symbolic`
composes them into the rows; its docstring states the assumptions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import sympy as sp

from rlmcost import blocks as bl
from rlmcost.algorithms.cost import REGIME, invocation_cost
from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.algorithms.model import TRAINABLE
from rlmcost.algorithms.notation import depth_term, memory_terms, work_term
from rlmcost.arch import Arch
from rlmcost.choices import Head
from rlmcost.frozen import dataclass
from rlmcost.placement.device_groups import Task


@dataclass(frozen=True)
class Piece:
    """A quantity as notation (text, LaTeX) and as an explicit expression on the canonical
    model; ``bound`` is the expression with D_gen replaced by its Big-O bound (depths)."""

    text: str
    latex: str
    expr: sp.Expr
    bound: sp.Expr | None = None

    @property
    def upper(self) -> sp.Expr:
        return self.expr if self.bound is None else self.bound


ZERO = Piece("0", "0", sp.Integer(0))


def plus(pieces: Sequence[Piece]) -> Piece:
    """The sum, notation joined by ' + ' (zeros left out)."""
    parts = [p for p in pieces if p.text != "0"]
    if not parts:
        return ZERO
    if len(parts) == 1:
        return parts[0]
    return Piece(
        " + ".join(p.text for p in parts),
        " + ".join(p.latex for p in parts),
        sp.Add(*(p.expr for p in parts)),
        sp.Add(*(p.upper for p in parts)),
    )


def maximum(pieces: Sequence[Piece]) -> Piece:
    """max(...), each distinct notation once; a single piece stays itself."""
    unique = list({p.text: p for p in pieces if p.text != "0"}.values())
    if not unique:
        return ZERO
    if len(unique) == 1:
        return unique[0]
    return Piece(
        "max(" + ", ".join(p.text for p in unique) + ")",
        r"\max(" + ", ".join(p.latex for p in unique) + ")",
        sp.Max(*(p.expr for p in unique), evaluate=False),
        sp.Max(*(p.upper for p in unique), evaluate=False),
    )


@cache
def order_of(expr: sp.Expr) -> sp.Expr:
    """O(.) of a cost, d_ff = O(d): each max(a, b, ...) becomes O(a) + O(b) + ... (a max and a
    sum of a fixed number of nonnegative terms agree up to a constant), memoized, so shared
    stage expressions are reduced once."""
    expr = sp.sympify(expr)
    maxima = sorted(expr.atoms(sp.Max), key=sp.count_ops)
    if not maxima:
        return bl.big_o(expr, REGIME)
    inner = {m: sp.Add(*(order_of(a) for a in m.args)) for m in maxima}
    return bl.big_o(expr.xreplace(inner), REGIME)


# --------------------------------------------------------------------------------------------
# One task
# --------------------------------------------------------------------------------------------

_SHARED = ("pi_theta", "pi_SH", r"\pi_\theta", r"\pi_{\mathrm{SH}}")


def _rename_shared(text: str, latex: str, shared: bool) -> tuple[str, str]:
    if not shared:
        return text, latex
    return text.replace(_SHARED[0], _SHARED[1]), latex.replace(_SHARED[2], _SHARED[3])


def _superscript(text: str, latex: str, sup: str) -> tuple[str, str]:
    """``D_gen(pi_theta)`` -> ``D_gen^TP(pi_theta)``: the layout an invocation runs in."""
    if not sup or "(" not in text:
        return text, latex
    head, rest = text.split("(", 1)
    lhead, lrest = latex.split("(", 1)
    return f"{head}^{sup}({rest}", f"{lhead}^{{\\mathrm{{{sup}}}}}({lrest}"


def layout_tag(kind: Kind, hybrid: bool) -> str:
    """The Table IX superscript of an invocation's layout under hybrid execution."""
    if not hybrid:
        return ""
    return {Kind.GENERATE: "TP", Kind.FORWARD: "TP,PP"}.get(kind, "")


@dataclass(frozen=True)
class TaskCost:
    """One placed invocation: work, depth, and its memory pieces (state of its model in its
    home form on the group, and the transient it holds while it runs)."""

    task: Task
    work: Piece
    depth: Piece
    transient: Piece


def task_cost(task: Task, arch: Arch, values: Mapping[str, object], hybrid: bool) -> TaskCost:
    """Work, depth and transient of ``task`` (module docstring); the value head included."""
    inv = task.invocation
    cost = invocation_cost(inv, arch, values)
    tag = layout_tag(inv.kind, hybrid)
    w, d = work_term(inv), depth_term(inv)
    wt, wl = _rename_shared(w.text, w.latex, task.value_head)
    dt, dl = _superscript(*_rename_shared(d.text, d.latex, task.value_head), tag)
    work = cost.work
    if task.value_head:
        head = bl.work_head_per_token(arch, Head.VALUE)  # 2 d per position
        from rlmcost.algorithms.cost import count

        n = count(inv.sequences, values)
        if inv.kind is Kind.GENERATE:
            work += n * count(inv.response, values) * head
            wt += " + B K T C_f^tok(h_V)"
            wl += r" + B K T\, C_f^{tok}(h_V)"
        else:
            tokens = n * (count(inv.prompt, values) + count(inv.response, values))
            work += count(inv.passes, values) * tokens * 3 * head
            wt += " + E_ppo B K (S + T) C_tr^tok(h_V)"
            wl += r" + E_{\mathrm{ppo}} B K (S + T)\, C_{tr}^{tok}(h_V)"
    tr = memory_terms(inv)[1]
    tt, tl = _superscript(*_rename_shared(tr.text, tr.latex, task.value_head), tag)
    return TaskCost(
        task,
        Piece(wt, wl, sp.expand(work)),
        Piece(dt, dl, cost.depth, cost.depth_bound),
        Piece(tt, tl, cost.transient),
    )


def role_state(
    role: Role, group: str, tasks: Sequence[Task], archs: Mapping[Role, Arch], shared: bool
) -> Piece:
    """What ``role`` keeps resident on ``group``: 4|M| when the group trains it, the shadow
    M_sh = |M| when it is trainable, trained elsewhere and only read here, else |M|."""
    mine = [t for t in tasks if t.role is role]
    head = mine[0].invocation.model_head
    params = bl.params(archs[role], head)
    sym = role.symbol if not (shared and role is Role.ACTOR) else "pi_SH"
    lsym = role.latex if not (shared and role is Role.ACTOR) else r"\pi_{\mathrm{SH}}"
    here = [t for t in mine if t.group == group]
    if any(t.kind is Kind.TRAIN for t in here):
        if shared and role is Role.ACTOR:
            params += bl.params_head(archs[role], Head.VALUE)  # the d x 1 value head
        return Piece(f"4|{sym}|", rf"4|{lsym}|", bl.memory_adam_states(params))
    if role in TRAINABLE and any(t.kind is Kind.TRAIN for t in mine):
        return Piece(f"M_sh({sym})", rf"M_{{\mathrm{{sh}}}}({lsym})", params)
    return Piece(f"|{sym}|", rf"|{lsym}|", params)


def second_layout(task: Task, tasks: Sequence[Task], arch: Arch, hybrid: bool) -> Piece:
    """Under hybrid execution, the copy of a trained model in the layout of an invocation that
    is not its training (|pi^TP| while generating); ZERO otherwise."""
    if not hybrid or task.kind is Kind.TRAIN:
        return ZERO
    trains_here = any(
        t.role is task.role and t.kind is Kind.TRAIN and t.group == task.group for t in tasks
    )
    if not trains_here:
        return ZERO
    tag = layout_tag(task.kind, hybrid)
    sym = "pi_SH" if task.value_head else task.role.symbol
    lsym = r"\pi_{\mathrm{SH}}" if task.value_head else task.role.latex
    params = bl.params(arch, task.invocation.model_head)
    return Piece(f"|{sym}^{tag}|", rf"|{lsym}^{{\mathrm{{{tag}}}}}|", params)
