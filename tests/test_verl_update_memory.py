"""verl's update memory as its code holds it (issue 18: the colocated Qwen2.5-Math-7B DAPO rows).

Sources (volcengine/verl b25bb7d4f): verl/workers/actor/dp_actor.py ``update_policy`` and
verl/workers/critic/dp_critic.py ``update_critic`` end with ``optimizer.zero_grad()``, which
sets the gradients to None by default (torch/optim/optimizer.py, PyTorch >= 2.0), so FSDP2's
gradient shards are freed between updates; Megatron-core's gradient buffer is persistent
(``zero_grad_buffer`` zeroes it) and stays.
"""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind
from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.presets import behaviour

_COMMON = ["--no-kl", "--batch", "64", "--group", "8", "--prompt-len", "200",
           "--response-len", "2048", "--hardware", "h100-sxm", "--gpus", "16",
           "--rollout-tp", "2", "--sleep"]  # fmt: skip
_FSDP = ["--model", "qwen2.5-7b", "--zero", "3"]
_MEGATRON = ["--model", "qwen3-30b-a3b", "--ep", "8", "--zero", "1", "--param-dtype", "bf16"]


def _grads_by_kind(framework: str, argv: list[str]) -> dict[Kind, int]:
    est = evaluate_deployment(run_from_argv("rlvr", ["--framework", framework, *_COMMON, *argv]))
    return {j.task.invocation.kind: int(j.memory.gradients) for g in est.groups for j in g.jobs}


def test_verls_behaviour_frees_the_gradients_after_the_update():
    verl = behaviour("verl")
    assert verl is not None and verl.grads_freed_after_update
    none = behaviour("openrlhf")
    assert none is None or not none.grads_freed_after_update


def test_fsdp_actor_holds_no_gradients_outside_its_update():
    """verl FSDP: the update holds the fp32 gradient shard; generation and the old-log-prob
    forward hold none (zero_grad(set_to_none) at the end of update_policy)."""
    grads = _grads_by_kind("verl", _FSDP)
    assert grads[Kind.TRAIN] > 0
    assert grads[Kind.GENERATE] == 0 and grads[Kind.FORWARD] == 0


def test_megatron_backend_keeps_its_gradient_buffer():
    """verl's Megatron backend (a layout with ep > 1): the persistent gradient buffer stays
    through generation and the forward, as it does with no framework at all."""
    grads = _grads_by_kind("verl", _MEGATRON)
    assert grads[Kind.TRAIN] > 0
    assert grads[Kind.GENERATE] == grads[Kind.TRAIN] == grads[Kind.FORWARD]
    bare = _grads_by_kind("none", _FSDP)
    assert bare[Kind.GENERATE] == bare[Kind.TRAIN] > 0
