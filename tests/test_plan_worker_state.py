"""What a Dask worker keeps of a search from one task to the next (rlmcost.plan.floor_tasks:
``Own``, by the search's token) and when an idle worker takes another's items
(rlmcost.plan.tasks.Waiting). No Dask needed: the state is plain Python, the search's Dask
results are compared with one process's in tests/test_plan_distributed.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from rlmcost.plan import floor_tasks
from rlmcost.plan.floor_tasks import Check, Own, Seen, own
from rlmcost.plan.kinds import Objective
from rlmcost.plan.tasks import Waiting

INF = (float("inf"), float("inf"))


def _row(gpus: int, time_s: float, tp: int, fits: bool = True) -> dict[str, Any]:
    """A row as the search ranks it: its key (time, GPUs) and collapse signature fields."""
    return {"gpus": gpus, "time_s": time_s, "fits": fits, "family": "baseline", "tp": tp,
            "rollout_tp": 1}  # fmt: skip


def _cand(gpus: int) -> Any:
    return SimpleNamespace(gpus=gpus)  # what Own.learn reads of a candidate


def _check(bound: tuple[float, float]) -> Check:
    return Check(-1, 0.0, 8, 1.0, bound)  # no engines' floor: the bound alone


def test_a_candidate_past_the_kth_bound_is_skipped_by_the_bound_alone() -> None:
    """The client's rule (rl_search.draws): a bound key above the k-th row's is past the
    top k; equal or below is evaluated."""
    seen = Seen(Objective.TIME, (20.0, 8))
    assert seen.beyond(_check((20.5, 8)))
    assert not seen.beyond(_check((20.0, 8))) and not seen.beyond(_check((19.0, 64)))


def test_a_worker_ranks_its_own_rows_into_the_kth_key_across_tasks() -> None:
    """k real rows of the search on one worker bound the top k as the client's would: the
    k-th of them, distinct by collapse's signature (two rows that differ only in the
    engine's TP count once), whatever the client knew when the task was sent."""
    sent = Seen(Objective.TIME, INF, token="search-a", top=2)
    mine = own(sent)
    assert own(Seen(Objective.TIME, INF, token="search-a", top=2)) is mine  # the next task
    now = mine.merged(sent)
    mine.learn(None, _cand(8), _row(8, 10.0, tp=1))
    mine.learn(None, _cand(8), {**_row(8, 10.0, tp=1), "rollout_tp": 2})  # merged by collapse
    assert now.kth == INF  # one distinct row: no 2nd yet
    mine.learn(None, _cand(8), _row(8, 30.0, tp=2, fits=False))  # does not fit: not ranked
    mine.learn(None, _cand(16), _row(16, 20.0, tp=2))
    assert now.kth == (20.0, 16) and now.fastest == {8: 10.0, 16: 20.0}
    later = mine.merged(Seen(Objective.TIME, (15.0, 8), {8: 9.0}, token="search-a", top=2))
    assert later.kth == (15.0, 8) and later.fastest == {8: 9.0, 16: 20.0}  # the client's, tighter
    assert mine.merged(sent).kth == (15.0, 8)  # an older task's state loosens nothing


def test_a_worker_keeps_the_latest_searches_alone() -> None:
    for i in range(floor_tasks.KEPT_SEARCHES + 2):
        own(Seen(Objective.TIME, INF, token=f"search-{i}", top=1))
    assert len(floor_tasks._OWN) == floor_tasks.KEPT_SEARCHES
    assert "search-0" not in floor_tasks._OWN and isinstance(
        floor_tasks._OWN[f"search-{floor_tasks.KEPT_SEARCHES + 1}"], Own)


def test_another_workers_items_go_only_to_an_idle_worker() -> None:
    """A worker with a task in flight waits for items of its own keys; an idle one takes the
    oldest items of the fullest slot (so none idles while items wait)."""
    w = Waiting(iter("aaaaaa"), 2, key=str)  # every item of worker 0's key
    assert w.batch(1, 2, idle=False) == [] and w.taken == 0
    assert w.batch(1, 2, idle=True) == ["a", "a"] and w.taken == 2
    assert w.batch(0, 2, idle=False) == ["a", "a"]  # its own: busy or not
