"""Built-in models and hardware, and name resolution (aliases, unambiguous partial names)."""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

from rlmcost.errors import SpecError
from rlmcost.specs.hardware import HardwareSpec
from rlmcost.specs.model import ModelSpec
from rlmcost.specs.validation import build

S = TypeVar("S", ModelSpec, HardwareSpec)


def _data(name: str) -> dict:
    return json.loads(resources.files("rlmcost.specs").joinpath("data", name).read_text())


@cache
def models() -> tuple[ModelSpec, ...]:
    """Every built-in model, in the order of ``data/models.json``."""
    return tuple(
        build(ModelSpec, m, f"models.json:{m['name']}") for m in _data("models.json")["models"]
    )


@cache
def hardware() -> tuple[HardwareSpec, ...]:
    """Every built-in accelerator, in the order of ``data/hardware.json``."""
    return tuple(
        build(HardwareSpec, h, f"hardware.json:{h['name']}")
        for h in _data("hardware.json")["hardware"]
    )


def _norm(s: str) -> str:
    return "".join(ch for ch in s.lower() if ch.isalnum())


def _resolve(query: str, specs: tuple[S, ...], kind: str, listing: str) -> S:
    q = _norm(query)
    if not q:
        raise SpecError(f"empty {kind} name; see `rlmcost {listing}`")
    for spec in specs:
        if q == _norm(spec.name) or q in (_norm(a) for a in spec.aliases):
            return spec
    hits = [s for s in specs if q in _norm(s.name) or any(q in _norm(a) for a in s.aliases)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        names = ", ".join(h.name for h in hits)
        raise SpecError(f"{kind} '{query}' is ambiguous: {names}; give one of them")
    close = difflib.get_close_matches(query.lower(), [s.name for s in specs], n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise SpecError(f"unknown {kind} '{query}'; {hint}see `rlmcost {listing}`")


def get_model(query: str | ModelSpec) -> ModelSpec:
    """A built-in model by name, alias or unambiguous part of a name, or a config.json path.

    Size aliases: 7b -> llama-2-7b, 13b -> llama-2-13b, 8b / 70b / 405b -> llama-3.1-*,
    175b -> gpt-3-175b (the newest Llama of each size, else the paper's GPT-3).
    """
    if isinstance(query, ModelSpec):
        return query
    if query.endswith(".json") or "/" in query or Path(query).is_file():
        from rlmcost.specs.hf_config import load_config

        return load_config(query)
    return _resolve(query, models(), "model", "models")


def get_hardware(query: str | HardwareSpec) -> HardwareSpec:
    """A built-in accelerator by name, alias or unambiguous part of a name."""
    if isinstance(query, HardwareSpec):
        return query
    return _resolve(query, hardware(), "hardware", "hardware")
