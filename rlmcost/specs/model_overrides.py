"""A model reference with Hugging Face config overrides: ``NAME[key=value,...]``.

Frameworks load a checkpoint and then override fields of its ``config.json`` before building
the model: NeMo RL's ``policy.hf_config_overrides`` (passed to ``AutoConfig.from_pretrained``
and to vLLM's ``hf_overrides``: nemo_rl/models/automodel/setup.py and
nemo_rl/algorithms/grpo.py at NVIDIA-NeMo/RL 7ea279abf), verl's
``actor_rollout_ref.model.override_config``. The DAPO recipes raise Qwen2.5-Math-7B's context
so (examples/configs/recipes/llm/dapo-qwen2.5-7b.v2.yaml @7ea279abf:
``hf_config_overrides.max_position_embeddings: 16384`` over the checkpoint's 4,096). A model
reference written ``Qwen/Qwen2.5-Math-7B[max_position_embeddings=16384]`` is that model with the
override applied, wherever a model is named (``--model``, ``--critic``, a Run file), so an
imported run's command line states it and reproduces it.

The overrides read are those that change what rlmcost reports (:data:`OVERRIDES`); any other
key is an error naming them. A model with learned position embeddings (GPT-2, OPT) has as many
positions as its checkpoint's table: ``max_position_embeddings`` cannot raise it.
"""

from __future__ import annotations

import re

from rlmcost.errors import SpecError

OVERRIDES = {"max_position_embeddings": "max_context"}
"""The config.json keys a reference may override -> the ModelSpec field each sets
(``max_context``: the trained context, :meth:`~rlmcost.specs.ModelSpec.context_note`)."""

MAX_POSITIONS = 1 << 30
"""Largest ``max_position_embeddings`` taken (rlmcost.specs.hf_plausible's bound for it)."""

_REF = re.compile(r"(?P<base>.+?)\[(?P<body>[^\[\]]*)\]")


def split_overrides(query: str) -> tuple[str, dict[str, int]]:
    """``NAME[key=value,...]`` -> (NAME, {ModelSpec field: value}); a reference without
    brackets -> (it, {}). SpecError for a key not in :data:`OVERRIDES` or a bad value."""
    m = _REF.fullmatch(query.strip())
    if m is None:
        if "[" in query or "]" in query:
            raise SpecError(f"model {query!r}: write overrides as NAME[key=value,...], e.g. "
                            "Qwen/Qwen2.5-Math-7B[max_position_embeddings=16384]")  # fmt: skip
        return query, {}
    fields: dict[str, int] = {}
    for item in (i.strip() for i in m.group("body").split(",")):
        key, eq, value = (p.strip() for p in item.partition("="))
        if key not in OVERRIDES:
            raise SpecError(f"model {query!r}: override {key or item!r} is not one rlmcost reads; "
                            f"it reads {', '.join(OVERRIDES)} (config.json keys)")  # fmt: skip
        if not eq or not value.isdigit() or not 1 <= int(value) <= MAX_POSITIONS:
            raise SpecError(f"model {query!r}: {key} must be a whole number of positions, 1 to "
                            f"{MAX_POSITIONS:,}, not {value!r}")  # fmt: skip
        fields[OVERRIDES[key]] = int(value)
    return m.group("base").strip(), fields


def reference(model: str, overrides: dict[str, int]) -> str:
    """The reference naming ``model`` with config.json ``overrides`` (key -> value), e.g.
    ``reference("Qwen/Qwen2.5-Math-7B", {"max_position_embeddings": 16384})``."""
    if not overrides:
        return model
    return f"{model}[{','.join(f'{k}={v}' for k, v in overrides.items())}]"
