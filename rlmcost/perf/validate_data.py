"""A validation table shipped as JSON under ``rlmcost/perf/data/`` (``engine_runs.json``,
``memory_runs.json``): read it and check what every row of every table must carry."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from rlmcost.errors import SpecError


def read_table(filename: str, check_row: Callable[[dict[str, Any], dict[str, Any]], None],
               ) -> dict[str, Any]:  # fmt: skip
    """``rlmcost/perf/data/<filename>`` as loaded, each of its rows passed to ``check_row``
    with the table's sources."""
    text = resources.files("rlmcost.perf").joinpath("data", filename).read_text()
    table = json.loads(text)
    for row in table["rows"]:
        check_row(row, table["sources"])
    return table


def check_common(what: str, row: dict[str, Any], fields: Sequence[str],
                 sources: dict[str, Any]) -> str:  # fmt: skip
    """The row's id; a SpecError naming it when it lacks one of ``fields`` or names a source
    the table does not list (``what``: the table's kind of row, for the message)."""
    rid = str(row.get("id", "?"))
    missing = [k for k in fields if k not in row]
    if missing:
        raise SpecError(f"{what} row {rid}: missing {', '.join(missing)}")
    if row["source"] not in sources:
        raise SpecError(f"{what} row {rid}: unknown source {row['source']!r}")
    return rid
