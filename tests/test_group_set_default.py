"""A device group can set one of its fields back to the default under a run-wide value that is
not (rlmcost.deployment.given): what a group gives is what its input names (pydantic's
``model_fields_set``), not what differs from the default. An engine field (``eager``, vLLM's
``enforce_eager``: off by default, EngineSpec) and a trainer field (``padded``, verl's FSDP
workers without ``use_remove_padding``: off by default, TrainLayout) given at their default on
a group under a run-wide ``true`` give the numbers of the run whose run-wide value is the
default, through the API (Run), the CLI (a deployment file, run-wide flags, ``--groups``) and
a file round trip; and the fast path keeps such a group apart from one that gives nothing only
where their numbers differ. The reference is the same run with the default run-wide (the
plain evaluation's own numbers, which tests/test_group_engine.py and
tests/test_group_train_fields.py tie to the run-wide fields)."""

from __future__ import annotations

import json
from typing import Any

from group_runs import grpo_on_groups
from typer.testing import CliRunner

from rlmcost import memo
from rlmcost.cli import app
from rlmcost.deployment.engine import EngineSpec
from rlmcost.deployment.group_engine import group_engine, merged_engine
from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.spec import Deployment, load_deployment
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.placement import query as resolved
from rlmcost.placement.group_train import group_forward, group_trainer
from rlmcost.run import Run

MODEL = "llama-3.2-1b"
ACTOR = "actor"  # verl's GRPO drops the KL reference (its preset's options)
QUERY = ("grpo", "-m", MODEL, "--reward", "rule", "--framework", "verl", "-B", "16", "-K", "4",
         "-S", "512", "-T", "1024", "--length-dist", "lognormal:700,0.6,1024")  # fmt: skip
"""The query of tests/group_runs.py's Runs on the command line (eager decoding and padding
change its numbers: few sequences in flight, lengths that differ)."""


def _deployment(engine: dict[str, Any] | None = None, train: dict[str, Any] | None = None,
                rollout: dict[str, Any] | None = None, actor: dict[str, Any] | None = None
                ) -> dict[str, Any]:  # fmt: skip
    """verl GRPO on a rollout group and an actor group: run-wide ``engine`` and ``train``
    fields over the preset's, the rollout group's own engine, the actor group's own
    trainer layout (None: none given)."""
    groups: list[dict[str, Any]] = [{"members": "rollout", "gpus": 8},
                                    {"members": ACTOR, "gpus": 8}]  # fmt: skip
    if rollout is not None:
        groups[0]["engine"] = rollout
    if actor is not None:
        groups[1]["train"] = actor
    dep: dict[str, Any] = {"framework": "verl", "groups": groups}
    if engine is not None:
        dep["engine"] = engine
    if train is not None:
        dep["train"] = train
    return dep


def _run(**fields: Any) -> Run:
    return grpo_on_groups(MODEL, _deployment(**fields))


def _jobs(run: Run, group: str) -> list[tuple[Any, ...]]:
    """Each job of ``group``: kind, predicted seconds, their parts, bytes per device."""
    e = evaluate_deployment(run)
    g = next(g for g in e.groups if g.name.startswith(group))
    return [(str(j.task.kind), j.predicted_s, tuple(sorted((j.predicted_parts_s or {}).items())),
             j.memory.total) for j in g.jobs]  # fmt: skip


# -- the API --------------------------------------------------------------------------------


def test_an_engine_field_set_back_to_the_default_prices_as_the_default() -> None:
    back = _run(engine={"eager": True}, rollout={"eager": False})
    assert group_engine(back.deployment, "rollout").eager is False
    default = _jobs(_run(rollout={}), "rollout")
    assert _jobs(back, "rollout") == default
    # the run-wide eager stands on a group that does not give it: it changes the numbers
    assert _jobs(_run(engine={"eager": True}, rollout={}), "rollout") != default


def test_a_trainer_field_set_back_to_the_default_prices_as_the_default() -> None:
    back = _run(train={"padded": True}, actor={"padded": False})
    assert group_trainer(back.deployment, ACTOR).padded is False
    assert group_forward(back.deployment, ACTOR).padded is False  # the forwards: its workers'
    default = _jobs(_run(actor={}), "actor")
    assert _jobs(back, "actor") == default
    assert _jobs(_run(train={"padded": True}, actor={}), "actor") != default


def test_a_group_giving_the_engines_default_kind_runs_it_as_given() -> None:
    # another kind than the run's: that engine as given (group_engine's rule), also where
    # the group's kind is EngineSpec's default (vLLM) under a run-wide SGLang
    run_wide = EngineSpec(kind=EngineKind.SGLANG, context_length=4096)
    own = EngineSpec(kind=EngineKind.VLLM)
    assert merged_engine(run_wide, own) is own
    # not given: the run's kind with the group's fields over it
    eng = merged_engine(run_wide, EngineSpec(max_num_seqs=64))
    assert (eng.kind, eng.context_length, eng.max_num_seqs) == (EngineKind.SGLANG, 4096, 64)


