"""RL post-training frameworks: presets of their defaults and importers of their configs.

:mod:`~rlmcost.frameworks.presets` holds each framework's defaults with their sources
(``--framework``); one importer per framework (:mod:`~rlmcost.frameworks.verl`,
:mod:`~rlmcost.frameworks.openrlhf`, :mod:`~rlmcost.frameworks.trl`,
:mod:`~rlmcost.frameworks.nemo_rl`) turns a framework's config into the equivalent rlmcost
query (:class:`~rlmcost.frameworks.result.ImportedQuery`): the algorithm command's flags, each
batch knob's unit conversion, notes on what rlmcost maps to the nearest setting, and the
keys it ignored. Configs are read as data only (``yaml.safe_load``, JSON, argument lists):
nothing in them runs.
"""

from __future__ import annotations

from rlmcost.frameworks.presets import PRESETS, Framework, get_preset

__all__ = ["PRESETS", "Framework", "get_preset"]
