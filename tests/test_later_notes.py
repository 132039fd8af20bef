"""An evaluation's notes are written when first read (``placement.later_notes``): read after
other evaluations, through the kept caches, the same strings in the same order as the ones
read at once inside ``memo.plain`` (nothing kept), through every reader (the attribute,
equality, ``to_json``, ``dataclasses.replace``, pickle, deepcopy); a run the evaluation
refuses is still refused by ``evaluate_deployment`` itself, not at the notes' read."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from rlmcost import memo
from rlmcost.errors import SpecError
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.run import Run

RUNS = [
    {"algorithm": {"name": "grpo"}, "models": {"actor": "8b"},
     "deployment": {"placement": "async"}, "cluster": {"gpus": 16}},
    {"algorithm": {"name": "ppo"}, "models": {"actor": "8b"},
     "deployment": {"placement": "hybrid", "offload_idle": True}, "cluster": {"gpus": 8}},
    {"algorithm": {"name": "ppo"}, "models": {"actor": "70b"}, "cluster": {"gpus": 32}},
]


@pytest.mark.parametrize("data", RUNS)
def test_notes_written_when_read_equal_the_plain_ones(data: dict) -> None:
    run = Run.from_data(data)
    with memo.plain():  # nothing kept: the notes read at once, as before they were deferred
        plain = evaluate_deployment(run)
        want = plain.notes
    assert want  # every one of these runs states something
    later = evaluate_deployment(run)
    for other in RUNS:  # other evaluations between the result and its notes' read
        evaluate_deployment(Run.from_data(other))
    assert "_notes_later" in later.__dict__ and "notes" not in later.__dict__
    assert later.notes == want and later.notes is later.notes  # written once, then kept
    assert "_notes_later" not in later.__dict__
    assert evaluate_deployment(run) == plain  # equality reads them
    assert evaluate_deployment(run).to_json()["notes"] == list(want)
    assert dataclasses.replace(evaluate_deployment(run), prices={}).notes == want
    assert pickle.loads(pickle.dumps(evaluate_deployment(run))).__dict__["notes"] == want
    assert copy.deepcopy(evaluate_deployment(run)).__dict__["notes"] == want
    assert evaluate_many([run])[0].notes == want


def test_refused_run_raises_at_evaluation() -> None:
    run = Run.from_data({"algorithm": {"name": "ppo"}, "models": {"actor": "8b"},
                         "deployment": {"train": {"recompute_early_stop": True}},
                         "cluster": {"gpus": 8}})
    with pytest.raises(SpecError, match="recompute-early-stop"):
        evaluate_deployment(run)


def test_missing_attribute_still_raises() -> None:
    e = evaluate_deployment(Run.from_data(RUNS[0]))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        e.nope  # noqa: B018
    assert not hasattr(e, "nope")
