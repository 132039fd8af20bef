"""Every Table III quantity of one model at one workload, exact, with units.

One table of definitions serves the numeric report (``rlmcost blocks --model M``), the
symbolic one (``--symbolic``: the same definitions on the paper's ``CANONICAL`` model) and the
LaTeX one, so the three cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from rlmcost import blocks as bl
from rlmcost import symbols as sy
from rlmcost.arch import CANONICAL, Arch
from rlmcost.choices import AttnCounting, Dtype, MlaDecode
from rlmcost.evaluate import format_bytes, format_count, format_flops
from rlmcost.specs import ModelSpec, get_model

UNITS = {"FLOP": "FLOP", "B": "bytes", "params": "parameters", "levels": "reduction levels"}


@dataclass(frozen=True)
class Quantity:
    """One Table III entry: JSON key, paper-style label, unit, and its expression builder."""

    key: str
    label: str
    unit: str
    build: Callable[..., sp.Expr]
    note: str = ""


def _q() -> list[Quantity]:
    return [
        Quantity("params", "|M|", "params", lambda a, w: bl.params(a), "all parameters"),
        Quantity(
            "params_active",
            "|M| active/token",
            "params",
            lambda a, w: bl.params_active_per_token(a),
            "MoE: unused experts left out",
        ),
        Quantity(
            "forward_flops",
            "B m C_f^tok(m)",
            "FLOP",
            lambda a, w: bl.work_forward(a, w.B, w.m, w.counting),
            "teacher-forced, B x m",
        ),
        Quantity(
            "backward_flops",
            "B m C_b^tok(m)",
            "FLOP",
            lambda a, w: bl.work_backward(a, w.B, w.m, w.counting),
            "= 2 x forward",
        ),
        Quantity(
            "train_flops",
            "B m C_tr^tok(m)",
            "FLOP",
            lambda a, w: bl.work_train(a, w.B, w.m, w.counting),
            "forward + backward",
        ),
        Quantity(
            "prefill_flops",
            "C_prefill(S)",
            "FLOP",
            lambda a, w: bl.work_prefill(a, w.S, w.B, w.counting),
            "B prompts of S tokens, LM head on the last",
        ),
        Quantity(
            "decode_step_flops",
            "C_dec(c)",
            "FLOP",
            lambda a, w: bl.work_decode_step(a, w.c, w.B),
            "B sequences, one new token each, KV context c",
        ),
        Quantity(
            "rollout_flops",
            "C_gen^roll(S, T)",
            "FLOP",
            lambda a, w: bl.work_rollout(a, w.S, w.T, w.counting),
            "one sequence: prefill S + T decode steps",
        ),
        Quantity(
            "weight_bytes",
            "|M| x bytes",
            "B",
            lambda a, w: bl.memory_params_bytes(a, w.dtype),
            "weights in --dtype",
        ),
        Quantity(
            "kv_cache_bytes",
            "M_KV",
            "B",
            lambda a, w: bl.memory_kv_cache_bytes(a, w.B * w.c, w.dtype),
            "B x c tokens",
        ),
        Quantity(
            "activation_bytes",
            "M_Act",
            "B",
            lambda a, w: bl.memory_activations_bytes(a, w.B * w.m, w.dtype),
            "saved for backward, B x m tokens, no recomputation",
        ),
        Quantity(
            "activation_elements_paper",
            "M_Act (paper)",
            "elements",
            lambda a, w: bl.memory_activations_paper(a, w.B * w.m),
            "B m L d",
        ),
        Quantity(
            "inference_buffer_bytes",
            "M_Inf",
            "B",
            lambda a, w: bl.memory_inference_buffer_bytes(a, w.B * w.m, w.dtype),
            "forward-only transients, B x m tokens",
        ),
        Quantity(
            "logits_bytes",
            "B m V (fp32)",
            "B",
            lambda a, w: bl.memory_logits_bytes(a, w.B * w.m),
            "fp32 logits, B x m",
        ),
        Quantity(
            "adam_state_bytes",
            "16 |M|",
            "B",
            lambda a, w: bl.memory_adam_states_bytes_rajbhandari2020(bl.params(a)),
            "mixed-precision Adam (ZeRO paper)",
        ),
        Quantity(
            "depth_forward",
            "D_f(m)",
            "levels",
            lambda a, w: bl.depth_forward(a, w.m),
            "critical path, one forward",
        ),
        Quantity(
            "depth_backward",
            "D_b(m)",
            "levels",
            lambda a, w: bl.depth_backward(a, w.m, w.B * w.m),
            "input grads + last dW",
        ),
        Quantity(
            "depth_generation",
            "D_gen(S, T)",
            "levels",
            lambda a, w: bl.depth_generation(a, w.S, w.T),
            "prefill + T decode steps",
        ),
    ]


QUANTITIES: tuple[Quantity, ...] = tuple(_q())


@dataclass(frozen=True)
class BlockInputs:
    """Workload of a blocks query: symbols in symbolic mode, integers otherwise."""

    B: Any
    m: Any
    c: Any
    S: Any
    T: Any
    dtype: Dtype = Dtype.BF16
    counting: AttnCounting = AttnCounting.FULL


@dataclass(frozen=True)
class BlocksReport:
    """Table III for one model and workload: exact values keyed as in ``--json``."""

    model: str
    inputs: dict[str, Any]
    values: dict[str, Any]
    expressions: dict[str, sp.Expr] = field(repr=False)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Raw numbers (ints for FLOPs, bytes, params and depths) plus units and inputs."""
        out: dict[str, Any] = {"model": self.model, "inputs": self.inputs}
        out.update(self.values)
        out["units"] = {q.key: UNITS.get(q.unit, q.unit) for q in QUANTITIES}
        out["convention"] = CONVENTION
        out["notes"] = self.notes
        return out

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(key, label, formatted value, note) for display."""
        return [(q.key, q.label, _fmt(self.values[q.key], q.unit), q.note) for q in QUANTITIES]


CONVENTION = (
    "FLOP = one add or one multiply, matrix products only (as torch FlopCounterMode); "
    "bytes use the stated dtypes; depth = GEMM reduction levels"
)


def _fmt(value: Any, unit: str) -> str:
    if unit == "FLOP":
        return format_flops(value)
    if unit == "B":
        return format_bytes(value)
    if unit == "params":
        return format_count(value)
    if unit == "elements":
        return f"{format_count(value)} elements"
    return f"{value} levels"


def building_blocks(
    model: str | ModelSpec,
    batch: int = 1,
    seq: int = 2048,
    context: int | None = None,
    prompt_len: int = 1024,
    response_len: int = 1024,
    dtype: Dtype = Dtype.BF16,
    counting: AttnCounting = AttnCounting.FULL,
) -> BlocksReport:
    """Every Table III quantity of ``model``, exact (Python ints).

    ``batch`` x ``seq`` tokens for the teacher-forced passes and memories; ``context`` (default
    ``seq``) for the decode step and KV cache; ``prompt_len`` and ``response_len`` for the
    prefill, the rollout and the generation depth.
    """
    from rlmcost.errors import SpecError

    for name, v in (
        ("batch", batch),
        ("seq", seq),
        ("prompt_len", prompt_len),
        ("response_len", response_len),
        ("context", context or seq),
    ):
        if int(v) < 1:
            raise SpecError(f"{name}={v} must be a positive integer")
    spec = get_model(model)
    note = spec.context_note(max(seq, context or seq, prompt_len + response_len))
    w = BlockInputs(batch, seq, context or seq, prompt_len, response_len, dtype, counting)
    exprs = {q.key: q.build(spec.arch(), w) for q in QUANTITIES}
    values = {k: int(v) for k, v in exprs.items()}
    inputs = dict(
        batch=batch,
        seq=seq,
        context=w.c,
        prompt_len=prompt_len,
        response_len=response_len,
        dtype=str(dtype),
        attention_counting=str(counting),
    )
    notes = [note] if note else []
    if spec.is_mla:
        ref = int(bl.work_decode_step(spec.arch(), w.c, batch, MlaDecode.REFERENCE))
        notes.append(
            f"{spec.attention_note()}; decode step in the reference form (kv_b_proj re-expands "
            f"all c cached latents every step, as transformers' eager code): {ref} FLOP"
        )
    return BlocksReport(spec.name, inputs, values, exprs, notes)


def symbolic_blocks(
    arch: Arch = CANONICAL, counting: AttnCounting = AttnCounting.FULL
) -> dict[str, tuple[Quantity, sp.Expr, sp.Expr]]:
    """Each quantity on the symbolic ``arch``: (definition, explicit form, Big-O form).

    Big-O under the paper's regime d_ff = O(d); memory in bytes keeps its dtype factor.
    """
    w = BlockInputs(sy.B, sy.m, sy.c, sy.S, sy.T, Dtype.BF16, counting)
    regime = {sy.d_ff: sy.d}
    out = {}
    for q in QUANTITIES:
        expr = q.build(arch, w)
        if q.key == "depth_generation":
            bound = bl.depth_generation(arch, sy.S, sy.T, closed_form=False)
            out[q.key] = (q, expr, bl.big_o(bound, regime))
        else:
            out[q.key] = (q, expr, bl.big_o(expr, regime))
    return out
