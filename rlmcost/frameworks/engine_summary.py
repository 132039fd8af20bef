"""What NeMo RL's default deployment is under ``--engine megatron`` (its Megatron-core policy
generating in Megatron-core's dynamic engine), in words for the deployment line: light, on the
numeric query's path (no importer machinery)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.frameworks.preset_model import Preset

ENGINE_SUMMARY = (
    "NeMo RL: its Megatron-core policy (megatron_cfg.enabled, the distributed optimizer: "
    "grpo_math_1B_megatron.yaml) generating in Megatron-core's dynamic engine on the same GPUs "
    "(generation.backend megatron: the policy's own weights, its KV pool of buffer_size_gb), "
    "the reference kept in host memory (megatron_policy_worker.py reference_state_dict)"
)
"""What NeMo RL's default deployment is under ``--engine megatron``, in place of the preset's
summary (its DTensor policy and vLLM; :func:`engine_summary`)."""


def engine_summary(preset: Preset, engine: str) -> str:
    """The summary of NeMo RL's ``preset`` (already sized for the actor,
    :meth:`~rlmcost.frameworks.preset_model.Preset.for_params`) for the run's ``engine``: the
    preset's own unless ``megatron``, else :data:`ENGINE_SUMMARY` and, where a larger-model
    example's defaults apply, those of them the Megatron engine keeps (an example's vLLM TP,
    ``Default.engines``, does not apply), with the files they come from."""
    if engine != "megatron":
        return preset.summary
    from rlmcost.frameworks.presets import get_preset

    own = {(d.field, d.value) for d in get_preset(preset.framework.value).defaults}
    sized = [d for d in preset.defaults
             if (d.field, d.value) not in own and (not d.engines or engine in d.engines)]
    if not sized:
        return ENGINE_SUMMARY
    flags = " ".join(dict.fromkeys(d.flag for d in sized))
    files = "; ".join(dict.fromkeys(_example_file(d.source) for d in sized))
    return f"{ENGINE_SUMMARY} ({flags}: {files})"  # fmt: skip


def _example_file(source: str) -> str:
    """The example a Default's ``source`` quotes: its text to the ``.yaml`` and the
    parenthesis after it (the versions), else the text before the first colon."""
    import re

    m = re.match(r"(.*?\.yaml(?: \([^)]*\))?)", source)
    return m.group(1) if m else source.split(":")[0]
