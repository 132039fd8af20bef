"""Which group runs each invocation of an algorithm, and the GPUs a placement uses (§IV-B).

Every model invocation must land in exactly one group: the most specific matching member
wins, and a placement that leaves an invocation out, claims one twice or names a member that
runs nothing is a one-line error (the fix named). CPU verifiers are not placed.
"""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.algorithms.model import Algorithm, Invocation
from rlmcost.errors import SpecError
from rlmcost.memo import memoized
from rlmcost.placement.device_groups import Member, Placement, Task


def _where(inv: Invocation) -> str:
    return f"{inv.role} {inv.kind} in {inv.stage}"


@memoized()
def assign(alg: Algorithm, placement: Placement) -> tuple[Task, ...]:
    """Every model invocation of ``alg`` with the one group that runs it.

    The most specific matching member wins (``ROLE:KIND`` over ``ROLE``); two groups matching
    equally, an invocation no group matches, and a member that matches nothing are errors.
    Under ``shared_backbone`` the critic's invocations disappear (the actor's network carries
    its value head) before the assignment. CPU verifiers are not placed.
    """
    invs = [(i, inv) for i, inv in enumerate(alg.invocations) if inv.kind is not Kind.VERIFY]
    shared = placement.shared_backbone
    if shared:
        invs = [(i, inv) for i, inv in invs if inv.role is not Role.CRITIC]
    roles = {inv.role for _, inv in invs}
    used: set[tuple[str, Member]] = set()
    tasks: list[Task] = []
    for index, inv in invs:
        hits = [
            (m.specificity, g.name, m)
            for g in placement.groups
            for m in g.members
            if m.matches(inv)
        ]
        if not hits:
            missing = [
                u for _, u in invs
                if not any(m.matches(u) for g in placement.groups for m in g.members)
            ]  # fmt: skip
            absent = "+".join(dict.fromkeys(str(u.role) for u in missing))
            where = ", ".join(dict.fromkeys(_where(u) for u in missing))
            raise SpecError(
                f"{alg.name}: {where} {'is' if len(missing) == 1 else 'are'} in no group; "
                f"place {'it' if len(missing) == 1 else 'them'}, e.g. --groups ...,{absent}=8 "
                "(any GPU count; where --gpus is given, the groups must add up to it)"
                + ("; or score with a rule-based verifier, --reward rule (no reward model "
                   "to place)" if any(u.role is Role.REWARD for u in missing) else "")
            )
        best = max(s for s, _, _ in hits)
        top = [(g, m) for s, g, m in hits if s == best]
        if len(top) > 1:
            names = " and ".join(f"{m} ({g})" for g, m in top)
            raise SpecError(
                f"{alg.name}: {_where(inv)} is claimed by {names}; place it once, or split "
                f"the role's invocations with {inv.role}:generate/forward/train"
            )
        group, member = top[0]
        used.add((group, member))
        head = shared and inv.role is Role.ACTOR and inv.kind in (Kind.GENERATE, Kind.TRAIN)
        tasks.append(Task(index, inv, group, head))
    for g in placement.groups:
        for m in g.members:
            if (g.name, m) in used:
                continue
            if m.role not in roles and not (shared and m.role is Role.CRITIC):
                have = ", ".join(str(r) for r in alg.model_roles)
                hint = (" (it scores with a rule-based verifier, the framework's default; "
                        "--reward MODEL adds a reward model)") if m.role is Role.REWARD else ""
                raise SpecError(
                    f"{alg.name} has no {m.role} model (its models: {have}){hint}; remove {m} "
                    "from --groups"
                )  # fmt: skip
            if not (shared and m.role is Role.CRITIC):
                kinds = sorted({str(inv.kind) for _, inv in invs if inv.role is m.role})
                why = (
                    f"{m.role} only runs {', '.join(kinds)} in {alg.name}"
                    if m.kind is not None and str(m.kind) not in kinds
                    else f"more specific members claim every {m.role} invocation"
                )
                raise SpecError(
                    f"{alg.name}: {m} in group {g.name} runs nothing ({why}); remove it"
                )
    empty = [g.name for g in placement.groups if not any(t.group == g.name for t in tasks)]
    if empty:
        raise SpecError(f"{alg.name}: group {empty[0]} runs nothing; remove it")
    return tuple(tasks)


def check_gpus(placement: Placement, gpus: int | None) -> int:
    """The placement's total GPU count, which must equal ``gpus`` when that is given."""
    counts = [g.gpus for g in placement.groups]
    if any(c is None or c < 1 for c in counts):
        raise SpecError("every device group needs a positive GPU count")
    total = sum(counts)  # type: ignore[arg-type]
    if gpus is not None and total != gpus:
        parts = " + ".join(f"{g.name}={g.gpus}" for g in placement.groups)
        verb = "over-use" if total > gpus else "under-use"
        raise SpecError(
            f"--groups {verb} the GPUs: {parts} = {total} but --gpus is {gpus}; make the "
            f"groups add up to {gpus} (or drop --gpus)"
        )
    return total
