"""miles' LoRA arguments (radixark/miles, a slime fork; ``--lora-rank``, ``--target-modules``
in miles/utils/arguments.py @31f1ca96, from 5b59a5246 "miles lora megatron backend"), read by
:mod:`rlmcost.frameworks.slime` for the miles launches it imports (examples/lora/
run-qwen3-4B-megatron-lora.sh @31f1ca96). ``--target-modules`` is required with a rank
above 0: ``all-linear`` (also ``all``, ``all_linear``) or a comma-separated list of Hugging
Face or Megatron names, which miles' ``convert_target_modules_to_hf``
(miles/backends/megatron_utils/lora_utils.py) maps as :data:`TARGETS` does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

TARGETS: dict[str, tuple[str, ...]] = {
    "q_proj": ("q",), "k_proj": ("k",), "v_proj": ("v",), "o_proj": ("o",),
    "gate_proj": ("gate",), "up_proj": ("up",), "down_proj": ("down",),
    "linear_qkv": ("q", "k", "v"), "linear_proj": ("o",), "linear_fc1": ("gate", "up"),
    "linear_fc2": ("down",), "linear_q": ("q",), "linear_k": ("k",), "linear_v": ("v",),
    "linear_fc1_gate": ("gate",), "linear_fc1_up": ("up",),
}  # fmt: skip
"""Each target module name miles takes (Hugging Face; Megatron's standard LoRA, merged QKV and
gate/up; its CanonicalLoRA, split) as rlmcost's ``--lora-targets`` projections."""


def miles_lora(r: Reader, q: ImportedQuery) -> None:
    """``--lora-rank`` and ``--lora-targets`` from miles' ``--lora-rank`` (0: no LoRA) and
    ``--target-modules``."""
    rank = r.integer("lora-rank", 0, lo=0, hi=65536)
    if not rank:
        return
    given = r.text("target-modules", None)
    if not given:
        raise SpecError(f"{r.where}: --lora-rank {rank} without --target-modules (miles "
                        "requires it: all-linear or a comma-separated list of modules)")
    q.set("--lora-rank", rank)
    if given in ("all", "all-linear", "all_linear"):
        q.set("--lora-targets", "all-linear")
        return
    out: list[str] = []
    for name in (m.strip() for m in given.split(",")):
        if name not in TARGETS:
            raise SpecError(f"{r.where}: --target-modules {name!r}: rlmcost prices LoRA on the "
                            f"attention and MLP projections ({', '.join(TARGETS)})")
        out += [t for t in TARGETS[name] if t not in out]
    q.set("--lora-targets", ",".join(out))
