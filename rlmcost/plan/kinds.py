"""The planner's choices and GPU-budget syntax (light to import: the CLI builds its options
from this module at start-up)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from rlmcost.errors import SpecError


class Objective(StrEnum):
    """What a plan ranks by (values are the CLI spellings)."""

    TIME = "time"  # fastest predicted iteration (step) time
    GPUS = "gpus"  # fewest GPUs, then fastest
    GPU_HOURS = "gpu-hours"  # fewest GPU-hours per iteration: time x GPUs
    THROUGHPUT = "throughput"  # most trained tokens per second per GPU
    COST = "cost"  # fewest USD per iteration: time x sum of GPUs x USD per GPU-hour


def parse_objective(text: str | Objective) -> Objective:
    """``text`` as an :class:`Objective`; SpecError naming the choices otherwise."""
    try:
        return Objective(str(text).strip().lower())
    except ValueError:
        have = ", ".join(o.value for o in Objective)
        raise SpecError(f"unknown objective {text!r}; use one of: {have}") from None


def parse_gpus(text: str | int | list[int] | tuple[int, ...]) -> tuple[int, ...]:
    """GPU counts of a budget: ``32``; a list ``8,16,24``; a range ``8..64`` (the lower end,
    then doubling while within the range, then the upper end: ``8..64`` is 8, 16, 32, 64;
    ``8..48`` is 8, 16, 32, 48). SpecError for anything else."""
    if isinstance(text, int):
        counts: tuple[int, ...] = (text,)
    elif isinstance(text, list | tuple):
        counts = tuple(int(v) for v in text)
    else:
        s = str(text).replace(" ", "")
        fix = "give a count (32), a list (8,16,32) or a range (8..64)"
        lo_s, dots, hi_s = s.partition("..")
        try:  # an empty word ('8,,16', '8..') is no count
            nums = [int(w) for w in ((lo_s, hi_s) if dots else s.split(","))]
        except ValueError:
            raise SpecError(f"--gpus {text!r} is not a GPU budget; {fix}") from None
        if dots:
            lo, hi = nums
            if lo < 1 or hi < lo:
                raise SpecError(f"--gpus {text}: the range must be 1 <= low <= high; {fix}")
            out = [lo]
            while out[-1] * 2 <= hi:
                out.append(out[-1] * 2)
            if out[-1] != hi:
                out.append(hi)
            counts = tuple(out)
        else:
            counts = tuple(nums)
    if not counts or any(c < 1 for c in counts):
        raise SpecError(f"--gpus {text}: GPU counts must be positive integers, e.g. 8..64")
    from rlmcost.specs.limits import MAX_GPUS, check_count

    check_count(f"--gpus {text}: the largest budget", max(counts), MAX_GPUS,
                "give a smaller range")  # fmt: skip
    return tuple(sorted(set(counts)))


def parse_ints(text: str | None, name: str) -> tuple[int, ...] | None:
    """A comma-separated list of positive integers (``1,2,4``), None when not given."""
    if text is None:
        return None
    try:
        values = tuple(int(v) for v in str(text).replace(" ", "").split(",") if v)
    except ValueError:
        raise SpecError(
            f"--{name} {text!r} must be a list of positive integers, e.g. 1,2,4"
        ) from None
    if not values or any(v < 1 for v in values):
        raise SpecError(f"--{name} {text!r} must be a list of positive integers, e.g. 1,2,4")
    return values


def parse_pool(text: str | None) -> tuple[tuple[str, int], ...]:
    """A pool of accelerators, ``--hardware h20:32,h100:16``: (canonical name, GPUs
    available) per type, in the order given; () for one accelerator named without counts
    (``h100``: the plain hardware). SpecError for a bad entry or an unknown name (listing the
    built-in accelerators)."""
    s = str(text or "").replace(" ", "")
    if ":" not in s and "," not in s:
        return ()
    from rlmcost.specs.registry import hardware_name

    out: dict[str, int] = {}
    for item in s.split(","):
        name, colon, count = item.partition(":")
        try:
            n = int(count) if colon else 0
        except ValueError:
            n = 0
        if n < 1:
            raise SpecError(f"--hardware {text!r}: {item!r} is not NAME:GPUS; write a pool "
                            "as h20:32,h100:16 (GPUs available of each)")  # fmt: skip
        try:
            canonical = hardware_name(name)
        except SpecError as exc:
            raise SpecError(f"--hardware {text!r}: {exc}") from None
        if canonical in out:
            raise SpecError(f"--hardware {text!r}: {canonical} appears twice; give it once")
        out[canonical] = n
    return tuple(out.items())


def positive_int(value: object, flag: str) -> int:
    """``value`` when it is a whole number >= 1 (a count: ``--top``, ``--seq``, ``--batch``),
    else a SpecError naming ``flag``: the library's ``top="3"`` had been a TypeError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(f"--{flag} {value!r:.40} must be a positive integer")
    return value


