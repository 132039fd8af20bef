"""The values the fast evaluation keeps beside the groups' part or per group estimate (a
critical cycle's label, a schedule template, the idle-rank notes) follow what they are keyed
on: a deployment that changes the input changes the kept value, and each equals the
evaluation that keeps nothing (``rlmcost.memo.plain``)."""

from __future__ import annotations

import json
import re
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
    # one template per staleness (the parts of one shape share their templates)
    plans = {k[0]: p for k, p in static.plans.items() if k[0] in (0, 1)}
    assert sorted(plans) == [0, 1] and plans[0] is not plans[1]
    assert [sync.iteration_time_s, stale.iteration_time_s] == \
        [_plain(r).iteration_time_s for r in runs]  # fmt: skip
    assert stale.iteration_time_s < sync.iteration_time_s


def test_idle_rank_notes_per_group_follow_the_batch() -> None:
    """The notes on data-parallel ranks that hold no sequence are kept per group estimate
    (``placement.run_notes._idle_ranks_of``): a batch smaller than the trainer's dp gives
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


def _layouts(e: Any) -> dict[str, Any]:
    return {f"{g.name}/{j.task.label()}": j.layout for g in e.groups for j in g.jobs}


def test_layouts_kept_per_group_shape_follow_the_engine_and_the_trainer() -> None:
    """A group's layouts are kept per query by its shape and each task's model TP
    (``inputs.layouts_for``), the padded contexts per query and task
    (``GroupSizes.seq_len``): deployments of one query that change the engine's TP or the
    trainer's ZeRO stage get their own layouts (the rollout's generation, the trainer's
    update), as the evaluation that keeps nothing gives them, also when warm; another
    response length (another query) gives other contexts."""

    def run(engine_tp: int, zero: int, response: int = 512) -> Run:
        return Run.from_data({
            "algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.2-1b"},
            "workload": {"prompts": 16, "samples_per_prompt": 1, "response_len": response},
            "deployment": {"framework": "verl", "groups": TWO, "engine": {"tp": engine_tp},
                           "train": {"zero": str(zero)}},
            "cluster": {"hardware": "h100-sxm"},
        })  # fmt: skip

    runs = [run(1, 1), run(2, 1), run(1, 3), run(1, 1)]
    resolved._QUERIES.clear()
    kept = evaluate_many(runs)
    assert not any(isinstance(e, SpecError) for e in kept)
    got = [_layouts(e) for e in kept]
    assert got == [_layouts(_plain(r)) for r in runs]
    gen, train = "rollout/actor generate", "actor+critic+reward/actor train"
    assert [g[gen].tp for g in got] == [1, 2, 1, 1]
    assert [int(g[train].zero) for g in got] == [1, 1, 3, 1]
    seen = next(iter(resolved._QUERIES.values())).groups_seen or {}
    assert any(isinstance(k, tuple) and k[0] == "layouts" for k in seen)
    seqs = {k[1].index: v for k, v in seen.items() if isinstance(k, tuple) and k[0] == "seq_len"}
    assert seqs and max(seqs.values()) > 512
    longer = evaluate_deployment(run(1, 1, response=1024))
    assert _text(longer) == _text(_plain(run(1, 1, response=1024)))
    assert _text(longer) != _text(kept[0])


def test_phases_kept_per_group_and_sync_follow_the_groups() -> None:
    """A phase that one group alone has is one object per group estimate
    (``iteration_groups._own_phases``) and a weight sync's phase one per sync
    (``iteration._sync_phase``): deployments that share the rollout group share its
    generation phase; a trainer group on other GPUs changes the training phases and the
    sync's (the weights leave from fewer GPUs), each as the evaluation
    that keeps nothing gives them, and the phases of a deployment sum what all its groups
    have of a name."""
    four = [{"members": "rollout", "gpus": 8}, {"members": "actor+critic+reward", "gpus": 4}]
    runs = [_run(None, None, TWO), _run("async", 1, TWO), _run(None, None, four)]
    resolved._QUERIES.clear()
    kept = evaluate_many(runs)
    plain = [_plain(r) for r in runs]
    for e, p in zip(kept, plain, strict=True):
        assert not isinstance(e, SpecError)
        assert e.phases == p.phases and _text(e) == _text(p)
    a, b, c = ({p.name: p for p in e.phases} for e in kept if not isinstance(e, SpecError))
    assert a["generation"] is b["generation"] is c["generation"]  # one rollout estimate
    assert a["weight sync"] is b["weight sync"]  # one sync between the same two estimates
    # the sync's bound: the weights from 4 trainer GPUs, not 8 (verl's refit is predicted
    # by its constants, the same on both)
    assert c["weight sync"].time_lower_bound_s == 2 * a["weight sync"].time_lower_bound_s
    assert c["update actor"].time_s > a["update actor"].time_s  # half the trainer's GPUs


def test_worker_notes_and_engine_fraction_follow_their_keys() -> None:
    """The framework's worker notes are kept per query by what they read of the deployment
    (``evaluation.deployment``: ideal, framework, reference, trainer and forward layouts,
    logits) and an engine's recommended reservation per group estimate by the overhead
    settings' values (``iteration_advice._group_fraction``): a trainer at ZeRO-3 states
    NeMo RL's FSDP2 copies where ZeRO-1 does not, and a larger CUDA context lowers the
    reservation, each as the evaluation that keeps nothing gives it."""

    def run(zero: str, context_bytes: int) -> Run:
        return Run.from_data({
            "algorithm": {"name": "grpo", "rule_reward": True},
            "models": {"actor": "llama-3.2-1b"},
            "workload": {"prompts": 16, "samples_per_prompt": 4},
            "deployment": {"framework": "nemo-rl", "train": {"zero": zero},
                           "overhead": {"cuda_context_bytes": context_bytes}},
            "cluster": {"hardware": "h100-sxm", "gpus": 8},
        })  # fmt: skip

    runs = [run("3", 2**29), run("1", 2**29), run("3", 2**33), run("3", 2**29)]
    resolved._QUERIES.clear()
    kept = evaluate_many(runs)
    plain = [_plain(r) for r in runs]
    for e, p in zip(kept, plain, strict=True):
        assert not isinstance(e, SpecError)
        assert e.notes == p.notes
        assert e.recommended_gpu_memory_utilization == p.recommended_gpu_memory_utilization
    fsdp2 = [any("FSDP2" in n for n in e.notes) for e in kept if not isinstance(e, SpecError)]
    assert fsdp2 == [True, False, True, True]
    fractions = [e.recommended_gpu_memory_utilization for e in kept
                 if not isinstance(e, SpecError)]  # fmt: skip
    assert fractions[0] is not None and fractions[2] is not None
    assert fractions[2] < fractions[0] == fractions[3]


def test_values_kept_per_instance_follow_their_object_and_arguments() -> None:
    """``memo.per_instance`` keeps a value on its (frozen) object by the function and its
    arguments: another argument or another object computes its own, an equal object does
    not share the value of its twin, and inside ``memo.plain`` nothing is looked up."""
    from dataclasses import dataclass

    calls: list[tuple[int, int]] = []

    @dataclass(frozen=True)
    class Thing:
        x: int

    @memo.per_instance
    def value(obj: Thing, k: int) -> tuple[int, int]:
        calls.append((obj.x, k))
        return (obj.x, k)

    a, b, twin = Thing(1), Thing(2), Thing(1)
    assert value(a, 1) == (1, 1) and value(a, 1) is value(a, 1)
    assert value(a, 2) == (1, 2) and value(b, 1) == (2, 1) and value(twin, 1) == (1, 1)
    assert calls == [(1, 1), (1, 2), (2, 1), (1, 1)]
    with memo.plain():
        assert value(a, 1) == (1, 1)
    assert len(calls) == 5 and a == twin  # still equal: the kept values are no field


def test_kept_group_keys_share_equal_settings_and_follow_them() -> None:
    """A kept group key holds the first equal group settings of the query
    (``group_key._stored``): three deployments whose rollout group is given TP 2, TP 4 and
    TP 2 again (equal settings, another object) keep two rollout estimates, the third
    deployment's the first's, each as the evaluation that keeps nothing gives it, and the
    kept keys hold one settings object per distinct value."""

    def groups(tp: int) -> list[dict[str, Any]]:
        return [{"members": "rollout", "gpus": 8, "settings": f"tp={tp}"},
                {"members": "actor+critic+reward", "gpus": 8}]  # fmt: skip

    runs = [_run(None, None, groups(2)), _run(None, None, groups(4)),
            _run(None, None, groups(2))]  # fmt: skip
    resolved._QUERIES.clear()
    kept = [evaluate_deployment(r) for r in runs]
    assert [_text(e) for e in kept] == [_text(_plain(r)) for r in runs]
    first, other, again = (e.groups[0] for e in kept)
    assert again is first and other is not first
    assert [j.layout.tp for j in first.jobs] != [j.layout.tp for j in other.jobs]
    seen = next(iter(resolved._QUERIES.values())).groups_seen or {}
    owns = [k[4] for k in seen if isinstance(k, tuple) and len(k) == 6
            and not isinstance(k[0], str) and k[4] is not None]  # fmt: skip
    rollout = [o for o in owns if o.members == "rollout"]
    assert sorted(o.settings for o in rollout) == ["tp=2", "tp=4"]  # two keys, not three
    assert all(o is not runs[2].deployment.groups[0] for o in rollout)  # the first equal one


def test_schedule_units_are_named_without_the_numbers_their_transfers_state() -> None:
    """A transfer whose text states its numbers (NeMo RL's driver data: the call's GB and
    ranks per shard, ``placement.group_transfers``) names its schedule unit without them, so
    two deployments of one shape (here the batch alone differs, 16 vs 64 prompts) have the
    same units and share one schedule template; the text keeps the numbers."""
    from rlmcost.placement.iteration_units import group_units

    def units(prompts: int) -> tuple[Any, list[str]]:
        run = Run.from_data({
            "algorithm": {"name": "grpo"}, "models": {"actor": "llama-3.2-1b"},
            "workload": {"prompts": prompts, "samples_per_prompt": 4},
            "deployment": {"framework": "nemo-rl"}, "cluster": {"hardware": "h100-sxm",
                                                                 "gpus": 8},
        })  # fmt: skip
        est = evaluate_deployment(run)
        whats = [tr.what for g in est.groups for tr in g.transfers if tr.kind == "controller"]
        return tuple(u for g in est.groups for u in group_units(g).shape), whats

    small, small_whats = units(16)
    large, large_whats = units(64)
    stated = re.compile(r"\d (B|KiB|MiB|GiB|TiB)\b")  # units.format_bytes
    assert any("driver data" in w and stated.search(w) for w in small_whats)  # numbers stated
    assert small_whats != large_whats  # ... and they differ
    assert small == large  # one shape: the units carry no numbers
    assert not any(stated.search(str(key)) for key, _, _, _ in small)
