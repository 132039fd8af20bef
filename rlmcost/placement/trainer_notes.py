"""The output's notes on how the deployment's trainer runs its passes beyond its layout:
Megatron-core's gradient buffer (:mod:`rlmcost.placement.grad_buffer`), FP8 training
(:mod:`rlmcost.perf.fp8_train`), multi-token prediction (:mod:`rlmcost.placement.mtp`) and
verl's PrefixGrouper (:mod:`rlmcost.placement.prefix_grouper`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment, TrainLayout


def trainer_notes(deployment: Deployment) -> list[str]:
    """The notes of ``deployment``'s trainers (its own layout and its groups'), each once."""
    from rlmcost.placement.grad_buffer import grad_buffer_note

    out = [n for n in (grad_buffer_note(deployment),) if n]
    if deployment.ideal:
        return out
    layouts = [deployment.train, *(g.train for g in deployment.groups if g.train is not None)]
    for note in (*map(_fp8_note, layouts), *map(_mtp_note, layouts)):
        if note and note not in out:
            out.append(note)
    if any(t.prefix_grouper for t in layouts):
        from rlmcost.placement.prefix_grouper import NOTE

        out.append(NOTE)
    return out


def _fp8_note(train: TrainLayout) -> str | None:
    if train.fp8 is None:
        return None
    from rlmcost.perf.fp8_train import (
        BLOCKWISE_GEMM_RATIO,
        FP8_GEMM_EFFICIENCY_RATIO,
        MXFP8_GEMM_RATIO,
    )

    param = ", FP8 parameters (--train-fp8-param)" if train.fp8_param else ""
    return (f"FP8 training ({train.fp8}{param}): Transformer Engine's FP8 GEMMs for the "
            "Linear layers (forward, data and weight gradients) at the FP8 peak x "
            f"{FP8_GEMM_EFFICIENCY_RATIO:.3f} of bf16's GEMM efficiency (blockwise "
            f"{BLOCKWISE_GEMM_RATIO:.3f}, MXFP8 {MXFP8_GEMM_RATIO:.3f} x tensorwise's time), a "
            "quantizing kernel per input (exact bytes); attention, router, norms, output layer "
            "and loss in bf16; each Linear weight's row- and column-wise FP8 copies held through "
            "the step (rlmcost.perf.fp8_train, rlmcost.placement.fp8_memory)")


def _mtp_note(train: TrainLayout) -> str | None:
    if not train.mtp_layers:
        return None
    n = train.mtp_layers
    kept = "one module run at every depth" if train.mtp_repeated else f"{n} module(s)"
    detached = "; the head gets no gradient from them" if train.mtp_detach_heads else ""
    return (f"multi-token prediction: {n} depth(s), {kept}, trained with the policy: each a "
            "[2d -> d] projection, one layer of the model's last layer's shape and the output "
            "head with a loss, on the last pipeline stage, in every training step and Megatron "
            "forward of the policy and reference (their weights, gradients, Adam states, saved "
            f"activations and logits there; the refit carries them{detached}; "
            "rlmcost.placement.mtp)")
