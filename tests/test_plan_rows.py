"""A plan's exact rows hold their numbers alone; the rows a plan shows (top rows, Pareto front,
best of each topology) add the command and the Run of their candidate, the Run the
evaluation saw (rlmcost.plan.rl_rows). A split's groups are parsed once per text
(rlmcost.plan.rl_runs): the same groups as parsing them per candidate."""

from __future__ import annotations

import pickle

from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.evaluation.query import groups_from_text
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import (
    RLSpace,
    candidate_run,
    candidates,
    evaluate_chunk,
    evaluate_row,
)
from rlmcost.plan.rl_rows import SourcedRow, command, with_run, with_runs
from rlmcost.plan.rl_runs import _groups_data, row_run
from rlmcost.run.spec import Run

BASE = Run.from_data({
    "algorithm": {"name": "grpo", "rule_reward": True},
    "models": {"actor": "llama-3.2-1b"},
    "workload": {"prompts": 16, "samples_per_prompt": 4, "response_len": 2048},
})  # fmt: skip
SPACE = RLSpace(placements=("baseline", "split", "roles"), tp=(1, 2), rollout_tp=(1,),
                micro_batch=(1,), offload=(False,), fractions=(0.5,))  # fmt: skip


def test_exact_rows_hold_their_numbers_alone_and_pickle_small() -> None:
    cands = candidates(BASE, SPACE, 4)[:12]
    rows = evaluate_chunk((BASE, cands))
    assert rows and all("run" not in r and "command" not in r for r in rows)
    # what a Dask worker sends back per row: the numbers (the Run's JSON alone is larger)
    run_bytes = len(pickle.dumps(candidate_run(BASE, cands[0]).to_json()))
    assert all(len(pickle.dumps(r)) < run_bytes for r in rows)


def test_a_shown_row_is_its_numbers_its_groups_then_its_command_and_run() -> None:
    c = next(c for c in candidates(BASE, SPACE, 4) if c.groups)
    row = SourcedRow(evaluate_row(BASE, c), BASE, c)
    shown = with_run(row)
    run = row_run(BASE, c)
    assert list(shown) == [*row, "group_layouts", "command", "run"]
    assert shown["run"] == run.to_json() == candidate_run(BASE, c).to_json()
    assert shown["command"] == command(run) == run.to_command()
    assert evaluate_deployment(run).iteration_time_s == shown["time_s"]
    plain = {"fits": True}
    assert with_run(plain) is plain  # a row without a source (train plans) as it is
    a, b = with_runs([row, row], [row])  # a top row on the front: written once, shared
    assert a[0] is a[1] is b[0]


def test_a_fitting_row_brings_its_groups_layouts_from_where_it_was_evaluated(
        monkeypatch) -> None:  # noqa: ANN001
    """A Dask worker returns a fitting row with its groups' layouts (ExactRow.layouts, kept
    through pickling), so the client writes the row shown without evaluating it again on
    caches that never saw the search; the layouts are those of the row's Run evaluated
    again (rlmcost.plan.rl_groups.group_layouts), which a row without them still takes."""
    import rlmcost.evaluation.deployment as deployment
    from rlmcost.plan.rl_groups import group_layouts

    c = next(c for c in candidates(BASE, SPACE, 4) if c.groups and evaluate_row(BASE, c)["fits"])
    sent = pickle.loads(pickle.dumps(evaluate_row(BASE, c)))  # as a worker returns it
    again = group_layouts(evaluate_deployment(row_run(BASE, c)))
    assert sent.layouts == again and len(again) == 2
    row = SourcedRow(sent, BASE, c)

    def no_evaluation(run: Run) -> None:
        raise AssertionError("a row with its layouts is not evaluated again")

    monkeypatch.setattr(deployment, "evaluate_deployment", no_evaluation)
    shown = with_run(row)
    assert shown["group_layouts"] == again and shown["group_layouts"] is not sent.layouts
    monkeypatch.undo()
    row.layouts = None  # a row without them: its Run evaluated again
    assert with_run(row)["group_layouts"] == again


def test_every_row_a_plan_shows_holds_the_run_its_numbers_came_from() -> None:
    r = plan_rl(BASE, "2..4", space=SPACE, top=3)
    shown = [*r.rows, *r.front, *r.per_topology]
    assert r.counts.evaluated > len(r.rows) and len(r.per_topology) > 1
    for row in shown:
        assert type(row) is dict and list(row)[-2:] == ["command", "run"]
        e = evaluate_deployment(Run.from_data(row["run"]))  # the Run alone, evaluated again
        assert (e.iteration_time_s, e.peak_memory_bytes_per_device) == (
            row["time_s"], row["memory_bytes_per_device"])  # fmt: skip
        assert row["command"] == Run.from_data(row["run"]).to_command()


def test_every_bracketed_row_is_reproduced_by_its_command() -> None:
    """Rows of ``--groups`` whose brackets give the actor's group its own TP, EP, offload and
    micro-batch (pinned: rlmcost.plan.rl_space.groups_trainer_fixed): each row's command, run
    through the command line, predicts the row's time and peak memory per device."""
    import json
    import shlex

    from typer.testing import CliRunner

    from rlmcost.cli import app

    space = RLSpace(placements=(), groups="rollout=?,actor+reference=?[tp=2;ep=1;offload=optimizer"
                    ";mb=2]", rollout_tp=(1, 2), fractions=(0.5,))  # fmt: skip
    r = plan_rl(BASE, "4", space=space, top=3)
    shown = list({id(x): x for x in (*r.rows, *r.front, *r.per_topology)}.values())
    assert shown and {(x["tp"], x["ep"], x["offload"], x["micro_batch"]) for x in shown} == {
        (2, 1, "optimizer", 2)}  # fmt: skip
    for row in shown:
        res = CliRunner().invoke(app, [*shlex.split(row["command"])[1:], "--json"])
        assert res.exit_code == 0, res.output
        got = json.loads(res.output)
        peak = max(g["peak_memory_bytes_per_device"] for g in got["placement_detail"]["groups"])
        assert (got["iteration"]["time_s"], peak) == (row["time_s"],
                                                      row["memory_bytes_per_device"])


def test_a_splits_groups_parsed_once_are_those_parsed_per_candidate() -> None:
    grouped = [c for c in candidates(BASE, SPACE, 4) if c.groups]
    assert len({c.groups for c in grouped}) > 1
    for c in grouped:
        kept = [dict(g) for g in _groups_data(c.groups)]
        assert candidate_run(BASE, c).deployment.groups == groups_from_text(c.groups)
        assert [dict(g) for g in _groups_data(c.groups)] == kept  # nothing wrote into them
