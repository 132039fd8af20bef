"""The Python API's entry points (README: rlmcost.estimate, rlmcost.evaluate, rlmcost.compare,
Run.from_data/from_yaml/from_json, evaluate_many, rlmcost.plan) reject bad arguments with
rlmcost's SpecError, whose one line names the argument, never a KeyError, AttributeError,
TypeError or a plain ValueError from deep inside (DESIGN.md, "Conventions"; STYLE.md: "The
library raises one SpecError")."""

from __future__ import annotations

from pathlib import Path

import pytest

import rlmcost
from rlmcost.errors import SpecError
from rlmcost.evaluation.batch import evaluate_many

E = rlmcost.estimate


VERL_CONFIG = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"


def _importer(framework: str):
    import importlib

    return getattr(importlib.import_module(f"rlmcost.frameworks.{framework}"),
                   f"import_{framework}")  # fmt: skip


def _deployment():
    import rlmcost.deployment

    return rlmcost.deployment


def _blocks():
    from rlmcost.reports.blocks import building_blocks

    return building_blocks


def _units():
    from rlmcost import units

    return units


def _space(**fields):
    from rlmcost.plan.rl import RLSpace

    return RLSpace(**fields)


def _plan_rl():
    from rlmcost.plan.rl import plan_rl

    return plan_rl


