"""A model given as a local checkpoint folder that is not on this machine: its folder name as
a built-in model or Hugging Face id, as :mod:`rlmcost.frameworks.slime` reads
``--hf-checkpoint``. Launch scripts name their checkpoints by path (verl examples/grpo_trainer/
run_qwen3-235b_megatron_96gb.sh @b178a3cd: ``actor_rollout_ref.model.path=$HOME/verl/models/
Qwen3-235B-A22B``); where the folder name is no model rlmcost knows, the path is kept and the
algorithm command's error names it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.result import ImportedQuery


def _local(path: str) -> bool:
    """A filesystem path rather than a Hugging Face id (``org/name``) or a built-in name."""
    return path.startswith(("/", "~", ".", "$")) or path.count("/") > 1


def model_of_path(q: ImportedQuery, key: str, path: str) -> str:
    """``path`` (config key ``key``), or the built-in model its last part names where ``path``
    is a local folder absent here (stated in a note)."""
    from rlmcost.specs.registry import get_model

    if not _local(path) or Path(path).expanduser().exists():
        return path
    name = Path(path.rstrip("/")).name
    try:
        spec = get_model(name)
    except SpecError:
        return path
    q.note(f"{key}={path}: not on this machine; its folder name {name} is the built-in model "
           f"{spec.name} (give the checkpoint's config.json for another shape)")
    return spec.name
