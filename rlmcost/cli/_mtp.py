"""The multi-token-prediction options of the RL commands: Megatron-core's ``mtp_num_layers``,
``mtp_use_repeated_layer`` and ``mtp_detach_heads`` on the policy's trainer
(``TrainLayout.mtp_layers``, ``mtp_repeated``, ``mtp_detach_heads``; priced in
:mod:`rlmcost.placement.mtp`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

MTP_OPTIONS = ("mtp_layers", "mtp_repeated", "mtp_detach_heads")


def mtp_options(p: str | None = None) -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)), in the help panel ``p``."""
    return {
        "mtp_layers": (Annotated[int | None, typer.Option(
            help="Multi-token-prediction depths trained with the policy (Megatron-core "
            "mtp_num_layers; NeMo RL megatron_cfg.mtp_num_layers, slime --mtp-num-layers "
            "with --enable-mtp-training): each depth runs a projection, one layer of the "
            "model's last layer's shape and the output head on the last pipeline stage, in "
            "every training step and Megatron log-prob forward of the policy and reference "
            "(rlmcost.placement.mtp). Default 0: none.", min=0, max=64,
            rich_help_panel=p)], None),
        "mtp_repeated": (Annotated[bool, typer.Option(
            "--mtp-repeated", help="One MTP module's weights run at every depth (Megatron-core "
            "mtp_use_repeated_layer): the weights of one depth, the compute of all.",
            rich_help_panel=p)], False),
        "mtp_detach_heads": (Annotated[bool, typer.Option(
            "--mtp-detach-heads", help="The MTP depths' loss gives the shared output head and "
            "embedding no gradient (Megatron-core mtp_detach_heads): no head weight gradient "
            "per depth.", rich_help_panel=p)], False),
    }  # fmt: skip


def mtp_fields(opts: dict[str, Any]) -> dict[str, Any]:
    """The ``TrainLayout`` fields the options give (only those given)."""
    out: dict[str, Any] = {}
    if opts.get("mtp_layers") is not None:
        out["mtp_layers"] = opts["mtp_layers"]
    if opts.get("mtp_repeated"):
        out["mtp_repeated"] = True
    if opts.get("mtp_detach_heads"):
        out["mtp_detach_heads"] = True
    return out