# -- files ----------------------------------------------------------------------------------


def test_a_runs_json_keeps_the_fields_a_group_gave() -> None:
    run = _run(engine={"eager": True}, train={"padded": True}, rollout={"eager": False},
               actor={"padded": False})  # fmt: skip
    data = run.to_json()
    rollout, actor = data["deployment"]["groups"]
    assert rollout["engine"] == {"eager": False} and actor["train"] == {"padded": False}
    back = Run.from_data(json.loads(json.dumps(data)))
    assert back.deployment.groups[0].engine.model_fields_set == {"eager"}  # type: ignore[union-attr]
    assert _jobs(back, "rollout") == _jobs(run, "rollout")
    assert _jobs(back, "actor") == _jobs(run, "actor")
    # Run.replace goes through the same JSON
    assert _jobs(back.replace(tp_per_model=False), "actor") == _jobs(run, "actor")


def test_a_deployment_file_keeps_the_fields_a_group_gave(tmp_path) -> None:
    dep = Deployment.model_validate(_deployment(engine={"eager": True}, rollout={"eager": False},
                                                train={"padded": True}, actor={"padded": False}))
    for name in ("dep.yaml", "dep.json"):
        dep.dump(tmp_path / name)
        back = load_deployment(tmp_path / name)
        assert back == dep
        assert group_engine(back, "rollout").eager is False
        assert group_trainer(back, ACTOR).padded is False


# -- the CLI --------------------------------------------------------------------------------


def _cli(tmp_path, name: str, dep: dict[str, Any], *flags: str) -> dict[str, Any]:
    """`rlmcost grpo --deployment FILE --json` of ``dep`` written to ``name``."""
    path = tmp_path / name
    path.write_text(json.dumps(dep))
    r = CliRunner().invoke(app, [*QUERY, "--deployment", str(path), "--json", *flags])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _times(out: dict[str, Any]) -> tuple[Any, ...]:
    return out["iteration"]["time_s"], out["phases"]


def test_a_deployment_file_sets_a_group_back_to_the_default(tmp_path) -> None:
    default = _times(_cli(tmp_path, "default.json", _deployment(rollout={}, actor={})))
    given = _deployment(engine={"eager": True}, train={"padded": True},
                        rollout={"eager": False}, actor={"padded": False})  # fmt: skip
    assert _times(_cli(tmp_path, "back.json", given)) == default
    # run-wide by flags over a file whose groups give the defaults back
    groups = _deployment(rollout={"eager": False}, actor={"padded": False})
    flagged = _cli(tmp_path, "groups.json", groups, "--enforce-eager", "--padded")
    assert flagged["deployment"]["engine"]["eager"] and flagged["deployment"]["train"]["padded"]
    assert _times(flagged) == default
    # the same run-wide values on groups that give nothing: other numbers
    wide = _deployment(engine={"eager": True}, train={"padded": True}, rollout={}, actor={})
    assert _times(_cli(tmp_path, "wide.json", wide)) != default


def test_the_json_outputs_deployment_and_run_read_back(tmp_path) -> None:
    given = _deployment(engine={"eager": True}, train={"padded": True},
                        rollout={"eager": False}, actor={"padded": False})  # fmt: skip
    out = _cli(tmp_path, "back.json", given)
    rollout, actor = out["deployment"]["groups"]
    assert rollout["engine"] == {"eager": False} and actor["train"] == {"padded": False}
    again = _cli(tmp_path, "again.json", out["deployment"])  # --deployment from --json
    assert _times(again) == _times(out)
    path = tmp_path / "out.json"
    path.write_text(json.dumps(out))
    r = CliRunner().invoke(app, ["run", str(path), "--json"])  # the embedded Run
    assert r.exit_code == 0, r.output
    assert _times(json.loads(r.stdout)) == _times(out)


def test_groups_brackets_give_the_engine_tp_under_another_run_wide() -> None:
    # --groups [tp=2] is given (placement.groups keeps the keys the brackets name) under
    # --rollout-tp 4: the numbers of verl's preset, whose engine TP is 2
    def times(*flags: str) -> tuple[Any, ...]:
        r = CliRunner().invoke(app, [*QUERY, "--json", *flags])
        assert r.exit_code == 0, r.output
        return _times(json.loads(r.stdout))

    default = times("--groups", f"rollout=8,{ACTOR}=8")
    assert times("--groups", f"rollout=8[tp=2],{ACTOR}=8", "--rollout-tp", "4") == default
    assert times("--groups", f"rollout=8,{ACTOR}=8", "--rollout-tp", "4") != default


