"""The MoE capacity options of `rlmcost train` and every algorithm command: Megatron-core's
``--moe-expert-capacity-factor`` and ``--moe-pad-expert-input-to-capacity`` (``Layout`` /
``TrainLayout.moe_capacity_factor``, ``moe_pad_to_capacity``; priced in
:mod:`rlmcost.parallel.moe_capacity`, which refuses a factor <= 0 and padding without one)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

MOE_CAPACITY_OPTIONS = ("moe_capacity_factor", "moe_pad_to_capacity")


def moe_capacity_options(p: str | None = None) -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default)), in the help panel ``p``."""
    return {
        "moe_capacity_factor": (Annotated[float | None, typer.Option(
            help="MoE expert capacity factor CF (Megatron-core --moe-expert-capacity-factor): "
            "each expert keeps at most ceil(tokens x top_k / experts x CF) copies of a rank's "
            "tokens, the rest dropped, so the busiest EP rank computes at most CF x the mean; "
            "default: dropless (rlmcost.parallel.moe_capacity).", rich_help_panel=p)], None),
        "moe_pad_to_capacity": (Annotated[bool | None, typer.Option(
            "--moe-pad-to-capacity/--no-moe-pad-to-capacity", help="Every expert computes "
            "exactly its capacity, padding included (Megatron-core --moe-pad-expert-input-to-"
            "capacity; needs --moe-capacity-factor).", rich_help_panel=p)], None),
    }  # fmt: skip


def capacity_fields(opts: dict[str, Any]) -> dict[str, Any]:
    """The ``Layout`` / ``TrainLayout`` fields the options give (only those given)."""
    out: dict[str, Any] = {}
    if opts.get("moe_capacity_factor") is not None:
        out["moe_capacity_factor"] = opts["moe_capacity_factor"]
    if opts.get("moe_pad_to_capacity") is not None:
        out["moe_pad_to_capacity"] = opts["moe_pad_to_capacity"]
    return out
