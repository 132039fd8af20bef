"""The ``Arch``'s fields as the generator sees them: sizes, switches and structural flags.

An integer field becomes a symbol; a bool or enum field is a switch the symbolic core branches on
in Python, so it becomes a 0/1 flag; a structural flag stands for a group of fields that are all
off together (no experts, no latent attention, no window). The size arguments a generated
function may take are listed here too.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from typing import Any

from rlmcost.frozen import dataclass

STRUCTURAL = {
    "moe": ("n_experts", "top_k", "d_expert", "n_shared_experts", "d_shared_expert",
            "first_dense_layers", "moe_latent"),
    "shared": ("n_shared_experts", "d_shared_expert"),
    "latent": ("moe_latent",),
    "mla": ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
            "v_head_dim"),
    "qlora": ("q_lora_rank",),
    "swa": ("sliding_window", "full_attention_layers"),
    "dsa": ("index_topk", "index_heads", "index_head_dim", "index_layers"),
    "fullshape": ("full_head_dim", "full_kv_heads"),
}  # fmt: skip
"""Structural flags: the ``Arch`` fields that are off when the flag is off (a dense model has no
experts; a MoE model without shared experts has none of their fields, one without a latent
(``latent``: Nemotron 3 Super's latent MoE) no ``moe_latent``; a model without
multi-head latent attention has no latent ranks or MLA head widths, an MLA model without a
query latent has no ``q_lora_rank``, a model without sliding-window attention has no window
and no full-attention layer count, one without DeepSeek Sparse Attention no indexer, and one
whose full-attention layers are shaped as the others (``fullshape``: all but Gemma 4) no
``full_head_dim`` or ``full_kv_heads``).
``shared`` and ``latent`` imply ``moe``, ``qlora`` implies ``mla``, ``dsa`` implies ``qlora``.
``blocks`` tests these fields with ``arch.is_moe`` / ``is_zero`` / ``arch.is_mla`` /
``q_lora_rank is None`` / ``arch.has_window``. Off means 0, except the latent ranks and the
window, which are None (``Arch``'s sentinel for "not MLA" / "no query latent" / "no window")."""

NONE_WHEN_OFF = ("q_lora_rank", "kv_lora_rank", "sliding_window", "index_topk")
"""Structural fields whose off value is None rather than 0."""

TRIGGERS = {"moe": "n_experts", "shared": "n_shared_experts", "latent": "moe_latent",
            "mla": "kv_lora_rank", "qlora": "q_lora_rank", "swa": "sliding_window",
            "dsa": "index_topk", "fullshape": "full_head_dim"}  # fmt: skip
"""The field whose zero-test each structural flag stands for. A block that zero-tests another
field (``arch.is_zero``) stops the generator: that field needs a structural flag here."""

SIZES = ("tp", "context", "seqs", "seq", "prompt", "response", "tokens", "act_bytes",
         "fused_glu")
"""Size arguments a generated function may take, in signature order."""

SIZE_DOCS = {
    "tp": "P_t tensor-parallel degree (1 = off)",
    "context": "positions attended to [tokens]",
    "seqs": "sequences",
    "seq": "tokens per sequence",
    "prompt": "prompt tokens S",
    "response": "response tokens T",
    "tokens": "token positions",
    "act_bytes": "bytes per activation element (2 = bf16)",
    "fused_glu": "1: the gated FFN a fused SwiGLU (3 d_ff kept), 0: unfused (4 d_ff)",
}


@dataclass(frozen=True)
class ArchFields:
    """How the fields of ``rlmcost.arch.Arch`` become ``ArchNumbers`` fields and flags."""

    ints: tuple[str, ...]  # integer (Size) fields, symbols when generating
    bools: tuple[str, ...]  # bool fields, one flag each (same name)
    enums: tuple[tuple[str, str, str], ...]  # (flag, field, member value) per non-default member

    @property
    def flags(self) -> tuple[str, ...]:
        """Every 0/1 flag: structural, then bools, then enum members."""
        return (*STRUCTURAL, *self.bools, *(f for f, _, _ in self.enums))

    def flags_of(self, field: str) -> tuple[str, ...]:
        """Flags that reading ``field`` depends on."""
        if field in self.bools:
            return (field,)
        return tuple(f for f, name, _ in self.enums if name == field)

    def group(self, flag: str) -> str:
        """Flags of one enum field are exclusive; others are their own group."""
        return next((name for f, name, _ in self.enums if f == flag), flag)


def arch_fields() -> ArchFields:
    """Classify the fields of ``Arch`` by their defaults and annotations."""
    from rlmcost.arch import Arch

    ints, bools, enums = [], [], []
    for f in dataclasses.fields(Arch):
        if f.name == "name":
            continue
        default = f.default
        if isinstance(default, bool):
            bools.append(f.name)
        elif isinstance(default, enum.Enum):
            for member in type(default):
                if member is not default:
                    enums.append((f"{f.name}_{member.value}", f.name, member.value))
        else:
            ints.append(f.name)
    return ArchFields(tuple(ints), tuple(bools), tuple(enums))


def int_symbols(names: Iterable[str], **assumptions: bool) -> dict[str, Any]:
    import sympy as sp

    return {n: sp.Symbol(n, integer=True, **assumptions) for n in names}
