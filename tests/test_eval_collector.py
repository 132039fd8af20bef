"""The cyclic garbage collector around one evaluation (``evaluate_deployment``): paused inside,
its state as the caller left it after (also after a refusal); and what ``memo.by_identities``
keeps per entry (its objects, so no id is reused while the entry lives)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from rlmcost import memo
from rlmcost.errors import SpecError
from rlmcost.evaluation import deployment
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.run import Run


def _run(**train: Any) -> Run:
    return Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "8b"},
                          "deployment": {"placement": "async", "train": train},
                          "cluster": {"gpus": 16}})  # fmt: skip


@pytest.fixture
def every_allocation_collects() -> Iterator[None]:
    """A threshold of 1: with the collector on, the first tracked allocation past it starts
    a collection (so an evaluation that did not pause it would see hundreds)."""
    old = gc.get_threshold()
    was = gc.isenabled()
    gc.enable()
    gc.set_threshold(1, 1, 1)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        if not was:
            gc.disable()


def test_no_collection_runs_inside_an_evaluation(
    every_allocation_collects: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = [False]
    started: list[int] = []
    evaluate_in = deployment.evaluate_in

    def watched(q: Any, run: Run) -> Any:
        inside[0] = True
        try:
            return evaluate_in(q, run)
        finally:
            inside[0] = False

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and inside[0]:
            started.append(info["generation"])

    monkeypatch.setattr(deployment, "evaluate_in", watched)
    gc.callbacks.append(callback)
    try:
        memo.clear_all()  # a cold evaluation: group estimates, passes, templates all new
        out = evaluate_deployment(_run(tp=2))
    finally:
        gc.callbacks.remove(callback)
    assert [g.name for g in out.groups] == ["rollout", "trainer"]
    assert started == []
    assert gc.isenabled()


def test_the_collector_is_left_as_the_caller_had_it() -> None:
    was = gc.isenabled()
    try:
        gc.disable()
        evaluate_deployment(_run(tp=2))
        assert not gc.isenabled()  # off stays off
        gc.enable()
        evaluate_deployment(_run(tp=2))
        assert gc.isenabled()
        with pytest.raises(SpecError):  # a refusal inside: resumed all the same
            evaluate_deployment(_run(tp=3))
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


class _Obj:
    pass


def test_by_identities_holds_its_objects_in_the_entry() -> None:
    kept: dict[Any, Any] = {}
    a, b = _Obj(), _Obj()
    refs = weakref.ref(a), weakref.ref(b)
    assert memo.by_identities(kept, (a, b), lambda: "value", also=(1,)) == "value"
    key = (id(a), id(b), (1,))
    del a, b
    gc.collect()
    assert all(r() is not None for r in refs)  # alive while the entry is: ids not reused
    a, b = (r() for r in refs)
    assert memo.by_identities(kept, (a, b), lambda: "other", also=(1,)) == "value"
    kept.clear()
    del a, b
    gc.collect()
    assert all(r() is None for r in refs)
    assert key not in kept
