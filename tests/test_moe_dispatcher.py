"""The MoE token dispatcher as each framework's config sets it (rlmcost/frameworks/
moe_dispatcher.py) and as the RL commands carry it (``--ep-dispatcher``, ``train.ep_dispatcher``).

Sources: Megatron-core transformer_config.py @d98e8a64dd (moe_token_dispatcher_type default
allgather, line 891; moe_enable_deepep requires flex and selects the deepep backend, lines
1743-1752); NeMo RL v0.7.0 examples/configs (grpo-moonlight-16ba3b-4n8g-megatron.yaml: flex +
moe_enable_deepep; grpo-qwen3-30ba3b-8n4g-megatron.yaml: allgather; grpo_math_1B.yaml:
alltoall); verl @b178a3cd grpo_30b_a3b_base_math_megatron_96_32.sh:169-171 (flex +
moe_enable_deepep), models/mcore/config_converter.py:89 (alltoall when unset); slime @624b824a
scripts/models/qwen3-30B-A3B.sh:40 (alltoall), scripts/run-deepseek-r1.sh:148-149 (flex +
--moe-enable-deepep), Megatron-LM's argument default (allgather) when a launch line omits it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from nemo_rl_moe import import_qwen3_moe
from typer.testing import CliRunner

from rlmcost.choices import EpDispatcher
from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.frameworks.moe_dispatcher import read_dispatcher
from rlmcost.frameworks.slime import import_slime
from rlmcost.frameworks.verl import import_verl
from rlmcost.placement.pass_options import step_options, worker_notes

DATA = Path(__file__).parent / "data" / "frameworks"
A2A, DEEPEP, AG = EpDispatcher.ALLTOALL, EpDispatcher.DEEPEP, EpDispatcher.ALLGATHER


@pytest.mark.parametrize(("kind", "deepep", "backend", "want"), [
    ("alltoall", False, None, A2A),
    ("allgather", False, None, AG),
    ("flex", False, None, DEEPEP),  # the flex backend's default: deepep
    ("flex", True, None, DEEPEP),  # moe_enable_deepep: backend deepep
    ("flex", False, "deepep", DEEPEP),
    ("flex", False, "hybridep", DEEPEP),  # choice: HybridEP timed as DeepEP
    (None, False, None, AG),  # unset: the default given (here Megatron-LM's)
])  # fmt: skip
def test_megatron_keys_map_to_a_dispatcher(kind, deepep, backend, want) -> None:
    got, note = read_dispatcher(kind, deepep, backend, AG, "cfg", "Megatron-LM's")
    assert got is want
    assert (note is None) == (kind == "alltoall")
    if kind is None:
        assert "unset" in note and "Megatron-LM's" in note


@pytest.mark.parametrize(("kind", "deepep", "backend", "match"), [
    ("alltoall", True, None, "needs moe_token_dispatcher_type flex"),  # Megatron-core raises
    (None, True, None, "needs moe_token_dispatcher_type flex"),
    ("flex", True, "hybridep", "one backend"),
    ("flex", False, "ncclep", "not modelled"),
    ("ring", False, None, "use one of"),
    ("flex", False, "nvshmem", "use one of"),
])  # fmt: skip
def test_contradictory_or_unmodelled_keys_are_refused(kind, deepep, backend, match) -> None:
    with pytest.raises(SpecError, match=match):
        read_dispatcher(kind, deepep, backend, A2A, "cfg")


def test_nemo_rl_reads_the_megatron_cfg_keys() -> None:
    c = "policy.megatron_cfg"
    # grpo_math_1B.yaml (the fixture) leaves the key out: v0.5.0's provider alltoall, stated
    q = import_qwen3_moe(1)
    assert "--ep-dispatcher" not in dict(q.flags)
    assert any("moe_token_dispatcher_type unset: alltoall" in n for n in q.notes)
    # v0.6.0+ grpo_math_1B.yaml: alltoall explicit, nothing to say
    q = import_qwen3_moe(1, f"{c}.moe_token_dispatcher_type=alltoall")
    assert "--ep-dispatcher" not in dict(q.flags) and not any("dispatcher" in n for n in q.notes)
    # grpo-moonlight-16ba3b-4n8g-megatron.yaml: flex + moe_enable_deepep
    q = import_qwen3_moe(1, f"+{c}.moe_token_dispatcher_type=flex", f"+{c}.moe_enable_deepep=true")
    assert dict(q.flags)["--ep-dispatcher"] == "deepep"
    assert not [k for k in q.ignored if "deepep" in k or "dispatcher" in k]
    # grpo-qwen3-30ba3b-8n4g-megatron.yaml: allgather
    q = import_qwen3_moe(1, f"{c}.moe_token_dispatcher_type=allgather")
    assert dict(q.flags)["--ep-dispatcher"] == "allgather"
    with pytest.raises(SpecError, match="moe_enable_deepep"):
        import_qwen3_moe(1, f"+{c}.moe_enable_deepep=true")


def test_verl_reads_override_transformer_config() -> None:
    a = "actor_rollout_ref.actor"
    tf = f"+{a}.megatron.override_transformer_config"
    megatron = [f"{a}.strategy=megatron", f"{a}.megatron.expert_model_parallel_size=4"]
    verl = DATA / "verl_grpo.yaml"
    q = import_verl(verl, megatron)  # verl's own alltoall (config_converter.py:89)
    assert "--ep-dispatcher" not in dict(q.flags)
    assert any("unset: alltoall, verl's" in n for n in q.notes)
    q = import_verl(verl, [*megatron, f"{tf}.moe_token_dispatcher_type=flex",
                           f"{tf}.moe_enable_deepep=True"])  # fmt: skip
    assert dict(q.flags)["--ep-dispatcher"] == "deepep"
    assert not [k for k in q.ignored if "deepep" in k or "dispatcher" in k]
    with pytest.raises(SpecError, match="moe_enable_deepep"):
        import_verl(verl, [*megatron, f"{tf}.moe_enable_deepep=True"])


def _slime(name: str, drop: tuple[str, ...] = ()) -> list[str]:
    lines = [ln for ln in (DATA / f"slime_{name}.args").read_text().splitlines()
             if ln and not ln.startswith("#") and not ln.startswith(drop or ("\0",))]
    return shlex.split(" ".join(lines))


def test_slime_reads_its_launch_flags() -> None:
    # scripts/models/qwen3-30B-A3B.sh:40: --moe-token-dispatcher-type alltoall, EP 8
    q = import_slime(_slime("qwen3-30B-A3B"))
    assert "--ep-dispatcher" not in dict(q.flags)
    # without the flag: Megatron-LM's argument default, allgather (transformer_config.py:891)
    q = import_slime(_slime("qwen3-30B-A3B", ("--moe-token-dispatcher-type",)))
    assert dict(q.flags)["--ep-dispatcher"] == "allgather"
    assert any("unset: allgather, Megatron-LM's" in n for n in q.notes)
    # run-deepseek-r1.sh:148-149: the model script's alltoall, then flex + --moe-enable-deepep
    q = import_slime(_slime("deepseek-r1"))
    assert dict(q.flags)["--ep-dispatcher"] == "deepep"
    # a dense model without EP: nothing set whatever Megatron's default
    assert "--ep-dispatcher" not in dict(import_slime(_slime("qwen3-4B")).flags)


def test_the_deployment_carries_the_dispatcher_into_the_passes() -> None:
    ep = {"ep": 8, "tp": 1}
    assert step_options(Deployment(train={**ep, "ep_dispatcher": "allgather"})).ep_dispatcher is AG
    assert step_options(Deployment(train=ep)).ep_dispatcher is A2A
    # the paper's ideal run keeps rlmcost's default
    assert step_options(Deployment(ideal=True, train={**ep, "ep_dispatcher": "deepep"})) is None
    notes = worker_notes(Deployment(framework="nemo-rl", train={**ep, "ep_dispatcher": "deepep"}),
                         kl=False)  # fmt: skip
    assert any("dispatcher deepep" in n for n in notes)


BASE = ["grpo", "-m", "qwen3-30b-a3b", "--gpus", "32", "--tp", "1", "--ep", "16", "--etp", "1",
        "--zero", "1", "--batch", "64", "--group", "8", "--prompt-len", "256",
        "--response-len", "1024", "--forward-micro-batch", "2", "--json"]  # fmt: skip
# log-prob micro-batches of 2 (grpo_math_8B.yaml's; the preset's 32 B recipe takes 1 from 16.2 B,
# where this MoE model's forwards sit on the host floor and the dispatcher does not move them)


def test_rl_cli_takes_the_dispatcher() -> None:
    runner = CliRunner()

    def run(*extra: str) -> dict:
        out = runner.invoke(app, [*BASE, *extra])
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)

    plain, gather = run(), run("--ep-dispatcher", "allgather")
    assert plain["run"]["deployment"]["train"]["ep_dispatcher"] == "alltoall"
    assert gather["run"]["deployment"]["train"]["ep_dispatcher"] == "allgather"
    assert any("dispatcher allgather" in n for n in gather["notes"])
    assert not any("dispatcher" in n for n in plain["notes"])
    # EP 16 over 2 nodes of 8: the training passes' EP communication differs
    assert gather["iteration"]["time_s"] != plain["iteration"]["time_s"]
    res = runner.invoke(app, [*BASE, "--ep-dispatcher", "nccl"])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_dispatcher_round_trips_through_the_command() -> None:
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    argv = BASE[1:-1]
    run = run_from_argv("grpo", [*argv, "--ep-dispatcher", "deepep"])
    assert run.deployment.train.ep_dispatcher is DEEPEP
    assert "--ep-dispatcher deepep" in to_command(run)
    assert "--ep-dispatcher" not in to_command(run_from_argv("grpo", argv))


def test_rows_state_an_implicit_dispatcher_among_their_choices() -> None:
    from rlmcost.reports.rl_runs import load_runs
    from rlmcost.reports.rl_runs_frameworks import recipe

    runs = {r["id"]: r for r in load_runs()["runs"]}
    # v0.5.0's recipes leave the key out: the Megatron-Bridge provider's alltoall (a choice)
    v05 = recipe(runs["nemo-rl-v0.5-h100-qwen3-235b-a22b-grpo"])
    assert any(c.startswith("moe_token_dispatcher_type unset: alltoall") for c in v05.choices)
    # the v0.7.0 GB200 recipe sets flex + hybridep: read, not a choice of rlmcost's
    gb200 = recipe(runs["nemo-rl-v0.7-gb200-deepseek-v3-grpo-128gpu"])
    assert not any("dispatcher" in c for c in gb200.choices)
    assert "--ep-dispatcher deepep" in gb200.command
