"""The framework defaults under a Run are the preset's kept data, read and never changed
(``rlmcost.run.defaults``: the sized preset's deployment data is kept per framework, actor
size and engine kind, and no longer copied per Run): a Run whose rules change the trainer's
or the forwards' layout (a data-parallel degree given, which lays the trainer out whole; a
forward layout of its own) leaves the next Run over the same preset as the first one was.
The layouts are the presets' own (``rlmcost.frameworks``: slime's 70 B tier runs TP 8 with
sequence parallelism; NeMo RL's sized defaults give a forward layout)."""

from __future__ import annotations

import copy
from typing import Any

from rlmcost.run import defaults
from rlmcost.run.spec import Run


def _run(framework: str, cluster: dict[str, Any] | None = None,
         deployment: dict[str, Any] | None = None) -> Run:  # fmt: skip
    return Run.from_data({
        "algorithm": {"name": "grpo"}, "models": {"actor": "llama-3.1-70b"},
        "deployment": {"framework": framework, **(deployment or {})},
        "cluster": {"hardware": "h100-sxm", "gpus": 32, **(cluster or {})},
    })  # fmt: skip


def _kept(framework: str) -> Any:
    actor = "llama-3.1-70b"
    return defaults._kept_data(framework, defaults.actor_params(actor),
                               defaults.actor_moe(actor), None, defaults.actor_layers(actor))


def test_a_whole_trainer_layout_leaves_the_presets_layout_as_it_was() -> None:
    first = _run("slime")
    kept = copy.deepcopy(_kept("slime"))
    assert (first.deployment.train.tp, first.deployment.train.sp) == (8, True)  # the tier's
    whole = _run("slime", cluster={"dp": 4})  # a degree given: the Run's own layout, whole
    assert (whole.deployment.train.tp, whole.deployment.train.sp) == (1, False)
    again = _run("slime")
    assert again == first and again.to_json() == first.to_json()
    assert _kept("slime") == kept


def test_a_forward_layout_of_its_own_leaves_the_presets_forward_as_it_was() -> None:
    first = _run("nemo-rl")
    kept = copy.deepcopy(_kept("nemo-rl"))
    assert kept.get("forward")  # NeMo RL's sized defaults give the forwards a layout
    own = _run("nemo-rl", deployment={"train": {"router_dtype": "fp32"},
                                      "forward": {"zero": "0"}})  # fmt: skip
    assert own.deployment.forward is not None and own.deployment.forward.zero == "0"
    assert own.deployment.forward.router_dtype == "fp32"  # the trainer's, followed
    batch = _run("nemo-rl", deployment={"train": {"micro_batch": 2}})  # the budget dropped
    assert batch.deployment.train.max_tokens_per_gpu is None
    again = _run("nemo-rl")
    assert again == first and again.to_json() == first.to_json()
    assert _kept("nemo-rl") == kept
