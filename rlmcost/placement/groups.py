"""Device groups and placements: which group runs each invocation of an algorithm (§IV-B).

A *device group* is a set of GPUs that stores and runs one or more model invocations (seed
paper §IV-B); inside a group invocations run one after another (temporal multiplexing) and the
resident state of every model placed there adds up; different groups run concurrently. A
*placement* is a tuple of groups plus the execution options of Table IX (hybrid layouts,
stage fusion, staleness, a shared actor-critic backbone, offloading idle models).

``--groups`` syntax (partial colocation, as OpenRLHF and verl configure it)::

    GROUPS := GROUP ("," GROUP)*          e.g.  rollout=16,actor+reference=32,critic+reward=16
    GROUP  := MEMBER ("+" MEMBER)* "=" GPUS ["[" LAYOUT "]"]
    LAYOUT := KEY "=" VALUE (";" KEY "=" VALUE)*   KEY: tp pp cp ep zero ckpt mb
    MEMBER := ROLE | ROLE ":" KIND | "rollout"

ROLE is a model of the algorithm (actor, critic, reward, reference or ref, cost, cost-critic,
prm, judge); KIND is generate, forward or train; ``rollout`` means ``actor:generate`` (the
inference engines). A bare ROLE places every invocation of that role that no ``ROLE:KIND``
member claims, so ``rollout=16,actor=32`` puts the actor's generation on 16 GPUs and its
training on the other 32. Every model invocation must land in exactly one group.

Light to import (no sympy): the CLI parses ``--groups`` at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout

_ROLE_ALIASES = {"ref": Role.REFERENCE, "policy": Role.ACTOR, "value": Role.CRITIC}
_KINDS = (Kind.GENERATE, Kind.FORWARD, Kind.TRAIN)
SYNTAX = (
    "ROLE[:KIND][+ROLE...]=GPUS[[LAYOUT]],..., e.g. "
    "rollout=16[tp=4],actor+reference=32[zero=3;ckpt=full],critic+reward=16"
)


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
    brackets); tp/pp/ep also set the generation engine's layout there.
    """

    name: str
    members: tuple[Member, ...]
    gpus: int | None = None
    layouts: tuple[tuple[Kind, Layout], ...] = ()
    settings: tuple[tuple[str, object], ...] = ()  # ``[tp=4;zero=3]``: overrides of the layout

    def layout(self, kind: Kind) -> Layout | None:
        """The layout given for ``kind`` (None: the placement's default)."""
        return dict(self.layouts).get(kind)

    def with_gpus(self, gpus: int | None) -> DeviceGroup:
        return replace(self, gpus=gpus)

    def spec(self) -> str:
        """The group in ``--groups`` syntax: ``actor+reference=32[zero=3]``."""
        text = "+".join(str(m) for m in self.members) + (
            f"={self.gpus}" if self.gpus is not None else ""
        )
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

    @property
    def role(self) -> Role:
        return self.invocation.role

    @property
    def kind(self) -> Kind:
        return self.invocation.kind

    @property
    def stage(self) -> Stage:
        return self.invocation.stage

    def label(self) -> str:
        """``actor generate``, with ``+value head`` under a shared backbone."""
        base = f"{self.role} {self.kind}"
        return base + (" (+value head)" if self.value_head else "")


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
        """Every model invocation of ``alg`` with its group (see :func:`assign`)."""
        return assign(alg, self)


# --------------------------------------------------------------------------------------------
# --groups parsing
# --------------------------------------------------------------------------------------------


def _role(word: str, text: str) -> Role:
    word = word.strip().lower().replace("_", "-")
    if word in _ROLE_ALIASES:
        return _ROLE_ALIASES[word]
    try:
        role = Role(word)
    except ValueError:
        names = ", ".join(str(r) for r in Role if r is not Role.VERIFIER)
        raise SpecError(
            f"--groups {text!r}: unknown role {word!r}; use {names} or rollout ({SYNTAX})"
        ) from None
    if role is Role.VERIFIER:
        raise SpecError(f"--groups {text!r}: the verifier is a CPU program; leave it out")
    return role


def _member(word: str, text: str) -> Member:
    word = word.strip()
    if not word:
        raise SpecError(f"--groups {text!r}: empty role; write {SYNTAX}")
    if word.lower() == "rollout":
        return Member(Role.ACTOR, Kind.GENERATE)
    if ":" in word:
        role_word, kind_word = word.split(":", 1)
        try:
            kind = Kind(kind_word.strip().lower())
        except ValueError:
            kind = None
        if kind not in _KINDS:
            raise SpecError(
                f"--groups {text!r}: unknown kind {kind_word!r} in {word!r}; "
                "use generate, forward or train"
            )
        return Member(_role(role_word, text), kind)
    return Member(_role(word, text))


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside ``[...]``."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


