"""A model given as a local checkpoint folder that is not on this machine: its folder name as
a built-in model or Hugging Face id, as :mod:`rlmcost.frameworks.slime` reads
``--hf-checkpoint``. Launch scripts name their checkpoints by path (verl examples/grpo_trainer/
run_qwen3-235b_megatron_96gb.sh @b178a3cd: ``actor_rollout_ref.model.path=$HOME/verl/models/
Qwen3-235B-A22B``); where the folder name is no model rlmcost knows, the path is kept and the
algorithm command's error names it.

The folder name matches exactly (case, '-' and '_' aside, as every model name) or, failing
that, once a trailing storage-precision word is taken off (:data:`DTYPE_SUFFIX`: verl
examples/grpo_trainer/run_gptoss_20b.sh @b178a3cd saves openai/gpt-oss-20b dequantized as
``$HOME/models/gpt-oss-20b-bf16``). That word says how the weights are stored, never the
shape, and rlmcost prices the dtype that ``--dtype`` states whatever the checkpoint's, so the
rule cannot change a cost; a quantization word (FP8, INT4, AWQ, ...) is no such word: the
engine would serve quantized weights, so those names stay unknown here (slime's importer reads
them as the rollout's dtype, rlmcost.frameworks.ckpt_quant). Nothing else is stripped or
guessed: a name that matches no model is kept and the error names it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.result import ImportedQuery


DTYPE_SUFFIX = re.compile(r"[-_](bf16|fp16|fp32)$", re.IGNORECASE)
"""A checkpoint folder's storage-precision suffix (``gpt-oss-20b-bf16``, ``DeepSeek-V3-BF16``):
the weights' dtype on disk, not the model's shape (module docstring)."""


def _local(path: str) -> bool:
    """A filesystem path rather than a Hugging Face id (``org/name``) or a built-in name."""
    return path.startswith(("/", "~", ".", "$")) or path.count("/") > 1


def model_of_path(q: ImportedQuery, key: str, path: str) -> str:
    """``path`` (config key ``key``), or the built-in model its last part names where ``path``
    is a local folder absent here (stated in a note)."""
    from rlmcost.specs.registry import get_model, models

    if not _local(path) or Path(path).expanduser().exists():
        return path
    name = Path(path.rstrip("/")).name
    for text, how in ((name, ""), (DTYPE_SUFFIX.sub("", name), " less its precision suffix")):
        if text == name and how:
            break
        try:
            spec = get_model(text)
        except SpecError:
            continue
        builtin = spec.name in {m.name for m in models()}
        what = f"the built-in model {spec.name}" if builtin else f"{spec.hf_ids[0]} ({spec.source})"
        q.note(f"{key}={path}: not on this machine; its folder name {name}{how} is {what} "
               "(give the checkpoint's config.json for another shape)")
        return spec.name if builtin else spec.hf_ids[0]
    return path
