"""A device group's own engine settings merge over the run's engine
(rlmcost.deployment.group_engine): a group that gives one engine field keeps the framework
preset's others (NeMo RL's gpu_memory_utilization 0.6 and max_num_seqs 1024,
rlmcost/frameworks presets), a group that names another engine kind runs that engine's own
defaults, and the merge survives a Run's JSON round trip and the fast path."""

from __future__ import annotations

from typing import Any

import pytest
from group_runs import grpo_on_groups

from rlmcost.deployment.engine import EngineSpec
from rlmcost.deployment.group_engine import group_engine, merged_engine
from rlmcost.deployment.kinds import EngineKind
from rlmcost.errors import SpecError
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.run import Run

MODEL = "llama-3.2-1b"


def _run(engine: dict[str, Any] | None, run_engine: dict[str, Any] | None = None,
         framework: str = "nemo-rl") -> Run:  # fmt: skip
    """GRPO under ``framework`` on a rollout group (its own ``engine``, None: none) and a
    trainer group; ``run_engine``: the run-wide engine fields over the preset's."""
    rollout: dict[str, Any] = {"members": "rollout", "gpus": 8}
    if engine is not None:
        rollout["engine"] = engine
    dep: dict[str, Any] = {"framework": framework,
                           "groups": [rollout, {"members": "actor+reference", "gpus": 8}]}
    if run_engine is not None:
        dep["engine"] = run_engine
    return grpo_on_groups(MODEL, dep)


def _rollout(run: Run) -> list[tuple[Any, ...]]:
    """The rollout group's jobs: kind, predicted seconds and bytes per device."""
    e = evaluate_deployment(run)
    g = next(g for g in e.groups if g.name.startswith("rollout"))
    return [(str(j.task.kind), j.predicted_s, j.memory.total) for j in g.jobs]


def test_a_group_field_merges_over_the_presets_engine() -> None:
    run = _run({"prefix_caching": False})
    eng = group_engine(run.deployment, "rollout")
    # NeMo RL's preset (run-wide): 0.6 and 1024, kept; the group's field over them
    assert run.deployment.engine.gpu_memory_utilization == 0.6
    assert (eng.gpu_memory_utilization, eng.max_num_seqs, eng.prefix_caching) == (0.6, 1024, False)
    assert eng == run.deployment.engine.model_copy(update={"prefix_caching": False})


def test_a_group_field_gives_the_numbers_of_the_same_field_run_wide() -> None:
    own = _rollout(_run({"prefix_caching": False}))
    assert own == _rollout(_run(None, {"prefix_caching": False}))
    # before the merge the group ran bare EngineSpec defaults (0.9 reserved): more memory
    bare = _rollout(_run({"prefix_caching": False, "gpu_memory_utilization": 0.9,
                          "max_num_seqs": 256}))  # fmt: skip
    assert max(m for *_, m in bare) > max(m for *_, m in own)


def test_a_groups_own_value_wins_over_the_runs() -> None:
    eng = group_engine(_run({"gpu_memory_utilization": 0.8}).deployment, "rollout")
    assert (eng.gpu_memory_utilization, eng.max_num_seqs) == (0.8, 1024)
    # a field whose default is None (the engine's own) can be given at vLLM's value
    eng = group_engine(_run({"max_num_seqs": 256}).deployment, "rollout")
    assert (eng.gpu_memory_utilization, eng.max_num_seqs) == (0.6, 256)


def test_a_field_the_group_does_not_give_takes_the_runs_value() -> None:
    # the stated rule (group_engine docstring): the run's sleep=False stands on a group that
    # gives only another field (one giving sleep=True, the default: test_group_set_default)
    run = _run({"prefix_caching": False}, {"sleep": False})
    assert group_engine(run.deployment, "rollout").sleep is False


def test_another_engine_kind_runs_its_own_defaults() -> None:
    run = _run({"kind": "sglang"})
    eng = group_engine(run.deployment, "rollout")
    # SGLang's own running cap (None: derived from its KV pool), not the vLLM preset's 1024
    assert eng == EngineSpec(kind=EngineKind.SGLANG)
    assert _rollout(run) != _rollout(_run(None))
    # the same kind given explicitly merges like any field
    same = group_engine(_run({"kind": "vllm", "eager": True}).deployment, "rollout")
    assert (same.kind, same.eager, same.max_num_seqs) == (EngineKind.VLLM, True, 1024)


def test_a_default_kind_group_under_an_sglang_run_stays_sglang() -> None:
    run_wide = EngineSpec(kind=EngineKind.SGLANG, context_length=4096)
    eng = merged_engine(run_wide, EngineSpec(max_num_seqs=64))
    assert (eng.kind, eng.context_length, eng.max_num_seqs) == (EngineKind.SGLANG, 4096, 64)


def test_no_group_engine_is_the_runs() -> None:
    run = _run(None)
    assert group_engine(run.deployment, "rollout") is run.deployment.engine
    assert merged_engine(run.deployment.engine, None) is run.deployment.engine


def test_the_merge_survives_a_json_round_trip() -> None:
    run = _run({"prefix_caching": False, "max_num_seqs": 64})
    back = Run.from_data(run.to_json())
    # the file keeps the group's own fields, not the merged engine
    assert back.deployment.groups[0].engine == run.deployment.groups[0].engine
    assert group_engine(back.deployment, "rollout") == group_engine(run.deployment, "rollout")
    assert _rollout(back) == _rollout(run)


def test_a_group_engine_field_without_a_bracket_key_has_no_command() -> None:
    # a group's engine fields go into its --groups brackets (deployment.group_brackets); one
    # no bracket key says (the KV block size) is a clear refusal, the file is the way
    assert "rollout=8[prefix-caching=false]" in _run({"prefix_caching": False}).to_command()
    with pytest.raises(SpecError, match="block_size: no --groups key"):
        _run({"block_size": 32}).to_command()


def test_group_engines_keep_the_fast_path_equal() -> None:
    """The kept group estimates (placement.group_key) see the merged engine: runs that differ
    in the group's or the run's engine evaluated together equal each alone."""
    runs = [_run(None), _run({"prefix_caching": False}), _run(None, {"prefix_caching": False}),
            _run({"prefix_caching": False}, {"gpu_memory_utilization": 0.5}),
            _run({"gpu_memory_utilization": 0.5}), _run({"kind": "sglang"})]  # fmt: skip
    together = [[(str(j.task.kind), j.predicted_s, j.memory.total) for g in e.groups
                 for j in g.jobs if g.name.startswith("rollout")]
                for e in evaluate_many(runs)]  # fmt: skip
    assert together == [_rollout(r) for r in runs]


def test_the_engine_notes_follow_the_generating_groups_engine() -> None:
    # the vLLM host-time note (evaluation.deployment) is about the engine that generates:
    # a vLLM run whose only rollout group runs SGLang gets none
    def host_note(run: Run) -> bool:
        return any(n.startswith("vLLM decode steps carry") for n in evaluate_deployment(run).notes)

    assert host_note(_run(None)) and host_note(_run({"prefix_caching": False}))
    assert not host_note(_run({"kind": "sglang"}))
