"""A NeMo RL config's inheritance (``defaults:``), merged as NeMo RL merges it.

NeMo RL's recipes name their base configs: ``defaults: ../../grpo_math_1B.yaml`` (a path, or a
list of paths, relative to the config's own directory, or absolute).
``load_config_with_inheritance`` (``nemo_rl/utils/config.py`` @7ea279abf) loads each parent
with its own ``defaults:`` first (relative to the parent's directory), merges the parents in
order and then the config itself over them with ``OmegaConf.merge`` (mappings merged key by
key, any other value replaced, lists whole), except that a child's top-level mapping marked
``_override_: true`` replaces the base's mapping whole (the marker dropped), and a child value
``???`` (OmegaConf's mandatory-missing) keeps the base's. :func:`load_with_defaults` does the
same on plain data, so a recipe imports from a NeMo RL checkout as NeMo RL reads it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import load_mapping

MAX_INHERITANCE = 8
"""Deepest chain of ``defaults:`` followed (NeMo RL's recipes use two levels; a config that
names itself would never end)."""


def load_with_defaults(path: Path, depth: int = 0) -> tuple[dict[str, Any], list[str]]:
    """The config at ``path`` merged over its ``defaults:`` (module docstring), and the files
    merged into it, the farthest base first."""
    if depth > MAX_INHERITANCE:
        raise SpecError(f"NeMo RL config {path.name}: more than {MAX_INHERITANCE} levels of "
                        "defaults: (does a config inherit from itself?)")  # fmt: skip
    data = load_mapping(path, "NeMo RL config")
    if "defaults" not in data:
        return data, []
    names = data.pop("defaults")
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise SpecError(f"NeMo RL config {path.name}: defaults: must name a config file or a "
                        f"list of them, got {names!r}")  # fmt: skip
    base: dict[str, Any] = {}
    merged: list[str] = []
    for name in names:
        parent = Path(os.path.normpath(name if name.startswith("/") else path.parent / name))
        if not parent.is_file():
            raise SpecError(f"NeMo RL config {path.name} inherits from {name!r} (defaults:), "
                            f"not found at {parent}; import it from the NeMo RL checkout it "
                            "belongs to, or merge it into one file")  # fmt: skip
        parent_data, chain = load_with_defaults(parent, depth + 1)
        base = merge(base, parent_data)
        merged += chain + [str(parent)]
    return merge(base, data), merged


def merge(base: dict[str, Any], over: dict[str, Any], top: bool = True) -> dict[str, Any]:
    """``over`` merged onto ``base`` as NeMo RL's ``merge_with_override`` does (module
    docstring; its ``_override_`` marker is read on the top-level keys only, ``top``); neither
    is changed.

    >>> merge({"a": {"x": 1, "y": 2}, "b": 1}, {"a": {"y": 3}, "b": "???"})
    {'a': {'x': 1, 'y': 3}, 'b': 1}
    >>> merge({"a": {"x": 1, "y": 2}}, {"a": {"_override_": True, "y": 3}})
    {'a': {'y': 3}}
    """
    out = dict(base)
    for key, value in over.items():
        if value == "???":  # mandatory-missing: the base's value stays
            continue
        if top and isinstance(value, dict) and value.get("_override_", False):
            out[key] = {k: v for k, v in value.items() if k != "_override_"}
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value, top=False)
        else:
            out[key] = value
    return out
