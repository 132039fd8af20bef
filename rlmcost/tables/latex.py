r"""LaTeX of the tables: one fragment per table that compiles in a plain ``article``.

A fragment starts with comments naming the command that made it and the preamble it needs
(:data:`PREAMBLE`), then sets the table as a ``longtable`` on landscape pages (``pdflscape``)
with ragged-right ``p{}`` columns whose widths add up to the line width, so a wide table fits
the page and a long one continues on the next (its caption repeated, "continued").

* Text cells, headers, captions and notes pass through :func:`tex_text`, the one escaping
  function: TeX's special characters and every non-ASCII character the tables use become
  commands; any other non-ASCII character is an error, not a silently broken file.
* Math cells are sympy's LaTeX (or the notation of Tables IV/IX) through
  :func:`breakable_math`: TeX breaks inline math only after a binary operator or relation at
  the formula's top level, so ``\left( \right)`` groups become plain parentheses, a fraction
  over a sum becomes 1/denominator times the sum in parentheses, and every ", " allows a
  break (``\allowbreak``); a long sum then wraps inside its column.
"""

from __future__ import annotations

from collections.abc import Sequence

PACKAGES = ("amsmath", "array", "booktabs", "longtable", "pdflscape")
"""amsmath: ``\\text`` and ``\\operatorname``; array: ``>{...}`` column prefixes; booktabs:
the rules; longtable: page breaks; pdflscape: landscape pages."""

PREAMBLE = r"\usepackage{" + ",".join(PACKAGES) + "}"

SPECIAL = "#$%&_{}~^\\"
"""TeX's special characters in text."""

_TEXT = {
    "\\": r"\textbackslash{}",
    "#": r"\#",
    "$": r"\$",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_\allowbreak{}",  # snake_case keys may wrap
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # OT1, the default font encoding, has no <, > or | glyph in text
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "†": r"\dag{}",
    "‡": r"\ddag{}",
    "§": r"\S{}",
    "×": r"\texttimes{}",
    "·": r"\textperiodcentered{}",
    "–": "--",
    "—": "---",
    "’": "'",
    "≤": r"\ensuremath{\leq}",
    "≥": r"\ensuremath{\geq}",
    "≈": r"\ensuremath{\approx}",
    "→": r"\ensuremath{\to}",
    "∞": r"\ensuremath{\infty}",
    "π": r"\ensuremath{\pi}",
    "θ": r"\ensuremath{\theta}",
    "ψ": r"\ensuremath{\psi}",
    "φ": r"\ensuremath{\phi}",
    "κ": r"\ensuremath{\kappa}",
}
"""Character -> LaTeX for text mode."""


def tex_text(s: str) -> str:
    r"""``s`` as LaTeX text: special characters escaped, known non-ASCII ones as commands.

    >>> print(tex_text("C^tok(m) & 4|M|_act"))
    C\textasciicircum{}tok(m) \& 4\textbar{}M\textbar{}\_\allowbreak{}act
    >>> print(tex_text("~50% of #1 {x} † \\"))
    \textasciitilde{}50\% of \#1 \{x\} \dag{} \textbackslash{}
    """
    out = []
    for ch in s:
        if ch in _TEXT:
            out.append(_TEXT[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:
            raise ValueError(f"no LaTeX for {ch!r} in {s!r}; add it to rlmcost.tables.latex._TEXT")
    return "".join(out)


def _group(s: str, i: int) -> int:
    """Index just past the brace group opening at ``s[i] == "{"``."""
    depth = 0
    for j in range(i, len(s)):
        depth += {"{": 1, "}": -1}.get(s[j], 0)
        if depth == 0:
            return j + 1
    raise ValueError(f"unbalanced braces in {s!r}")


def _has_top_level_plus(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "+" and depth == 0:
            return True
    return False


def _split_fracs(latex: str) -> str:
    r"""``\frac{a + b}{c}`` as ``\frac{1}{c} (a + b)``: a fraction is one unbreakable box,
    a parenthesized sum may wrap."""
    out, i = [], 0
    while (j := latex.find(r"\frac{", i)) >= 0:
        num_end = _group(latex, j + 5)
        den_end = _group(latex, num_end)
        num = _split_fracs(latex[j + 6 : num_end - 1])
        den = latex[num_end:den_end]
        if _has_top_level_plus(num):
            out.append(latex[i:j] + rf"\frac{{1}}{den} ({num})")
        else:
            out.append(latex[i:j] + rf"\frac{{{num}}}{den}")
        i = den_end
    return "".join(out) + latex[i:]


def breakable_math(latex: str) -> str:
    r"""Inline math that may wrap: ``\left( \right)`` pairs as plain parentheses, a fraction
    over a sum as 1/denominator times the parenthesized sum, a break allowed after each ", ".

    >>> breakable_math(r"O\left(d \left(L d + V\right)\right)")
    'O(d (L d + V))'
    >>> breakable_math(r"\max(\frac{a + b}{2}, \frac{c}{2})")
    '\\max(\\frac{1}{2} (a + b),\\allowbreak \\frac{c}{2})'
    """
    out = latex.replace(r"\left(", "(").replace(r"\right)", ")")
    return _split_fracs(out).replace(", ", r",\allowbreak ")


def column_spec(widths: Sequence[float]) -> str:
    """Ragged-right ``p{}`` columns taking ``widths`` (fractions adding up to 1) of the line."""
    if abs(sum(widths) - 1) > 1e-9:
        raise ValueError(f"column widths {list(widths)} must add up to 1")
    return "".join(
        rf">{{\raggedright\arraybackslash}}p{{\dimexpr {w:.3f}\linewidth-2\tabcolsep\relax}}"
        for w in widths
    )


def fragment(
    header: str,
    label: str,
    caption: str,
    columns: Sequence[str],
    widths: Sequence[float],
    rows: Sequence[Sequence[str]],
    notes: Sequence[str],
    size: str = "footnotesize",
) -> str:
    """The whole fragment; ``rows`` are rendered cells (escaped text or ``$...$`` math),
    ``caption``, ``columns`` and ``notes`` plain text, ``size`` a LaTeX font size command."""
    head = [r"\toprule", " & ".join(tex_text(c) for c in columns) + r" \\", r"\midrule"]
    out = [
        f"% {header}",
        f"% preamble: {PREAMBLE}",
        r"% a fragment for \input{} in an article: landscape pages, a longtable that may",
        "% continue on the next page, ragged-right columns in which the formulas wrap",
        r"\begin{landscape}",
        f"\\{size}",
        r"\setlength{\tabcolsep}{2pt}",
        r"\setlength{\LTcapwidth}{\linewidth}",
        rf"\begin{{longtable}}{{{column_spec(widths)}}}",
        rf"\caption{{{tex_text(caption)}}}\label{{tab:{label}}}\\",
        *head,
        r"\endfirsthead",
        rf"\caption[]{{{tex_text(caption)} (continued)}}\\",
        *head,
        r"\endhead",
        r"\bottomrule",
        r"\endlastfoot",
    ]
    out += [" & ".join(row) + r" \\" for row in rows]
    out.append(r"\end{longtable}")
    if notes:
        out += [r"\begin{itemize}"] + [rf"\item {tex_text(n)}" for n in notes]
        out.append(r"\end{itemize}")
    out.append(r"\end{landscape}")
    return "\n".join(out) + "\n"
