"""A rollout checkpoint stored quantized, read from slime's / miles' ``--hf-checkpoint``.

slime serves rollouts from the checkpoint ``--hf-checkpoint`` names while Megatron trains the
BF16 weights of ``--ref-load``/``--load``; a blockwise FP8 checkpoint (``tools/
convert_hf_to_fp8.py``) makes SGLang run FP8 weights and GEMMs, and each weight update
quantizes the trained BF16 weights with that checkpoint's ``quantization_config`` before
sending them (THUDM/slime docs/en/advanced/low-precision.md @624b824a8, "BF16 Training with
FP8 Rollout"; miles the same). rlmcost prices that as ``--rollout-dtype fp8`` (engine weights
at 1 B/param but its bf16 embedding, head, norms and routers, GEMMs at the FP8 peak); the
refit's bytes keep the trained dtype (an upper bound of slime's FP8 send), stated in a note.
An INT4 checkpoint (``tools/convert_hf_to_int4_direct.py``,
the same page's "INT4 QAT Training"), an MXFP4 or NVFP4 one is served as 4-bit weights
(``--rollout-weights``, :data:`PACKED`); other formats (AWQ, GPTQ, INT8) are priced at the
trained dtype, said in a note.

Which quantization: the checkpoint's ``config.json`` ``quantization_config`` where the folder
is on this machine (:func:`rlmcost.specs.hf_quant.quant_of`), else the folder name's suffix
(``Qwen3-4B-FP8``), else, for a folder named as a built-in model or its Hugging Face id, how
that model's published checkpoint is stored (``checkpoint_quant`` of models.json:
``Kimi-K2-Instruct`` and ``DeepSeek-R1`` are block-wise FP8, slime scripts/run-kimi-k2-Instruct.sh
and run-deepseek-r1.sh @624b824a serve them so, docs/en/examples/deepseek-r1.md: "we are using
the fp8 checkpoint of DeepSeek R1"), stated. A folder name ending in a precision word
(``Kimi-K2-bf16``, ``DeepSeek-R1-bf16``: the scripts' commented alternatives, converted by
``tools/fp8_cast_bf16.py``) is that dequantized copy: unquantized."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.result import ImportedQuery

SUFFIX = re.compile(r"[-_](fp8|int4|int8|w4a16|w8a8|w4a8|awq|gptq|nvfp4|mxfp4)([-_].*)?$",
                    re.IGNORECASE)  # fmt: skip
"""A quantized checkpoint's folder name: the base model's name and the quantization word
(``Qwen3-30B-A3B-FP8``, ``Kimi-K2-Thinking-INT4``, ``Qwen2.5-7B-Instruct-GPTQ-Int4``)."""

SOURCE = "slime docs/en/advanced/low-precision.md @624b824a8"

PACKED = {
    "int4": ("int4-g32:experts", "INT4 routed experts with a bf16 scale per 32 elements, the "
             "rest bf16: slime tools/convert_hf_to_int4_direct.py's defaults (--group-size 32; "
             "--ignore-rules lm_head, norms, embeddings, self_attn, shared_experts, dense MLP "
             "and router; compressed-tensors pack-quantized; its asymmetric zero points, 4 bits "
             "a group, not counted) and Kimi-K2-Thinking's native INT4 (experts, group 32); the "
             "INT4 QAT recipes' OPEN_TRAINING_INT4_GROUP_SIZE 128 (Qwen3, Moonlight) is "
             "--rollout-weights int4-g128:experts"),
    "mxfp4": ("mxfp4:experts", "MXFP4 routed experts (E2M1, an E8M0 scale per 32), the rest "
              "bf16, as gpt-oss's checkpoint stores them"),
    "nvfp4": ("nvfp4-w4a4", "NVFP4 Linear layers (E2M1, an FP8 scale per 16) and NVFP4 "
              "activations: ModelOpt's NVFP4 and llm-compressor's NVFP4 scheme quantize the "
              "inputs too (a weight-only checkpoint is named NVFP4A16), so SGLang and vLLM run "
              "FP4 GEMMs on Blackwell (rlmcost.perf.fp4_gemm)"),
}
"""4-bit rollout checkpoints rlmcost serves as stored: the quantization word -> (``--rollout-
weights`` value, why)."""


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
    """The quantization of checkpoint folder ``ckpt`` (None: none) and how it was read
    (module docstring)."""
    from rlmcost.frameworks.model_path import DTYPE_SUFFIX
    from rlmcost.specs.hf_quant import quant_of
    from rlmcost.specs.registry import get_model

    config = Path(ckpt).expanduser() / "config.json"
    if config.is_file():
        try:
            cfg = json.loads(config.read_text())
        except (OSError, ValueError):
            cfg = {}
        return (quant_of(cfg) if isinstance(cfg, dict) else None,
                "its config.json quantization_config")  # fmt: skip
    name = Path(ckpt.rstrip("/")).name
    quant = split_quantized(name)[1]
    if quant is not None or DTYPE_SUFFIX.search(name) or not name:
        return quant, "its folder name"
    try:
        spec = get_model(name)
    except SpecError:
        return None, "its folder name"
    return spec.checkpoint_quant, (f"its folder name, {spec.name}'s published checkpoint "
                                   "(models.json checkpoint_quant)")  # fmt: skip


def weights_dense(q: ImportedQuery, weights: str) -> bool:
    """Whether ``weights`` packs experts only and the query's model has none."""
    from rlmcost.specs.registry import get_model

    model = dict(q.flags).get("--model")
    if not weights.endswith(":experts") or model is None:
        return False
    try:
        return not get_model(str(model)).arch().is_moe
    except SpecError:
        return False


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
    if quant in PACKED and weights_dense(q, PACKED[quant][0]):
        q.note(f"--hf-checkpoint {ckpt}: a {quant} rollout checkpoint by {how}, of a dense "
               "model: slime's converter keeps its self_attn and MLP projections bf16 (tools/"
               "convert_hf_to_int4_direct.py --ignore-rules), so the engine is priced bf16; "
               "give --rollout-weights FORMAT:mlp for a checkpoint that packs them")  # fmt: skip
        return
    if quant in PACKED:
        from rlmcost.parallel.packed_weights import W4A4

        weights, why = PACKED[quant]
        q.convert(f"--hf-checkpoint {ckpt}", "--rollout-weights", weights,
                  f"a {quant} rollout checkpoint by {how}: {why} (rlmcost.parallel."
                  "packed_weights; " + ("W4A4 where the GPUs have FP4 tensor cores, else "
                  "W4A16" if weights in W4A4 else "W4A16, GEMMs in bf16") + "); the refit's "
                  "bytes are priced at the trained dtype, an upper bound of slime's quantized "
                  "send")  # fmt: skip
        return
    q.note(f"--hf-checkpoint {ckpt}: a {quant} rollout checkpoint by {how} ({SOURCE}); "
           "rlmcost's rollout weights are bf16, fp16, fp8 and the 4-bit formats of "
           "--rollout-weights, so its engine is priced at the trained dtype (an upper bound of "
           "its weights' memory and GEMM time)")
