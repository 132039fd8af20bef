"""A device group's generation engine: the run's engine with the group's own fields over it.

A group of a deployment may give its own engine settings (``groups[].engine`` in a Run file,
:class:`~rlmcost.deployment.spec.GroupLayouts`). They refine the run-wide engine
(``Deployment.engine``, which carries a framework preset's values: NeMo RL's
``gpu_memory_utilization`` 0.6 and ``max_num_seqs`` 1024, say), as a group's trainer fields
refine the run's trainer (``placement.group_train``): a group that gives
``engine: {prefix_caching: false}`` keeps the run's reservation, running cap and sleep.

Rule (a stated choice): the fields a group gives are the group's, whatever their value; the
others are the run's. What a group gives is what its input names (pydantic's
``model_fields_set``, :mod:`rlmcost.deployment.given`), so a group can set a field back to its
default under a run-wide value that is not (``engine: {sleep: true}`` under a run-wide
``sleep: false``), and a Run or deployment file keeps which fields a group gave (it writes a
group's engine with those fields only). A group that gives another engine ``kind`` than the
run's runs that engine as given: the other kind's defaults apply (SGLang's own running cap,
say), none of the run's engine settings. A merge that the engine rejects (a group giving
SGLang's ``context_length`` without a kind under a run-wide vLLM engine would be rejected
when the group is made) keeps the group's engine as given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError

from rlmcost.deployment.engine import EngineSpec
from rlmcost.deployment.given import overrides
from rlmcost.memo import per_object

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment


def engine_overrides(run: EngineSpec, own: EngineSpec) -> frozenset[str]:
    """The fields of ``own`` that :func:`merged_engine` takes over ``run``: ``{"kind"}`` where
    ``own`` gives another engine kind (``own`` runs as given), else the fields it gives with a
    value unlike the run's (module docstring). Two group engines of equal values merge alike
    over ``run`` where these are equal (``placement.group_key``)."""
    if "kind" in own.model_fields_set and own.kind is not run.kind:
        return frozenset(("kind",))
    return frozenset(overrides(run, own, own.model_fields_set - {"kind"}))


def merged_engine(run: EngineSpec, own: EngineSpec | None) -> EngineSpec:
    """``run`` with the fields ``own`` gives over it; ``own`` itself where it gives another
    engine kind (module docstring)."""
    if own is None or own is run:
        return run
    fields = engine_overrides(run, own)
    if fields == {"kind"}:
        return own
    if not fields:
        return run
    try:
        return EngineSpec.model_validate({**run.model_dump(), **{k: getattr(own, k)
                                                                 for k in fields}})  # fmt: skip
    except ValidationError:
        return own


@per_object()
def group_engine(dep: Deployment, group: str) -> EngineSpec:
    """The engine of ``group`` in ``dep``: :func:`merged_engine` of the run's and the group's
    own (the run's where the group gives none)."""
    own = dep.group(group)
    return merged_engine(dep.engine, own.engine if own is not None else None)
