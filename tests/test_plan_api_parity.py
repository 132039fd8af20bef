"""`rlmcost.plan` (the library) searches what `rlmcost plan` (the CLI) searches (issue 20: the
planner from the CLI, the API and notebook 06 alike).

Both pick the families by ``rlmcost.plan.families.searched_families`` (with a framework, those
it launches: ``FRAMEWORK_FAMILIES``, e.g. openrlhf/cli/train_ppo_ray.py's role groups) and,
without one, evaluate each family the default framework cannot launch under its launcher's
preset (``launcher_bases``, ``LAUNCHED_BY``: OpenRLHF's role groups, slime's async split). The
reference is the CLI's own JSON rows for the same query: every row's command and predicted
time must agree, in order."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import rlmcost
from rlmcost.cli import app

QUERY = {"reward": "rule", "batch": 16, "group": 4, "response_len": 512}
FLAGS = ["--reward", "rule", "-B", "16", "-K", "4", "-T", "512"]


def _cli_rows(extra: list[str]) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """The CLI's rows and its best row of each topology: (command, predicted seconds)."""
    res = CliRunner().invoke(app, ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "8", *FLAGS,
                                   "--top", "40", "--json", *extra])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    return ([(r["command"], r["time_s"]) for r in data["rows"]],
            [(r["command"], r["time_s"]) for r in data["best_per_topology"]])  # fmt: skip


def _api_rows(**extra: object) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    df = rlmcost.plan("grpo", "llama-3.2-1b", 8, top=40, **QUERY, **extra)
    tops = df.attrs["plan"].per_topology
    return (list(zip(df["command"], df["time_s"], strict=True)),
            [(r["command"], r["time_s"]) for r in tops])  # fmt: skip


def _frameworks(rows: list[tuple[str, float]]) -> set[str]:
    return {c.split("--framework ")[1].split()[0] for c, _ in rows if "--framework " in c}


def test_without_a_framework_each_family_runs_under_its_launcher_as_in_the_cli():
    cli, api = _cli_rows([]), _api_rows()
    assert api == cli
    # the role groups and the async split are OpenRLHF's and slime's, not the default's
    assert {"openrlhf", "slime", "nemo-rl"} <= _frameworks(api[1])


def test_with_a_framework_the_families_are_those_it_launches_as_in_the_cli():
    cli, api = _cli_rows(["--framework", "openrlhf"]), _api_rows(framework="openrlhf")
    assert api == cli
    assert _frameworks(api[0]) == _frameworks(api[1]) == {"openrlhf"}


def test_the_cli_query_searched_as_bench_plan_does_gives_the_cli_rows():
    """benchmarks/bench_plan.py times `rlmcost plan ...` by parsing its command line as the
    command does and searching what the command searches (rlmcost.cli.plan_query): the same
    rows and topologies as the CLI's own JSON, each family under its launcher."""
    from rlmcost.cli.plan_query import parsed, rl_plan

    target, opts = parsed(["grpo", "-m", "llama-3.2-1b", "--gpus", "8", *FLAGS, "--top", "40"])
    r = rl_plan(target, opts)
    bench = ([(x["command"], x["time_s"]) for x in r.rows],
             [(x["command"], x["time_s"]) for x in r.per_topology])  # fmt: skip
    assert bench == _cli_rows([])
    assert {"openrlhf", "slime", "nemo-rl"} <= _frameworks(bench[1])
