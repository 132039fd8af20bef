"""A device group's trainer in FP8 (``TrainLayout.fp8``, ``fp8_param``): the pass options its
training steps and forwards run with (:func:`fp8_options`; priced in
:mod:`rlmcost.perf.fp8_train`), the roofline its bound takes (:func:`fp8_roofline_hardware`),
and the refusals.

Transformer Engine's FP8 recipes are Megatron-core's (``TransformerConfig.fp8``,
``fp8_recipe``, ``fp8_param``: NeMo RL ``policy.megatron_cfg.fp8_cfg``, slime's Megatron-LM
``--fp8-format`` / ``--fp8-recipe``, verl's Megatron workers through
``override_transformer_config``). A framework's Hugging Face trainer (verl's FSDP workers,
NeMo RL's DTensor policy, OpenRLHF, TRL) builds no TE modules: the field is refused there, as
it is under AReaL's realhf kernels (``--trainer-kernels realhf``). A forward runs with its
trainer's options (``deployment.trainer_only``), so a Megatron worker's log-prob forwards run
FP8 too (Megatron-core's ``TransformerBlock`` enters the FP8 context in eval as in training)."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING

from rlmcost.deployment.kinds import TrainerKernels
from rlmcost.errors import SpecError
from rlmcost.perf.fp8_train import fp8_hardware
from rlmcost.perf.step_options import kept_options

if TYPE_CHECKING:
    from rlmcost.choices import Dtype
    from rlmcost.deployment.spec import Deployment, TrainLayout
    from rlmcost.perf.step_options import StepOptions
    from rlmcost.specs import HardwareSpec


def check_fp8(deployment: Deployment, train: TrainLayout) -> None:
    """SpecError for ``fp8_param`` without ``fp8``, and for either on a trainer that runs a
    Hugging Face model at ``train`` or AReaL's realhf kernels (module docstring)."""
    from rlmcost.placement.megatron_only import check_megatron

    if train.fp8 is None:
        if train.fp8_param:
            raise SpecError("--train-fp8-param keeps FP8 primary weights of an FP8 trainer; "
                            "give --train-fp8 RECIPE too, or drop it")  # fmt: skip
        return
    check_megatron(deployment, train, "--train-fp8 is Transformer Engine's FP8 under "
                   "Megatron-core")  # fmt: skip
    if train.kernels is TrainerKernels.REALHF:
        raise SpecError("--train-fp8 is Transformer Engine's FP8 under Megatron-core; AReaL's "
                        "realhf trainer (--trainer-kernels realhf) runs none: drop one")


def fp8_options(deployment: Deployment, options: StepOptions | None) -> StepOptions | None:
    """``options`` (None: rlmcost's defaults) with the trainer's FP8 recipe, where
    ``deployment.train`` (a group's view: ``placement.group_train.group_deployment``) gives
    one; ``options`` itself otherwise. One instance per equal fields
    (:func:`~rlmcost.perf.step_options.kept_options`)."""
    train = deployment.train
    check_fp8(deployment, train)
    if train.fp8 is None:
        return options
    if options is None:
        return kept_options(fp8=train.fp8)
    given = {f.name: getattr(options, f.name) for f in fields(options)}
    return kept_options(**{**given, "fp8": train.fp8})


def fp8_roofline_hardware(hardware: HardwareSpec, dtype: Dtype, train: TrainLayout) -> HardwareSpec:
    """``hardware`` as the roofline of a training or forward task of the trainer ``train``
    sees it: its FP8 peak in place of the compute dtype's where the trainer runs FP8 (the
    whole task's FLOPs at the FP8 peak, below its every kernel: a lower bound still)."""
    return hardware if train.fp8 is None else fp8_hardware(hardware, dtype)
