"""Megatron-core's uneven pipeline split read from a framework's config into the flags of
:mod:`rlmcost.cli._deploy_pipeline` (meaning: :mod:`rlmcost.parallel.pipeline_split`).

Keys: NeMo RL's ``policy.megatron_cfg.num_layers_in_first_pipeline_stage`` /
``..._last_...`` (copied onto the Megatron-Bridge model config, ``nemo_rl/models/megatron/
setup.py`` @7ea279ab); slime's Megatron arguments ``--decoder-first-pipeline-num-layers``,
``--decoder-last-pipeline-num-layers``, ``--account-for-embedding-in-pipeline-split``,
``--account-for-loss-in-pipeline-split`` (Megatron-LM ``megatron/training/arguments.py``).
The layout string (``--pp-layout``; :mod:`rlmcost.parallel.pp_layout`): slime's
``--pipeline-model-parallel-layout``; NeMo RL's ``policy.megatron_cfg.model_overrides.
pipeline_model_parallel_layout`` (merged onto the Megatron-Bridge provider, ``setup.py``
``_merge_model_overrides`` @7ea279ab; no first-class key is copied); verl's
``actor.megatron.override_transformer_config.*`` (every key goes to TransformerConfig,
``verl/models/mcore/config_converter.py:94`` @b178a3cd), as a string or Megatron's list form.
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.parallel.pp_layout import LayoutError, layout_text

FLAGS = {"first": "--pp-first-layers", "last": "--pp-last-layers",
         "embedding": "--pp-embedding-slot", "loss": "--pp-loss-slot",
         "layout": "--pp-layout"}  # fmt: skip
TRANSFORMER_CONFIG = {"first": "num_layers_in_first_pipeline_stage",
                      "last": "num_layers_in_last_pipeline_stage",
                      "embedding": "account_for_embedding_in_pipeline_split",
                      "loss": "account_for_loss_in_pipeline_split",
                      "layout": "pipeline_model_parallel_layout"}  # fmt: skip
"""Megatron-core's ``TransformerConfig`` names of the five options."""


def transformer_config_keys(prefix: str) -> dict[str, str]:
    """The five options' keys under ``prefix`` (a config passed to TransformerConfig)."""
    return {kind: prefix + name for kind, name in TRANSFORMER_CONFIG.items()}


def set_split(r: Reader, q: ImportedQuery, pp: int, keys: dict[str, str]) -> None:
    """Set the split flags from the config's ``keys`` (``first``/``last``: a layer count,
    ``embedding``/``loss``: a switch, ``layout``: a layout string or list; absent kinds
    skipped) when the run has pipeline stages; at ``pp`` 1 the keys change nothing (Megatron
    builds every layer on the one rank)."""
    for kind in ("first", "last"):
        n = r.integer(keys[kind], None) if kind in keys else None
        if n is not None and pp > 1:
            q.set(FLAGS[kind], n)
    for kind in ("embedding", "loss"):
        if kind in keys and r.flag(keys[kind], False) and pp > 1:
            q.set(FLAGS[kind])
    value = r.raw(keys["layout"], None) if "layout" in keys else None
    if value is not None and pp > 1:
        try:
            q.set(FLAGS["layout"], layout_text(value))
        except LayoutError as e:
            raise SpecError(f"{r.where}: '{keys['layout']}': {e}") from None
