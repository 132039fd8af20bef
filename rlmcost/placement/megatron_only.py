"""Settings only a Megatron-core trainer has (its gradient buffer, Transformer Engine's FP8,
multi-token prediction): refused, with the way out, where a framework's trainer runs a Hugging
Face model at the layout (:func:`rlmcost.placement.pass_options.runs_hf_model`: verl's FSDP
workers, NeMo RL's DTensor policy at ZeRO-3, OpenRLHF, TRL)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.frameworks.presets import behaviour

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment, TrainLayout

MEGATRON_AT = {"fsdp": " or choose its Megatron trainer (--tp, --pp or --ep above 1)",
               "zero3": " or choose its Megatron trainer (--zero 1 or 0)",
               "always": " (it has no Megatron-core trainer)"}
"""Where a framework's trainer is Megatron-core's, by ``Behaviour.hf_trainer`` (the end of
:func:`check_megatron`'s error)."""


def runs_hf(deployment: Deployment, train: TrainLayout) -> bool:
    """Whether ``deployment``'s framework trains a Hugging Face model at layout ``train``."""
    from rlmcost.placement.pass_options import runs_hf_model

    beh = behaviour(deployment.framework)
    return beh is not None and runs_hf_model(beh, train)


def check_megatron(deployment: Deployment, train: TrainLayout, what: str) -> None:
    """SpecError where ``what`` (a flag and what it is, e.g. "--mtp-layers is Megatron-core's
    multi-token prediction") is set on a trainer that runs a Hugging Face model at ``train``."""
    if runs_hf(deployment, train):
        beh = behaviour(deployment.framework)
        fix = MEGATRON_AT.get(beh.hf_trainer, "") if beh is not None else ""
        raise SpecError(f"{what}, but {deployment.framework}'s trainer runs a Hugging Face "
                        f"model at this layout; drop it{fix}")
