"""`rlmcost placements`: the headline and the notes say one thing. A note that finds a
deployment beyond the seven configurations faster than the one the headline names (the best
synchronous split of the same GPUs, rlmcost.plan.sizing.async_note) had left the headline
saying "fastest that fits: combined" (8B PPO on 16 H100: combined 17.4 s, while the notes named
the split rollout=8,... at 16.4 s and that split overlapped at 13.3 s); now the headline says
it is the fastest of the configurations and names what the notes found faster, and --json
lists it (faster_outside)."""

from __future__ import annotations

import json
import re
import shlex

from typer.testing import CliRunner

from rlmcost.cli import app

QUERY = ["placements", "-m", "8b", "--gpus", "16"]


def test_the_headline_names_what_the_notes_find_faster() -> None:
    res = CliRunner().invoke(app, QUERY, env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    head = next(x for x in lines if x.startswith("fastest that fits"))
    best = float(re.search(r"\(([\d.]+) s per iteration", head).group(1))
    # every note's faster synchronous split is named below the headline
    said = [float(t) for n in lines if "slower than the best synchronous split" in n
            for t in re.findall(r"GPUs, \S+ \(([\d.]+) s;", n)]  # fmt: skip
    faster = [t for t in said if t < best]
    assert faster, "the query no longer shows the case"
    assert head.startswith("fastest that fits of these configurations: ")
    beyond = next(x for x in lines if x.startswith("faster beyond them"))
    for t in faster:
        assert f"{t:.2f}"[:-1] in beyond or f"{t:.3g}" in beyond, (t, beyond)


def test_json_lists_them_faster_than_the_best_with_a_command_that_reproduces_it() -> None:
    res = CliRunner().invoke(app, [*QUERY, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    best = next(p for p in data["placements"] if p["placement"] == data["fastest_that_fits"])
    outside = data["faster_outside"]
    assert outside and all(o["time_s"] < best["iteration_time_s"] for o in outside)
    assert [o["time_s"] for o in outside] == sorted(o["time_s"] for o in outside)
    split = next(o for o in outside if o["command"])
    again = CliRunner().invoke(app, [*shlex.split(split["command"])[1:], "--json"])
    assert again.exit_code == 0, again.output
    assert abs(json.loads(again.output)["iteration"]["time_s"] - split["time_s"]) < 1e-9


def test_no_faster_deployment_no_qualifier() -> None:
    """8 GPUs: async is the fastest and no note finds a faster split."""
    res = CliRunner().invoke(app, ["placements", "-m", "8b", "--gpus", "8", "--json"])
    data = json.loads(res.output)
    assert data["fastest_that_fits"] == "async" and data["faster_outside"] == []
    text = CliRunner().invoke(app, ["placements", "-m", "8b", "--gpus", "8"]).output
    assert "fastest that fits: async" in text and "faster beyond" not in text