CASES = [
    # (id, call, a word the message must hold)
    ("estimate algorithm int", lambda: E(3, "gpt-2"), "algorithm"),
    ("estimate unknown algorithm", lambda: E("nonsense", "gpt-2"), "nonsense"),
    ("estimate empty model", lambda: E("ppo", ""), "model"),
    ("estimate model int", lambda: E("ppo", 3), "actor"),
    ("estimate tp 0", lambda: E("ppo", "gpt-2", tp=0), "tp"),
    ("estimate tp fractional", lambda: E("ppo", "gpt-2", tp=2.5), "tp"),
    ("estimate tp 10^12", lambda: E("ppo", "gpt-2", tp=10**12), "tp"),
    ("estimate gpus 10^12", lambda: E("ppo", "gpt-2", gpus=10**12), "gpus"),
    ("estimate batch 10^12", lambda: E("ppo", "gpt-2", batch=10**12), "batch"),
    ("estimate batch 0", lambda: E("ppo", "gpt-2", batch=0), "batch"),
    ("estimate unknown keyword", lambda: E("ppo", "gpt-2", nonsense=3), "nonsense"),
    ("estimate hardware int", lambda: E("ppo", "gpt-2", hardware=3), "hardware"),
    ("estimate unknown placement", lambda: E("ppo", "gpt-2", placement="nonsense"),
     "placement"),
    ("estimate groups dict", lambda: E("ppo", "gpt-2", groups={"a": 1}), "groups"),
    ("estimate layout text", lambda: E("ppo", "gpt-2", layout="tp=2"), "layout"),
    ("estimate deployment text", lambda: E("ppo", "gpt-2", deployment="x"), "deployment"),
    ("estimate deployment bad field", lambda: E("ppo", "gpt-2", deployment={"train": {"tp": 0}}),
     "tp"),
    ("estimate options text", lambda: E("ppo", "gpt-2", options="x"), "options"),
    ("estimate workload text", lambda: E("ppo", "gpt-2", workload="x"), "workload"),
    ("estimate unknown role", lambda: E("ppo", "gpt-2", models={"nonsense": "gpt-2"}),
     "nonsense"),
    ("estimate models list", lambda: E("ppo", "gpt-2", models=["gpt-2"]), "models"),
    ("estimate base text", lambda: E(base="x"), "base"),
    ("estimate cp above the sequence",
     lambda: E("ppo", "gpt-2", deployment={"train": {"cp": 4096}}), "cp"),
    # efficiency= a profile's path, not a measured Efficiency: had been an AttributeError
    ("estimate efficiency text", lambda: E("ppo", "gpt-2", efficiency="prof.json"), "efficiency"),
    ("evaluate efficiency int", lambda: rlmcost.evaluate(rlmcost.Run(), efficiency=3),
     "calibration"),
    # offload= is idle models in host memory: "optimizer" (the trainer's --offload) had been
    # taken silently as offload_idle=True
    ("estimate offload text", lambda: E("ppo", "gpt-2", offload="optimizer"), "offload"),
    # a Run's command line is its algorithm's, compare's or placements': had written
    # `rlmcost nonsense ...`
    ("Run.to_command unknown", lambda: rlmcost.Run().to_command("nonsense"), "command"),
    # an importer's command line or overrides as one string: had been read character by
    # character ("unexpected '-'", "override 'd' is not KEY=VALUE")
    ("import_openrlhf text", lambda: _importer("openrlhf")("--pretrain x"), "list of words"),
    ("import_slime text", lambda: _importer("slime")("--hf-checkpoint x"), "list of words"),
    ("import_verl overrides text",
     lambda: _importer("verl")(VERL_CONFIG, "data.max_response_length=2048"), "list of"),
    # rlmcost.units' formatters on what is not a number: had been float()'s ValueError
    ("format_bytes text", lambda: _units().format_bytes("80 GB"), "number"),
    ("format_seconds None", lambda: _units().format_seconds(None), "number"),
    # building_blocks (`rlmcost blocks`): batch="1" had been a MemoryError (the string
    # repeated), batch=2.5 a fraction of a sequence counted
    ("building_blocks batch text", lambda: _blocks()("gpt-2", batch="1", seq=16), "batch"),
    ("building_blocks batch fraction", lambda: _blocks()("gpt-2", batch=2.5, seq=16), "batch"),
    # the typed objects built directly, as the README's library examples build them: had
    # been pydantic's multi-line ValidationError
    ("TrainLayout tp 0", lambda: _deployment().TrainLayout(tp=0), "tp"),
    ("EngineSpec reservation 2", lambda: _deployment().EngineSpec(gpu_memory_utilization=2),
     "gpu_memory_utilization"),
    ("Deployment mistyped field", lambda: _deployment().Deployment(trian={}), "'train'"),
    ("Deployment nested bad field", lambda: _deployment().Deployment(train={"tp": 0}),
     "train.tp"),
    ("Run built directly", lambda: rlmcost.Run(cluster={"gpus": 0}), "cluster.gpus"),
    ("evaluate None", lambda: rlmcost.evaluate(None), "Run"),
    ("evaluate a mapping", lambda: rlmcost.evaluate({"algorithm": {"name": "ppo"}}), "from_data"),
    ("Run.from_data a list", lambda: rlmcost.Run.from_data([1]), "mapping"),
    ("Run.from_data unknown field", lambda: rlmcost.Run.from_data({"nonsense": 1}), "nonsense"),
    ("Run.from_yaml a list", lambda: rlmcost.Run.from_yaml("- 1\n- 2"), "mapping"),
    ("Run.from_json broken", lambda: rlmcost.Run.from_json("{"), "JSON"),
    ("compare nothing", lambda: rlmcost.compare([]), "algorithm"),
    # one string of names had been read letter by letter: "unknown algorithm 'p'"
    ("compare text", lambda: rlmcost.compare("ppo grpo", model="gpt-2"), "list"),
    ("compare unknown", lambda: rlmcost.compare(["ppo", "nonsense"], model="gpt-2"), "nonsense"),
    ("evaluate_many None", lambda: evaluate_many(None), "iterable"),
    ("evaluate_many text items", lambda: evaluate_many(["x"]), "Run"),
    # a flag given as text: "no" is a true value, and had been taken as True
    ("evaluate_many same_query text", lambda: evaluate_many([], same_query="no"),
     "same_query"),
    ("plan space exhaustive text",
     lambda: rlmcost.plan("grpo", "gpt-2", 8, space=_space(exhaustive="no")), "exhaustive"),
    ("plan space sp text",
     lambda: rlmcost.plan("grpo", "gpt-2", 8, space=_space(sp=("no",))), "sp"),
    ("plan space offload text",
     lambda: rlmcost.plan("grpo", "gpt-2", 8, space=_space(offload=("no",))), "offload"),
    ("plan train space sp text",
     lambda: rlmcost.plan("train", "gpt-2", 8, space={"sp": ("no",)}), "sp"),
    # plan train's space of the wrong kind: had been a TypeError, or sp="no" searched as on
    ("plan train space text", lambda: rlmcost.plan("train", "gpt-2", 8, space="x"), "space"),
    ("plan train space unknown field",
     lambda: rlmcost.plan("train", "gpt-2", 8, space={"nonsense": (1,)}), "nonsense"),
    ("plan progress text", lambda: rlmcost.plan("grpo", "gpt-2", 8, progress="x"), "progress"),
    ("plan no model", lambda: rlmcost.plan("grpo", None, 8), "model"),
    ("plan gpus 10^12", lambda: rlmcost.plan("grpo", "gpt-2", "8..1000000000000"), "gpus"),
    ("plan train unknown keyword", lambda: rlmcost.plan("train", "gpt-2", 8, nonsense=1),
     "nonsense"),
    ("plan unknown objective", lambda: rlmcost.plan("grpo", "gpt-2", 8, objective="x"),
     "objective"),
    # the wrong kind of argument to the planner: had been a TypeError or an AttributeError
    ("plan top text", lambda: rlmcost.plan("grpo", "gpt-2", 8, top="3"), "top"),
    ("plan space text", lambda: rlmcost.plan("grpo", "gpt-2", 8, space="x"), "RLSpace"),
    ("plan min_gpus text", lambda: rlmcost.plan("grpo", "gpt-2", 8, min_gpus="yes"), "min_gpus"),
    ("plan train batch text", lambda: rlmcost.plan("train", "gpt-2", 8, batch="x"), "batch"),
    ("plan_rl base mapping", lambda: _plan_rl()({"models": {"actor": "gpt-2"}}, 8), "Run"),
    ("plan space tp text", lambda: rlmcost.plan("grpo", "gpt-2", 8, space=_space(tp="4")),
     "tp"),  # had been a TypeError
    ("plan space reservation 2",
     lambda: rlmcost.plan("grpo", "gpt-2", 8, space=_space(fractions=(2.0,))), "fractions"),
    ("plan workers past the CPUs", lambda: rlmcost.plan("grpo", "gpt-2", 8, workers=10**6),
     "workers"),
]


