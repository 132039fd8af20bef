"""The pipeline-split options of `rlmcost train` and every algorithm command: Megatron-core's
uneven split (``Layout.pp_first_layers`` ... ``pp_loss_slot``; ``TrainLayout.pp_split``;
:mod:`rlmcost.parallel.pipeline_split`). All off by default: rlmcost's even split."""

from __future__ import annotations

from typing import Annotated, Any

import typer

PIPELINE_SPLIT_OPTIONS = ("pp_first_layers", "pp_last_layers", "pp_embedding_slot",
                          "pp_loss_slot")  # fmt: skip


def pipeline_split_options(p: str | None = None) -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)), in the help panel ``p``."""
    return {
        "pp_first_layers": (Annotated[int | None, typer.Option(
            help="Layers on the first pipeline rank, the middle ranks sharing the rest evenly "
            "(Megatron-core --decoder-first-pipeline-num-layers, NeMo RL "
            "num_layers_in_first_pipeline_stage).", min=1, rich_help_panel=p)], None),
        "pp_last_layers": (Annotated[int | None, typer.Option(
            help="Layers on the last pipeline rank (--decoder-last-pipeline-num-layers).",
            min=1, rich_help_panel=p)], None),
        "pp_embedding_slot": (Annotated[bool | None, typer.Option(
            "--pp-embedding-slot/--no-pp-embedding-slot", help="The embedding counts as one "
            "layer of the pipeline split: the first rank holds one layer fewer (Megatron-core "
            "--account-for-embedding-in-pipeline-split).", rich_help_panel=p)], None),
        "pp_loss_slot": (Annotated[bool | None, typer.Option(
            "--pp-loss-slot/--no-pp-loss-slot", help="The output layer and loss count as one "
            "layer: the last rank holds one layer fewer (--account-for-loss-in-pipeline-split)"
            ".", rich_help_panel=p)], None),
    }  # fmt: skip


def layout_split(opts: dict[str, Any]) -> dict[str, Any]:
    """The ``Layout`` fields the options give (`rlmcost train`)."""
    return {"pp_first_layers": opts.get("pp_first_layers"),
            "pp_last_layers": opts.get("pp_last_layers"),
            "pp_embedding_slot": bool(opts.get("pp_embedding_slot")),
            "pp_loss_slot": bool(opts.get("pp_loss_slot"))}  # fmt: skip


def apply_split(opts: dict[str, Any], train: dict[str, Any]) -> None:
    """Set the deployment's ``train.pp_split`` (a dict of ``PipelineSplit`` fields) from the
    options given, over what a deployment file or preset set."""
    given = {k[3:]: opts[k] for k in PIPELINE_SPLIT_OPTIONS if opts.get(k) is not None}
    if given:
        train["pp_split"] = {**(train.get("pp_split") or {}), **given}
