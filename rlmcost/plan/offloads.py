"""The trainer's offload list of a plan candidate: the base Run's, with the optimizer axis set.

The plan's offload axis (:attr:`~rlmcost.plan.rl_candidates.RLSpace.offload`) is one choice:
whether the optimizer states live in host memory and step there. Everything else the base
Run offloads stays as it is, the between-phases kinds (``optimizer-idle``, ``params-idle``,
``grads-idle``: NeMo RL's colocated refit offload, the NeMo RL preset's default; verl's
``param_offload`` / ``optimizer_offload``) and any other kind the query gave, so each row
prices the deployment the framework runs and its command reproduces it.

Each framework keeps the optimizer on the host its own way (:data:`HOST_OPTIMIZER`, what its
importer maps the switch to); turning it on drops the between-phases offload of the kinds it
now keeps on the host (``hybrid_cpu_optimizer`` in :mod:`rlmcost.frameworks.cpu_optimizer`:
``optimizer-idle`` becomes ``optimizer``), turning it off drops them all. Two rules of the
frameworks skip or change a combination (:func:`candidate_offload`):

* a framework with no way to keep the optimizer on the host skips the candidate (TRL under
  accelerate's DDP, ``--zero 0``: only a DeepSpeed or FSDP accelerate config offloads,
  ``rlmcost/frameworks/trl.py``), as does a parameter offload without ZeRO-3
  (``rlmcost/deployment/memory.py``: no framework runs it) and the idealized iteration (no
  offload at all, ``deployment/spec.py``);
* NeMo RL moves the policy's states to the host between phases only when generation is
  colocated (nemo_rl/algorithms/grpo.py ``refit_policy_generation``: ``offload_before_refit`` /
  ``offload_after_refit`` under ``colocated_inference``; the importer gives ``--offload ''``
  with generation apart, ``rlmcost/frameworks/nemo_rl_engine.py`` ``import_engine``): with the
  engines on GPUs of their own its between-phases kinds are dropped by the evaluation's own
  rule (``placement.group_train.phase_offloads_run``, ``Behaviour.phase_offload_colocated``).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from rlmcost.deployment.kinds import Offload
from rlmcost.parallel.layout import ZeroStage
from rlmcost.placement.group_train import phase_offloads_run

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

KEPT = ("optimizer", "grads", "params")
"""The kinds kept in host memory through the step, bit 0, 1, 2 of the screen's ``offload``
field (:func:`mask`)."""

IDLE = {"optimizer": "optimizer-idle", "grads": "grads-idle", "params": "params-idle"}
"""Each kept kind's between-phases counterpart (``deployment.kinds.PHASE_OFFLOADS``)."""

DEEPSPEED = ("optimizer", "grads")
"""DeepSpeed's ``offload_optimizer``: Adam's states and the gradient partition on the host
(``rlmcost.frameworks.openrlhf.DEEPSPEED_ADAM_OFFLOAD``)."""

FSDP_CPU = ("optimizer", "params", "grads")
"""FSDP2's ``CPUOffloadPolicy``: parameters, gradients and optimizer states on the host."""

MEGATRON_CPU = ("optimizer",)
"""Megatron-core's hybrid CPU optimizer at fraction 1 (``frameworks/cpu_optimizer.py``)."""

HOST_OPTIMIZER: dict[str | None, tuple[tuple[str, ...] | None, tuple[str, ...] | None]] = {
    # the framework -> (its spelling under ZeRO-3/FSDP, under the other stages); None: none
    None: (("optimizer",), ("optimizer",)),  # rlmcost's bare layout: the optimizer alone
    # --adam_offload: DeepSpeed offload_optimizer (openrlhf/utils/deepspeed_utils.py)
    "openrlhf": (DEEPSPEED, DEEPSPEED),
    # FSDP fsdp_config.offload_policy (verl/workers/fsdp_workers.py); Megatron
    # optim.override_optimizer_config.optimizer_cpu_offload (rlmcost/frameworks/verl.py)
    "verl": (FSDP_CPU, MEGATRON_CPU),
    # DTensor dtensor_cfg.cpu_offload (CPUOffloadPolicy); Megatron optimizer_cpu_offload
    # (rlmcost/frameworks/nemo_rl.py)
    "nemo-rl": (FSDP_CPU, MEGATRON_CPU),
    # --optimizer-cpu-offload, Megatron-core's hybrid optimizer (frameworks/slime_layout.py)
    "slime": (MEGATRON_CPU, MEGATRON_CPU),
    # accelerate's DeepSpeed config offload_optimizer_device: cpu; DDP (--zero 0) has none
    # (rlmcost/frameworks/trl.py)
    "trl": (DEEPSPEED, None),
}
"""Each framework's way to keep the optimizer in host memory (the kinds its importer sets)."""

def host_optimizer(framework: str | None, zero: ZeroStage) -> tuple[str, ...] | None:
    """The kinds ``framework`` keeps on the host for an optimizer in host memory under ZeRO
    stage ``zero`` (None: it cannot; an unknown framework: the bare layout's)."""
    fsdp, other = HOST_OPTIMIZER.get(framework, HOST_OPTIMIZER[None])
    if framework == "trl" and zero is not ZeroStage.NONE:
        return fsdp  # a DeepSpeed config at any stage
    return fsdp if zero is ZeroStage.OS_G_P else other


def candidate_offload(base: Run, on: bool, zero: ZeroStage,
                      colocated: bool) -> tuple[str, ...] | None:  # fmt: skip
    """The offload list of a candidate of ``base`` with the optimizer in host memory (``on``)
    or not, under ZeRO stage ``zero``, its engines colocated with the actor's trainer or not
    (module docstring); None where the framework cannot run it (the candidate is skipped).

    >>> from rlmcost.run.spec import Run
    >>> nemo = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "llama-3.2-1b"},
    ...                       "deployment": {"framework": "nemo-rl"}})
    >>> candidate_offload(nemo, False, ZeroStage.OS_G_P, True)
    ('optimizer-idle', 'params-idle')
    >>> candidate_offload(nemo, True, ZeroStage.OS_G_P, True)
    ('optimizer', 'params', 'grads')
    >>> candidate_offload(nemo, False, ZeroStage.OS_G_P, False)
    ()
    """
    d = base.deployment
    kinds = [str(k) for k in d.train.offload]
    framework = None if d.framework in (None, "none") else str(d.framework)
    spelling = host_optimizer(framework, zero)
    drop = set(KEPT) & ({"optimizer"} | set(spelling or ()))
    kinds = [k for k in kinds if k not in drop]
    if on:
        if spelling is None or d.ideal:
            return None
        kinds = [k for k in kinds if k not in {IDLE[s] for s in spelling}] + list(spelling)
    kinds = [str(o) for o in phase_offloads_run(d, tuple(Offload(k) for k in kinds), colocated)]
    if "params" in kinds and zero is not ZeroStage.OS_G_P:
        return None
    return tuple(dict.fromkeys(kinds))


@cache
def mask(kinds: tuple[str, ...]) -> int:
    """The kept kinds of an offload list as bits of :data:`KEPT` (the screen's field)."""
    return sum(1 << i for i, k in enumerate(KEPT) if k in kinds)