def test_groups_flag_over_a_file_keeps_each_named_groups_own_settings(tmp_path) -> None:
    # --groups re-sizes the file's groups; a group it names again keeps the engine and trainer
    # settings the file gave it (brackets cannot give them)
    given = _deployment(engine={"eager": True}, train={"padded": True},
                        rollout={"eager": False}, actor={"padded": False})  # fmt: skip
    same = _cli(tmp_path, "same.json", given, "--groups", f"rollout=8,{ACTOR}=8")
    assert _times(same) == _times(_cli(tmp_path, "file.json", given))
    assert same["deployment"]["groups"][0]["engine"] == {"eager": False}
    wide = _deployment(engine={"eager": True}, train={"padded": True}, rollout={}, actor={})
    assert _times(same) != _times(_cli(tmp_path, "wide.json", wide))
    resized = _cli(tmp_path, "resized.json", given, "--groups", f"rollout=4,{ACTOR}=12")
    assert [g.get("engine") for g in resized["deployment"]["groups"]] == [{"eager": False}, None]
    assert resized["deployment"]["groups"][1]["train"] == {"padded": False}


# -- the fast path --------------------------------------------------------------------------


def _plain(run: Run) -> list[tuple[Any, ...]]:
    with memo.plain():
        return [*_jobs(run, "rollout"), *_jobs(run, "actor")]


def test_groups_that_give_a_field_or_not_keep_the_fast_path_equal() -> None:
    """Equal group settings that differ in which fields they give, evaluated together, equal
    each alone: the kept group estimates (placement.group_key), the parsed groups' engine
    layouts (placement.user_groups._parsed_groups) and the placement kept per query
    (evaluation.deployment.evaluate_in, keyed on the parsed groups: also the same group
    under another run-wide engine PP) tell them apart."""
    runs = [
        _run(engine={"eager": True}, rollout={}),
        _run(engine={"eager": True}, rollout={"eager": False}),
        _run(train={"padded": True}, actor={}),
        _run(train={"padded": True}, actor={"padded": False}),
        _run(engine={"tp": 2, "pp": 2}, rollout={"tp": 2}),
        _run(engine={"tp": 2, "pp": 2}, rollout={"tp": 2, "pp": 1}),
        _run(engine={"tp": 2}, rollout={"tp": 2}),  # the same group under another run-wide
    ]
    together = [[(str(j.task.kind), j.predicted_s, tuple(sorted((j.predicted_parts_s or {})
                                                                .items())), j.memory.total)
                 for grp in ("rollout", "actor") for g in e.groups if g.name.startswith(grp)
                 for j in g.jobs] for e in evaluate_many(runs)]  # fmt: skip
    alone = [_plain(r) for r in runs]
    assert together == alone
    assert alone[0] != alone[1] and alone[2] != alone[3] and alone[4] != alone[5] == alone[6]


def test_a_group_giving_the_runs_value_shares_the_estimate() -> None:
    # equal group settings, one giving eager (at the default), one not: under a run-wide
    # default they price alike and share one kept estimate; under a run-wide eager they do
    # not (group_key._own)
    resolved._QUERIES.clear()
    inherit = evaluate_deployment(_run(rollout={}))
    same = evaluate_deployment(_run(rollout={"eager": False}))
    assert same.groups[0] is inherit.groups[0]
    inherit = evaluate_deployment(_run(engine={"eager": True}, rollout={}))
    back = evaluate_deployment(_run(engine={"eager": True}, rollout={"eager": False}))
    assert back.groups[0] is not inherit.groups[0]
    assert back.groups[0].jobs[0].predicted_s < inherit.groups[0].jobs[0].predicted_s


# -- a forward layout's trainer-only field (rlmcost.deployment.trainer_only) -----------------


def _forward_on(train: dict[str, Any], own_train: dict[str, Any] | None,
                forward: dict[str, Any]) -> Deployment:  # fmt: skip
    group: dict[str, Any] = {"members": "actor", "gpus": 8, "forward": forward}
    if own_train is not None:
        group["train"] = own_train
    return Deployment.model_validate({"train": train, "groups": [group]})


def test_a_groups_forward_giving_the_trainers_merged_value_is_accepted() -> None:
    # the group's trainer layout gives no router dtype: its trainer runs the deployment's
    # fp64 (group_train), so a forward giving fp64 is read
    dep = _forward_on({"router_dtype": "fp64"}, {"tp": 2}, {"router_dtype": "fp64"})
    assert group_trainer(dep, "actor").router_dtype.value == "fp64"


