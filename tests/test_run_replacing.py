"""A Run changed from validated parts (rlmcost.run.replacing.replaced, what builds each plan
candidate's Run) is the Run that ``Run.replace`` validates whole: equal (``==``) with the same
JSON, or rejected with the same error word for word. The reference is independent of the
parts: ``Run.replace`` is ``Run.from_data`` of the merged data (the framework defaults and
pydantic over the whole Run)."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmcost.deployment.spec import TrainLayout
from rlmcost.errors import SpecError
from rlmcost.plan.rl_candidates import RLSpace, candidates
from rlmcost.plan.rl_runs import candidate_run, candidate_sections
from rlmcost.reports.estimate import run_of
from rlmcost.run import replacing
from rlmcost.run.replacing import part, replaced
from rlmcost.run.spec import Run

# (algorithm, actor, hardware, framework, GPUs): the default framework (NeMo RL), verl,
# OpenRLHF's and TRL's 70 B tiers (their groups), the bare layout, an MoE actor
BASES = (
    ("ppo", "llama-3.2-1b", "h100-sxm", None, 8),
    ("grpo", "qwen2.5-7b", "a100-80gb", "verl", 16),
    ("ppo", "llama-3.1-70b", "a100-80gb", "openrlhf", 32),
    ("grpo", "llama-3.1-70b", "h100-sxm", "trl", 32),
    ("grpo", "llama-3.1-8b", "h100-sxm", "none", 16),
    ("grpo", "qwen3-30b-a3b", "h100-sxm", "slime", 16),
)


@cache
def _base(i: int) -> tuple[Run, tuple[Any, ...]]:
    alg, model, hw, framework, gpus = BASES[i]
    fields: dict[str, Any] = {"hardware": hw}
    if framework is not None:
        fields["framework"] = framework
    base = run_of(alg, model, **fields)
    space = RLSpace(micro_batch=(1, 2), fractions=(0.5, 0.9))
    return base, tuple(candidates(base, space, gpus))


def _same(base: Run, sections: dict[str, Any]) -> None:
    """``replaced`` gives what ``Run.replace`` gives: the Run, or the SpecError."""
    try:
        want: Run | str = base.replace(**sections)
    except SpecError as exc:
        want = str(exc)
    try:
        got: Run | str = replaced(base, **sections)
    except SpecError as exc:
        got = str(exc)
    if isinstance(want, str):
        assert got == want
        return
    assert isinstance(got, Run)
    assert got == want
    assert got.to_json() == want.to_json()
    assert got.deployment.forward_layout() == want.deployment.forward_layout()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(BASES) - 1), st.integers(0, 10**6))
def test_a_candidates_run_from_parts_is_the_whole_runs(i: int, pick: int) -> None:
    base, cands = _base(i)
    c = cands[pick % len(cands)]
    _same(base, candidate_sections(base, c))
    assert candidate_run(base, c) == base.replace(**candidate_sections(base, c))


def test_the_candidates_take_the_parts_not_the_whole_way(monkeypatch) -> None:
    """The parts serve the planner's candidates (a fall-back per candidate would cost what
    it saves): ``Run.replace`` is never reached for them."""
    runs = {i: _base(i) for i in range(len(BASES))}

    def whole(*args: Any, **kwargs: Any) -> Run:
        raise AssertionError("a candidate went the whole way")

    monkeypatch.setattr(Run, "replace", whole)
    for base, cands in runs.values():
        for c in cands[:: max(1, len(cands) // 40)]:
            candidate_run(base, c)


TRAIN = st.fixed_dictionaries({}, optional={
    "tp": st.sampled_from([0, 1, 2, 2.0, 2.5, True, "2", None]),
    "zero": st.sampled_from(["0", "1", "3", "5", 3]),
    "sp": st.sampled_from([True, False, 1, "yes", None]),
    "micro_batch": st.sampled_from([1, 4, 0, 1.5, True]),
    "max_tokens_per_gpu": st.sampled_from([None, 8192, 0]),
    "offload": st.sampled_from([[], ["optimizer"], ["optimizer", "params"], ["disk"], "optimizer"]),
    "ckpt": st.sampled_from(["none", "full", "selective", "sometimes"]),
    "tpp": st.just(2),  # a mistyped key: the whole way names it
})  # fmt: skip
ENGINE = st.fixed_dictionaries({}, optional={
    "tp": st.sampled_from([None, 1, 4, 0]),
    "kind": st.sampled_from(["vllm", "sglang", "hf", "megatron", "tgi"]),
    "gpu_memory_utilization": st.sampled_from([0.5, 0.9, 1, 1.5, True]),
})  # fmt: skip
SECTIONS = st.fixed_dictionaries({}, optional={
    "deployment": st.fixed_dictionaries({}, optional={
        "train": TRAIN, "engine": ENGINE,
        "forward": st.sampled_from([None, {"micro_batch": 8}, {"tp": 2}]),
        "placement": st.sampled_from([None, "baseline", "split", "async", "nowhere"]),
        "groups": st.sampled_from([[], [{"members": "rollout", "gpus": 4},
                                        {"members": "actor+critic+reference+reward", "gpus": 4}],
                                   [{"members": "rollout", "gpus": 0}]]),
        "staleness": st.sampled_from([None, 0, 1, -1]),
    }),
    "cluster": st.fixed_dictionaries({}, optional={
        "gpus": st.sampled_from([None, 8, 16, 0, 5000]), "dp": st.sampled_from([None, 2]),
        "hardware": st.sampled_from(["h100", "a100-80gb", "h20", "nope"]),
    }),
    "workload": st.fixed_dictionaries({}, optional={
        "response_len": st.sampled_from([None, 1, 4096, 0]), "prompts": st.sampled_from([8, 64]),
    }),
    "algorithm": st.fixed_dictionaries({}, optional={
        "epochs": st.sampled_from([None, 2, 0]), "global_batch": st.sampled_from([None, 32, 7]),
    }),
    "tp_per_model": st.booleans(),
})  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(BASES) - 1), SECTIONS)
def test_any_change_from_parts_is_the_whole_runs_or_its_error(i: int, sections: dict) -> None:
    """Changes beyond the planner's, bad values among them (wrong types, out of range,
    unknown names and keys): the same Run or the same error."""
    _same(_base(i)[0], sections)


def test_a_part_is_kept_per_value_and_type() -> None:
    """1, 1.0 and True validate apart where a field tells them apart: a part is never
    served for a value of another type (a bool is not a micro-batch of 1 to pydantic)."""
    assert part(TrainLayout, {"micro_batch": 2}) is part(TrainLayout, {"micro_batch": 2})
    with pytest.raises(ValueError):
        part(TrainLayout, {"micro_batch": 2.5})
    with pytest.raises(ValueError):  # an enum member is not plain data: refused, not keyed
        from rlmcost.parallel.layout import ZeroStage

        part(TrainLayout, {"zero": ZeroStage.OS_G_P})
    a = part(TrainLayout, {"sp": True})
    b = part(TrainLayout, {"sp": 1})
    assert a is not b and a == b  # the same layout, validated once each


def test_a_base_changed_in_place_is_not_served_from_an_old_copy() -> None:
    """The base's JSON is kept for the last base asked about (by identity): a new base
    object, even an equal one, is read afresh."""
    base = _base(0)[0]
    other = run_of("grpo", "llama-3.2-1b", hardware="h100-sxm")
    s = {"cluster": {"gpus": 8}}
    assert replaced(base, **s) == base.replace(**s)
    assert replaced(other, **s) == other.replace(**s)
    assert replacing._LAST[0][0] is other
