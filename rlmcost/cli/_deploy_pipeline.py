"""The pipeline-split options of `rlmcost train` and every algorithm command: Megatron-core's
uneven split (``Layout.pp_first_layers`` ... ``pp_loss_slot``, ``pp_layout``;
``TrainLayout.pp_split``; :mod:`rlmcost.parallel.pipeline_split`). All off by default:
rlmcost's even split. A layout string of pp x v stages sets v model chunks per rank and, for
v > 1, the interleaved schedule, as Megatron-LM derives the virtual-pipeline size from it
(``megatron/training/arguments.py`` @d98e8a64dd) and then runs the interleaved 1F1B. The
algorithm commands' ``--virtual-stages`` sets v itself (``rlmcost train`` has its own with
``--schedule``); `rlmcost import` writes it from a config's virtual-pipeline size
(:mod:`rlmcost.frameworks.virtual_pipeline`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rlmcost.cli._parse import framework_default
from rlmcost.parallel.layout import PipelineSchedule

PIPELINE_SPLIT_OPTIONS = ("pp_first_layers", "pp_last_layers", "pp_embedding_slot",
                          "pp_loss_slot", "pp_layout")  # fmt: skip
RL_PIPELINE_OPTIONS = (*PIPELINE_SPLIT_OPTIONS, "virtual_stages")
"""The algorithm commands' pipeline options: the split and ``--virtual-stages``."""


def pipeline_split_options(p: str | None = None, preset: bool = False) -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)), in the help panel ``p``;
    ``preset``: the command follows a framework preset (the algorithm commands), whose size
    tiers set these, so each help names whose default it takes."""

    def end(bare: str) -> str:
        return f" {framework_default(bare)}" if preset else ""

    return {
        "pp_first_layers": (Annotated[int | None, typer.Option(
            help="Layers on the first pipeline rank, the middle ranks sharing the rest evenly "
            "(Megatron-core --decoder-first-pipeline-num-layers, NeMo RL "
            "num_layers_in_first_pipeline_stage)." + end("an even split"), min=1,
            rich_help_panel=p)], None),
        "pp_last_layers": (Annotated[int | None, typer.Option(
            help="Layers on the last pipeline rank (--decoder-last-pipeline-num-layers)."
            + end("an even split"),
            min=1, rich_help_panel=p)], None),
        "pp_embedding_slot": (Annotated[bool | None, typer.Option(
            "--pp-embedding-slot/--no-pp-embedding-slot", help="The embedding counts as one "
            "layer of the pipeline split: the first rank holds one layer fewer (Megatron-core "
            "--account-for-embedding-in-pipeline-split)." + end("off"), rich_help_panel=p)],
            None),
        "pp_loss_slot": (Annotated[bool | None, typer.Option(
            "--pp-loss-slot/--no-pp-loss-slot", help="The output layer and loss count as one "
            "layer: the last rank holds one layer fewer (--account-for-loss-in-pipeline-split)"
            "." + end("off"), rich_help_panel=p)], None),
        "pp_layout": (Annotated[str | None, typer.Option(
            help="Megatron-core --pipeline-model-parallel-layout: E embedding, t layer, m MTP, "
            "L loss, | a stage boundary, (..)*n repeats, over pp x v virtual stages, e.g. "
            "'Et*4|(t*4|)*14tL' (pp 4, v 4); v > 1 runs the interleaved schedule.",
            rich_help_panel=p)], None),
    }  # fmt: skip


def rl_pipeline_options(p: str | None = None) -> dict[str, Any]:
    """:func:`pipeline_split_options` and the algorithm commands' ``--virtual-stages``."""
    split = pipeline_split_options(p, preset=True)
    return {**split, "virtual_stages": (Annotated[int | None, typer.Option(
        help="Model chunks per pipeline rank (Megatron's virtual_pipeline_model_parallel_size): "
        "v > 1 runs the interleaved 1F1B (rlmcost.perf.megatron_pipe), the layers divisible "
        "by pp x v; 1: 1F1B. Default: a --pp-layout's stages / pp, else 1.", min=1,
        rich_help_panel=p)], None)}  # fmt: skip


def layout_split(opts: dict[str, Any]) -> dict[str, Any]:
    """The ``Layout`` fields the options give (`rlmcost train`), with the layout string's
    virtual stages and schedule where the options leave them at 1 and 1F1B."""
    out = {"pp_first_layers": opts.get("pp_first_layers"),
           "pp_last_layers": opts.get("pp_last_layers"),
           "pp_embedding_slot": bool(opts.get("pp_embedding_slot")),
           "pp_loss_slot": bool(opts.get("pp_loss_slot")), "pp_layout": opts.get("pp_layout")}
    given = {"virtual_stages": opts.get("virtual_stages") or 1,
             "schedule": opts.get("schedule") or PipelineSchedule.ONE_F_ONE_B}
    return out | _implied(opts.get("pp_layout"), opts.get("pp") or 1, given)


def _implied(text: str | None, pp: int, given: dict[str, Any]) -> dict[str, Any]:
    """``virtual_stages`` and ``schedule`` a layout string sets when ``given`` holds the
    defaults (1, 1F1B); {} otherwise (a conflict is then check_layout's one-line error)."""
    if text is None:
        return {}
    from rlmcost.parallel.pp_layout import implied_virtual_stages

    v = implied_virtual_stages(text, pp)
    if v is None or v == 1 or given["virtual_stages"] != 1 or \
            str(given["schedule"]) != PipelineSchedule.ONE_F_ONE_B:  # fmt: skip
        return {}
    return {"virtual_stages": v, "schedule": PipelineSchedule.INTERLEAVED}


def apply_split(opts: dict[str, Any], train: dict[str, Any]) -> None:
    """Set the deployment's ``train.pp_split`` (a dict of ``PipelineSplit`` fields) and, from
    ``--virtual-stages``, ``virtual_stages`` and the schedule (interleaved for v > 1) from the
    options given, over what a deployment file or preset set. A layout string's stages imply
    v only where ``--virtual-stages`` is not given (``--virtual-stages 1`` under a layout of
    pp x 2 stages is refused, not read as 2)."""
    v = opts.get("virtual_stages")
    if v is not None and v > 1 and train.get("pp", 1) <= 1:
        from rlmcost.errors import SpecError

        raise SpecError(f"--virtual-stages {v} needs --pp > 1 (Megatron-core's "
                        "initialize_model_parallel refuses a virtual size at pp 1)")
    if v is not None:
        train.update(virtual_stages=v, schedule=str(
            PipelineSchedule.INTERLEAVED if v > 1 else PipelineSchedule.ONE_F_ONE_B))
    given = {k[3:]: opts[k] for k in PIPELINE_SPLIT_OPTIONS if opts.get(k) is not None}
    if given:
        train["pp_split"] = {**(train.get("pp_split") or {}), **given}
    if v is not None:  # given: a layout string of other stages is check_layout's error
        return
    text = (train.get("pp_split") or {}).get("layout")
    implied = _implied(text, train.get("pp", 1), {"virtual_stages": train.get(
        "virtual_stages", 1), "schedule": train.get("schedule", "1f1b")})  # fmt: skip
    train.update({k: str(v) if k == "schedule" else v for k, v in implied.items()})