@pytest.mark.parametrize(("call", "word"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_arguments_raise_one_line_spec_errors_naming_them(call, word):
    with pytest.raises(SpecError) as e:
        call()
    message = str(e.value)
    assert "\n" not in message, message
    assert word.lower() in message.lower(), message


def test_a_deployment_mapping_is_taken_as_its_fields():
    """``deployment=`` takes a Deployment or the mapping of its fields: a whole Deployment's
    fields give the same Run as the Deployment; a partial mapping sets what it names."""
    from rlmcost.deployment import Deployment, TrainLayout

    dep = Deployment(train=TrainLayout(micro_batch=2))
    a = rlmcost.run_of("grpo", "gpt-2", deployment=dep.to_json())
    assert a == rlmcost.run_of("grpo", "gpt-2", deployment=dep)
    partial = rlmcost.run_of("grpo", "gpt-2", deployment={"train": {"micro_batch": 2}})
    assert partial.deployment.train.micro_batch == 2


def test_the_lazy_api_is_listed_and_resolves():
    # the README's entry points (rlmcost.Run, evaluate, estimate, compare, plan, load_run):
    # dir(rlmcost) had listed none of them (loaded on first use), so tab completion showed none
    for name in ("Run", "evaluate", "estimate", "compare", "plan", "load_run", "Evaluation"):
        assert name in dir(rlmcost) and name in rlmcost.__all__
    assert all(getattr(rlmcost, name) is not None for name in rlmcost.__all__)


def test_offload_false_is_the_no_offload_idle_flag():
    """``offload=False`` turns the framework's idle-model offload off, as ``--no-offload-idle``
    does (NeMo RL's preset, the default, keeps idle models in host memory): it had been taken
    as not given, the preset's True kept."""
    assert rlmcost.run_of("grpo", "gpt-2").deployment.offload_idle is True
    assert rlmcost.run_of("grpo", "gpt-2", offload=False).deployment.offload_idle is False
    assert rlmcost.run_of("grpo", "gpt-2", framework="none", offload=True
                          ).deployment.offload_idle is True  # fmt: skip


def test_the_public_api_says_what_it_returns():
    """Every public method and property of what the library returns (Evaluation, Comparison,
    Run) has a docstring: ``help(e.work_flops)`` had said nothing of its unit."""
    from rlmcost.evaluation.view import Evaluation
    from rlmcost.reports.estimate import Comparison

    bare = []
    for cls in (Evaluation, Comparison, rlmcost.Run):
        for name, member in vars(cls).items():
            fn = member.fget if isinstance(member, property) else getattr(member, "__func__",
                                                                           member)  # fmt: skip
            if not name.startswith("_") and callable(fn) and not (fn.__doc__ or "").strip():
                bare.append(f"{cls.__name__}.{name}")
    assert not bare, bare


def test_the_formatters_say_what_is_not_finite():
    """nan and inf print as themselves: ``format_bytes(nan)`` had been int()'s ValueError and
    ``format_bytes(inf)`` 'inf EiB'."""
    from rlmcost.units import format_bytes, format_count, format_flops, format_seconds

    nan, inf = float("nan"), float("inf")
    assert (format_bytes(nan), format_bytes(inf), format_count(inf)) == ("nan B", "inf B", "inf")
    assert (format_flops(inf), format_seconds(inf)) == ("inf FLOP", "inf s")
    assert format_bytes(80 * 2**30) == "80.0 GiB"  # finite values as before
