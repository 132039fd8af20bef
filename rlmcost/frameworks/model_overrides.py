"""A framework's overrides of the checkpoint's config.json, carried on the imported ``--model``.

NeMo RL's ``policy.hf_config_overrides`` (``AutoConfig.from_pretrained(..., **overrides)`` in
nemo_rl/models/automodel/setup.py, vLLM's ``hf_overrides`` in nemo_rl/algorithms/grpo.py, at
NVIDIA-NeMo/RL 7ea279abf) and verl's ``actor_rollout_ref.model.override_config`` change the
model the run trains. rlmcost reads the keys of
:data:`rlmcost.specs.model_overrides.OVERRIDES` (``max_position_embeddings``: the context the
run trains at) and writes them into the model reference, ``NAME[max_position_embeddings=N]``,
so the command the import prints carries them.
"""

from __future__ import annotations

from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.specs.model_overrides import MAX_POSITIONS, OVERRIDES, reference


def overridden_model(r: Reader, q: ImportedQuery, model: str, prefix: str) -> str:
    """``model`` with the config.json overrides under ``prefix`` (e.g.
    ``policy.hf_config_overrides``) that rlmcost reads, each recorded as a conversion."""
    given: dict[str, int] = {}
    for key in OVERRIDES:
        value = r.integer(f"{prefix}.{key}", None, hi=MAX_POSITIONS)
        if value is not None:
            given[key] = value
    ref = reference(model, given)
    for key, value in given.items():
        q.convert(f"{prefix}.{key}={value}", "--model", ref,
                  f"the checkpoint's config.json with {key} {value:,}, as the framework loads "
                  "it (the model's context for the run)")  # fmt: skip
    return ref
