"""A device group's own trainer settings are read for its jobs (rlmcost.placement.group_train):
``max_tokens_per_gpu``, ``packing``, ``padded``, ``fused_loss``, ``router_dtype``,
``ep_dispatcher``, ``moe_permute_fusion`` and ``kernels`` given on a group's ``train`` change
its jobs' time or memory from the deployment-wide default, to the numbers the same value gives
deployment-wide; and
the fields a group already set (``param_dtype``, ``offload``, ``pp_split``, the engine's
``max_num_seqs``) keep doing so."""

from __future__ import annotations

from typing import Any

import pytest
from group_runs import grpo_on_groups

from rlmcost.deployment.spec import Deployment, GroupLayouts, TrainLayout
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.parallel.layout import ZeroStage
from rlmcost.perf.step_pass import AttentionKernel
from rlmcost.placement.group_train import group_deployment
from rlmcost.placement.pass_options import step_options
from rlmcost.run import Run

DENSE = "llama-3.2-1b"
MOE = "qwen1.5-moe-a2.7b"
WITH_REFERENCE = ("nemo-rl", None, "slime")  # their GRPO keeps a KL reference (slime's
# small-actor example, scripts/run-qwen3-4B.sh: --use-kl-loss)


def _run(framework: str | None, model: str, train: dict[str, Any], own: dict[str, Any] | None,
         gpus: int = 8, engine: dict[str, Any] | None = None) -> Run:  # fmt: skip
    """GRPO on a rollout group and an actor group; ``train``: the deployment's trainer
    layout, ``own``: the actor group's own (None: none)."""
    members = "actor+reference" if framework in WITH_REFERENCE else "actor"
    actor: dict[str, Any] = {"members": members, "gpus": gpus}
    if own is not None:
        actor["train"] = own
    rollout: dict[str, Any] = {"members": "rollout", "gpus": 8}
    if engine is not None:
        rollout["engine"] = engine
    return grpo_on_groups(model, {"framework": framework, "train": train,
                                  "groups": [rollout, actor]})


def _numbers(job: Any) -> tuple[Any, ...]:
    """A job's kind, predicted seconds, their parts and bytes per device."""
    parts = tuple(sorted((job.predicted_parts_s or {}).items()))
    return str(job.task.kind), job.predicted_s, parts, job.memory.total


def _jobs(run: Run, group: str = "actor") -> list[tuple[Any, ...]]:
    """:func:`_numbers` of each job of ``group`` (the trainer's, "actor"; or "rollout")."""
    e = evaluate_deployment(run)
    g = next(g for g in e.groups if g.name.startswith(group))
    return [_numbers(j) for j in g.jobs]


# field, framework, model, the layout that carries it (on the group or deployment-wide),
# the base layout both share; sources of each mechanism in group_train's module docstring
CASES = [
    ("max_tokens_per_gpu", "verl", DENSE, {"max_tokens_per_gpu": 4096}, {}),
    ("packing", "verl", DENSE, {"packing": True}, {"max_tokens_per_gpu": 4096}),
    ("padded", "verl", DENSE, {"padded": True}, {}),
    ("fused_loss", "nemo-rl", DENSE, {"fused_loss": True}, {"packing": True}),
    ("kernels", None, DENSE, {"kernels": "realhf"}, {}),
    ("router_dtype", "slime", MOE, {"router_dtype": "fp64"}, {"ep": 4}),
    ("ep_dispatcher", "slime", MOE, {"ep_dispatcher": "allgather"}, {"ep": 4}),
    ("moe_permute_fusion", "slime", MOE, {"moe_permute_fusion": False}, {"ep": 4}),
]


