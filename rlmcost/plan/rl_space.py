"""The RL space's values that depend on the base Run: the GPUs of a node (TP stays inside one),
the context-parallel degrees, searched from :data:`LONG_SEQUENCE_TOKENS` of prompt plus
response, the engine TP and trainer layout fields a ``--groups`` family's brackets fix
(:func:`groups_engine_tp`, :func:`groups_trainer_fixed`), and the trainer layout values and
offload lists each family tries (:func:`family_lists`, :func:`family_offloads`)
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


TRAINER_FIELDS = ("tp", "pp", "cp", "ep", "zero", "ckpt", "micro_batch", "offload")
"""The trainer layout fields a plan searches run-wide that a ``--groups`` bracket may give a
group of its own (keys ``tp pp cp ep zero ckpt mb offload``:
``deployment.group_brackets.LAYOUT_KEYS``)."""

ENGINE_READS = ("tp", "pp", "cp", "ep")
"""The fields a group that only generates reads of the run-wide layout where its engine runs
in the trainer's (``placement.inputs._replica``: HF generate and an unpinned Hybrid Engine
take the trainer's layout at the group's TP; a Megatron engine takes the policy's PP and EP
where it gives none, ``megatron_degrees``, and shares the policy's layout at CP 1 only)."""


def _family_tasks(alg: Any, fam: Family) -> tuple[dict[str, dict[str, Any]], list[Any]]:
    """Each group's bracket settings (Layout field -> value) and the tasks of ``alg`` placed on
    ``fam``'s groups (one GPU each: the counts do not move a task)."""
    from rlmcost.placement.configs import build
    from rlmcost.placement.groups import parse_groups

    text = ",".join(f"{m}=1" + (f"[{s}]" if s else "")
                    for m, s in zip(fam.members, fam.settings, strict=True))  # fmt: skip
    placement = build(None, alg, groups=parse_groups(text))
    own = {g.name: dict(g.settings) for g in placement.groups}
    return own, list(placement.tasks(alg))


def groups_engine_tp(alg: Any, fam: Family) -> int | None:
    """The engine TP a ``--groups`` family's brackets fix (None where the run-wide one is
    read): a group's ``tp=`` sets its engine's layout too (``rollout=?[tp=4]`` generates at
    TP 4 whatever ``--rollout-tp`` says: :func:`rlmcost.placement.inputs._replica`), so where
    every group that generates under ``alg`` gives its own ``tp=``, no group reads the
    run-wide engine TP and the search tries the TP that runs alone (the group generating the
    actor's rollouts: its TP is the one the row shows and its command sets)."""
    from rlmcost.algorithms.kinds import Kind, Role

    if not fam.members or not any("tp=" in s for s in fam.settings):
        return None
    own, tasks = _family_tasks(alg, fam)
    makers = [t for t in tasks if t.kind is Kind.GENERATE]
    if not makers or any(own[t.group].get("tp") is None for t in makers):
        return None
    actor = next((t for t in makers if t.role is Role.ACTOR), makers[0])
    return int(own[actor.group]["tp"])


