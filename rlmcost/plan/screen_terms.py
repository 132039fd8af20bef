"""What the plan screen (:mod:`rlmcost.plan.screen`) reads of a base Run and of an exact
evaluation of it for its constants (:class:`~rlmcost.plan.screen.Query`): the engines' KV pool
kept beside training, the refit into engines apart, the generating group's layout-free units,
the most sequences a generation samples, and the compute peak a W4A4 engine reaches. Split from
:mod:`rlmcost.plan.screen` by size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.run.spec import Run


def kv_kept(base: Run) -> bool:
    """Whether ``base``'s engine is Megatron-core's with its pool kept on the GPU while the
    trainer runs (``kv_cache_management_mode: persist``, ``--no-sleep``: the train job holds
    it as its ``engine`` term, ``placement.group_engine.GroupEngine.reservation``)."""
    from rlmcost.plan.mcore import is_megatron

    d = base.deployment
    return is_megatron(base) and not d.engine.sleep and not d.ideal


def refit_apart(estimate: Any) -> str | None:
    """The refit mechanism of ``estimate``'s weight syncs into engines on another group
    (``placement/weight_syncs.py`` ``weight_syncs``), None where it has none."""
    from rlmcost.frameworks.presets import behaviour

    if estimate is None or not any(t.what.endswith(" refit)") for t in estimate.syncs):
        return None
    own = estimate.deployment.engine.refit  # the engine's own (``disk``) before the framework's
    if own is not None:
        return str(own)
    beh = behaviour(estimate.deployment.framework)
    return None if beh is None else str(beh.apart)


def group_s(estimate: Any) -> float:
    """:attr:`~rlmcost.plan.screen.Query.group_s` of ``estimate``: the largest over its
    generating groups."""
    from rlmcost.algorithms.kinds import Kind

    if estimate is None:
        return 0.0
    # the controller's own term; a call's driver data (its phase's) grows with the ranks
    # per data shard that return its results, a layout choice (perf.controller_data)
    return max((sum(t.predicted for t in g.transfers
                    if (t.kind == "controller" and t.phase == "controller")
                    or (t.kind == "weight-sync" and t.what.startswith("refit ")))
                for g in estimate.groups
                if any(j.task.kind is Kind.GENERATE for j in g.jobs)), default=0.0)  # fmt: skip


def sequences(estimate: Any) -> int:
    """The most sequences a generation job of ``estimate`` samples (0: none or no estimate)."""
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.placement.task_work import count_of, frozen_values

    if estimate is None:
        return 0
    values = frozen_values(estimate.values, keep_t=True)
    return max((int(count_of(j.task.invocation.sequences, values)) for g in estimate.groups
                for j in g.jobs if j.task.kind is Kind.GENERATE), default=0)  # fmt: skip


def w4a4_peak(weight_format: str | None, hardware: tuple[str, ...]) -> float:
    """The highest dense FP4 peak over ``hardware`` (names) where the engine serves W4A4
    weights (``weight_format`` in :data:`~rlmcost.parallel.packed_weights.W4A4`: its packed
    GEMMs run at it, :mod:`rlmcost.perf.fp4_gemm`), else 0: the screen's time bound takes it
    as the peak where higher, so it stays a lower bound."""
    from rlmcost.parallel.packed_weights import W4A4
    from rlmcost.specs import get_hardware

    if weight_format not in W4A4:
        return 0.0
    return float(max((get_hardware(h).fp4_peak_flops_per_s or 0 for h in hardware), default=0))


def fp8_train_peak(fp8: object, hardware: tuple[str, ...]) -> float:
    """The highest dense FP8 peak over ``hardware`` (names) where the trainer runs FP8
    (``TrainLayout.fp8``: its Linear layers' GEMMs at it, :mod:`rlmcost.perf.fp8_train`), else
    0: the screen's time bound takes it as the peak where higher, so it stays a lower bound."""
    from rlmcost.choices import Dtype
    from rlmcost.specs import get_hardware

    if fp8 is None:
        return 0.0
    return float(max((get_hardware(h).peak_flops_per_s.get(Dtype.FP8, 0) for h in hardware),
                     default=0))  # fmt: skip
