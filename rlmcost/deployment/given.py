"""Which fields a device group's own settings give, kept from the input to the evaluation.

A group of a deployment may give its own trainer, forward and engine fields
(``groups[].train``, ``groups[].forward``, ``groups[].engine``;
:class:`~rlmcost.deployment.spec.GroupLayouts`); the fields it gives go over the run's
(``deployment.group_engine``, ``placement.group_train``). What the group gives is what its
input names: pydantic v2's ``model_fields_set`` (the keys of a file's mapping, the arguments
of a constructor, the keys of a ``model_copy`` update), not the fields whose value differs
from the default, so a group can set a field back to its default under a run-wide value that
is not (``engine: {sleep: true}`` under a run-wide ``sleep: false``). A Run or deployment
file keeps them: :data:`GIVEN` writes a group's layouts and engine with the fields they give
only, so that ``to_json -> from_data`` (``--json`` output, ``Run.dump``, ``Deployment.dump``,
``Run.replace``) keeps which fields a group set.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, SerializerFunctionWrapHandler, WrapSerializer


def _given_only(value: BaseModel | None, handler: SerializerFunctionWrapHandler) -> Any:
    """``value`` as pydantic writes it, less the fields its input did not give."""
    out = handler(value)
    if value is None or not isinstance(out, dict):
        return out
    given = value.model_fields_set
    return {k: v for k, v in out.items() if k in given}


PASS_FIELDS = ("max_tokens_per_gpu", "packing", "padded", "fused_loss", "router_dtype",
               "ep_dispatcher", "moe_permute_fusion", "kernels")  # fmt: skip
"""The trainer fields a group's own trainer layout gives over the deployment's for its jobs,
the others the deployment's (``placement.group_train``, where they are read)."""

GIVEN = WrapSerializer(_given_only)
"""Serializer of a group's own layout or engine: the fields it gives (module docstring)."""


def overrides(base: BaseModel, own: BaseModel, fields: Iterable[str]) -> dict[str, Any]:
    """The fields among ``fields`` that ``own`` gives (``model_fields_set``) with a value
    unlike ``base``'s: what ``own`` changes when it goes over ``base``.

    >>> from rlmcost.deployment.engine import EngineSpec
    >>> run = EngineSpec(sleep=False, eager=True)
    >>> overrides(run, EngineSpec(sleep=True, eager=True), ("sleep", "eager", "pp"))
    {'sleep': True}
    >>> overrides(run, EngineSpec(), ("sleep", "eager"))  # given nothing: the run's
    {}
    """
    given = own.model_fields_set
    return {k: getattr(own, k) for k in fields
            if k in given and getattr(own, k) != getattr(base, k)}  # fmt: skip


MODEL_FIELDS = ("moe_capacity_factor", "moe_pad_to_capacity")
"""Layout fields of the trained model's Megatron config: a group's own trainer or forward
layout that does not give them keeps the deployment's (``evaluation.deployment._groups``), as
it keeps the :data:`PASS_FIELDS`."""


def run_fields(run: BaseModel) -> tuple[tuple[str, Any], ...]:
    """The :data:`MODEL_FIELDS` of the deployment's layout ``run``, as (name, value) pairs."""
    return tuple((k, getattr(run, k)) for k in MODEL_FIELDS)


def with_run_fields(own: Any, run: tuple[tuple[str, Any], ...]) -> Any:
    """``own`` (a group's layout) with the deployment's fields ``run`` (:func:`run_fields`)
    that it does not give."""
    keep = {k: v for k, v in run if k not in own.model_fields_set}
    return own.model_copy(update=keep) if keep else own
