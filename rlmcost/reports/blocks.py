"""Every Table III quantity of one model at one workload, exact, with units.

One table of definitions serves the numeric report (``rlmcost blocks --model M``), the
symbolic one (``--symbolic``: the same definitions on the paper's ``CANONICAL`` model) and the
LaTeX one, so the three cannot disagree. Each definition is written against a blocks module
``b``: :mod:`rlmcost.blocks` (sympy) for the symbolic forms, :mod:`rlmcost.compiled.blocks`
(the same names, compiled, exact ints) for a model's numbers, so a numeric report loads no
sympy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from rlmcost.choices import AttnCounting, Dtype, MlaDecode
from rlmcost.frozen import dataclass
from rlmcost.specs import ModelSpec, get_model
from rlmcost.units import format_bytes, format_count, format_flops

if TYPE_CHECKING:
    import sympy as sp

    from rlmcost.arch import Arch

UNITS = {"FLOP": "FLOP", "B": "bytes", "params": "parameters", "levels": "reduction levels"}


@dataclass(frozen=True)
class Quantity:
    """One Table III entry: JSON key, symbol (text and LaTeX), unit, and its definition
    ``build(b, arch, inputs)`` over a blocks module ``b`` (module docstring).

    The symbol names exactly what the expression counts: per sequence, or with the batch
    factor written in it (``B C_prefill(S)``). ``unit`` is FLOP, levels, params or elements
    (counts of tensor entries, the paper's convention) or B (bytes); a byte quantity names its
    dtypes in ``dtype``, where ``{dtype}`` stands for the query's ``--dtype``.
    """

    key: str
    label: str
    unit: str
    build: Callable[..., Any]
    note: str = ""
    latex: str = ""
    dtype: str = ""

    def unit_text(self, dtype: Dtype = Dtype.BF16) -> str:
        """The unit in words; bytes with the dtypes they assume (``dtype``: weights,
        activations and KV cache)."""
        if self.unit == "B":
            return f"bytes ({self.dtype.format(dtype=dtype)})"
        if self.unit == "params":
            return "elements (parameters)"
        return UNITS.get(self.unit, self.unit)


_ADAM_BYTES = "16-bit weights and gradients, fp32 master weights, m and v"


def _q() -> list[Quantity]:
    return [
        Quantity("params", "|M|", "params", lambda b, a, w: b.params(a), "all parameters", r"|M|"),
        Quantity(
            "params_active",
            "|M|_act",
            "params",
            lambda b, a, w: b.params_active_per_token(a),
            "per token; MoE: unused experts left out",
            r"|M|_{\mathrm{act}}",
        ),
        Quantity(
            "weight_bytes",
            "bytes(|M|)",
            "B",
            lambda b, a, w: b.memory_params_bytes(a, w.dtype),
            "weights in --dtype",
            r"\mathrm{bytes}(|M|)",
            "{dtype}",
        ),
        Quantity(
            "forward_flops",
            "B m C_f^tok(m)",
            "FLOP",
            lambda b, a, w: b.work_forward(a, w.B, w.m, w.counting),
            "teacher-forced, B x m",
            r"B\,m\,C_f^{\mathrm{tok}}(m)",
        ),
        Quantity(
            "backward_flops",
            "B m C_b^tok(m)",
            "FLOP",
            lambda b, a, w: b.work_backward(a, w.B, w.m, w.counting),
            "= 2 x forward",
            r"B\,m\,C_b^{\mathrm{tok}}(m)",
        ),
        Quantity(
            "train_flops",
            "B m C_tr^tok(m)",
            "FLOP",
            lambda b, a, w: b.work_train(a, w.B, w.m, w.counting),
            "forward + backward",
            r"B\,m\,C_{\mathrm{tr}}^{\mathrm{tok}}(m)",
        ),
        Quantity(
            "prefill_flops",
            "B C_prefill(S)",
            "FLOP",
            lambda b, a, w: b.work_prefill(a, w.S, w.B, w.counting),
            "B prompts of S tokens, LM head on the last",
            r"B\,C_{\mathrm{prefill}}(S)",
        ),
        Quantity(
            "decode_step_flops",
            "B C_dec(c+1)",
            "FLOP",
            lambda b, a, w: b.work_decode_step(a, w.c + 1, w.B),
            "B sequences, one new token each after c cached tokens: it attends c + 1 "
            "positions (its own key too, as PyTorch counts)",
            r"B\,C_{\mathrm{dec}}(c+1)",
        ),
        Quantity(
            "rollout_flops",
            "C_gen^roll(S, T)",
            "FLOP",
            lambda b, a, w: b.work_rollout(a, w.S, w.T, w.counting),
            "one sequence: prefill S + T decode steps",
            r"C_{\mathrm{gen}}^{\mathrm{roll}}(S, T)",
        ),
        Quantity(
            "kv_cache_elements",
            "B M_KV(c)",
            "elements",
            lambda b, a, w: b.memory_kv_cache(a, w.c, w.B),
            "K and V of B x c tokens",
            r"B\,M_{\mathrm{KV}}(c)",
        ),
        Quantity(
            "kv_cache_bytes",
            "bytes(B M_KV(c))",
            "B",
            lambda b, a, w: b.memory_kv_cache_bytes(a, w.c, w.dtype, w.B),
            "B x c tokens",
            r"\mathrm{bytes}(B\,M_{\mathrm{KV}}(c))",
            "{dtype}",
        ),
        Quantity(
            "activation_elements_paper",
            "B M_Act(m)",
            "elements",
            lambda b, a, w: b.memory_activations_paper(a, w.B * w.m),
            "the paper's leading term B m L d",
            r"B\,M_{\mathrm{Act}}(m)",
        ),
        Quantity(
            "activation_bytes",
            "B M_Act^saved(m)",
            "B",
            lambda b, a, w: b.memory_activations_bytes(a, w.B * w.m, w.dtype),
            "every tensor saved for backward (beyond B m L d), B x m tokens, no recomputation",
            r"B\,M_{\mathrm{Act}}^{\mathrm{saved}}(m)",
            "{dtype}, fp32 log-sum-exp",
        ),
        Quantity(
            "inference_buffer_elements",
            "B M_Inf(m)",
            "elements",
            lambda b, a, w: b.memory_inference_buffer(a, w.B * w.m),
            "forward-only transients of one layer, B x m tokens",
            r"B\,M_{\mathrm{Inf}}(m)",
        ),
        Quantity(
            "inference_buffer_bytes",
            "bytes(B M_Inf(m))",
            "B",
            lambda b, a, w: b.memory_inference_buffer_bytes(a, w.B * w.m, w.dtype),
            "forward-only transients, B x m tokens",
            r"\mathrm{bytes}(B\,M_{\mathrm{Inf}}(m))",
            "{dtype}",
        ),
        Quantity(
            "logits_elements",
            "B m V",
            "elements",
            lambda b, a, w: b.memory_logits(a, w.B * w.m),
            "logits of B x m tokens",
            r"B\,m\,V",
        ),
        Quantity(
            "logits_bytes",
            "bytes(B m V)",
            "B",
            lambda b, a, w: b.memory_logits_bytes(a, w.B * w.m),
            "fp32 logits, B x m",
            r"\mathrm{bytes}(B\,m\,V)",
            "fp32",
        ),
        Quantity(
            "adam_state_elements",
            "4|M|",
            "elements",
            lambda b, a, w: b.memory_adam_states(b.params(a)),
            "parameters, gradients, m and v (§III-G1)",
            r"4|M|",
        ),
        Quantity(
            "adam_state_bytes",
            "bytes(4|M|) = 16|M|",
            "B",
            lambda b, a, w: b.memory_adam_states_bytes_rajbhandari2020(b.params(a)),
            "mixed-precision Adam (ZeRO paper)",
            r"\mathrm{bytes}(4|M|) = 16|M|",
            _ADAM_BYTES,
        ),
        Quantity(
            "depth_forward",
            "D_f(m)",
            "levels",
            lambda b, a, w: b.depth_forward(a, w.m),
            "critical path, one forward",
            r"D_f(m)",
        ),
        Quantity(
            "depth_backward",
            "D_b(m, B m)",
            "levels",
            lambda b, a, w: b.depth_backward(a, w.m, w.B * w.m),
            "input grads over m positions + the last dW, reduced over B x m tokens",
            r"D_b(m, B\,m)",
        ),
        Quantity(
            "depth_generation",
            "D_gen(S, T)",
            "levels",
            lambda b, a, w: b.depth_generation(a, w.S, w.T),
            "one sequence: prefill + T decode steps",
            r"D_{\mathrm{gen}}(S, T)",
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
    expressions: dict[str, Any] = field(repr=False)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Raw numbers (ints for FLOPs, bytes, params and depths) plus units and inputs: what
        `rlmcost blocks --json` prints (schema: `rlmcost schema blocks`)."""
        from rlmcost.run.schema_envelope import versioned

        out: dict[str, Any] = {"model": self.model, "inputs": self.inputs}
        out.update(self.values)
        dtype = Dtype(self.inputs["dtype"])
        out["units"] = {q.key: q.unit_text(dtype) for q in QUANTITIES}
        out["convention"] = CONVENTION
        out["notes"] = self.notes
        return versioned("blocks", out)

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
        if isinstance(v, bool) or not hasattr(v, "__index__") or v < 1:  # "1": a MemoryError
            raise SpecError(f"{name}={v!r:.40} must be a positive integer")
    spec = get_model(model)
    note = spec.context_note(max(seq, context or seq, prompt_len + response_len))
    from rlmcost.compiled import blocks as numeric

    w = BlockInputs(batch, seq, context or seq, prompt_len, response_len, dtype, counting)
    exprs = {q.key: q.build(numeric, spec.arch(), w) for q in QUANTITIES}
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
        ref = numeric.work_decode_step(spec.arch(), w.c + 1, batch, MlaDecode.REFERENCE)
        notes.append(
            f"{spec.attention_note()}; decode step in the reference form (kv_b_proj re-expands "
            f"all c cached latents every step, as transformers' eager code): {ref} FLOP"
        )
    return BlocksReport(spec.name, inputs, values, exprs, notes)


def symbolic_blocks(
    arch: Arch | None = None, counting: AttnCounting = AttnCounting.FULL
) -> dict[str, tuple[Quantity, sp.Expr, sp.Expr]]:
    """Each quantity on the symbolic ``arch`` (default the paper's ``CANONICAL``): (definition,
    explicit form, Big-O form).

    Big-O under the paper's regime d_ff = O(d); memory in bytes keeps its dtype factor.
    """
    from rlmcost import blocks as bl
    from rlmcost import symbols as sy
    from rlmcost.arch import CANONICAL

    arch = CANONICAL if arch is None else arch
    w = BlockInputs(sy.B, sy.m, sy.c, sy.S, sy.T, Dtype.BF16, counting)
    regime = {sy.d_ff: sy.d}
    out = {}
    for q in QUANTITIES:
        expr = q.build(bl, arch, w)
        if q.key == "depth_generation":
            bound = bl.depth_generation(arch, sy.S, sy.T, closed_form=False)
            out[q.key] = (q, expr, bl.big_o(bound, regime))
        else:
            out[q.key] = (q, expr, bl.big_o(expr, regime))
    return out
