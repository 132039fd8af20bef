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
    keys: dict[str, str] = {}  # the override -> the framework's key it comes from
    for key in OVERRIDES:
        value = r.integer(f"{prefix}.{key}", None, hi=MAX_POSITIONS)
        if value is not None:
            given[key], keys[key] = value, f"{prefix}.{key}={value}"
    if "max_position_embeddings" not in given and (yarn := _yarn(r, q, prefix)):
        given["max_position_embeddings"] = yarn
        keys["max_position_embeddings"] = f"{prefix}.rope_scaling (yarn)"
    ref = reference(model, given)
    for key, value in given.items():
        q.convert(keys[key], "--model", ref,
                  f"the checkpoint's config.json with {key} {value:,}, as the framework loads "
                  "it (the model's context for the run)")  # fmt: skip
    return ref


def _yarn(r: Reader, q: ImportedQuery, prefix: str) -> int | None:
    """YaRN's context, ``original_max_position_embeddings x factor`` (transformers'
    ``_compute_yarn_parameters``; NeMo RL's grpo-qwen2.5-1.5B-4n8g-megatron-yarn-256k.yaml
    @7ea279abf: factor ``${div:${policy.max_total_sequence_length}, 131072}`` over 131,072
    original positions, 262,144 in all), where the overrides set a yarn ``rope_scaling``."""
    s = f"{prefix}.rope_scaling"
    kind = r.text(f"{s}.rope_type", None) or r.text(f"{s}.type", None)
    if kind != "yarn":
        return None
    original = r.integer(f"{s}.original_max_position_embeddings", None, hi=MAX_POSITIONS)
    factor = r.number(f"{s}.factor", 0.0)
    if not original or not factor:
        return None
    context = min(int(original * factor), MAX_POSITIONS)
    q.note(f"{s}: YaRN over {original:,} original positions x factor {factor:g}: a context of "
           f"{context:,} tokens")  # fmt: skip
    return context
