"""A device group's generation engine: the run's engine with the group's own fields over it.

A group of a deployment may give its own engine settings (``groups[].engine`` in a Run file,
:class:`~rlmcost.deployment.spec.GroupLayouts`). They refine the run-wide engine
(``Deployment.engine``, which carries a framework preset's values: NeMo RL's
``gpu_memory_utilization`` 0.6 and ``max_num_seqs`` 1024, say), as a group's trainer fields
refine the run's trainer (``placement.group_train``): a group that gives
``engine: {prefix_caching: false}`` keeps the run's reservation, running cap and sleep.

Rule (a stated choice, the trainer's): a group's field that differs from the
:class:`EngineSpec` default is the group's; one at the default is the run's. A Run file keeps
every field (``Run.to_json`` writes defaults too), so which fields a group gave cannot be told
after a round trip; a group therefore cannot set a field back to its default under a run-wide
non-default (give the other groups the value instead). A group that names another engine
``kind`` than the run's runs that engine as given: the other kind's defaults apply (SGLang's
own running cap, say), none of the run's engine settings. A merge that the engine rejects (a
group giving SGLang's ``context_length`` without a kind under a run-wide vLLM engine would be
rejected when the group is made) keeps the group's engine as given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from rlmcost.deployment.engine import EngineSpec
from rlmcost.memo import per_object

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment

_DEFAULT = EngineSpec()


def merged_engine(run: EngineSpec, own: EngineSpec | None) -> EngineSpec:
    """``run`` with ``own``'s non-default fields over it; ``own`` itself where it names another
    engine kind (module docstring)."""
    if own is None or own is run:
        return run
    if own.kind is not run.kind and own.kind is not _DEFAULT.kind:
        return own
    update: dict[str, Any] = {k: getattr(own, k) for k in EngineSpec.model_fields
                              if getattr(own, k) != getattr(_DEFAULT, k)
                              and getattr(own, k) != getattr(run, k)}  # fmt: skip
    update.pop("kind", None)  # the same kind, or the default one: the run's
    if not update:
        return run
    try:
        return EngineSpec.model_validate({**run.model_dump(), **update})
    except ValidationError:
        return own


@per_object()
def group_engine(dep: Deployment, group: str) -> EngineSpec:
    """The engine of ``group`` in ``dep``: :func:`merged_engine` of the run's and the group's
    own (the run's where the group gives none)."""
    own = dep.group(group)
    return merged_engine(dep.engine, own.engine if own is not None else None)