def require_space(space: object) -> None:
    """SpecError unless ``space`` is an :class:`~rlmcost.plan.rl.RLSpace` (not a mapping or
    text, which had been an AttributeError)."""
    from rlmcost.plan.rl_candidates import RLSpace

    if not isinstance(space, RLSpace):
        raise SpecError(f"space={space!r:.40} must be a rlmcost.plan.rl.RLSpace, e.g. "
                        "RLSpace(tp=(2, 4), placements=('baseline',))")  # fmt: skip
    for name in ("tp", "pp", "cp", "ep", "rollout_tp", "micro_batch"):  # tp="4": a TypeError
        values = getattr(space, name)
        if values is not None and not _tuple_of(values, _whole):
            raise SpecError(f"RLSpace({name}={values!r:.40}): give a tuple of positive "
                            f"integers, e.g. {name}=(1, 2)")  # fmt: skip
    if not isinstance(space.exhaustive, bool):  # "no" had been taken as True
        raise SpecError(f"RLSpace(exhaustive={space.exhaustive!r:.40}) must be True or False")
    for name in ("sp", "offload"):  # ("no",) had been searched as on
        values = getattr(space, name)
        if values is not None and not _tuple_of(values, _flag):
            raise SpecError(f"RLSpace({name}={values!r:.40}): give a tuple of True/False, "
                            f"e.g. {name}=(False, True)")  # fmt: skip
    for f in space.fractions:
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 1:
            raise SpecError(f"RLSpace(fractions={space.fractions!r:.40}): each engine "
                            "reservation is a fraction in (0, 1], e.g. fractions=(0.5, 0.9)")


def require_train_space(space: object) -> dict[str, Any]:
    """``space`` of `plan train` (overrides of :class:`~rlmcost.plan.space.TrainSpace`'s
    fields) when it is a mapping of known fields, whole-number tuples and ``sp`` a tuple of
    True/False; else a SpecError (a text had been a TypeError, ``sp=("no",)`` searched as
    on)."""
    from dataclasses import fields

    from rlmcost.plan.space import TrainSpace

    if space is None:
        return {}
    if not isinstance(space, Mapping):
        raise SpecError(f"space={space!r:.40} must be a mapping of TrainSpace fields, e.g. "
                        "{'tp': (1, 2)}")  # fmt: skip
    known = {f.name for f in fields(TrainSpace)} - {"gpus"}
    unknown = sorted(str(k) for k in set(space) - known)
    if unknown:
        raise SpecError(f"space: unknown field(s) {', '.join(unknown)}; it takes "
                        f"{', '.join(sorted(known))}")  # fmt: skip
    for name, values in space.items():
        ok, kind = {"sp": (_flag, "True/False"), "ckpt": (_any, "values"),
                    "zero": (_any, "values")}.get(name, (_whole, "positive integers"))
        if values is not None and not _tuple_of(values, ok):
            raise SpecError(f"space[{name!r}]={values!r:.40}: give a tuple of {kind}")
    return dict(space)


def _tuple_of(values: object, ok: Callable[[object], bool]) -> bool:
    """Whether ``values`` is a non-empty tuple or list whose every item passes ``ok``."""
    return isinstance(values, (tuple, list)) and bool(values) and all(map(ok, values))


def _flag(v: object) -> bool:
    """True or False (not "no", which is true)."""
    return isinstance(v, bool)


def _any(v: object) -> bool:
    """Any value (the enum's own check names a bad one)."""
    return True


def _whole(v: object) -> bool:
    """A positive whole number (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1