def test_a_groups_forward_giving_the_default_unlike_its_trainer_is_refused() -> None:
    import pytest

    # given at the default, fp32, beside a trainer that runs fp64: not read, so refused
    with pytest.raises(ValueError, match=r"groups\[0\]\.forward\.router_dtype = fp32 is not read"):
        _forward_on({"router_dtype": "fp64"}, None, {"router_dtype": "fp32"})
    # not given: nothing to refuse
    _forward_on({"router_dtype": "fp64"}, None, {"tp": 2})


# -- random given fields: the fast path and the round trip ----------------------------------

_ENGINE = {"eager": [False, True], "sleep": [False, True], "max_num_seqs": [None, 16],
           "tp": [1, 2], "pp": [1, 2], "prefix_caching": [None, False]}  # fmt: skip
_TRAIN = {"padded": [False, True], "max_tokens_per_gpu": [None, 4096],
          "packing": [False, True]}  # fmt: skip


def _given(fields: dict[str, list[Any]]) -> Any:
    from hypothesis import strategies as st

    return st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in fields.items()})


def test_random_given_fields_equal_plain_and_survive_the_round_trip() -> None:
    """Random run-wide and group fields, each given or not and often at the default: a batch
    evaluated together equals each Run alone without kept values, and each Run read back from
    its JSON prices the same."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    one = st.tuples(_given(_ENGINE), _given(_ENGINE), _given(_TRAIN), _given(_TRAIN))

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(picks=st.lists(one, min_size=2, max_size=5))
    def check(picks: list[tuple[dict[str, Any], ...]]) -> None:
        runs = [_run(engine=e, rollout=ge, train=t, actor=gt) for e, ge, t, gt in picks]
        together = [[(str(j.task.kind), j.predicted_s, j.memory.total) for g in e.groups
                     for j in g.jobs] for e in evaluate_many(runs)]  # fmt: skip
        with memo.plain():
            alone = [[(str(j.task.kind), j.predicted_s, j.memory.total) for g in e.groups
                      for j in g.jobs] for e in map(evaluate_deployment, runs)]  # fmt: skip
            back = [[(str(j.task.kind), j.predicted_s, j.memory.total) for g in e.groups
                     for j in g.jobs]
                    for e in (evaluate_deployment(Run.from_data(r.to_json())) for r in runs)]
        assert together == alone == back

    check()


def test_a_device_groups_generation_layout_is_given_whole() -> None:
    # run_of(groups=DeviceGroups): a group's generation Layout(tp=2) gives the engine's TP,
    # PP and EP (reports.estimate._kind_layouts), so its PP 1 stands under a run-wide PP 2
    from dataclasses import replace

    from rlmcost.algorithms.kinds import Kind
    from rlmcost.parallel.layout import Layout
    from rlmcost.placement.groups import parse_groups
    from rlmcost.reports.estimate import run_of

    rollout, actor = parse_groups(f"rollout=8,{ACTOR}+reference=8")
    groups = (replace(rollout, layouts=((Kind.GENERATE, Layout(tp=2)),)), actor)
    run = run_of("grpo", MODEL, hardware="h100-sxm", groups=groups,
                 deployment={"engine": {"tp": 2, "pp": 2}})  # fmt: skip
    assert run.deployment.groups[0].engine.model_fields_set == {"tp", "pp", "ep"}  # type: ignore[union-attr]
    e = evaluate_deployment(run)
    assert [(j.layout.tp, j.layout.pp) for g in e.groups for j in g.jobs
            if j.task.kind is Kind.GENERATE] == [(2, 1)]  # fmt: skip


def test_a_groups_train_layout_keeps_the_runs_fields_it_does_not_give() -> None:
    # deployment.given.layered: a group's `train: {max_tokens_per_gpu: 4096}` under verl keeps
    # the preset's ZeRO-3 and full recomputation (before: TrainLayout's ZeRO 0, no recompute),
    # as the same fields given whole, and as the --groups bracket [max-tokens-per-gpu=4096]
    base = grpo_on_groups(MODEL, _deployment())
    run_wide = base.deployment.train
    assert str(run_wide.zero) == "3" and str(run_wide.ckpt) == "full"  # verl's preset
    part = _run(actor={"max_tokens_per_gpu": 4096})
    whole = _run(actor={"max_tokens_per_gpu": 4096, "zero": str(run_wide.zero),
                        "ckpt": str(run_wide.ckpt), "tp": run_wide.tp})  # fmt: skip
    assert group_trainer(part.deployment, ACTOR).zero == run_wide.zero
    assert _jobs(part, ACTOR) == _jobs(whole, ACTOR)
    assert _jobs(part, ACTOR) != _jobs(_run(actor={"max_tokens_per_gpu": 4096, "zero": "0",
                                                   "ckpt": "none"}), ACTOR)  # fmt: skip
