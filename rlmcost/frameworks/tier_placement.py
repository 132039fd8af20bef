"""A size tier's device groups: where a framework's example for larger actors runs its engines
and models, scaled to a query's GPUs (:attr:`~rlmcost.frameworks.preset_model.Sized.placement`).

The rule (:func:`scale`): the example's groups of the models the algorithm has, each with its
share of the query's GPUs (its GPUs in the example over the example's GPUs of those groups),
in whole replicas (the engines: rollout TP x PP GPUs; a trainer group: tp x pp x cp), rounded
to the nearest (the engines: the nearest that leaves the trainers whole replicas); the actor's
group takes the rest. The split does not hold (co-located
instead, said in the deployment line) where a group's share is under half a replica, where
the rest is not whole trainer replicas, or where the algorithm has a model the example gives
no group. Light to import (dataclasses only): the Run's defaults read it.
"""

from __future__ import annotations

from rlmcost.frozen import dataclass

ROLLOUT = "rollout"


@dataclass(frozen=True)
class TierPlacement:
    """The example's device groups: ``groups`` as (members in ``--groups`` spelling, the
    example's GPUs, the group's bracket settings or ""), the engines' group first;
    ``rest_with_actor``: a model the example has no group for trains or runs in the actor's
    processes (TRL keeps the reference in the training process) instead of refusing the
    split; ``source``: the example. ``colocated``: the Deployment fields (dotted, with their
    values) the framework sets when it runs the models on the same GPUs instead, which a Run
    takes where the split does not hold and it gives the field no value itself (slime's
    ``--colocate`` turns on ``offload_rollout`` and ``offload_train``), said in the
    deployment line as ``colocated_text``."""

    groups: tuple[tuple[str, int, str], ...]
    source: str
    rest_with_actor: bool = False
    colocated: tuple[tuple[str, object], ...] = ()
    colocated_text: str = ""

    @property
    def text(self) -> str:
        """The example's own ``--groups`` text."""
        return groups_text([(m, n, s) for m, n, s in self.groups])

    @property
    def gpus(self) -> int:
        """The example's GPUs in all."""
        return sum(n for _, n, _ in self.groups)


def groups_text(groups: list[tuple[str, int, str]]) -> str:
    """``--groups`` text of (members, GPUs, bracket settings) triples."""
    return ",".join(f"{m}={n}" + (f"[{s}]" if s else "") for m, n, s in groups)


RULE = ("the example's groups of the algorithm's models, each its share of the GPUs in whole "
        "replicas (engines: rollout TP x PP; trainers: tp x pp x cp), the actor's group the "
        "rest")  # fmt: skip
"""The scaling rule in words, as the deployment line and `rlmcost frameworks` state it."""


def scale(p: TierPlacement, roles: tuple[str, ...], gpus: int, engine_replica: int,
          trainer_replica: int) -> tuple[list[tuple[str, int, str]] | None, str]:  # fmt: skip
    """``p``'s groups for an algorithm with the model ``roles`` (the actor first) on ``gpus``
    GPUs (module docstring), and why not (None and the reason) where the split does not
    hold."""
    kept: list[tuple[str, int, str]] = []
    placed: set[str] = set()
    for members, n, settings in p.groups:
        have = [m for m in members.split("+") if m == ROLLOUT or m in roles]
        if have:
            kept.append(("+".join(have), n, settings))
            placed |= set(have)
    rest = [r for r in roles if r not in placed]
    actor = next((i for i, (m, _, _) in enumerate(kept) if "actor" in m.split("+")), None)
    if actor is None or kept[0][0] != ROLLOUT:
        return None, "its example places no actor or no engines"
    if rest and not p.rest_with_actor:
        return None, f"its example gives {', '.join(rest)} no group"
    if rest:
        m, n, s = kept[actor]
        kept[actor] = ("+".join([m, *rest]), n, s)
    total = sum(n for _, n, _ in kept)
    out: list[tuple[str, int, str]] = []
    for i, (m, n, s) in enumerate(kept):
        unit = engine_replica if i == 0 else trainer_replica
        share = gpus * n / (total * unit)  # in replicas
        replicas = int(share + 0.5)  # the nearest whole replica
        if i == 0 and replicas:  # of those, the nearest that leaves the trainers whole replicas
            whole = [r for r in range(1, gpus // unit + 1)
                     if (gpus - r * unit) % trainer_replica == 0]  # fmt: skip
            replicas = min(whole, key=lambda r: (abs(r - share), r), default=0)
        if i != actor and replicas == 0:
            return None, (f"{m}'s share of {gpus} GPUs ({gpus * n / total:.3g}) is under half "
                          f"a replica of {unit} GPUs")  # fmt: skip
        out.append((m, replicas * unit, s))
    left = gpus - sum(n for i, (_, n, _) in enumerate(out) if i != actor)
    if left < trainer_replica or left % trainer_replica:
        return None, (f"the actor's group would get {left} GPUs, not whole trainer replicas "
                      f"of {trainer_replica}")  # fmt: skip
    m, _, s = out[actor]
    out[actor] = (m, left, s)
    return out, ""