@pytest.mark.parametrize(("field", "framework", "model", "value", "base"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_a_groups_own_field_prices_its_jobs(field, framework, model, value, base) -> None:
    plain = _jobs(_run(framework, model, base, base))
    own = _jobs(_run(framework, model, base, {**base, **value}))
    wide = _jobs(_run(framework, model, {**base, **value}, base))
    assert own != plain, f"{field} on the group changed nothing"
    assert own == wide, f"{field} on the group prices unlike the deployment-wide {field}"


def test_a_group_not_giving_a_field_keeps_the_deployments_value() -> None:
    # the rule of group_train: a field the group's layout does not give is the deployment's
    # (one it gives at the default is its own: tests/test_group_set_default.py)
    budget = {"max_tokens_per_gpu": 4096}
    wide = _jobs(_run("verl", DENSE, budget, {}))
    assert wide == _jobs(_run("verl", DENSE, budget, budget))
    assert wide != _jobs(_run("verl", DENSE, {}, {}))


def test_the_groups_notes_name_its_own_settings() -> None:
    e = evaluate_deployment(_run("verl", DENSE, {}, {"padded": True}))
    assert any(n.startswith("padded sequences") for n in e.notes)


@pytest.mark.parametrize("own", [{"param_dtype": "bf16"}, {"offload": "optimizer"},
                                 {"pp": 2, "pp_split": {"first_layers": 4}}])  # fmt: skip
def test_fields_a_group_already_set_stay_effective(own) -> None:
    # values unlike verl's preset (fp32 weights, no offload, the even split): a group's layout
    # gives its fields over the run's (deployment.given.layered)
    plain = _jobs(_run("verl", DENSE, {}, {"pp": 2} if "pp" in own else None))
    assert _jobs(_run("verl", DENSE, {}, own)) != plain


def test_a_groups_engine_max_num_seqs_is_its_own() -> None:
    plain = _jobs(_run("verl", DENSE, {}, None), "rollout")
    assert _jobs(_run("verl", DENSE, {}, None, engine={"max_num_seqs": 8}), "rollout") != plain


def test_group_fields_keep_the_fast_path_equal() -> None:
    """The kept group estimates (group_key) see a group's own fields: a batch of runs that
    differ only in them equals each run evaluated alone."""
    queries = dict.fromkeys((c[2], c[1]) for c in CASES)  # model, framework: one query each
    for query in queries:
        cases = [c for c in CASES if (c[2], c[1]) == query]
        runs = [_run(fw, m, base, {**base, **value}) for _, fw, m, value, base in cases]
        runs += [_run(fw, m, base, base) for _, fw, m, _, base in cases]
        together = [[_numbers(j) for g in e.groups for j in g.jobs] for e in evaluate_many(runs)]
        alone = [[x for grp in ("rollout", "actor") for x in _jobs(r, grp)] for r in runs]
        assert together == alone


def test_a_groups_own_zero_stage_picks_its_trainers_kernels() -> None:
    # NeMo RL's DTensor worker runs the Hugging Face model under ZeRO-3, its Megatron worker
    # the fused kernels (Behaviour.hf_trainer "zero3"): a ZeRO-3 group of a ZeRO-0 run
    # runs FlashAttention-2 / SDPA and eager layers
    dep = Deployment(framework="nemo-rl", train=TrainLayout(tp=2),
                     groups=(GroupLayouts(members="actor", gpus=8,
                                          train=TrainLayout(zero=ZeroStage.OS_G_P)),))  # fmt: skip
    run_wide, group = step_options(dep), step_options(group_deployment(dep, "actor"))
    assert run_wide is not None and run_wide.attention is AttentionKernel.FLASH
    assert group is not None and group.attention is AttentionKernel.FLASH2 and group.hf_eager



def test_a_streaming_groups_engine_sets_its_prefix_sharing() -> None:
    # the stream's prefix sharing reads the engine it is given (group_jobs passes the group's,
    # inputs.engine_for), else the run's
    from types import SimpleNamespace

    from rlmcost.choices import AttnCounting
    from rlmcost.deployment.engine import EngineSpec
    from rlmcost.placement.group_gate import framework_stream

    setup = SimpleNamespace(deployment=Deployment(), counting=AttnCounting.FULL,
                            workload=SimpleNamespace(samples_per_prompt=8))  # fmt: skip
    assert framework_stream(setup, (1,), 1, 1).share is not None  # vLLM V1: caching on
    off = EngineSpec(prefix_caching=False)
    assert framework_stream(setup, (1,), 1, 1, off).share is None


# -- refused: a forward layout's trainer-only field (rlmcost.deployment.trainer_only) ---------

REFUSED = ("groups[1].forward.ep_dispatcher = deepep is not read: the forwards run with the "
           "trainer's ep_dispatcher; give it in train instead")  # fmt: skip
_DEPLOYMENT = {"framework": "slime",
               "groups": [{"members": "rollout", "gpus": 8},
                          {"members": "actor", "gpus": 8,
                           "forward": {"ep": 4, "ep_dispatcher": "deepep"}}]}  # fmt: skip


def test_a_forward_layouts_dispatcher_is_refused_by_the_cli(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    path = tmp_path / "dep.json"
    path.write_text(json.dumps(_DEPLOYMENT))
    r = CliRunner().invoke(app, ["grpo", "-m", MOE, "--gpus", "16", "--deployment", str(path)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert REFUSED in r.output and len(r.output.strip().splitlines()) == 1


def test_a_forward_layouts_dispatcher_is_refused_in_a_run_file(tmp_path) -> None:
    from rlmcost.errors import SpecError

    data = {"algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": MOE},
            "deployment": _DEPLOYMENT, "cluster": {"hardware": "h100-sxm"}}  # fmt: skip
    with pytest.raises(SpecError, match=r"groups\[1\]\.forward\.ep_dispatcher = deepep") as e:
        Run.from_data(data)
    assert "give it in train instead" in str(e.value) and "\n" not in str(e.value)


def test_a_forward_layout_like_its_trainers_is_accepted() -> None:
    same = {"ep": 4, "ep_dispatcher": "deepep"}
    dep = Deployment.model_validate({**_DEPLOYMENT, "train": same})
    assert dep.groups[1].forward is not None  # the trainer's value: read, so allowed


def test_a_trainer_only_field_set_in_train_is_followed_by_the_presets_forward() -> None:
    """NeMo RL's preset sets router_dtype fp64 in its trainer layout and the forward layout it
    starts from it; a Run that sets train.router_dtype fp32 (new, or by Run.replace) with a
    forward layout of its own gets fp32 in both, not the refusal meant for a forward value the
    Run gives (run.defaults._trainer_only_follow, forward_follows)."""
    from rlmcost.reports.estimate import run_of

    base = run_of("grpo", "qwen3-30b-a3b", hardware="h100-sxm", gpus=32)
    assert base.deployment.train.router_dtype.value == "fp64"  # NeMo RL's preset (the default)
    change = {"framework": "nemo-rl", "train": {"zero": "1", "ep": 16, "router_dtype": "fp32"},
              "forward": {"zero": "1", "ep": 16, "micro_batch": 2}}
    run = base.replace(deployment=change)
    assert run.deployment.train.router_dtype.value == "fp32"
    assert run.deployment.forward_layout().router_dtype.value == "fp32"
    fresh = Run.from_data({"models": {"actor": "qwen3-30b-a3b"},
                           "deployment": change, "cluster": {"hardware": "h100-sxm", "gpus": 32}})
    assert fresh.deployment.forward_layout().router_dtype.value == "fp32"
