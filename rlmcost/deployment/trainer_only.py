"""The trainer fields a forward layout cannot set: refused with a one-line error, never ignored.

The forwards (log-probs, reference, reward, values) are timed with the pass options of the
trainer's layout (``placement.pass_options.step_options`` of the deployment's ``train``, or of a
group's own, ``placement.group_train``): its MoE router dtype and token dispatcher, its
kernels, its pipeline sends' overlap and its FP8 recipe (``fp8``, ``fp8_param``: a Megatron
worker's log-prob forwards run its Transformer Engine FP8); ``fused_loss`` is the training
loss's. A forward
layout (``forward``,
``groups[].forward``) that gives one of them a value of its own, unlike the trainer's, would
be silently ignored; it is refused, naming where to give it. The deployment's ``forward``
counts as giving a value other than the default (a Run file writes all its fields); a group's
forward gives the fields its input names (``deployment.given``), and the trainer it runs
beside is the group's as ``placement.group_train`` merges it (the deployment's value where
the group's trainer layout does not give the field, or where it has none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment, TrainLayout

TRAINER_ONLY = ("fused_loss", "router_dtype", "ep_dispatcher", "moe_permute_fusion", "kernels",
                "pp_overlap_p2p", "grad_reduce_dtype", "recompute_early_stop",
                "module_ckpt", "disable_dropout", "swiglu_fusion", "fp8", "fp8_param",
                "activation_offload")  # fmt: skip
"""Fields read from the trainer's layout alone (module docstring)."""


def check_forwards(dep: Deployment) -> None:
    """ValueError for a forward layout of ``dep`` that gives a :data:`TRAINER_ONLY` field a
    value other than the trainer's it runs beside (module docstring)."""
    from rlmcost.deployment.spec import TrainLayout

    fwd = dep.forward
    for key in TRAINER_ONLY if fwd is not None else ():
        v = getattr(fwd, key)
        if v != getattr(dep.train, key) and v != TrainLayout.model_fields[key].default:
            _refuse("forward", key, v, "train")
    for i, g in enumerate(dep.groups):
        given = g.forward.model_fields_set if g.forward is not None else set()
        for key in (k for k in TRAINER_ONLY if k in given):
            v = getattr(g.forward, key)
            if v != _beside(dep.train, g.train, key):
                _refuse(f"groups[{i}].forward", key, v,
                        f"groups[{i}].train" if g.train else "train")  # fmt: skip


def _beside(run: TrainLayout, own: TrainLayout | None, key: str) -> Any:
    """The value of ``key`` in a group's trainer (``placement.group_train.group_trainer``:
    ``deployment.given.layered``, the group's where its layout gives the field, else the run's,
    for every field: ``pp_overlap_p2p`` too, not only the batching and pass fields)."""
    if own is not None and key in own.model_fields_set:
        return getattr(own, key)
    return getattr(run, key)


def _refuse(where: str, key: str, v: Any, at: str) -> None:
    raise ValueError(f"{where}.{key} = {getattr(v, 'value', v)} is not read: the forwards run "
                     f"with the trainer's {key}; give it in {at} instead")
