"""Values kept by the identities of the objects they are derived from (``memo.by_identities``)
and the group estimates found so (``placement.group_key.recall``: by the identities of what
a group key is made of, before the key itself): an equal but distinct object is a new entry
(its value computed, or the estimate found under its key), never another object's value,
and every deployment evaluates as the evaluation that keeps nothing
(``rlmcost.memo.plain``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rlmcost import memo
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.placement import query as resolved
from rlmcost.run.spec import Run


def test_by_identities_keeps_a_value_per_objects_not_per_equal_value() -> None:
    kept: dict[Any, Any] = {}
    a, twin, b = [1, 2], [1, 2], [3]  # lists: equal ones are distinct, none is hashable
    calls: list[tuple[Any, ...]] = []

    def value(*objs: Any, also: tuple[Any, ...] = ()) -> Any:
        def compute() -> Any:
            calls.append(objs)
            return (sum(map(sum, objs)), *also)

        return memo.by_identities(kept, objs, compute, also=also)

    first = value(a, b)
    assert value(a, b) is first and len(calls) == 1  # the same objects: kept
    assert value(twin, b) == first and len(calls) == 2  # equal, distinct: computed again
    assert value(b, a) == first and len(calls) == 3  # the order is part of the key
    assert value(a, b, also=("x",)) == (6, "x") and len(calls) == 4  # ``also`` by value
    assert value(a, b, also=("x",)) == (6, "x") and len(calls) == 4
    with memo.plain():  # nothing kept or looked up
        assert value(a, b) == first and len(calls) == 5
    assert len(kept) == 4
    small: dict[Any, Any] = {}
    for i in range(5):  # ``most`` values at once: the table starts over
        memo.by_identities(small, (a, b), lambda i=i: i, most=2, also=(i,))
        assert len(small) <= 2

    def fails() -> Any:
        calls.append(("fails",))
        raise ValueError("not kept")

    for _ in range(2):  # an exception is not kept: raised again, computed again
        with pytest.raises(ValueError, match="not kept"):
            memo.by_identities(kept, (a,), fails)
    assert calls.count(("fails",)) == 2


def _data() -> dict[str, Any]:
    return {
        "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 16, "samples_per_prompt": 1},
        "deployment": {"framework": "verl", "groups": [
            {"members": "rollout", "gpus": 8, "settings": "tp=2"},
            {"members": "actor+critic+reward", "gpus": 8}]},
        "cluster": {"hardware": "h100-sxm"},
    }  # fmt: skip


def _text(e: Any) -> str:
    return json.dumps(e.to_json(), sort_keys=True, default=repr)


def _tables() -> dict[str, int]:
    seen = next(iter(resolved._QUERIES.values())).groups_seen or {}
    return {k[1]: len(v) for k, v in seen.items()
            if isinstance(k, tuple) and k[:1] == ("kept by identities",)}  # fmt: skip


def test_group_estimates_found_by_identities_are_the_keys_estimates() -> None:
    """Three Runs of one query: the second built again from the same data (every section an
    equal, distinct object: the identities miss, the group keys find the first Run's
    estimates), the third a copy of the first (its sections the first's own objects, as the
    planner's candidates share theirs: found by identity, no new entry), and a fourth whose
    rollout engine differs (a new estimate for the rollout group alone)."""
    first = Run.from_data(_data())
    again = Run.from_data(_data())
    assert again == first and again.deployment.engine is not first.deployment.engine
    copied = first.model_copy(update={"deployment": first.deployment.model_copy()})
    other_data = _data()
    other_data["deployment"]["groups"][0]["settings"] = "tp=4"
    other = Run.from_data(other_data)
    resolved._QUERIES.clear()
    one = evaluate_deployment(first)
    tables = _tables()
    assert tables["estimates"] == len(one.groups)  # one entry a group
    two = evaluate_deployment(again)
    assert all(a is b for a, b in zip(one.groups, two.groups, strict=True))  # by the keys
    assert _tables()["estimates"] == 2 * len(one.groups)  # new identities, new entries
    three = evaluate_deployment(copied)
    assert all(a is b for a, b in zip(one.groups, three.groups, strict=True))
    assert _tables()["estimates"] == 2 * len(one.groups)  # found by identity
    four = evaluate_deployment(other)
    assert four.groups[0] is not one.groups[0] and four.groups[1] is one.groups[1]
    assert four.groups[0].jobs[0].layout.tp == 4 and one.groups[0].jobs[0].layout.tp == 2
    for run, est in ((first, one), (again, two), (copied, three), (other, four)):
        with memo.plain():
            assert _text(est) == _text(evaluate_deployment(run))
