"""The ``--groups`` text: device groups (:mod:`rlmcost.placement.device_groups`) as a user writes
them.

``--groups`` syntax (partial colocation, as OpenRLHF and verl configure it)::

    GROUPS := GROUP ("," GROUP)*          e.g.  rollout=16,actor+reference=32,critic+reward=16
    GROUP  := MEMBER ("+" MEMBER)* "=" GPUS ["@" HARDWARE] ["[" LAYOUT "]"]
    LAYOUT := KEY "=" VALUE (";" KEY "=" VALUE)*   KEY: tp pp cp ep zero ckpt mb offload
    MEMBER := ROLE | ROLE ":" KIND | "rollout"

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
from rlmcost.errors import SpecError
from rlmcost.memo import memoized
from rlmcost.placement.device_groups import DeviceGroup, Member

_ROLE_ALIASES = {"ref": Role.REFERENCE, "policy": Role.ACTOR, "value": Role.CRITIC}
_KINDS = (Kind.GENERATE, Kind.FORWARD, Kind.TRAIN)
SYNTAX = (
    "ROLE[:KIND][+ROLE...]=GPUS[@HARDWARE][[LAYOUT]],..., e.g. "
    "rollout=16@h20[tp=4],actor+reference=32[zero=3;ckpt=full],critic+reward=16"
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


_LAYOUT_KEYS = {"tp": "tp", "pp": "pp", "cp": "cp", "ep": "ep", "zero": "zero", "ckpt": "ckpt",
                "mb": "micro_batch", "micro_batch": "micro_batch",
                "offload": "offload"}  # fmt: skip
_OFFLOADS = ("optimizer", "params", "grads", "optimizer-idle", "params-idle", "grads-idle")


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
            elif key == "offload":  # the trainer's offload on this group (TrainLayout.offload)
                words = [w.strip().lower() for w in raw.split(",") if w.strip()]
                if not words or set(words) - set(_OFFLOADS):
                    raise ValueError
                values["offload"] = ",".join(dict.fromkeys(words))
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
    offload), and its accelerator after ``@``: ``rollout=16@h20[tp=4]``.

    >>> [g.spec() for g in parse_groups("rollout=16, actor+ref=32, critic+reward=16")]
    ['rollout=16', 'actor+reference=32', 'critic+reward=16']
    >>> parse_groups("rollout=16[tp=4],actor=8[zero=3]")[0].settings
    (('tp', 4),)
    >>> parse_groups("rollout=16@h20[tp=4],actor=8@h100")[1].spec()
    'actor=8@h100-sxm'
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
        name = "+".join(str(m) for m in members)
        groups.append(DeviceGroup(name, members, gpus, settings=settings, hardware=hw))
    return tuple(groups)
