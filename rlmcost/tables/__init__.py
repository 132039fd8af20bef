"""The paper's tables, rebuilt from the library by one command (`rlmcost tables`).

Each ``table_XX`` module has ``build() -> list[Table]``; :func:`write_all` renders every table
as Markdown, LaTeX and CSV under ``tables/``, each file starting with the command that made it,
and :func:`check` reports the files that differ from a fresh build. The LaTeX files are
fragments for a plain article whose second line names the preamble they need
(:mod:`rlmcost.tables.latex`).
"""

from __future__ import annotations

import csv
import importlib
import io
from dataclasses import field
from pathlib import Path

from rlmcost import __version__
from rlmcost.frozen import dataclass

# Modules building the tables, in order. Each defines build() -> list[Table].
TABLE_MODULES = ("table_03", "table_04", "table_05_08", "table_09")

COMMAND = "rlmcost tables"


@dataclass(frozen=True)
class Cell:
    """A formula: ``text`` in Markdown/CSV, ``latex`` (math mode) in LaTeX."""

    text: str
    latex: str | None = None


@dataclass(frozen=True)
class Table:
    """A titled grid of cells; ``name`` is the file stem (e.g. ``table_03``), ``number`` the
    paper's table number (``III``). Plain strings are text cells, :class:`Cell` s formulas.
    ``widths``: the LaTeX column widths as fractions of the line (default: equal); ``size``
    the LaTeX font size (``scriptsize`` for the widest tables)."""

    name: str
    number: str
    title: str
    columns: list[str]
    rows: list[list[Cell | str]]
    notes: list[str] = field(default_factory=list)
    widths: tuple[float, ...] | None = None
    size: str = "footnotesize"

    @property
    def full_title(self) -> str:
        return f"Table {self.number}: {self.title}"

    @property
    def caption(self) -> str:
        """The LaTeX caption: the title once (LaTeX adds its own "Table N:")."""
        return self.title[:1].upper() + self.title[1:]

    @staticmethod
    def _text(cell: Cell | str) -> str:
        return cell.text if isinstance(cell, Cell) else cell

    @staticmethod
    def _latex(cell: Cell | str) -> str:
        from rlmcost.tables.latex import breakable_math, tex_text

        if isinstance(cell, Cell) and cell.latex is not None:
            return f"${breakable_math(cell.latex)}$"
        return tex_text(Table._text(cell))

    def header(self) -> str:
        return f"made by `{COMMAND}` (rlmcost {__version__}): {self.full_title}"

    def markdown(self) -> str:
        lines = [f"<!-- {self.header()} -->", "", f"# {self.full_title}", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "---|" * len(self.columns))
        for row in self.rows:
            cells = []
            for c in row:
                text = self._text(c).replace("|", "\\|")
                cells.append(f"`{text}`" if isinstance(c, Cell) and text else text)
            lines.append("| " + " | ".join(cells) + " |")
        lines += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(lines).rstrip() + "\n"

    def latex(self) -> str:
        from rlmcost.tables.latex import fragment

        n = len(self.columns)
        return fragment(
            self.header(),
            self.name,
            self.caption,
            self.columns,
            self.widths or (1 / n,) * n,
            [[self._latex(c) for c in row] for row in self.rows],
            self.notes,
            self.size,
        )

    def csv(self) -> str:
        buf = io.StringIO()
        buf.write(f"# {self.header()}\n")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for row in self.rows:
            w.writerow([self._text(c) for c in row])
        return buf.getvalue()

    def files(self) -> dict[str, str]:
        return {
            f"{self.name}.md": self.markdown(),
            f"{self.name}.tex": self.latex(),
            f"{self.name}.csv": self.csv(),
        }


def big_o_cell(expr: object) -> Cell:
    """O(expr) with common factors pulled out (``sympy.factor_terms``), for display only:
    ``O(B*L*d**2*m + B*L*d*m**2 + B*V*d*m)`` shows as ``O(B*d*m*(L*d + L*m + V))``."""
    import sympy as sp

    shown = sp.factor_terms(sp.sympify(expr))
    return Cell(f"O({shown})", rf"O\left({sp.latex(shown)}\right)")


def expr_cell(expr: object) -> Cell:
    """An explicit formula: sympy's ``str`` and ``latex`` of ``expr``."""
    import sympy as sp

    e = sp.sympify(expr)
    return Cell(str(e), sp.latex(e))


def build_all() -> list[Table]:
    """Every table, freshly built."""
    tables: list[Table] = []
    for name in TABLE_MODULES:
        tables += importlib.import_module(f"rlmcost.tables.{name}").build()
    return tables


def rendered() -> dict[str, str]:
    """File name -> content for every table."""
    out: dict[str, str] = {}
    for t in build_all():
        out.update(t.files())
    return out


def write_all(outdir: Path) -> list[Path]:
    """Write every table under ``outdir``; returns the paths written."""
    from rlmcost.errors import SpecError

    files = rendered()
    paths = []
    try:
        outdir.mkdir(parents=True, exist_ok=True)
        for fname, text in files.items():
            p = outdir / fname
            p.write_text(text)
            paths.append(p)
    except OSError as exc:
        raise SpecError(
            f"cannot write tables to {outdir}: {exc.strerror or exc}; give a writable --out"
        ) from None
    return paths


def check(outdir: Path) -> list[str]:
    """Names of the files under ``outdir`` that are missing or differ from a fresh build."""
    bad = []
    for fname, text in rendered().items():
        p = outdir / fname
        if not p.is_file() or p.read_text() != text:
            bad.append(fname)
    return bad
