"""A rule-based verifier runs on the CPU (Table II); while it runs, the devices hold the states
present between the models' phases, as the jobs' memory reads them
(rlmcost.placement.group_idle), not every trained model's full states: verl frees the
gradients after each update (dp_actor.py update_policy: zero_grad, set_to_none) and with
``param_offload`` / ``optimizer_offload`` keeps the parameter shard and the Adam states in host
memory outside their phases (verl/workers/fsdp_workers.py offload_fsdp_model_to_cpu /
offload_fsdp_optimizer, volcengine/verl @b178a3cd)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app

QUERY = ["grpo", "-m", "llama-3.1-8b", "--gpus", "8", "--framework", "verl", "--reward", "rule",
         "--json"]  # fmt: skip
GIB = 2**30


def _verifier(*flags: str) -> tuple[int, dict]:
    res = CliRunner().invoke(app, [*QUERY, *flags])
    assert res.exit_code == 0, res.output
    stage = json.loads(res.stdout)["stages"]["assessment"]
    (inv,) = [i for i in stage["invocations"] if i["kind"] == "verify"]
    return inv["memory_bytes_per_device"], stage


@pytest.mark.parametrize(("offload", "held"), [
    # ZeRO-3 over 8 GPUs of 8.03 B parameters: the fp32 shard 8.03e9 x 4 / 8 = 3.74 GiB, its
    # Adam m, v twice that (7.48 GiB); the gradients freed after the update
    ((), 3 * 8_030_261_248 * 4 // 8),
    (("--offload", "optimizer-idle"), 8_030_261_248 * 4 // 8),
    (("--offload", "params-idle,optimizer-idle"), 0),
])  # fmt: skip
def test_verifier_holds_the_states_between_phases(offload: tuple[str, ...], held: int) -> None:
    got, stage = _verifier(*offload)
    assert got == held, got / GIB
    # the stage's peak is then a GPU job's, never the verifier's idle moment
    assert stage["peak_invocation"].startswith("actor forward")
