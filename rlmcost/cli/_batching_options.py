"""The RL commands' options of how a trainer's passes hold their sequences and activations:
packing and its loss, padding, verl's PrefixGrouper and activation offload (``TrainLayout``
fields; priced in :mod:`rlmcost.placement.group_passes`, :mod:`rlmcost.placement.
prefix_grouper` and :mod:`rlmcost.parallel.act_offload`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rlmcost.cli._parse import framework_default


def batching_options(p: str | None = None) -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)), in the help panel ``p``."""
    return {
        "packing": (Annotated[bool | None, typer.Option(
            "--packing/--no-packing", help="Sequence packing: a micro-batch holds --micro-batch "
            "x (prompt + response) tokens of packed sequences (NeMo RL sequence_packing; "
            "default: --framework's).", rich_help_panel=p)], None),  # fmt: skip
        "fused_loss": (Annotated[bool | None, typer.Option(
            "--fused-loss/--no-fused-loss", help="Under --packing, the loss runs once per "
            "packed micro-batch (NeMo RL sequence_packing.fuse_loss; its default: once per "
            "sequence). " + framework_default("once per sequence"), rich_help_panel=p)],
            None),  # fmt: skip
        "padded": (Annotated[bool | None, typer.Option(
            "--padded/--no-padded", help="Each sequence padded to the batch's width (prompt + "
            "longest response) in training and forwards (verl without use_remove_padding); "
            "default: unpadded.", rich_help_panel=p)], None),  # fmt: skip
        "activation_offload": (Annotated[bool | None, typer.Option(
            "--activation-offload/--no-activation-offload", help="An update's saved "
            "activations go to host memory as the forward passes each layer and come back for "
            "its backward, the device holding the last two layers' (verl model."
            "enable_activation_offload; FSDP trainers).", rich_help_panel=p)], None),  # fmt: skip
        "prefix_grouper": (Annotated[bool | None, typer.Option(
            "--prefix-grouper/--no-prefix-grouper", help="The actor's and reference's passes "
            "compute a group's prompt once: one row per group of a micro-batch, the prompt "
            "then its responses (verl actor.use_prefix_grouper; needs --padded, no token "
            "budget, --cp 1, --tp 1, --pp 1).", rich_help_panel=p)], None),  # fmt: skip
    }
