"""The FP8 training options of `rlmcost train` and every algorithm command: Transformer
Engine's FP8 recipes under Megatron-core (``TrainLayout.fp8``, ``fp8_param``; priced in
:mod:`rlmcost.perf.fp8_train`, refused on a Hugging Face trainer by
:mod:`rlmcost.placement.fp8_train`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rlmcost.choices import Fp8Recipe
from rlmcost.errors import SpecError

FP8_OPTIONS = ("train_fp8", "train_fp8_param")

FP8_HELP = ("Train the Linear layers in FP8 with this Transformer Engine recipe: delayed "
            "(DelayedScaling), tensorwise (Float8CurrentScaling), blockwise (Float8BlockScaling:"
            " 1x128 activations, 128x128 weights; Hopper, DeepSeek-V3's) or mxfp8 (MXFP8 "
            "BlockScaling, Blackwell only). Megatron-core's fp8_recipe: NeMo RL "
            "policy.megatron_cfg.fp8_cfg.fp8_recipe, slime --fp8-recipe, verl "
            "override_transformer_config.fp8_recipe. QKV, output, FFN and expert GEMMs at the "
            "FP8 peak after TE's quantizing kernels; attention, router, LM head and the rest in "
            "bf16 (rlmcost.perf.fp8_train). Default: bf16.")
"""The ``--train-fp8`` help text (README and notebook 04 quote it)."""


def fp8_options(p: str | None = None) -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)), in the help panel ``p``."""
    return {
        "train_fp8": (Annotated[str | None, typer.Option(help=FP8_HELP, rich_help_panel=p)],
                      None),
        "train_fp8_param": (Annotated[bool, typer.Option(
            "--train-fp8-param", help="Keep the primary weights in FP8 (Megatron-core "
            "fp8_param; NeMo RL fp8_cfg.fp8_param, slime --fp8-param-gather): 1-byte "
            "parameters beside the fp32 master copy; needs --train-fp8.",
            rich_help_panel=p)], False),
    }  # fmt: skip


def fp8_recipe(value: str | None) -> Fp8Recipe | None:
    """``--train-fp8``'s recipe (None: bf16); SpecError naming the recipes for another word."""
    if value is None:
        return None
    try:
        return Fp8Recipe(value.strip().lower())
    except ValueError:
        raise SpecError(f"--train-fp8 {value!r:.40} is not one of: "
                        f"{', '.join(r.value for r in Fp8Recipe)}") from None


def fp8_fields(opts: dict[str, Any]) -> dict[str, Any]:
    """The ``TrainLayout`` fields the options give (only those given); SpecError for
    ``--train-fp8-param`` without ``--train-fp8``."""
    out: dict[str, Any] = {}
    recipe = fp8_recipe(opts.get("train_fp8"))
    if recipe is not None:
        out["fp8"] = recipe.value
    if opts.get("train_fp8_param"):
        if recipe is None:
            raise SpecError("--train-fp8-param keeps FP8 primary weights of an FP8 trainer; "
                            "give --train-fp8 RECIPE too, or drop it")  # fmt: skip
        out["fp8_param"] = True
    return out
