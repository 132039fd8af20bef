"""RL post-training frameworks: presets of their defaults and importers of their configs.

:mod:`~rlmcost.frameworks.presets` holds each framework's defaults with their sources
(``--framework``); one importer per framework (:mod:`~rlmcost.frameworks.verl`,
:mod:`~rlmcost.frameworks.openrlhf`, :mod:`~rlmcost.frameworks.trl`,
:mod:`~rlmcost.frameworks.nemo_rl`, :mod:`~rlmcost.frameworks.slime`) turns a framework's
config into the equivalent rlmcost query (:class:`~rlmcost.frameworks.result.ImportedQuery`):
the algorithm command's flags, each batch knob's unit conversion, notes on what rlmcost maps
to the nearest setting, and the keys it ignored. Configs are read as data only
(``yaml.safe_load``, JSON, argument lists): nothing in them runs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.frameworks.presets import PRESETS, Framework, get_preset

__all__ = ["PRESETS", "Framework", "get_preset"]


def __getattr__(name: str) -> Any:
    """``PRESETS``, ``Framework`` and ``get_preset`` from :mod:`~rlmcost.frameworks.presets` on
    first use, so that importing a submodule (the CLI's flags read
    :mod:`~rlmcost.frameworks.preset_model` at start-up) leaves the presets' data unloaded."""
    if name in __all__:
        return getattr(import_module("rlmcost.frameworks.presets"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
