"""Device groups and placements: which group runs each invocation of an algorithm (§IV-B).

A *device group* is a set of GPUs that stores and runs one or more model invocations (seed
paper §IV-B); inside a group invocations run one after another (temporal multiplexing) and the
resident state of every model placed there adds up; different groups run concurrently. A
*placement* is a tuple of groups plus the execution options of Table IX (hybrid layouts,
stage fusion, staleness, a shared actor-critic backbone, offloading idle models). The
``--groups`` text that names groups is :mod:`rlmcost.placement.groups`; the assignment of
every invocation to one group is :mod:`rlmcost.placement.assign`.

Light to import (no sympy): the CLI parses ``--groups`` at start-up.
"""

from __future__ import annotations

from dataclasses import replace

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation
from rlmcost.frozen import dataclass
from rlmcost.memo import kept_property
from rlmcost.parallel.layout import Layout


@dataclass(frozen=True)
class Member:
    """What a group runs: the invocations of ``role`` (of ``kind``, in ``stage``, when given)."""

    role: Role
    kind: Kind | None = None
    stage: Stage | None = None

    @property
    def specificity(self) -> int:
        """How narrowly it matches: a ``ROLE:KIND`` member wins over a bare ``ROLE``."""
        return (self.kind is not None) + (self.stage is not None)

    def matches(self, inv: Invocation) -> bool:
        return (
            inv.role is self.role
            and self.kind in (None, inv.kind)
            and self.stage in (None, inv.stage)
        )

    def __str__(self) -> str:
        if (self.role, self.kind, self.stage) == (Role.ACTOR, Kind.GENERATE, None):
            return "rollout"
        text = str(self.role)
        if self.kind is not None:
            text += f":{self.kind}"
        if self.stage is not None:
            text += f"@{self.stage}"
        return text


@dataclass(frozen=True)
class DeviceGroup:
    """A named set of ``gpus`` devices (None: symbolic, Table IX) running its ``members``.

    ``layouts``: the intra-model layout per invocation kind (its ``dp`` is filled to the group's
    GPUs when evaluated); empty means the placement's default layout for every kind.
    ``settings``: Layout fields that override the default layout on this group (``--groups``
    brackets); tp/pp/ep also set the generation engine's layout there. ``hardware``: the
    canonical name of the group's accelerator (``@h20``; None: the run's hardware).
    """

    name: str
    members: tuple[Member, ...]
    gpus: int | None = None
    layouts: tuple[tuple[Kind, Layout], ...] = ()
    settings: tuple[tuple[str, object], ...] = ()  # ``[tp=4;zero=3]``: overrides of the layout
    hardware: str | None = None  # ``@h20``: the group's accelerator (None: the run's)

    def __hash__(self) -> int:
        """The dataclass's hash of the fields (all of them, in order), kept in the instance:
        a group is a key part of every memoized layout and group estimate of a query."""
        try:
            return self.__dict__["_hash"]
        except KeyError:
            out = self.__dict__["_hash"] = hash((self.name, self.members, self.gpus,
                                                 self.layouts, self.settings, self.hardware))
            return out

    def layout(self, kind: Kind) -> Layout | None:
        """The layout given for ``kind`` (None: the placement's default)."""
        return dict(self.layouts).get(kind) if self.layouts else None

    def with_gpus(self, gpus: int | None) -> DeviceGroup:
        return replace(self, gpus=gpus)

    def spec(self) -> str:
        """The group in ``--groups`` syntax: ``actor+reference=32@h100-sxm[zero=3]``."""
        text = "+".join(str(m) for m in self.members) + (
            f"={self.gpus}" if self.gpus is not None else ""
        ) + (f"@{self.hardware}" if self.hardware else "")
        if self.settings:
            short = {"micro_batch": "mb"}
            text += "[" + ";".join(f"{short.get(k, k)}={v}" for k, v in self.settings) + "]"
        return text


@dataclass(frozen=True)
class Task:
    """One invocation of the algorithm placed on a group.

    ``value_head``: under a shared actor-critic backbone the actor's generate and train
    invocations also run the critic's d x 1 value head (§IV-A).
    """

    index: int
    invocation: Invocation
    group: str
    value_head: bool = False

    def __hash__(self) -> int:
        """The dataclass's hash of the fields, kept in the instance (a task is a key part of
        the kept forwards, packings and lengths of every deployment)."""
        try:
            return self.__dict__["_hash"]
        except KeyError:
            out = self.__dict__["_hash"] = hash((self.index, self.invocation, self.group,
                                                 self.value_head))
            return out

    # read on every job, unit and memory term of every deployment: kept in the instance
    # (``memo.kept_property``; a task and its invocation never change, and dataclass
    # equality, hashing and ``replace`` read the fields alone)
    @kept_property
    def role(self) -> Role:
        return self.invocation.role

    @kept_property
    def kind(self) -> Kind:
        return self.invocation.kind

    @kept_property
    def stage(self) -> Stage:
        return self.invocation.stage

    def label(self) -> str:
        """``actor generate``, with ``+value head`` under a shared backbone."""
        key = (self.invocation.role, self.invocation.kind, self.value_head)
        if key not in _LABELS:
            base = f"{self.role} {self.kind}"
            _LABELS[key] = base + (" (+value head)" if self.value_head else "")
        return _LABELS[key]


_LABELS: dict[tuple[Role, Kind, bool], str] = {}  # Task.label per role, kind and value head


@dataclass(frozen=True)
class Placement:
    """Groups and execution options of one configuration.

    ``hybrid``: per-kind layouts (TP generate, TP/PP forward, ZeRO-3 train) with resharding;
    ``fusion``: inter-stage streaming (Generation -> Assessment) and intra-stage interleaving of
    the training pipelines that share a group; ``staleness``: k >= 1 lets Generation read
    weights k iterations old so rollout and training overlap (0 = synchronous);
    ``shared_backbone``: actor and critic are one network with two heads; ``offload``: idle
    models on a group wait in host memory and are loaded before they run.
    """

    name: str
    groups: tuple[DeviceGroup, ...]
    hybrid: bool = False
    fusion: bool = False
    staleness: int = 0
    shared_backbone: bool = False
    offload: bool = False

    def group(self, name: str) -> DeviceGroup:
        return next(g for g in self.groups if g.name == name)

    @property
    def gpus(self) -> int | None:
        counts = [g.gpus for g in self.groups]
        return None if None in counts else sum(counts)  # type: ignore[arg-type]

    def with_gpus(self, counts: tuple[int, ...]) -> Placement:
        """The same placement with these GPU counts, group by group."""
        return replace(
            self, groups=tuple(g.with_gpus(n) for g, n in zip(self.groups, counts, strict=True))
        )

    def tasks(self, alg: Algorithm) -> tuple[Task, ...]:
        """Every model invocation of ``alg`` with its group (see
        :func:`~rlmcost.placement.assign.assign`)."""
        from rlmcost.placement.assign import assign

        return assign(alg, self)
