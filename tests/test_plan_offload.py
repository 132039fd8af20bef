"""The plan keeps the framework's offloads: each candidate's trainer offload list is the base
Run's with only the optimizer axis set (rlmcost.plan.offloads), so a row prices the deployment
the framework runs, and its command, evaluated alone, gives the row's time and memory."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.parallel.layout import Checkpointing, ZeroStage
from rlmcost.plan.offloads import candidate_offload
from rlmcost.plan.rl import plan_rl
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates
from rlmcost.run.spec import Run

runner = CliRunner()
Z3, Z1, Z0 = ZeroStage.OS_G_P, ZeroStage.OS, ZeroStage.NONE


def _cli(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _run(framework: str, **train: object) -> Run:
    return Run.from_data({
        "algorithm": {"name": "grpo", "rule_reward": True}, "models": {"actor": "llama-3.2-1b"},
        "workload": {"prompts": 8, "samples_per_prompt": 4, "response_len": 512},
        "deployment": {"framework": framework, "train": train}})  # fmt: skip


def _same_as_alone(row: dict) -> None:
    """Independent of the plan's row: its command line evaluated alone by the CLI."""
    single = _cli(*shlex.split(row["command"])[1:])
    assert single["fits"] is True, row["command"]
    assert single["iteration"]["time_s"] == row["time_s"], row["command"]
    assert max(single["device_memory_bytes"].values()) == row["memory_bytes_per_device"]
    assert single["run"]["deployment"]["train"]["offload"] == (row["offload"].split(",")
                                                               if row["offload"] else [])


def test_nemo_rl_rows_keep_the_colocated_offload_and_reproduce() -> None:
    """NeMo RL's preset offloads optimizer-idle,params-idle (dtensor_policy_worker.py
    offload_before_refit / offload_after_refit, its colocated refit): the co-located rows
    keep them; with generation apart NeMo RL offloads nothing between phases (grpo.py
    refit_policy_generation, colocated only); its optimizer in host memory is the DTensor
    worker's cpu_offload (optimizer, params, grads)."""
    out = _cli("plan", "grpo", "-m", "llama-3.2-1b", "-H", "h100", "--gpus", "8", "-B", "8",
               "-K", "4", "-T", "512", "--framework", "nemo-rl", "--tp", "1",
               "--micro-batch", "1", "--ckpt", "full", "--top", "1000")  # fmt: skip
    rows = [r for r in out["rows"] if r["fits"]]
    got = {(r["family"], r["offload"]) for r in rows}
    assert ("baseline", "optimizer-idle,params-idle") in got
    assert ("baseline", "optimizer,params,grads") in got
    assert {o for f, o in got if f == "split"} == {"", "optimizer,params,grads"}
    assert ("baseline", "") not in got  # the preset's offload is never dropped
    seen = set()
    for r in rows:
        if (r["family"], r["offload"]) not in seen:
            seen.add((r["family"], r["offload"]))
            _same_as_alone(r)


def test_verl_idle_offloads_are_kept_by_every_row() -> None:
    """verl's actor.fsdp_config param_offload / optimizer_offload (between phases,
    verl/workers/fsdp_workers.py) given on the base Run stay on every row; the optimizer
    axis is FSDP2's CPUOffloadPolicy (fsdp_config.offload_policy), which keeps them on the
    host through the step instead."""
    base = _run("verl", offload=["optimizer-idle", "params-idle"])
    space = RLSpace(placements=("baseline",), tp=(1,), rollout_tp=(1,), micro_batch=(1,),
                    ckpt=(Checkpointing.FULL,), fractions=(0.5,))  # fmt: skip
    r = plan_rl(base, 4, space=space, top=10)
    offs = {row["offload"] for row in r.rows}
    assert offs == {"optimizer-idle,params-idle", "optimizer,params,grads"}, offs
    for row in r.rows:
        _same_as_alone(row)


@pytest.mark.parametrize(("framework", "train", "zero", "colocated", "on", "off"), [
    # rlmcost's bare layout: the optimizer alone, the rest as given
    ("none", {"offload": ["grads"]}, Z1, True, ("grads", "optimizer"), ("grads",)),
    # OpenRLHF --adam_offload: DeepSpeed offload_optimizer, gradients on the host too
    # (rlmcost.frameworks.openrlhf.DEEPSPEED_ADAM_OFFLOAD); without it its small-actor
    # example's --deepspeed_enable_sleep stays, apart too (a switch of its own, read whatever
    # the placement: openrlhf/trainer/ray/ppo_actor.py @c250c21a)
    ("openrlhf", {}, Z3, False, ("optimizer", "grads"), ("optimizer-idle", "grads-idle")),
    # TRL under accelerate's DDP cannot offload; a DeepSpeed config can (frameworks/trl.py)
    ("trl", {"zero": "0"}, Z0, True, None, ()),
    ("trl", {}, Z3, True, ("optimizer", "grads"), ()),
    # verl megatron: optimizer_cpu_offload (the hybrid CPU optimizer, fraction 1) replaces
    # the between-phases optimizer offload; params-idle stays (frameworks/cpu_optimizer.py)
    ("verl", {"zero": "1", "offload": ["optimizer-idle", "params-idle"]}, Z1, True,
     ("params-idle", "optimizer"), ("optimizer-idle", "params-idle")),
    # slime --offload-train apart stays (slime's offload_train is a switch of its own)
    ("slime", {"offload": ["optimizer-idle", "params-idle", "grads-idle"]}, Z1, False,
     ("params-idle", "grads-idle", "optimizer"), ("optimizer-idle", "params-idle", "grads-idle")),
    # a parameter offload needs ZeRO-3 (deployment/memory.py): skipped elsewhere
    ("none", {"offload": ["params"]}, Z1, True, None, None),
])  # fmt: skip
def test_each_framework_keeps_the_optimizer_on_the_host_its_own_way(
        framework: str, train: dict, zero: ZeroStage, colocated: bool, on: tuple | None,
        off: tuple | None) -> None:  # fmt: skip
    base = _run(framework, **train)
    assert candidate_offload(base, True, zero, colocated) == on
    assert candidate_offload(base, False, zero, colocated) == off


def test_a_combination_the_framework_cannot_run_is_not_a_candidate() -> None:
    """TRL's DDP (its preset's --zero 0) has no optimizer offload: those candidates are
    skipped, not evaluated and rejected; the ideal iteration offloads nothing."""
    trl = _run("trl")
    space = RLSpace(placements=("baseline",), tp=(1,), rollout_tp=(1,), micro_batch=(1,),
                    ckpt=(Checkpointing.FULL,), fractions=(0.5,), zero=(Z0, Z3))  # fmt: skip
    cands = candidates(trl, space, 4)
    assert {(c.zero, c.offload) for c in cands} == {
        (Z0, ()), (Z3, ()), (Z3, ("optimizer", "grads"))}
    for c in cands:  # each as the framework runs it: the Run takes the list as it is
        assert tuple(str(k) for k in candidate_run(trl, c).deployment.train.offload) == c.offload
    ideal = Run.from_data({"algorithm": {"name": "grpo", "rule_reward": True},
                           "models": {"actor": "llama-3.2-1b"},
                           "deployment": {"framework": "none", "ideal": True}})  # fmt: skip
    assert {c.offload for c in candidates(ideal, space, 4)} == {()}
