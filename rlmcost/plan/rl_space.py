"""The RL space's values that depend on the base Run: the GPUs of a node (TP stays inside one),
the context-parallel degrees, searched from :data:`LONG_SEQUENCE_TOKENS` of prompt plus
response, and the engine TP a ``--groups`` family's brackets fix (:func:`groups_engine_tp`)
(:mod:`rlmcost.plan.rl_candidates`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.plan.space import powers_of_two

if TYPE_CHECKING:
    from rlmcost.plan.families import Family
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.run.spec import Run

LONG_SEQUENCE_TOKENS = 16384
"""Prompt plus response from which the default space adds context parallelism (CP degrees
up to a node) and sequence parallelism: ring attention splits one sequence's activations
over CP ranks (Liu et al. 2023, arXiv:2310.01889; OpenRLHF ``--ring_attn_size``, verl
``ulysses_sequence_parallel_size``) at the price of exchanging K/V blocks, which shorter
sequences need not pay. A bound of the search space, not a cost constant: give
``RLSpace.cp`` (``--cp``) to search CP at any length."""


def seq_tokens(base: Run) -> int:
    """Prompt plus response tokens of ``base`` (the algorithm's defaults where unset)."""
    from rlmcost.algorithms.options import DEFAULT_PROMPT_LEN

    w = base.workload
    return (w.prompt_len or DEFAULT_PROMPT_LEN) + (w.response_len or DEFAULT_PROMPT_LEN)


def context_degrees(base: Run, space: RLSpace, node: int) -> tuple[tuple[int, ...],
                                                                  tuple[bool, ...]]:  # fmt: skip
    """CP degrees and SP settings of ``space`` (defaults: :data:`LONG_SEQUENCE_TOKENS`)."""
    long = seq_tokens(base) >= LONG_SEQUENCE_TOKENS
    cps = space.cp or (tuple(powers_of_two(node)) if long else (base.deployment.train.cp,))
    sps = space.sp or ((False, True) if long else (base.deployment.train.sp,))
    return cps, sps


def node_gpus(base: Run, space: RLSpace) -> int:
    """GPUs in one node: the base Run's accelerator's, or the fewest of the pool's (TP stays
    within a node on every accelerator)."""
    from rlmcost.specs import get_hardware

    names = [hw for hw, _ in space.pool] or [base.cluster.hardware]
    return min(get_hardware(n).gpus_per_node for n in names)


def groups_engine_tp(alg: Any, fam: Family) -> int | None:
    """The engine TP a ``--groups`` family's brackets fix (None where the run-wide one is
    read): a group's ``tp=`` sets its engine's layout too (``rollout=?[tp=4]`` generates at
    TP 4 whatever ``--rollout-tp`` says: :func:`rlmcost.placement.inputs._replica`), so where
    every group that generates under ``alg`` gives its own ``tp=``, no group reads the
    run-wide engine TP and the search tries the TP that runs alone (the group generating the
    actor's rollouts: its TP is the one the row shows and its command sets)."""
    from rlmcost.algorithms.kinds import Kind, Role
    from rlmcost.placement.configs import build
    from rlmcost.placement.groups import parse_groups

    if not fam.members or not any("tp=" in s for s in fam.settings):
        return None
    text = ",".join(f"{m}=1" + (f"[{s}]" if s else "")
                    for m, s in zip(fam.members, fam.settings, strict=True))  # fmt: skip
    placement = build(None, alg, groups=parse_groups(text))
    own = {g.name: dict(g.settings).get("tp") for g in placement.groups}
    makers = [t for t in placement.tasks(alg) if t.kind is Kind.GENERATE]
    if not makers or any(own[t.group] is None for t in makers):
        return None
    actor = next((t for t in makers if t.role is Role.ACTOR), makers[0])
    return int(own[actor.group])  # type: ignore[call-overload]