_LAYOUT_KEYS = {"tp": "tp", "pp": "pp", "cp": "cp", "ep": "ep", "zero": "zero", "ckpt": "ckpt",
                "mb": "micro_batch", "micro_batch": "micro_batch"}  # fmt: skip


def _group_settings(spec: str, text: str) -> tuple[tuple[str, object], ...]:
    """``tp=4;zero=3`` -> the group's layout settings (Layout field, value); they override the
    run's layout for forward and train, and tp/pp/ep set the engine's layout for generate (an
    engine holds whole TP shards: no ZeRO)."""
    from rlmcost.parallel.layout import Checkpointing, ZeroStage

    values: dict[str, object] = {}
    for item in spec.split(";"):
        item = item.strip()
        if not item:
            continue
        key, _, raw = item.partition("=")
        key = key.strip().lower()
        if key not in _LAYOUT_KEYS or not raw.strip():
            raise SpecError(
                f"--groups {text!r}: {item!r} is not a layout setting; use "
                f"KEY=VALUE with KEY one of {', '.join(sorted(set(_LAYOUT_KEYS) - {'mb'}))} "
                "(e.g. rollout=16[tp=4])"
            )
        raw = raw.strip()
        try:
            if key == "zero":
                values["zero"] = ZeroStage(raw)
            elif key == "ckpt":
                values["ckpt"] = Checkpointing(raw)
            else:
                values[_LAYOUT_KEYS[key]] = int(raw)
                if values[_LAYOUT_KEYS[key]] < 1:  # type: ignore[operator]
                    raise ValueError
        except ValueError:
            raise SpecError(
                f"--groups {text!r}: {item!r} has a bad value (zero: 0-3, ckpt: none, "
                "selective or full, degrees: positive whole numbers)"
            ) from None
    return tuple(values.items())


def parse_groups(text: str) -> tuple[DeviceGroup, ...]:
    """``"rollout=16,actor+reference=32,critic+reward=16"`` -> three groups (module docstring).
    A group may carry its own layout in brackets: ``rollout=16[tp=4]``,
    ``actor+reference=8[zero=3;ckpt=full;mb=2]`` (keys tp, pp, cp, ep, zero, ckpt, mb).

    >>> [g.spec() for g in parse_groups("rollout=16, actor+ref=32, critic+reward=16")]
    ['rollout=16', 'actor+reference=32', 'critic+reward=16']
    >>> parse_groups("rollout=16[tp=4],actor=8[zero=3]")[0].settings
    (('tp', 4),)
    """
    groups: list[DeviceGroup] = []
    seen: dict[Member, str] = {}
    for chunk in _split_top(text):
        chunk = chunk.strip()
        if not chunk:
            raise SpecError(f"--groups {text!r}: empty group; write {SYNTAX}")
        settings: tuple[tuple[str, object], ...] = ()
        if chunk.endswith("]") and "[" in chunk:
            chunk, _, spec = chunk[:-1].partition("[")
            settings = _group_settings(spec, text)
        if chunk.count("=") != 1:
            raise SpecError(f"--groups {text!r}: {chunk!r} needs one '=GPUS'; write {SYNTAX}")
        left, right = chunk.split("=")
        try:
            gpus = int(right.strip())
        except ValueError:
            gpus = 0
        if gpus < 1:
            raise SpecError(
                f"--groups {text!r}: {chunk!r} needs a positive whole number of GPUs, e.g. actor=32"
            )
        members = tuple(_member(w, text) for w in left.split("+"))
        for m in members:
            if m in seen:
                raise SpecError(
                    f"--groups {text!r}: {m} appears in two groups ({seen[m]} and {left.strip()});"
                    " name it once"
                )
            seen[m] = left.strip()
        name = "+".join(str(m) for m in members)
        groups.append(DeviceGroup(name, members, gpus, settings=settings))
    return tuple(groups)


# --------------------------------------------------------------------------------------------
# Assignment
# --------------------------------------------------------------------------------------------


def _where(inv: Invocation) -> str:
    return f"{inv.role} {inv.kind} in {inv.stage}"


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
                "(any GPU count; the groups must add up to --gpus)"
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
                raise SpecError(
                    f"{alg.name} has no {m.role} model (its models: {have}); remove {m} from "
                    "--groups"
                )
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
