"""The accelerator a verl launch script says it was run on, for `rlmcost import verl` without
``--hardware``.

verl's examples state their hardware in two ways, and the importer reads both:

* the file name, by verl's convention for its tuning scripts,
  ``[model]_[task]_[gpunums]_[device]_[train]_[infer].sh`` (verl
  ``docs/perf/device_tuning.rst`` @b178a3cd5, whose tables list each script with its
  "Resource", e.g. ``qwen2_32B_grpo_8_h20_megatron_vllm.sh``: 8*H20): a ``_``- or
  ``-``-separated field that is an accelerator's name;
* a comment that says the script ran or runs on an accelerator
  (``examples/ppo_trainer/run_deepseek_math_gsm8k_megatron.sh``: "# Example runnable on H20 *
  8"; ``examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh``: "# tested in NNODES=1~4 *
  96G H20 GPU").

Only a name that denotes one built-in accelerator counts (``a100`` names two memory sizes and
is left to ``--hardware``); a script that names two different ones is read as naming none.
The file name wins over a comment. A memory size alone (``_96gb``) names no accelerator.
"""

from __future__ import annotations

import re
from pathlib import Path

NAMES = {
    "h20": "h20", "h800": "h800", "h100": "h100-sxm", "h200": "h200", "b200": "b200",
    "gb200": "gb200", "a800": "a800-80gb", "l40s": "l40s", "mi300x": "mi300x",
    "mi325x": "mi325x",
}  # fmt: skip
"""A script's word for an accelerator -> rlmcost's built-in name (`rlmcost hardware`)."""

_FIELD = re.compile(r"[_\-.]")
_RAN = re.compile(r"\b(?:runnable|tested|tuned|runs?|ran)\b", re.IGNORECASE)
_WORD = re.compile(r"\b(" + "|".join(NAMES) + r")\b", re.IGNORECASE)
MAX_READ = 1 << 20
"""Bytes of a script read for its comments (launch scripts are a few KiB)."""


def script_device(script: Path) -> tuple[str, str] | None:
    """``(hardware, why)``: the built-in accelerator ``script`` names (module doc) and where
    it says so, or None."""
    named = {NAMES[f] for f in _FIELD.split(script.stem.lower()) if f in NAMES}
    if len(named) == 1:
        (hw,) = named
        return hw, (f"file name {script.name} (verl's [model]_[task]_[gpunums]_[device]_"
                    "[train]_[infer].sh, docs/perf/device_tuning.rst)")  # fmt: skip
    if named:
        return None
    try:
        text = script.read_text(errors="replace")[:MAX_READ]
    except OSError:
        return None
    said: dict[str, tuple[int, str]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        comment = line.strip()
        if not comment.startswith("#") or not _RAN.search(comment):
            continue
        for word in _WORD.findall(comment):
            said.setdefault(NAMES[word.lower()], (n, comment.lstrip("# ").strip()))
    if len(said) != 1:
        return None
    ((hw, (n, comment)),) = said.items()
    return hw, f"comment on line {n} of {script.name}: {comment!r}"
