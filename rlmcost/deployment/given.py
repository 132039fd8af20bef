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


PASS_FIELDS = ("max_tokens_per_gpu", "packing", "padded", "prefix_grouper", "activation_offload",
               "fused_loss",
               "router_dtype",
               "ep_dispatcher", "moe_permute_fusion", "kernels",
               "recompute_early_stop", "module_ckpt", "disable_dropout")  # fmt: skip
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


def layered(own: Any, run: Any) -> Any:
    """A group's own layout ``own`` over the deployment's ``run``: ``run``'s value for every
    field ``own`` does not give (``model_fields_set``), which stays what ``own`` gives (so it is
    written back as given). A group's ``train: {max_tokens_per_gpu: 4096}`` keeps the run's
    ZeRO stage, checkpointing and degrees, as its engine keeps the run's engine fields
    (``deployment.group_engine``); before, the fields it did not give took TrainLayout's
    defaults (ZeRO 0, no checkpointing).

    >>> from rlmcost.deployment.spec import TrainLayout
    >>> run = TrainLayout(zero="3", ckpt="full", tp=2)
    >>> own = layered(TrainLayout(max_tokens_per_gpu=4096), run)
    >>> (str(own.zero), str(own.ckpt), own.tp, own.max_tokens_per_gpu)
    ('3', 'full', 2, 4096)
    >>> sorted(own.model_fields_set)
    ['max_tokens_per_gpu']
    """
    given = own.model_fields_set
    keep = {k: getattr(run, k) for k in type(own).model_fields if k not in given}
    if not keep or all(getattr(own, k) == v for k, v in keep.items()):
        return own
    return _giving(own.model_copy(update=keep), given)


def forward_over_train(dep: Any) -> None:
    """A deployment's own ``forward`` layout over its trainer's, field by field as a group's
    layouts go over the run's (:func:`layered`): a field it does not give is the trainer's
    layout's without offload (what the forwards run with where no ``forward`` is given,
    ``Deployment.forward_layout``), so ``train: {moe_capacity_factor: 1.25}`` beside
    ``forward: {micro_batch: 4, tp: 2}`` runs the forwards at the same capacity (before, the
    fields it did not give took TrainLayout's defaults: dropless, ZeRO 0, no EP). Set on
    ``dep`` while pydantic validates it (frozen: set as pydantic sets a field). A Run or
    deployment file writes the result whole, as before (``Deployment.to_json``), so a
    forward layout re-read gives every field."""
    if dep.forward is not None:
        base = dep.train.model_copy(update={"offload": ()})
        object.__setattr__(dep, "forward", layered(dep.forward, base))


_FORWARD_OWN = ("micro_batch", "ckpt", "offload")
"""Trainer fields a group's forwards do not take from its trainer layout: their micro-batch is
the forward layout's (``placement.group_train.group_forward``), they rebuild nothing and hold
no optimizer state."""


def forwards_given(train: Any) -> Any:
    """A group's trainer layout as its forwards' own layout where it gives none (the forwards
    run on the trainer's workers, Megatron's model config and all): the fields ``train`` gives,
    but the :data:`_FORWARD_OWN` ones, to go over the run's forward layout (:func:`layered`)."""
    given = train.model_fields_set - set(_FORWARD_OWN)
    if given == train.model_fields_set:
        return train
    return _giving(train.model_copy(), given)


def _giving(model: Any, given: Iterable[str]) -> Any:
    """``model`` (a fresh copy) marked as giving the fields ``given`` only: its
    ``model_fields_set``, which a ``model_copy(update=...)`` widens to the updated keys (frozen
    models: set on the instance as pydantic does)."""
    object.__setattr__(model, "__pydantic_fields_set__", set(given))
    return model


def given_fields(groups: Iterable[Any]) -> tuple[Any, ...]:
    """The fields each group's trainer and forward layouts give, as a key part: what
    :func:`layered` reads beside their values (pydantic's ``==`` compares values only)."""
    return tuple(tuple(lay and frozenset(lay.model_fields_set) for lay in (g.train, g.forward))
                 for g in groups)  # fmt: skip
