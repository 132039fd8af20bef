"""The output's notes on a query's MoE fields: the capacity factor, the unfused permutation.

One function builds them for ``rlmcost train`` (one model, one layout:
:func:`rlmcost.perf.train_step.train_step_time`) and for the RL queries (the deployment's
trainer and forward layouts and its groups' own: ``placement.pass_options.worker_notes``):

* a capacity factor (``moe_capacity_factor``, with or without ``moe_pad_to_capacity``) states
  what it prices (:func:`rlmcost.parallel.moe_capacity.capacity_note`), once per distinct
  note;
* an unfused permutation (``moe_permute_fusion`` off) states its kernels where the trainer's
  pass options price it (:data:`rlmcost.perf.moe_permute.UNFUSED_PERMUTE_NOTE`), and that it
  has no effect where the framework's trainer runs a Hugging Face model (no Megatron-core
  permutation, ``pass_options.runs_hf_model``);
* on a dense model neither is priced (no routed experts): one model's notes name it, field by
  field; a query's (several models, none routed) say it once for both fields.

The capacity fields' checks stay where they were (``parallel.validate.check_layout`` refuses
what Megatron-core refuses; ``pass_options`` the capacity under a Hugging Face trainer).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rlmcost.parallel.moe_capacity import capacity_note
from rlmcost.perf.moe_permute import UNFUSED_PERMUTE_NOTE

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.perf.step_pass import StepOptions

DENSE_QUERY_NOTE = ("MoE fields (capacity factor, moe_permute_fusion) given on dense models: "
                    "no routed experts, no effect")  # fmt: skip
"""A query none of whose models routes tokens, given a MoE field (module docstring)."""


def moe_notes(layouts: Iterable[Any], options: StepOptions | None, model: Arch | None = None,
              *, moe: bool = True, unfused: bool | None = None,
              framework: str | None = None) -> list[str]:  # fmt: skip
    """The notes on the MoE fields of ``layouts`` (Layouts or TrainLayouts: their
    ``moe_capacity_factor`` and ``moe_pad_to_capacity``) and the unfused permutation
    (module docstring).

    ``options``: the trainer's pass options, what is priced (None: a Hugging Face trainer's,
    no Megatron-core permutation). ``model``: the one model the notes are about (``rlmcost
    train``), named in a dense model's notes; None: the query's models, of which ``moe`` says
    whether any routes tokens. ``unfused``: whether the query asks for the unfused permutation
    (default: as ``options`` price it); ``framework``: the framework whose trainer does not
    price it where it is asked for but not priced.

    >>> from rlmcost.parallel.layout import Layout
    >>> moe_notes([Layout(moe_capacity_factor=1.25)], None, moe=False)
    ['MoE fields (capacity factor, moe_permute_fusion) given on dense models: no routed experts, no effect']
    """  # noqa: E501
    prices = options is not None and not options.moe_permute_fusion
    asked = prices if unfused is None else unfused
    priced = asked and prices
    routed = model.is_moe if model is not None else moe
    factors = [lay.moe_capacity_factor for lay in layouts if lay.moe_capacity_factor is not None]
    if not routed and model is not None:  # one dense model: each field said to do nothing
        out = [f"MoE capacity factor {f:g}: {model.name} is dense, no effect" for f in factors]
        if asked:
            out.append(f"moe_permute_fusion off: {model.name} is dense, no MoE permutation to "
                       "price (no effect)")  # fmt: skip
        return list(dict.fromkeys(out))
    if not routed:  # a dense query: nothing routed, nothing priced
        return [DENSE_QUERY_NOTE] if factors or asked else []
    out = [n for lay in layouts if (n := capacity_note(lay.moe_capacity_factor,
                                                       lay.moe_pad_to_capacity)) is not None]
    if priced:
        out.append(UNFUSED_PERMUTE_NOTE)
    elif asked:
        out.append(f"moe_permute_fusion off: {framework}'s trainer runs the Hugging Face model "
                   "at this layout (no Megatron-core permutation), no effect")
    return list(dict.fromkeys(out))
