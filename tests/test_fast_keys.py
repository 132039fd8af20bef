"""The values the fast evaluation keeps beside the groups' part or per group estimate (a
critical cycle's label, a schedule template, the idle-rank notes) follow what they are keyed
on: a deployment that changes the input changes the kept value, and each equals the
evaluation that keeps nothing (``rlmcost.memo.plain``)."""

from __future__ import annotations

import json
from typing import Any

from rlmcost import memo
from rlmcost.errors import SpecError
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.placement import query as resolved
from rlmcost.run.spec import Run


def _run(placement: str | None, staleness: int | None, groups: list[dict[str, Any]],
         prompts: int = 16, gpus: int | None = None) -> Run:  # fmt: skip
    return Run.from_data({
        "algorithm": {"name": "ppo"},
        "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": prompts, "samples_per_prompt": 1},
        "deployment": {"framework": "verl", "placement": placement, "staleness": staleness,
                       "groups": groups},
        "cluster": {"hardware": "h100-sxm", "gpus": gpus},
    })  # fmt: skip


TWO = [{"members": "rollout", "gpus": 8}, {"members": "actor+critic+reward", "gpus": 8}]
THREE = [{"members": "rollout", "gpus": 4}, {"members": "actor", "gpus": 8},
         {"members": "critic+reward", "gpus": 4}]  # fmt: skip


def _plain(run: Run) -> Any:
    with memo.plain():
        return evaluate_deployment(run)


def _text(e: Any) -> str:
    return json.dumps(e.to_json(), sort_keys=True, default=repr)


def test_critical_labels_follow_the_placement_and_its_tasks() -> None:
    """The critical cycle's label is kept per query by the template and the placement's
    tasks (``iteration._critical_label``): two deployments of one query whose critical
    cycles have the same unit keys on groups of other names get each its own label, as the
    evaluation that keeps nothing names it, also when warm; other placements name other
    cycles."""

    def ideal(members: str) -> Run:
        return Run.from_data({
            "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.2-1b"},
            "workload": {"prompts": 16, "samples_per_prompt": 1},
            "deployment": {"ideal": True, "groups": [{"members": "rollout", "gpus": 8},
                                                     {"members": members, "gpus": 8}]},
            "cluster": {"hardware": "h100-sxm"},
        })  # fmt: skip

    runs = [ideal("actor+critic+reward+reference"), ideal("reference+reward+critic+actor"),
            ideal("actor+critic+reward+reference")]  # fmt: skip
    resolved._QUERIES.clear()
    kept = evaluate_many(runs)
    assert not any(isinstance(e, SpecError) for e in kept)
    labels = [e.critical_path for e in kept]
    assert labels == [_plain(r).critical_path for r in runs]
    assert labels[0] != labels[1] and labels[2] == labels[0]
    assert "critic train [reference+reward+critic+actor]" in labels[1]
    others = [_run(None, None, TWO), _run(None, None, THREE), _run("async", 1, THREE)]
    kept = evaluate_many(others)
    assert [e.critical_path for e in kept] == [_plain(r).critical_path for r in others]
    assert len({e.critical_path for e in kept}) == 3  # three placements, three cycles


def test_templates_kept_beside_the_groups_part_follow_the_staleness() -> None:
    """A synchronous and an overlapped loop on the same groups share the groups' part, and
    each takes its own schedule template from it (``iteration._template``, by staleness and
    links): their iteration times differ as the evaluation that keeps nothing gives them."""
    from rlmcost.placement.iteration_groups import iteration_groups

    runs = [_run(None, None, THREE), _run("async", 1, THREE)]
    resolved._QUERIES.clear()
    sync, stale = evaluate_many(runs)
    assert not isinstance(sync, SpecError) and not isinstance(stale, SpecError)
    seen = next(iter(resolved._QUERIES.values())).groups_seen
    static = iteration_groups(seen, sync.groups)
    assert sorted(k[0] for k in static.plans) == [0, 1]  # one template per staleness
    assert len({id(p) for p in static.plans.values()}) == 2
    assert [sync.iteration_time_s, stale.iteration_time_s] == \
        [_plain(r).iteration_time_s for r in runs]  # fmt: skip
    assert stale.iteration_time_s < sync.iteration_time_s


def test_idle_rank_notes_per_group_follow_the_batch() -> None:
    """The notes on data-parallel ranks that hold no sequence are kept per group estimate
    (``evaluation.deployment._idle_ranks_of``): a batch smaller than the trainer's dp gives
    them (training jobs first, then the forwards, group by group, as the evaluation that
    keeps nothing orders them); a larger batch on the same groups gives none."""
    small, large = _run(None, None, TWO, prompts=4), _run(None, None, TWO, prompts=16)
    resolved._QUERIES.clear()
    for run, idle in ((small, True), (large, False), (small, True)):
        e = evaluate_deployment(run)
        notes = [n for n in e.notes if "ranks hold none" in n]
        assert notes == [n for n in _plain(run).notes if "ranks hold none" in n]
        assert bool(notes) is idle
    notes = [n for n in evaluate_deployment(small).notes if "ranks hold none" in n]
    assert any(" train on " in n for n in notes) and any(" forward on " in n for n in notes)
    first_forward = next(i for i, n in enumerate(notes) if " forward on " in n)
    assert all(" train on " in n for n in notes[:first_forward])
