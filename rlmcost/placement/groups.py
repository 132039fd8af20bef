"""The ``--groups`` text: device groups (:mod:`rlmcost.placement.device_groups`) as a user writes
them.

``--groups`` syntax (partial colocation, as OpenRLHF and verl configure it)::

    GROUPS := GROUP ("," GROUP)*          e.g.  rollout=16,actor+reference=32,critic+reward=16
    GROUP  := MEMBER ("+" MEMBER)* "=" GPUS ["@" HARDWARE] ["[" ITEMS "]"]
    ITEMS  := ITEM (";" ITEM)*     ITEM := KEY "=" VALUE | KEY (a boolean: true)
    MEMBER := ROLE | ROLE ":" KIND | "rollout"

KEY: layout (tp pp cp ep zero ckpt mb offload), engine (gmu, max-num-seqs, eager, ...) or
trainer (max-tokens-per-gpu, padded, ...) keys of :mod:`rlmcost.deployment.group_brackets`;
a group's layout keys are its ``settings``, its engine and trainer keys become its
``GroupLayouts.engine`` / ``.train`` (``evaluation.query.groups_from_text``).

ROLE is a model of the algorithm (actor, critic, reward, reference or ref, cost, cost-critic,
prm, judge); KIND is generate, forward or train; ``rollout`` means ``actor:generate`` (the
inference engines). A bare ROLE places every invocation of that role that no ``ROLE:KIND``
member claims, so ``rollout=16,actor=32`` puts the actor's generation on 16 GPUs and its
training on the other 32. Every model invocation must land in exactly one group.
``@HARDWARE`` names the group's accelerator (``rollout=16@h20,actor+reference=8@h100``; a
name or alias of `rlmcost hardware`); without it the group runs on the run's hardware.

Light to import (no sympy): the CLI parses ``--groups`` at start-up.
"""

from __future__ import annotations

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.deployment.group_brackets import Brackets, check_members
from rlmcost.errors import SpecError
from rlmcost.memo import memoized
from rlmcost.placement.device_groups import DeviceGroup, Member

_ROLE_ALIASES = {"ref": Role.REFERENCE, "policy": Role.ACTOR, "value": Role.CRITIC}
_KINDS = (Kind.GENERATE, Kind.FORWARD, Kind.TRAIN)
SYNTAX = (
    "ROLE[:KIND][+ROLE...]=GPUS[@HARDWARE][[KEYS]],..., e.g. "
    "rollout=16@h20[tp=4;gmu=0.85],actor+reference=32[zero=3;padded],critic+reward=16"
)


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


def brackets(text: str) -> tuple[Brackets | None, ...]:
    """Each group's bracket of ``text``, parsed (None: no bracket), in the order of
    :func:`parse_groups` (:mod:`rlmcost.deployment.group_brackets`)."""
    out = []
    for chunk in _split_top(text):
        chunk = chunk.strip()
        out.append(Brackets(chunk[:-1].partition("[")[2], text)
                   if chunk.endswith("]") and "[" in chunk else None)  # fmt: skip
    return tuple(out)


def _check_brackets(own: Brackets, members: tuple[Member, ...], rollout: bool,
                    text: str) -> None:  # fmt: skip
    """Engine keys on a group that does not generate (``rollout``: another group claims the
    actor's generation), trainer keys on one that only generates: a SpecError
    (:func:`rlmcost.deployment.group_brackets.check_members`). A judge generates its verdicts
    (its one invocation, ``algorithms.catalog.d_rlaif``), so its group takes engine keys (the
    engine that serves it: verl's reward loop, ``frameworks.verl_reward``)."""
    generates = any(m.role is Role.ACTOR and (m.kind is Kind.GENERATE or
                                              (m.kind is None and not rollout))
                    or m.role is Role.JUDGE and m.kind in (None, Kind.GENERATE)
                    for m in members)  # fmt: skip
    trains = any(m.kind is not Kind.GENERATE and m.role is not Role.JUDGE for m in members)
    check_members(own, generates, trains, "+".join(str(m) for m in members), text)


def group_hardware(word: str, text: str) -> str:
    """The canonical name of the accelerator ``word`` names after a group's ``@``; SpecError
    listing the built-in accelerators otherwise (imports the hardware table only when a group
    names one)."""
    from rlmcost.specs.registry import hardware_name

    try:
        return hardware_name(word)
    except SpecError as exc:
        raise SpecError(f"--groups {text!r}: {exc}") from None


@memoized()
def parse_groups(text: str) -> tuple[DeviceGroup, ...]:
    """``"rollout=16,actor+reference=32,critic+reward=16"`` -> three groups (module docstring).
    A group may carry its own layout in brackets: ``rollout=16[tp=4]``,
    ``actor+reference=8[zero=3;ckpt=full;mb=2]`` (keys tp, pp, cp, ep, zero, ckpt, mb,
    offload: its ``settings``; engine and trainer keys are checked here and read by
    ``groups_from_text``), and its accelerator after ``@``: ``rollout=16@h20[tp=4]``.

    >>> [g.spec() for g in parse_groups("rollout=16, actor+ref=32, critic+reward=16")]
    ['rollout=16', 'actor+reference=32', 'critic+reward=16']
    >>> parse_groups("rollout=16[tp=4],actor=8[zero=3]")[0].settings
    (('tp', 4),)
    >>> parse_groups("rollout=16@h20[tp=4],actor=8@h100")[1].spec()
    'actor=8@h100-sxm'
    """
    groups: list[DeviceGroup] = []
    seen: dict[Member, str] = {}
    checks: list[tuple[Brackets, tuple[Member, ...]]] = []
    for chunk in _split_top(text):
        chunk = chunk.strip()
        if not chunk:
            raise SpecError(f"--groups {text!r}: empty group; write {SYNTAX}")
        settings: tuple[tuple[str, object], ...] = ()
        own = None
        if chunk.endswith("]") and "[" in chunk:
            chunk, _, spec = chunk[:-1].partition("[")
            own = Brackets(spec, text)
            settings = tuple(own.layout.items())
        if chunk.count("=") != 1:
            raise SpecError(f"--groups {text!r}: {chunk!r} needs one '=GPUS'; write {SYNTAX}")
        left, right = chunk.split("=")
        right, at, hw_word = right.partition("@")
        hw = group_hardware(hw_word, text) if at else None
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
        if own is not None:
            checks.append((own, members))
        name = "+".join(str(m) for m in members)
        groups.append(DeviceGroup(name, members, gpus, settings=settings, hardware=hw))
    rollout = Member(Role.ACTOR, Kind.GENERATE) in seen
    for own, members in checks:
        _check_brackets(own, members, rollout and Member(Role.ACTOR, Kind.GENERATE)
                        not in members, text)  # fmt: skip
    return tuple(groups)
