"""The trainer fields a forward layout cannot set: refused with a one-line error, never ignored.

The forwards (log-probs, reference, reward, values) are timed with the pass options of the
trainer's layout (``placement.pass_options.step_options`` of the deployment's ``train``, or of a
group's own, ``placement.group_train``): its MoE router dtype and token dispatcher, its
kernels and its pipeline sends' overlap; ``fused_loss`` is the training loss's. A forward
layout (``forward``,
``groups[].forward``) that gives one of them a value of its own, not the default and unlike the
trainer's, would be silently ignored; it is refused, naming where to give it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment

TRAINER_ONLY = ("fused_loss", "router_dtype", "ep_dispatcher", "kernels", "pp_overlap_p2p")
"""Fields read from the trainer's layout alone (module docstring)."""


def check_forwards(dep: Deployment) -> None:
    """ValueError for a forward layout of ``dep`` that sets a :data:`TRAINER_ONLY` field to a
    value other than the default and the trainer's it runs beside."""
    from rlmcost.deployment.spec import TrainLayout

    forwards = [("forward", dep.forward, dep.train, "train")]
    forwards += [(f"groups[{i}].forward", g.forward, g.train or dep.train,
                  f"groups[{i}].train" if g.train else "train")
                 for i, g in enumerate(dep.groups)]  # fmt: skip
    for where, fwd, train, at in forwards:
        for key in TRAINER_ONLY if fwd is not None else ():
            v = getattr(fwd, key)
            if v != getattr(train, key) and v != TrainLayout.model_fields[key].default:
                raise ValueError(
                    f"{where}.{key} = {getattr(v, 'value', v)} is not read: the forwards run "
                    f"with the trainer's {key}; give it in {at} instead"
                )