def groups_trainer_fixed(alg: Any, fam: Family, base: Run) -> dict[str, Any]:
    """Trainer layout field -> the value a ``--groups`` family's brackets fix for it: where
    every group that reads the field under ``alg`` gives it in its brackets (alike), no task
    reads the run-wide value (a group's bracket goes over the run's trainer layout:
    :func:`rlmcost.plan.rl_runs.candidate_sections`, ``placement.inputs._replica``), so the
    search tries that value alone and the row shows and commands the value that runs
    (``actor+reference=?[tp=2]`` under GRPO: TP 2, not 1, 2, 4 and 8 evaluated alike). The
    groups that train or run forwards read every field but the offload, which the groups
    that train alone read (``placement.group_own.GroupTasks.train_offload``: a group's
    ``[offload=...]``, else the run's); a group that only generates reads
    :data:`ENGINE_READS` where its engine runs in the trainer's layout (HF generate, an
    unpinned Hybrid Engine, a Megatron engine on the policy's weights). Fields some such group
    leaves to the run-wide value stay searched; the rows mark the groups' own values
    (``rlmcost plan``'s table). The values are the brackets' (``offload``: its text,
    ``optimizer,params``)."""
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.plan.mcore import is_megatron

    if not fam.members or not any(fam.settings):
        return {}
    own, tasks = _family_tasks(alg, fam)
    readers = {t.group for t in tasks if t.kind is not Kind.GENERATE}
    trainers = {t.group for t in tasks if t.kind is Kind.TRAIN}
    kind = base.deployment.engine.kind
    trainer_engine = kind.in_trainer_layout or is_megatron(base)
    makers = {t.group for t in tasks if t.kind is Kind.GENERATE} if trainer_engine else set()
    out: dict[str, Any] = {}
    for field in TRAINER_FIELDS:
        groups = trainers if field == "offload" else \
            readers | makers if field in ENGINE_READS else readers  # fmt: skip
        values = {own[g].get(field) for g in groups}
        if groups and len(values) == 1 and None not in values:
            out[field] = values.pop()
    return out


def family_lists(alg: Any, fam: Family, base: Run, space: RLSpace,
                 searched: tuple[tuple[Any, ...], ...]) -> dict[str, tuple[Any, ...]]:
    """The trainer layout values family ``fam`` tries: ``searched`` (the TP, CP, ZeRO and EP
    lists of the query) and the space's PP, checkpointing, micro-batch and offload lists (the
    offload's: whether the optimizer lives in host memory, :func:`family_offloads`), each
    field a ``--groups`` bracket fixes for every group that reads it replaced by that one
    value (:func:`groups_trainer_fixed`: the value that runs, shown and commanded; the others
    evaluated alike; the offload's: its list of kinds), and each field no candidate of
    ``base`` reads (:func:`rlmcost.plan.unread.unread_fields`: the micro-batch under a token
    budget) cut to its first value."""
    from rlmcost.plan.unread import unread_fields

    tps, cps, zeros, eps = searched
    lists = {"tp": tps, "pp": space.pp or (1,), "cp": cps, "ep": eps, "zero": zeros,
             "ckpt": space.ckpt, "micro_batch": space.micro_batch,
             "offload": space.offload}  # fmt: skip
    for field, value in groups_trainer_fixed(alg, fam, base).items():
        lists[field] = (tuple(str(value).split(",")),) if field == "offload" else (value,)
    for field in unread_fields(base):  # the same rows at every value: generated once
        lists[field] = lists[field][:1]
    return lists


def family_offloads(base: Run, fam: Family,
                    lists: dict[str, tuple[Any, ...]]) -> dict[Any, list[tuple[str, ...]]]:
    """Each ZeRO stage of ``lists`` (:func:`family_lists`) -> the trainer's offload lists: the
    one a bracket fixes, else one per offload choice of the space that the framework of
    ``base`` runs for family ``fam`` (its engines colocated with the actor's trainer unless a
    rollout group of their own: :func:`rlmcost.plan.offloads.candidate_offload`), in the
    space's order."""
    from rlmcost.parallel.layout import ZeroStage
    from rlmcost.plan.families import ROLLOUT
    from rlmcost.plan.offloads import candidate_offload

    colocated = not fam.members or ROLLOUT in fam.members[fam.trainer_index()].split("+")
    out: dict[Any, list[tuple[str, ...]]] = {}
    for zero in lists["zero"]:
        kinds = (on if isinstance(on, tuple) else
                 candidate_offload(base, on, ZeroStage(zero), colocated)
                 for on in lists["offload"])  # fmt: skip
        out[zero] = list(dict.fromkeys(k for k in kinds if k is not None))
    return out


