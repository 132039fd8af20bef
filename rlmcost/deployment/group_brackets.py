"""The settings of one device group in ``--groups`` brackets: layout, engine and trainer keys.

``--groups 'rollout=16@h20[tp=4;gmu=0.85;max-num-seqs=512],actor=32[zero=3;padded]'``: a
bracket holds ``;``-separated items ``KEY=VALUE`` (a boolean key alone means true). Three kinds
of key (the CLI flag's name without its dashes where there is one):

* layout (:data:`LAYOUT_KEYS`): ``tp pp cp ep zero ckpt mb offload``, over the run's layout on
  this group (``DeviceGroup.settings``, ``GroupLayouts.settings``); tp/pp/ep also lay out a
  generating group's engine;
* engine (:data:`ENGINE_KEYS`): the group's own engine fields, ``GroupLayouts.engine``, which
  merge over the run's engine by the fields given (``deployment.group_engine``);
* trainer (:data:`TRAIN_KEYS`): the group's own trainer fields, ``GroupLayouts.train``: its
  batching and pass fields and its MoE capacity, permutation and virtual pipeline
  (``moe-capacity-factor``, ``moe-pad-to-capacity``, ``moe-permute-fusion``,
  ``virtual-stages``, ``schedule``), so that ``Run.to_command`` writes every such field a
  group gives.

Rule (a stated choice): a key in brackets is given, whatever its value (``[eager=false]`` under
a run-wide ``--enforce-eager`` runs the group with CUDA graphs), as a field a deployment file's
``groups[].engine`` / ``groups[].train`` names (``deployment.given``). A group's ``train``, in
a file as from brackets, goes over the run's trainer layout field by field
(``deployment.given.layered``: what it does not give is the run's), and the trainer keys build
it as the run's trainer layout (``Deployment.train``; over a ``--deployment`` file, that
group's own ``train`` where the file gives one) with the bracket's layout and trainer keys over
it: adding ``padded`` to a group changes its padding only, never its ZeRO stage. Booleans:
``KEY`` or ``KEY=true|false`` (also on/off, yes/no, 1/0).

Light to import (pydantic only inside the functions that build the specs).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.deployment.spec import GroupLayouts, TrainLayout

LAYOUT_KEYS = {"tp": "tp", "pp": "pp", "cp": "cp", "ep": "ep", "zero": "zero", "ckpt": "ckpt",
               "mb": "micro_batch", "micro_batch": "micro_batch",
               "offload": "offload"}  # fmt: skip
"""Layout key -> Layout field (``mb`` and ``micro_batch`` both: the micro-batch)."""

OFFLOADS = ("optimizer", "params", "grads", "optimizer-idle", "params-idle", "grads-idle")
"""The values ``offload=`` takes (``TrainLayout.offload``, comma-separated)."""

ENGINE_KEYS = {"engine": "kind", "gmu": "gpu_memory_utilization",
               "max-num-seqs": "max_num_seqs",
               "max-num-batched-tokens": "max_num_batched_tokens",
               "eager": "eager", "prefix-caching": "prefix_caching", "sleep": "sleep",
               "rollout-dtype": "dtype", "context-length": "context_length",
               "schedule-policy": "schedule_policy", "dp-attention": "dp_attention",
               "sequences-per-call": "sequences_per_call",
               "vllm-version": "vllm_version", "kv-cache-dtype": "kv_cache_dtype",
               "rollout-weights": "weight_format"}  # fmt: skip
"""Engine key -> EngineSpec field (``--engine``, ``--gpu-memory-utilization``, ...)."""

TRAIN_KEYS = {"max-tokens-per-gpu": "max_tokens_per_gpu", "packing": "packing",
              "padded": "padded", "prefix-grouper": "prefix_grouper",
              "activation-offload": "activation_offload",
              "fused-loss": "fused_loss", "router-dtype": "router_dtype",
              "ep-dispatcher": "ep_dispatcher", "kernels": "kernels",
              "moe-permute-fusion": "moe_permute_fusion",
              "moe-capacity-factor": "moe_capacity_factor",
              "moe-pad-to-capacity": "moe_pad_to_capacity",
              "virtual-stages": "virtual_stages", "schedule": "schedule"}  # fmt: skip
"""Trainer key -> TrainLayout field: the fields a group's own trainer layout gives over the
run's for its jobs (``deployment.given.PASS_FIELDS``; ``--trainer-kernels`` is ``kernels``),
and the MoE capacity and virtual pipeline of its layout (``Layout.moe_capacity_factor``,
``moe_pad_to_capacity``, ``virtual_stages``, ``schedule``: ``layered(...).layout()``, as a
file's ``groups[].train`` gives them). ``virtual-stages=V`` sets the schedule as
``--virtual-stages`` does (interleaved for V > 1, else 1F1B) unless the bracket gives
``schedule``; ``moe-capacity-factor=none`` is dropless."""

ALIASES = {"kind": "engine", "gpu-memory-utilization": "gmu", "enforce-eager": "eager",
           "trainer-kernels": "kernels"}  # fmt: skip
"""Other spellings of a key: the CLI flag's full name, the field's name."""

_BOOLEAN = ("eager", "prefix_caching", "sleep", "packing", "padded", "prefix_grouper",
            "activation_offload",
            "fused_loss",
            "moe_permute_fusion", "moe_pad_to_capacity")  # fmt: skip
_WHOLE = ("max_num_seqs", "max_num_batched_tokens", "context_length", "sequences_per_call",
          "dp_attention",
          "max_tokens_per_gpu", "virtual_stages")  # fmt: skip
_NONE = ("none", "dropless")
"""The words of ``moe-capacity-factor`` for no factor (dropless, the field's None)."""
_TRUE, _FALSE = ("true", "on", "yes", "1"), ("false", "off", "no", "0")
_SHORT = {v: k for k, v in {**ENGINE_KEYS, **TRAIN_KEYS}.items()}  # field -> its key
_FROM_RUN = ("offload",)
"""With ``deployment.given.PASS_FIELDS``: fields a trainer layout built from brackets leaves
ungiven unless the bracket (or the file's group) gives them, so the group's jobs take the
run's (``placement.group_train``: its forwards the forward layout's token budget,
``group_own``: the run's offload)."""


def valid_keys() -> str:
    """Every bracket key, as an error lists them."""
    layout = sorted(set(LAYOUT_KEYS) - {"micro_batch"})
    return (f"layout {', '.join(layout)}; engine {', '.join(ENGINE_KEYS)}; trainer "
            f"{', '.join(TRAIN_KEYS)}")  # fmt: skip


def _key(word: str) -> str:
    word = word.strip().lower()
    if word != "micro_batch":
        word = word.replace("_", "-")
    return ALIASES.get(word, word)


def _value(field: str, raw: str | None) -> object:
    """``raw`` (None: the key alone) as the value of ``field``; ValueError when it is not one."""
    if field in _BOOLEAN:
        word = "true" if raw is None else raw.strip().lower()
        if word not in (*_TRUE, *_FALSE):
            raise ValueError
        return word in _TRUE
    if raw is None or not raw.strip():
        raise ValueError
    raw = raw.strip()
    if field in _WHOLE:
        number = int(raw)
        if number < 1:
            raise ValueError
        return number
    if field == "gpu_memory_utilization":
        return float(raw)
    if field == "moe_capacity_factor":
        if raw.lower() in _NONE:
            return None
        factor = float(raw)
        if not (factor > 0 and math.isfinite(factor)):  # parallel.moe_capacity.check_capacity
            raise ValueError
        return factor
    return raw.lower()


def _layout_value(key: str, raw: str) -> object:
    from rlmcost.parallel.layout import Checkpointing, ZeroStage

    if key == "zero":
        return ZeroStage(raw)
    if key == "ckpt":
        return Checkpointing(raw)
    if key == "offload":  # the trainer's offload on this group (TrainLayout.offload)
        words = [w.strip().lower() for w in raw.split(",") if w.strip()]
        if not words or set(words) - set(OFFLOADS):
            raise ValueError
        return ",".join(dict.fromkeys(words))
    number = int(raw)
    if number < 1:
        raise ValueError
    return number


class Brackets:
    """One group's bracket, parsed: ``layout`` (Layout field, value) pairs in the order given,
    ``engine`` and ``train`` (field -> value) of the keys given."""

    def __init__(self, spec: str, text: str) -> None:
        self.layout: dict[str, object] = {}
        self.engine: dict[str, object] = {}
        self.train: dict[str, object] = {}
        for item in spec.split(";"):
            if item.strip():
                self._item(item.strip(), text)

    def _item(self, item: str, text: str) -> None:
        word, eq, raw = item.partition("=")
        key = _key(word)
        if key in LAYOUT_KEYS and raw.strip():
            try:
                self.layout[LAYOUT_KEYS[key]] = _layout_value(key, raw.strip())
            except ValueError:
                raise SpecError(
                    f"--groups {text!r}: {item!r} has a bad value (zero: 0-3, ckpt: none, "
                    f"selective or full, offload: {', '.join(OFFLOADS)}, degrees: positive "
                    "whole numbers)"
                ) from None
            return
        table = self.engine if key in ENGINE_KEYS else self.train if key in TRAIN_KEYS else None
        if table is None or (eq and not raw.strip()):
            raise SpecError(f"--groups {text!r}: {item!r} is not a group setting; use KEY=VALUE "
                            f"(a boolean KEY alone means true) with KEY one of {valid_keys()} "
                            "(e.g. rollout=16[tp=4;gmu=0.85;eager])")  # fmt: skip
        field = {**ENGINE_KEYS, **TRAIN_KEYS}[key]
        try:
            table[field] = _value(field, raw if eq else None)
        except ValueError:
            kind = ("true or false" if field in _BOOLEAN else "a positive whole number"
                    if field in _WHOLE else "a fraction in (0, 1]"
                    if field == "gpu_memory_utilization" else "a number > 0 or none "
                    "(dropless)" if field == "moe_capacity_factor" else "a name")  # fmt: skip
            raise SpecError(f"--groups {text!r}: {item!r} has a bad value; {key} takes "
                            f"{kind}") from None
        if field == "weight_format":  # FORMAT[:PARTS], as --rollout-weights
            fmt, _, parts = str(table[field]).partition(":")
            table[field] = fmt
            if parts:
                table["weight_parts"] = parts
        if field == "virtual_stages":  # as --virtual-stages (cli._deploy_pipeline.apply_split)
            v = table[field]  # a schedule given in the bracket stays (TRAIN_KEYS)
            table.setdefault("schedule", "interleaved" if isinstance(v, int) and v > 1 else
                             "1f1b")  # fmt: skip


def check_members(brackets: Brackets, generates: bool, trains: bool, group: str,
                  text: str) -> None:  # fmt: skip
    """SpecError for engine keys on a group none of whose members can generate, trainer keys
    on one that only generates (the fields would be read by nothing there)."""
    if brackets.engine and not generates:
        key = _SHORT[next(iter(brackets.engine))]
        raise SpecError(f"--groups {text!r}: {group}[{key}] does not apply: the group runs no "
                        "generation; put engine keys on the group that generates (rollout)")
    if brackets.train and not trains:
        key = _SHORT[next(iter(brackets.train))]
        raise SpecError(f"--groups {text!r}: {group}[{key}] does not apply: the group only "
                        "generates; put trainer keys on a group that trains or runs forwards")


def own_fields(brackets: Brackets, run_train: TrainLayout | None, before: GroupLayouts | None,
               group: str, text: str) -> dict[str, Any]:  # fmt: skip
    """The ``engine``, ``train`` and ``forward`` of a GroupLayouts whose bracket is
    ``brackets``: over ``before`` (the same group in a ``--deployment`` file, whose own
    settings the bracket's keys refine field by field), the engine of the keys given, the
    trainer layout ``run_train`` (None: TrainLayout's defaults) with the bracket's layout and
    trainer keys over it where it gives trainer keys (module docstring). SpecError naming the
    group and its bracket for a value the specs refuse."""
    from rlmcost.deployment.given import PASS_FIELDS
    from rlmcost.deployment.spec import EngineSpec, TrainLayout

    where = f"--groups {text!r}: group {group}'s"
    out: dict[str, Any] = {k: getattr(before, k) for k in ("engine", "train", "forward")} \
        if before is not None else {}  # fmt: skip
    if brackets.engine:
        own = out.get("engine")
        given = {k: getattr(own, k) for k in own.model_fields_set} if own is not None else {}
        out["engine"] = _built(EngineSpec, {**given, **brackets.engine}, where, "engine")
    if brackets.train:
        own = out.get("train")
        layout = dict(brackets.layout)
        if "offload" in layout:
            layout["offload"] = str(layout["offload"]).split(",")
        if own is not None:  # the file's group gives these; the others stay the run's (layered)
            data = {k: v for k, v in own.model_dump(mode="json").items()
                    if k in own.model_fields_set}  # fmt: skip
        else:
            data = {k: v for k, v in (run_train or TrainLayout()).model_dump(mode="json").items()
                    if k not in (*PASS_FIELDS, *_FROM_RUN)}  # fmt: skip
        out["train"] = _built(TrainLayout, {**data, **layout, **brackets.train}, where,
                              "trainer layout")  # fmt: skip
    return out


def _built(cls: Any, data: dict[str, Any], where: str, what: str) -> Any:
    """``cls(**data)``, or a SpecError naming the group and the bracket key of the bad field."""
    from rlmcost.specs.validation import build

    try:
        return build(cls, data, what, _SHORT)
    except SpecError as exc:
        raise SpecError(f"{where} {exc}") from None


def _word(field: str, value: object) -> str:
    key = _SHORT[field]
    if isinstance(value, bool):
        return key if value else f"{key}=false"
    return f"{key}={value!r}" if isinstance(value, float) else f"{key}={value}"


def bracket_text(group: GroupLayouts, run_train: TrainLayout,
                 run_forward: TrainLayout | None = None) -> str:  # fmt: skip
    """``group``'s settings, engine and trainer fields in bracket syntax (no brackets; "" for
    none), such that :func:`own_fields` over ``run_train`` gives them back; SpecError naming
    what no bracket key says (a group's forward layout, an engine field without a key, a
    trainer layout other than the run's with the group's keys over it). With ``run_forward``
    (the run's forward layout) a trainer layout given back with other fields set is taken
    where the group runs alike: its trainer and its forwards over the run's
    (``deployment.given.layered``; a file's ``train: {padded: true}`` is ``[padded]``)."""
    fix = "; write the run to a file and use `rlmcost run FILE`"
    if group.forward is not None:
        raise SpecError(f"group {group.members} has a forward layout of its own: no --groups "
                        f"key gives it{fix}")  # fmt: skip
    words = [group.settings] if group.settings else []
    if group.engine is not None:
        other = sorted(group.engine.model_fields_set - set(_SHORT))
        if other:
            raise SpecError(f"group {group.members}'s engine gives {', '.join(other)}: no "
                            f"--groups key says it{fix}")  # fmt: skip
        words += [_word(f, getattr(group.engine, f)) for f in ENGINE_KEYS.values()
                  if f in group.engine.model_fields_set]  # fmt: skip
    if group.train is not None:
        words += _train_words(group.train, run_train)
    text = ";".join(words)
    back = own_fields(Brackets(text, text), run_train, None, group.members, text)
    for part in ("engine", "train"):
        mine, again = getattr(group, part), back.get(part)
        if part == "train" and _runs_alike(mine, again, run_train, run_forward):
            continue
        if mine != again or (mine is not None and mine.model_fields_set !=
                             again.model_fields_set):  # fmt: skip
            what = "engine" if part == "engine" else "trainer layout (the run's with the " \
                "group's keys over it: module rlmcost.deployment.group_brackets)"
            raise SpecError(f"group {group.members}'s {part} is not what --groups keys give: "
                            f"no key says its {what}{fix}")  # fmt: skip
    return text


def _train_words(train: TrainLayout, run_train: TrainLayout) -> list[str]:
    """The trainer keys of a group's trainer layout ``train``: each :data:`TRAIN_KEYS` field it
    gives, but a field :func:`own_fields` takes from the run's trainer layout (not a
    ``PASS_FIELDS`` one) at the run's value, and a schedule the words imply (a
    ``virtual-stages`` word's, else the run's): both come back alike without the word. At
    least one word where it gives any (without one the group would have no trainer layout of
    its own), and the schedule wherever the words would imply another (``virtual-stages=2``
    sets ``interleaved`` unless ``schedule`` is given)."""
    from rlmcost.deployment.given import PASS_FIELDS

    given = train.model_fields_set
    out: list[str] = []
    same: list[str] = []
    for f in TRAIN_KEYS.values():
        if f not in given or f == "schedule":
            continue
        value = getattr(train, f)
        at_run = f not in PASS_FIELDS and value == getattr(run_train, f)
        (same if at_run else out).append(_word(f, value))
    if not out and same:  # one word at the run's value: the group keeps a layout of its own
        out.append(next((w for w in same if not w.startswith("virtual-stages=")), same[0]))
    if "schedule" in given:
        v = next((w for w in out if w.startswith("virtual-stages=")), None)
        implied = run_train.schedule if v is None else \
            ("interleaved" if train.virtual_stages > 1 else "1f1b")  # fmt: skip
        if train.schedule != implied or not out:
            out.append(_word("schedule", train.schedule))
    return out


def _runs_alike(mine: TrainLayout | None, again: TrainLayout | None, run_train: TrainLayout,
                run_forward: TrainLayout | None) -> bool:  # fmt: skip
    """Whether a group's trainer layouts ``mine`` and ``again`` (both given) train and run its
    forwards alike over the run's (``deployment.given``: ``layered``, ``forwards_given``; the
    forwards' pass fields are the layered ones') and give the same offload (read as given,
    ``GroupTasks._check_group_options``); False without ``run_forward``."""
    from rlmcost.deployment.given import forwards_given, layered

    if run_forward is None or mine is None or again is None or mine.offload != again.offload:
        return False
    return layered(mine, run_train) == layered(again, run_train) and layered(
        forwards_given(mine), run_forward) == layered(forwards_given(again), run_forward)
