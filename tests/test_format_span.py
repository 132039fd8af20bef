"""A timeline entry's seconds are one interval in one unit: `ppo -m 70b --tp 8 --timeline`
had printed its last phases as "62.9-2.16 min" and "130-3.26 min", a start in seconds before
an end in minutes (read as 130 minutes to 3.26)."""

from __future__ import annotations

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.units import format_span


def test_both_ends_in_the_end_unit():
    assert format_span(62.9, 129.6) == "1.05-2.16 min"
    assert format_span(129.6, 195.6) == "2.16-3.26 min"
    assert format_span(0, 25.14) == "0-25.14 s"
    assert format_span(3000.0, 7200.0) == "0.83-2.00 h"
    assert format_span(0.0005, 0.002) == "0.50-2.00 ms"


def test_the_timeline_row_reads_in_one_unit_per_cell():
    res = CliRunner().invoke(app, ["ppo", "-m", "70b", "--tp", "8", "--timeline"],
                             env={"COLUMNS": "300"})  # fmt: skip
    assert res.exit_code == 0, res.output
    row = next(ln for ln in res.output.splitlines() if ln.startswith("│ seconds"))
    cells = [c.strip() for c in row.split("│")[2:-1] if c.strip() != "-"]
    assert cells and any(c.endswith(" min") for c in cells)  # past a minute
    for cell in cells:
        span, unit = cell.split(" ")
        start, end = (float(x) for x in span.split("-"))
        assert unit in ("s", "min", "h") and start <= end, cell
