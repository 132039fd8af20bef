"""Megatron-core's uneven pipeline split read from a framework's config into the flags of
:mod:`rlmcost.cli._deploy_pipeline` (meaning: :mod:`rlmcost.parallel.pipeline_split`).

Keys: NeMo RL's ``policy.megatron_cfg.num_layers_in_first_pipeline_stage`` /
``..._last_...`` (copied onto the Megatron-Bridge model config, ``nemo_rl/models/megatron/
setup.py`` @7ea279ab); slime's Megatron arguments ``--decoder-first-pipeline-num-layers``,
``--decoder-last-pipeline-num-layers``, ``--account-for-embedding-in-pipeline-split``,
``--account-for-loss-in-pipeline-split`` (Megatron-LM ``megatron/training/arguments.py``).
"""

from __future__ import annotations

from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

FLAGS = {"first": "--pp-first-layers", "last": "--pp-last-layers",
         "embedding": "--pp-embedding-slot", "loss": "--pp-loss-slot"}  # fmt: skip


def set_split(r: Reader, q: ImportedQuery, pp: int, keys: dict[str, str]) -> None:
    """Set the split flags from the config's ``keys`` (``first``/``last``: a layer count,
    ``embedding``/``loss``: a switch; absent kinds skipped) when the run has pipeline stages;
    at ``pp`` 1 the keys change nothing (Megatron builds every layer on the one rank)."""
    for kind in ("first", "last"):
        n = r.integer(keys[kind], None) if kind in keys else None
        if n is not None and pp > 1:
            q.set(FLAGS[kind], n)
    for kind in ("embedding", "loss"):
        if kind in keys and r.flag(keys[kind], False) and pp > 1:
            q.set(FLAGS[kind])
