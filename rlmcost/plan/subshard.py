"""The RL plan's trainer TP degrees above the KV heads (Megatron-core's QKV sub-sharding,
:mod:`rlmcost.placement.kv_subshard`): searched where the base Run's trainer runs Megatron-core
at the candidate's TP and ZeRO stage, and a given ``--tp`` that no searched ZeRO stage can
train refused up front with the evaluation's own error (which names the layout that can)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rlmcost.parallel.layout import ZeroStage

if TYPE_CHECKING:
    from rlmcost.run.spec import Run


def trains_at(base: Run, kv_heads: int) -> Callable[[int, Any], bool]:
    """(tp, zero) -> whether the base Run's trainer may train at that TP: always at most the
    KV heads; above them only where it runs Megatron-core
    (:func:`rlmcost.placement.kv_subshard.subshards_kv`, which the evaluation enforces)."""
    from rlmcost.placement.kv_subshard import subshards_kv

    dep = base.deployment
    seen: dict[tuple[int, Any], bool] = {}

    def ok(tp: int, zero: Any) -> bool:
        if tp <= kv_heads:
            return True
        if (tp, zero) not in seen:
            train = dep.train.model_copy(update={"tp": tp, "zero": ZeroStage(zero)})
            seen[tp, zero] = subshards_kv(dep.framework, train)
        return seen[tp, zero]

    return ok


def check_given_subshard(base: Run, tps: tuple[int, ...] | None,
                         zeros: tuple[Any, ...] | None) -> None:  # fmt: skip
    """The evaluation's SpecError (:func:`rlmcost.placement.kv_subshard.check_kv_subshard`) for
    a given trainer ``--tp`` above the actor's KV heads that none of the searched ZeRO stages
    (``--zero``, else :func:`rlmcost.plan.mcore.trainer_zeros`) trains: the search would
    otherwise evaluate none of its candidates and report too few GPUs."""
    from rlmcost.placement.kv_subshard import check_kv_subshard
    from rlmcost.plan.mcore import trainer_zeros
    from rlmcost.plan.rl_candidates import actor_spec

    spec = actor_spec(base)
    ok, searched = trains_at(base, spec.n_kv_heads), trainer_zeros(base, zeros)
    dep = base.deployment
    for tp in tps or ():
        if not any(ok(tp, z) for z in searched):
            train = dep.train.model_copy(update={"tp": tp, "zero": ZeroStage(searched[0])})
            check_kv_subshard(dep.model_copy(update={"train": train}), [spec])
