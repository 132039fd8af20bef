"""A rollout checkpoint stored quantized, read from slime's / miles' ``--hf-checkpoint``.

slime serves rollouts from the checkpoint ``--hf-checkpoint`` names while Megatron trains the
BF16 weights of ``--ref-load``/``--load``; a blockwise FP8 checkpoint (``tools/
convert_hf_to_fp8.py``) makes SGLang run FP8 weights and GEMMs, and each weight update
quantizes the trained BF16 weights with that checkpoint's ``quantization_config`` before
sending them (THUDM/slime docs/en/advanced/low-precision.md @624b824a8, "BF16 Training with
FP8 Rollout"; miles the same). rlmcost prices that as ``--rollout-dtype fp8`` (engine weights
at 1 B/param, GEMMs at the FP8 peak); the refit's bytes keep the trained dtype (an upper bound
of slime's FP8 send), stated in a note. An INT4 checkpoint (``tools/convert_hf_to_int4_direct.py``,
the same page's "INT4 QAT Training") has no rollout dtype in rlmcost: its engine is priced at
the trained dtype, said in a note.

Which quantization: the checkpoint's ``config.json`` ``quantization_config.quant_method`` where
the folder is on this machine, else the folder name's suffix (``Qwen3-4B-FP8``), stated."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlmcost.frameworks.result import ImportedQuery

SUFFIX = re.compile(r"[-_](fp8|int4|int8|w4a16|w8a8|w4a8|awq|gptq|nvfp4|mxfp4)([-_].*)?$",
                    re.IGNORECASE)  # fmt: skip
"""A quantized checkpoint's folder name: the base model's name and the quantization word
(``Qwen3-30B-A3B-FP8``, ``Kimi-K2-Thinking-INT4``, ``Qwen2.5-7B-Instruct-GPTQ-Int4``)."""

SOURCE = "slime docs/en/advanced/low-precision.md @624b824a8"


def split_quantized(name: str) -> tuple[str, str | None]:
    """``name`` without its quantization suffix, and that word in lower case (None: none).

    >>> split_quantized("Qwen3-30B-A3B-FP8")
    ('Qwen3-30B-A3B', 'fp8')
    >>> split_quantized("Qwen2.5-7B-Instruct-GPTQ-Int4")
    ('Qwen2.5-7B-Instruct', 'gptq')
    >>> split_quantized("Qwen3-4B")
    ('Qwen3-4B', None)
    """
    m = SUFFIX.search(name)
    return (name, None) if m is None else (name[: m.start()], m[1].lower())


def checkpoint_quant(ckpt: str) -> tuple[str | None, str]:
    """The quantization of checkpoint folder ``ckpt`` (None: none) and how it was read."""
    config = Path(ckpt).expanduser() / "config.json"
    if config.is_file():
        try:
            qc = json.loads(config.read_text()).get("quantization_config") or {}
        except (OSError, ValueError):
            qc = {}
        method = qc.get("quant_method") if isinstance(qc, dict) else None
        return (str(method).lower() if method else None), "its config.json quantization_config"
    return split_quantized(Path(ckpt.rstrip("/")).name)[1], "its folder name"


def rollout_quant(q: ImportedQuery, ckpt: str | None) -> None:
    """``--rollout-dtype fp8`` and a note for an FP8 rollout checkpoint; a note for another
    quantization (module docstring)."""
    if not ckpt:
        return
    quant, how = checkpoint_quant(ckpt)
    if quant is None:
        return
    if quant == "fp8":
        q.convert(f"--hf-checkpoint {ckpt}", "--rollout-dtype", "fp8",
                  f"an FP8 rollout checkpoint by {how}: SGLang runs FP8 weights and GEMMs, "
                  f"Megatron trains BF16 ({SOURCE}); the refit's bytes are priced at the "
                  "trained dtype, an upper bound of slime's FP8 send")  # fmt: skip
        return
    q.note(f"--hf-checkpoint {ckpt}: a {quant} rollout checkpoint by {how} ({SOURCE}); "
           "rlmcost's rollout dtypes are bf16, fp16 and fp8, so its engine is priced at the "
           "trained dtype (an upper bound of its weights' memory and GEMM time)")
