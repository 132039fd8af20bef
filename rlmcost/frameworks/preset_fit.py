"""A framework example's layout fitted to the actor it is given (:func:`fit_tier`).

A size tier (:class:`~rlmcost.frameworks.preset_model.Sized`) is the layout of an example
for another model: its trainer TP, EP, CP, PP and its engine's TP may not divide this actor's
heads, KV heads, experts or linear-attention heads (slime's Qwen3-32B example's TP 8 over
phi-4's 40 heads and 10 KV heads; the Qwen3-235B examples' EP 16 over Mixtral-8x22B's 8
experts). What a user of that framework does then is take the largest degree that holds and
divides the example's, so that its groups keep the example's alignment to 8-GPU nodes (phi-4:
TP 2, as 4 does not divide its 10 KV heads and 5 would split a TP group across nodes;
Mixtral: EP 8): each such degree here, checked as
the evaluation checks a layout (:func:`rlmcost.parallel.validate.check_layout`, the
trainer's with Megatron-core's QKV sub-sharding, the engine's with vLLM's replicated KV
heads, and each rank's TP shard, :func:`rlmcost.parallel.shard.tp_shard`). The tier keeps
every other value; ``Sized.fitted`` says what changed and why, which the deployment line
prints. A degree the user gives is the user's, never fitted (its error stands).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from math import gcd
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.preset_model import Default, Sized

_FIT = ("train.tp", "train.ep", "train.cp", "train.pp", "engine.tp")
"""The degrees fitted, in this order (the engine's TP after the trainer's)."""

_NAMES = {"train.tp": "TP", "train.ep": "EP", "train.cp": "CP", "train.pp": "PP",
          "engine.tp": "rollout TP"}  # fmt: skip


@lru_cache(maxsize=256)
def fit_tier(tier: Sized, spec: Any) -> Sized:
    """``tier`` with each of its degrees (:data:`_FIT`) that does not hold for the actor
    ``spec`` (a ModelSpec) lowered to the largest of its divisors that does (module
    docstring); ``tier`` itself where all hold or the actor's shape does not resolve."""
    try:
        arch = spec.arch()
    except (SpecError, ValueError, AttributeError):
        return tier
    values = {d.field: d.value for d in tier.defaults}
    att = int(values.get("engine.dp_attention") or 1)
    changed: dict[str, int] = {}
    said: list[str] = []
    for field in _FIT:
        have = values.get(field)
        if not isinstance(have, int) or have <= 1:
            continue
        why = _problem(arch, field, have, att)
        if why is None:
            continue
        best = next(d for d in range(have, 0, -1)
                    if have % d == 0 and _problem(arch, field, d, att) is None)
        changed[field] = best
        said.append(f"{_NAMES[field]} {have} -> {best} ({why})")
    if not changed:
        return tier
    tp = changed.get("engine.tp")
    if tp is not None and att > 1 and tp % att:  # SGLang's DP attention divides the engine
        changed["engine.dp_attention"] = gcd(att, tp)
        said.append(f"DP attention {att} -> {gcd(att, tp)} (it divides the rollout TP)")
    defaults = tuple(_with(d, changed[d.field]) if d.field in changed else d
                     for d in tier.defaults)  # fmt: skip
    return replace(tier, defaults=defaults, fitted=tuple(said))


def _with(d: Default, value: int) -> Default:
    """``d`` at ``value``, its flag and source saying so."""
    flag = d.flag.rsplit(" ", 1)[0] + f" {value}" if " " in d.flag else d.flag
    return replace(d, value=value, flag=flag,
                   source=f"{d.source}; {d.value} lowered to {value}, the largest divisor of it "
                   "that this actor takes (rlmcost.frameworks.preset_fit)")  # fmt: skip


def _problem(arch: Any, field: str, degree: int, att: int) -> str | None:
    """Why ``degree`` of ``field`` does not hold for ``arch`` (None: it holds)."""
    from rlmcost.parallel.layout import Layout
    from rlmcost.parallel.shard import tp_shard
    from rlmcost.parallel.validate import check_layout

    try:
        if field == "engine.tp":  # SGLang's DP attention: the heads split over tp / P_a
            a = gcd(att, degree)
            check_layout(arch, Layout(tp=degree, attention_dp=a), degree, replicate_kv=True)
            tp_shard(arch, degree // a)
        elif field == "train.tp":
            check_layout(arch, Layout(tp=degree), degree)
            tp_shard(arch, degree)
        elif field == "train.ep":
            check_layout(arch, Layout(ep=degree, dp=degree), degree)
        elif field == "train.pp":
            check_layout(arch, Layout(pp=degree), degree)
    except SpecError as exc:
        return str(exc).split("; try ")[0].split("; choose ")[0]
    return None