def engine_tp_note(alg: Any, fam: Family, given: tuple[int, ...] | None) -> list[str]:
    """A note where ``--rollout-tp`` (``given``) meets a group's bracket ``tp=`` on a group
    that generates: the bracket wins, as the Run's layout reads it
    (:func:`rlmcost.placement.inputs._replica`: ``settings.get("tp", engine_tp or t)``, the
    group's own over the run-wide engine TP), so that group generates at its own TP whatever
    the flag lists; a note, not an error, since the flag still sets the engine TP of every
    other family searched and of a generating group without ``tp=``."""
    from rlmcost.algorithms.kinds import Kind

    if not given or not fam.members or not any("tp=" in s for s in fam.settings):
        return []
    own, tasks = _family_tasks(alg, fam)
    fixed = {t.group: int(own[t.group]["tp"]) for t in tasks
             if t.kind is Kind.GENERATE and own[t.group].get("tp") is not None}  # fmt: skip
    odd = {g: tp for g, tp in fixed.items() if tp not in given}
    if not odd:
        return []
    where = ", ".join(f"{g}[tp={tp}]" for g, tp in odd.items())
    return [f"--rollout-tp {','.join(map(str, given))}: --groups {where} generates at its "
            "bracket's TP whatever the flag says (a group's own tp= goes over the run-wide "
            "engine TP); the flag's TP applies to the other groups and families"]


def check_staleness(staleness: int | None, names: tuple[str, ...]) -> None:
    """SpecError where the base Run's ``staleness`` 0 meets an overlapped family of ``names``:
    the search runs those at the base's staleness (``rlmcost.plan.rl_runs``), and k = 0 is the
    synchronous loop, which ``--placement async`` refuses too (it had run them at 1)."""
    from rlmcost.errors import SpecError
    from rlmcost.plan.families import STALE_FAMILIES

    stale = [n for n in names if n in STALE_FAMILIES]
    if staleness == 0 and stale:
        raise SpecError(f"--staleness 0 is the synchronous loop, but {', '.join(stale)} "
                        "overlap rollout with training at k >= 1: give --staleness 1 or more, "
                        "or search the synchronous families (--placements baseline,split,"
                        "roles)")  # fmt: skip


def check_degrees(space: Any, budget: Any) -> None:
    """SpecError where the trainer degrees the space gives (``--tp``, ``--pp``, ``--cp``; one
    where not given) multiply to no divisor of any GPU count of ``budget`` that holds them:
    the evaluation derives data parallelism as gpus / (tp*pp*cp) over the run's GPUs, groups
    or not (``deployment.resolve.resolve_layout``), and rejects every candidate, which the
    plan had reported as families that never fit. Products above every count are left to
    the search's own message (raise --gpus). A pool's total counts among the budget's."""
    from rlmcost.errors import SpecError
    from rlmcost.plan.kinds import parse_gpus

    counts = parse_gpus(budget)
    if space.pool:  # counts above the pool search its total (plan.rl)
        from rlmcost.plan.pool import pool_total

        counts = (*counts, pool_total(space.pool))
    given = {n: getattr(space, n) for n in ("tp", "pp", "cp") if getattr(space, n)}
    products = sorted({t * p * c for t in given.get("tp", (1,)) for p in given.get("pp", (1,))
                       for c in given.get("cp", (1,))})  # fmt: skip
    fits = [p for p in products if p <= max(counts)]
    if not fits or any(g % p == 0 for g in counts for p in fits):
        return
    flags = " ".join(f"--{n} {','.join(map(str, v))}" for n, v in given.items())
    raise SpecError(f"{flags}: tp*pp*cp ({', '.join(map(str, fits))}) divides none of the "
                    f"budget's GPU counts ({', '.join(map(str, counts))}); the trainers' data "
                    "parallelism is gpus / (tp*pp*cp): give --gpus a multiple of "
                    f"{fits[0]}")  # fmt: skip
