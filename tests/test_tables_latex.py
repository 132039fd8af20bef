"""tables/*.tex: fragments that compile in a plain article, every cell well-formed LaTeX.

The committed files are read back and checked cell by cell: math cells with matplotlib's
mathtext parser (a TeX math parser independent of the code that wrote them), text cells for
unescaped special characters; and, where pdflatex is installed, the whole set is compiled in
a plain ``article`` with the preamble the files name, without errors or overfull boxes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import sympy as sp

from rlmcost import symbols as sy
from rlmcost import tables as tb
from rlmcost.logs import clog2
from rlmcost.tables.latex import breakable_math, tex_text

ROOT = Path(__file__).resolve().parents[1]
TEX = sorted((ROOT / "tables").glob("*.tex"))
SPECIAL = set("#$%&_{}~^\\")

# The text-mode escapes a writer may use: \# \$ \% \& \_ \{ \}, the text-symbol commands
# (LaTeX's own names for the characters), and math symbols wrapped in \ensuremath.
TEXT_ESCAPES = re.compile(
    r"\\[#$%&_{}]"
    r"|\\(?:textbackslash|textasciitilde|textasciicircum|textless|textgreater|textbar"
    r"|textperiodcentered|texttimes|dag|ddag|S|allowbreak)\{\}"
    r"|\\ensuremath\{\\[a-zA-Z]+\}"
)


def _rows(text: str) -> list[list[str]]:
    """The data rows of a fragment's longtable, split into cells."""
    body = text.split("\\endlastfoot\n", 1)[1].split("\\end{longtable}", 1)[0]
    rows = []
    for line in body.strip().splitlines():
        assert line.endswith(r" \\"), line[-40:]
        rows.append([c.strip() for c in re.split(r"(?<!\\)&", line[:-3])])
    return rows


def _head(text: str) -> list[str]:
    line = text.split("\\toprule\n", 1)[1].split("\n", 1)[0]
    return [c.strip() for c in re.split(r"(?<!\\)&", line.removesuffix(r" \\"))]


def _for_mathtext(cell: str) -> str:
    """A math cell as matplotlib's mathtext reads it: ``\\allowbreak`` (a TeX line-break
    penalty, no glyph) is a command mathtext does not know, so it is dropped for the check."""
    return cell.replace(r"\allowbreak", "")


def _bare_specials(text_cell: str) -> set[str]:
    return set(TEXT_ESCAPES.sub("", text_cell)) & SPECIAL


@pytest.fixture(scope="module")
def titles() -> dict[str, str]:
    return {t.name: t.title for t in tb.build_all()}


def test_every_table_has_a_tex_file(titles):
    assert [p.stem for p in TEX] == sorted(titles)


@pytest.mark.parametrize("path", TEX, ids=lambda p: p.name)
def test_fragment_names_its_preamble_and_has_a_caption_with_label(path, titles):
    text = path.read_text()
    lines = text.splitlines()
    assert "rlmcost tables" in lines[0]
    assert lines[1].startswith(r"% preamble: \usepackage{")
    for pkg in ("amsmath", "booktabs", "longtable", "pdflscape", "array"):
        assert pkg in lines[1], pkg
    assert r"\documentclass" not in text and r"\begin{document}" not in text
    caption = re.search(r"\\caption\{(.*)\}\\label\{tab:" + path.stem + r"\}", text)
    assert caption, "caption with \\label"
    # LaTeX numbers the table itself: the caption does not start with "Table N:" again
    assert not re.match(r"Table [IVX\d]+", caption.group(1)), caption.group(1)
    assert caption.group(1).lower() == tex_text(titles[path.stem]).lower()


@pytest.mark.parametrize("path", TEX, ids=lambda p: p.name)
def test_every_math_cell_parses_and_no_text_cell_has_a_bare_special(path):
    from matplotlib.mathtext import MathTextParser

    parser = MathTextParser("agg")
    text = path.read_text()
    rows = _rows(text)
    n_cols = len(_head(text))
    n_math = 0
    for row in rows:
        assert len(row) == n_cols, row[:2]
        for cell in row:
            if cell.startswith("$"):
                assert cell.endswith("$") and cell.count("$") == 2, cell[:80]
                # independent: matplotlib's TeX math parser accepts the formula
                parser.parse(_for_mathtext(cell))
                n_math += 1
            else:
                assert cell.isascii(), cell
                assert not _bare_specials(cell), cell
    assert n_math >= len(rows)  # every row has at least one formula
    for text_cell in _head(text):
        assert text_cell.isascii() and not _bare_specials(text_cell), text_cell
    caption = re.search(r"\\caption\{(.*)\}\\label", text).group(1)
    assert caption.isascii() and not _bare_specials(caption)
    for item in re.findall(r"^\\item (.*)$", text, flags=re.M):
        assert item.isascii() and not _bare_specials(item), item[:80]


def test_tex_text_escapes_every_special_character():
    for ch in SPECIAL:
        escaped = tex_text(f"a{ch}b")
        assert escaped != f"a{ch}b"
        assert not _bare_specials(escaped), escaped
    assert tex_text("† ‡ § ≤") == r"\dag{} \ddag{} \S{} \ensuremath{\leq}"
    with pytest.raises(ValueError, match="no LaTeX for"):
        tex_text("ü")


def test_ceilings_and_logs_of_sums_keep_their_parentheses():
    # ceil(log2(S + T)) must not read as ceil(log2 S) + T
    assert sp.latex(clog2(sy.S + sy.T)) == r"\lceil \log_2 (S + T) \rceil"
    assert sp.latex(clog2(sy.B * sy.m)) == r"\lceil \log_2 (B m) \rceil"
    assert sp.latex(clog2(sy.d / sy.h)) == r"\lceil \log_2 \frac{d}{h} \rceil"
    for path in TEX:
        assert not re.search(r"\\log_2 [A-Za-z0-9_{}]+ [+*]", path.read_text()), path.name
    assert r"\lceil \log_2 (S + T) \rceil" in (ROOT / "tables" / "table_03.tex").read_text()


def test_breakable_math_keeps_the_formula():
    # the same expression, with the groups TeX cannot break opened up
    assert breakable_math(r"O\left(d \left(L d + V\right)\right)") == "O(d (L d + V))"
    assert (
        breakable_math(r"\frac{a + b}{2} + \frac{c}{P_{t}}")
        == r"\frac{1}{2} (a + b) + \frac{c}{P_{t}}"
    )


def _preamble() -> str:
    return TEX[0].read_text().splitlines()[1].removeprefix("% preamble: ")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_all_fragments_compile_in_a_plain_article_without_overfull_boxes(tmp_path):
    for p in TEX:
        shutil.copy(p, tmp_path / p.name)
    inputs = "\n".join(rf"\input{{{p.stem}}}" for p in TEX)
    doc = f"\\documentclass{{article}}\n{_preamble()}\n"
    doc += f"\\begin{{document}}\n{inputs}\n\\end{{document}}\n"
    (tmp_path / "doc.tex").write_text(doc)
    r = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = (tmp_path / "doc.log").read_text(errors="replace")
    # independent: a full LaTeX build of the committed files
    assert r.returncode == 0, log[-3000:]
    overfull = re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)
    assert not [w for w in overfull if float(w) > 0.5], overfull
