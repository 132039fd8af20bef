"""Write ``blocks_gen.py``: the Table III building blocks as plain Python functions.

Run ``python -m rlmcost.compiled.generate`` after changing ``rlmcost/blocks.py``,
``rlmcost/arch.py`` or ``rlmcost/parallel/{activations,shard}.py``; ``--check`` exits 1 when the
committed file is stale (``tests/test_compiled_blocks.py`` does the same).

How: every block of :data:`BLOCKS` is evaluated by the symbolic core on an ``Arch`` whose
integer fields are sympy symbols. An ``Arch`` also has switches (bool fields, enum fields and
whether it has routed or shared experts) that the core branches on in Python, so a switch
cannot be a symbol. Each switch becomes a 0/1 flag x_i instead, and the block is written in
its exact multilinear form over the flags it reads,

    f(x) = sum_S a_S prod_{i in S} x_i,   a_S = sum_{T subset S} (-1)^{|S| - |T|} f(T)

(Moebius inversion over the corners T, exact for 0/1 flags). Which flags a block reads is
traced on the ``Arch``; which coefficients a_S are non-zero is screened on exact rational
evaluations at two fixed random points (a non-zero polynomial vanishes at both with
probability ~1e-20), and only those a_S are built symbolically. Each function is printed as
one exact quotient num / den with integer coefficients (``runtime.div``), collected by the
size arguments so that numpy arrays pass through a few array operations.

Conventions of the generated module: ``a`` is an ``ArchNumbers`` (``rlmcost.compiled.arch``);
token counts and degrees are ints or numpy arrays; a TP shard's vocabulary is padded to
ceil(V / P_t) as ``rlmcost.parallel.shard.split_up`` pads it.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import random
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from types import SimpleNamespace
from typing import Any

OUTPUT = Path(__file__).with_name("blocks_gen.py")
COMMAND = "python -m rlmcost.compiled.generate"

STRUCTURAL = {
    "moe": ("n_experts", "top_k", "d_expert", "n_shared_experts", "d_shared_expert",
            "first_dense_layers"),
    "shared": ("n_shared_experts", "d_shared_expert"),
    "mla": ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
            "v_head_dim"),
    "qlora": ("q_lora_rank",),
    "swa": ("sliding_window", "full_attention_layers"),
}  # fmt: skip
"""Structural flags: the ``Arch`` fields that are off when the flag is off (a dense model has no
experts; a MoE model without shared experts has none of their fields; a model without
multi-head latent attention has no latent ranks or MLA head widths, an MLA model without a
query latent has no ``q_lora_rank``, and a model without sliding-window attention has no window
and no full-attention layer count). ``shared`` implies ``moe``, ``qlora`` implies ``mla``.
``blocks`` tests these fields with ``arch.is_moe`` / ``is_zero`` / ``arch.is_mla`` /
``q_lora_rank is None`` / ``arch.has_window``. Off means 0, except the latent ranks and the
window, which are None (``Arch``'s sentinel for "not MLA" / "no query latent" / "no window")."""

NONE_WHEN_OFF = ("q_lora_rank", "kv_lora_rank", "sliding_window")
"""Structural fields whose off value is None rather than 0."""

TRIGGERS = {"moe": "n_experts", "shared": "n_shared_experts", "mla": "kv_lora_rank",
            "qlora": "q_lora_rank", "swa": "sliding_window"}  # fmt: skip
"""The field whose zero-test each structural flag stands for. A block that zero-tests another
field (``arch.is_zero``) stops the generator: that field needs a structural flag here."""

SIZES = ("tp", "context", "seqs", "seq", "prompt", "response", "tokens", "act_bytes")
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
}


# --------------------------------------------------------------------------------------------
# The Arch's fields: integers, bool switches, enum switches
# --------------------------------------------------------------------------------------------


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


def _symbols(names: Iterable[str], **assumptions: bool) -> dict[str, Any]:
    import sympy as sp

    return {n: sp.Symbol(n, integer=True, **assumptions) for n in names}


class _Reads:
    """Bool and enum fields read on a traced ``Arch`` (see :func:`_traced_class`)."""

    fields: set[str] = set()
    watched: frozenset[str] = frozenset()
    copying = 0


def _traced_class() -> type:
    from rlmcost.arch import Arch

    class TracedArch(Arch):
        """An ``Arch`` that records reads of its switches (copies made by ``with_`` too)."""

        def __getattribute__(self, name: str) -> Any:
            if name in _Reads.watched and not _Reads.copying:
                _Reads.fields.add(name)
            return super().__getattribute__(name)

        def with_(self, **changes: object) -> Any:
            _Reads.copying += 1  # a copy reads every field; that is no use of a switch
            try:
                return super().with_(**changes)
            finally:
                _Reads.copying -= 1

    return TracedArch


# --------------------------------------------------------------------------------------------
# The blocks to compile
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One generated function: ``name(a, *sizes)`` = ``build(arch, sizes)``."""

    name: str
    sizes: tuple[str, ...]
    build: Callable[..., Any]  # (arch, sizes: SimpleNamespace), lambdas may bind more defaults
    doc: str  # what it is, its unit and its source in the symbolic core
    defaults: tuple[tuple[str, int], ...] = ()


def shard(arch: Any, s: SimpleNamespace) -> Any:
    """``parallel.shard.tp_shard(arch, tp)`` with its padded vocabulary as ``vocab_tp``."""
    from rlmcost.parallel.shard import tp_shard

    return tp_shard(arch, s.tp).with_(vocab=s.vocab_tp)


def _dtype(nbytes: Any) -> Any:
    """A stand-in for ``choices.Dtype`` whose ``.bytes`` may be a symbol."""
    return SimpleNamespace(bytes=nbytes)


def blocks() -> list[Block]:
    """Every generated function, in output order."""
    from rlmcost import blocks as bl
    from rlmcost.choices import AttnCounting, Head, MlaDecode
    from rlmcost.parallel import activations as act
    from rlmcost.parallel.layout import Checkpointing

    tp1 = (("tp", 1),)
    out = [
        Block("params_attention_per_layer", ("tp",),
              lambda a, s: bl.params_attention_per_layer(shard(a, s)),
              "Parameters of one attention block on a TP rank (blocks.params_attention_per_layer"
              " of parallel.shard.tp_shard) [elements].", tp1),
        Block("params_ffn_dense", ("tp",),
              lambda a, s: bl.params_ffn(shard(a, s), shard(a, s).d_ff, a.mlp_bias),
              "Parameters of one dense FFN on a TP rank, biases per mlp_bias "
              "(blocks.params_ffn) [elements].", tp1),
        Block("params_expert", ("tp",),
              lambda a, s: bl.params_ffn(shard(a, s), shard(a, s).d_expert),
              "Parameters of one routed expert on a TP rank (blocks.params_ffn of width d_e) "
              "[elements]; 0 for a dense model.", tp1),
        Block("params_routed_experts", ("tp",),
              lambda a, s: shard(a, s).n_experts * bl.params_ffn(shard(a, s), shard(a, s).d_expert),
              "Parameters of all E routed experts of one MoE layer on a TP rank (as "
              "parallel.memory.stage_params counts them) [elements].", tp1),
        Block("params_moe_per_layer", ("tp",),
              lambda a, s: bl.params_moe_per_layer(shard(a, s)),
              "Parameters of one MoE FFN on a TP rank: router, routed and shared experts "
              "(blocks.params_moe_per_layer) [elements].", tp1),
        Block("params_norm", (), lambda a, s: bl.params_norm(a),
              "Parameters of one normalization layer (blocks.params_norm) [elements]."),
        Block("params_layer_dense", ("tp",), lambda a, s: bl.params_layer_dense(shard(a, s)),
              "Parameters of one dense layer on a TP rank (blocks.params_layer_dense) "
              "[elements].", tp1),
        Block("params_layer_moe", ("tp",), lambda a, s: bl.params_layer_moe(shard(a, s)),
              "Parameters of one MoE layer on a TP rank, all experts (blocks.params_layer_moe) "
              "[elements].", tp1),
        Block("params_embedding", ("tp",), lambda a, s: bl.params_embedding(shard(a, s)),
              "Token (vocab-parallel, padded) and position embedding on a TP rank "
              "(blocks.params_embedding) [elements].", tp1),
        Block("params_head_lm", ("tp",), lambda a, s: bl.params_head(shard(a, s), Head.LM),
              "LM head on a TP rank, 0 when tied (blocks.params_head) [elements].", tp1),
        Block("params_head_value", ("tp",), lambda a, s: bl.params_head(shard(a, s), Head.VALUE),
              "Value head d x 1 (blocks.params_head, Head.VALUE) [elements].", tp1),
        Block("params_lm", (), lambda a, s: bl.params(a, Head.LM),
              "|M| with the LM head, tied weights once (blocks.params) [elements]."),
        Block("params_value", (), lambda a, s: bl.params(a, Head.VALUE),
              "|M| with a value head, critic or reward model (blocks.params) [elements]."),
        Block("params_active_per_token", (), lambda a, s: bl.params_active_per_token(a),
              "Parameters one token touches, LM head (blocks.params_active_per_token) "
              "[elements]."),
        Block("work_linear_per_token", (), lambda a, s: bl.work_linear_per_token(a),
              "Forward FLOPs of one token through the body's projections "
              "(blocks.work_linear_per_token) [FLOP]."),
        Block("work_attention_per_token", ("context",),
              lambda a, s: bl.work_attention_per_token(a, s.context),
              "Forward attention FLOPs of one query over `context` keys, all layers "
              "(blocks.work_attention_per_token) [FLOP]."),
        Block("work_head_per_token_lm", (), lambda a, s: bl.work_head_per_token(a, Head.LM),
              "LM-head FLOPs of one token (blocks.work_head_per_token) [FLOP]."),
        Block("work_head_per_token_value", (),
              lambda a, s: bl.work_head_per_token(a, Head.VALUE),
              "Value-head FLOPs of one token (blocks.work_head_per_token) [FLOP]."),
        Block("work_decode_step", ("context", "seqs"),
              lambda a, s: bl.work_decode_step(a, s.context, s.seqs),
              "One decode step of `seqs` sequences at KV context `context` "
              "(blocks.work_decode_step) [FLOP].", (("seqs", 1),)),
        Block("work_decode_step_reference", ("context", "seqs"),
              lambda a, s: bl.work_decode_step(a, s.context, s.seqs, MlaDecode.REFERENCE),
              "One decode step, MLA in the reference form: kv_b_proj re-expands the cached "
              "latents (blocks.work_decode_step, MlaDecode.REFERENCE) [FLOP].", (("seqs", 1),)),
    ]  # fmt: skip
    for head in (Head.LM, Head.VALUE):
        out.append(
            Block(f"work_forward_per_token_{head.value}", ("context",),
                  lambda a, s, h=head: bl.work_forward_per_token(a, s.context, h),
                  f"C_f^tok: forward FLOPs of one token at `context`, {head.value} head "
                  "(blocks.work_forward_per_token) [FLOP].")
        )  # fmt: skip
        out.append(
            Block(f"depth_forward_{head.value}", ("context",),
                  lambda a, s, h=head: bl.depth_forward(a, s.context, h),
                  f"D_f: forward critical path at `context`, {head.value} head "
                  "(blocks.depth_forward) [levels].")
        )  # fmt: skip
        out.append(
            Block(f"depth_backward_{head.value}", ("context", "tokens"),
                  lambda a, s, h=head: bl.depth_backward(a, s.context, s.tokens, h),
                  f"D_b: backward critical path, dW reduced over `tokens`, {head.value} head "
                  "(blocks.depth_backward) [levels].")
        )  # fmt: skip
        out.append(
            Block(f"depth_train_{head.value}", ("context", "tokens"),
                  lambda a, s, h=head: bl.depth_train(a, s.context, s.tokens, h),
                  f"D_tr = D_f + D_b, dW reduced over `tokens`, {head.value} head "
                  "(blocks.depth_train) [levels].")
        )  # fmt: skip
    for counting in AttnCounting:
        c = counting.value
        for head in (Head.LM, Head.VALUE):
            h = head.value
            out.append(
                Block(f"work_forward_{c}_{h}", ("seqs", "seq"),
                      lambda a, s, k=counting, hd=head: bl.work_forward(a, s.seqs, s.seq, k, hd),
                      f"Teacher-forced forward of `seqs` x `seq` tokens, {c} attention, {h} "
                      "head (blocks.work_forward) [FLOP].")
            )  # fmt: skip
            out.append(
                Block(f"work_backward_{c}_{h}", ("seqs", "seq"),
                      lambda a, s, k=counting, hd=head: bl.work_backward(
                          a, s.seqs, s.seq, k, hd),
                      f"Backward (2 x forward) of `seqs` x `seq` tokens, {c} attention, {h} "
                      "head (blocks.work_backward) [FLOP].")
            )  # fmt: skip
            out.append(
                Block(f"work_train_{c}_{h}", ("seqs", "seq"),
                      lambda a, s, k=counting, hd=head: bl.work_train(a, s.seqs, s.seq, k, hd),
                      f"Training step (3 x forward) of `seqs` x `seq` tokens, {c} attention, "
                      f"{h} head (blocks.work_train) [FLOP].")
            )  # fmt: skip
        out.append(
            Block(f"work_prefill_{c}", ("prompt", "seqs"),
                  lambda a, s, k=counting: bl.work_prefill(a, s.prompt, s.seqs, k),
                  f"Prefill of `seqs` prompts of `prompt` tokens, {c} attention "
                  "(blocks.work_prefill) [FLOP].", (("seqs", 1),))
        )  # fmt: skip
        out.append(
            Block(f"work_rollout_{c}", ("prompt", "response"),
                  lambda a, s, k=counting: bl.work_rollout(a, s.prompt, s.response, k),
                  f"C_gen^roll: one rollout, prefill ({c}) + decode steps "
                  "(blocks.work_rollout) [FLOP].")
        )  # fmt: skip
        for ckpt in (Checkpointing.SELECTIVE, Checkpointing.FULL):
            out.append(
                Block(f"work_recompute_{ckpt.value}_{c}", ("seqs", "seq"),
                      lambda a, s, k=counting, ck=ckpt: act.work_recompute(
                          a, s.seqs, s.seq, ck, k),
                      f"Forward FLOPs the backward recomputes under {ckpt.value} checkpointing, "
                      f"{c} attention (parallel.activations.work_recompute) [FLOP].")
            )  # fmt: skip
    out += [
        Block("depth_prefill", ("prompt",), lambda a, s: bl.depth_prefill(a, s.prompt),
              "Prefill critical path (blocks.depth_prefill) [levels]."),
        Block("depth_decode_step", ("context",),
              lambda a, s: bl.depth_decode_step(a, s.context),
              "One decode step's critical path (blocks.depth_decode_step) [levels]."),
        Block("depth_generation", ("prompt", "response"),
              lambda a, s: bl.depth_generation(a, s.prompt, s.response),
              "D_gen, exact closed form (blocks.depth_generation) [levels]."),
        Block("depth_generation_bound", ("prompt", "response"),
              lambda a, s: bl.depth_generation(a, s.prompt, s.response, closed_form=False),
              "D_prefill(S) + T D_dec(S + T), the Big-O form (blocks.depth_generation) "
              "[levels]."),
        Block("memory_kv_cache", ("tokens", "seqs", "tp"),
              lambda a, s: bl.memory_kv_cache(shard(a, s), s.tokens, s.seqs),
              "M_KV of `seqs` sequences of `tokens` tokens, all layers, on a TP rank; a "
              "sliding layer keeps min(tokens, W - 1) positions (blocks.memory_kv_cache) "
              "[elements].", (("seqs", 1), ("tp", 1))),
        Block("kv_cache_per_token_layer", ("tp",),
              lambda a, s: shard(a, s).kv_cache_width,
              "K and V elements of one position in one layer on a TP rank "
              "(arch.Arch.kv_cache_width, as blocks.memory_kv_cache counts them) [elements].",
              tp1),
        Block("memory_inference_buffer", ("tokens", "tp"),
              lambda a, s: bl.memory_inference_buffer(shard(a, s), s.tokens),
              "M_Inf: one layer's forward transients for `tokens` positions on a TP rank "
              "(blocks.memory_inference_buffer) [elements].", tp1),
        Block("memory_activations_paper", ("tokens",),
              lambda a, s: bl.memory_activations_paper(a, s.tokens),
              "M_Act, the paper's leading term tokens x L x d (blocks.memory_activations_paper) "
              "[elements]."),
        Block("memory_logits", ("tokens",), lambda a, s: bl.memory_logits(a, s.tokens),
              "Logits of `tokens` positions (blocks.memory_logits) [elements]."),
        Block("activation_bytes_per_token_layer", ("act_bytes",),
              lambda a, s: bl.activation_bytes_per_token_layer(a, _dtype(s.act_bytes)),
              "Bytes one token's layer saves, averaged over the layers, no TP "
              "(blocks.activation_bytes_per_token_layer) [bytes].", (("act_bytes", 2),)),
        Block("memory_activations_bytes", ("tokens", "act_bytes"),
              lambda a, s: bl.memory_activations_bytes(a, s.tokens, _dtype(s.act_bytes)),
              "M_Act of `tokens` positions, all layers and the final-norm input "
              "(blocks.memory_activations_bytes) [bytes].", (("act_bytes", 2),)),
    ]  # fmt: skip
    for ckpt in Checkpointing:
        for seq_par in (False, True):
            for moe in (False, True):
                name = (f"saved_bytes_per_token_layer_{ckpt.value}"
                        f"{'_sp' if seq_par else ''}_{'moe' if moe else 'dense'}")  # fmt: skip
                out.append(
                    Block(name, ("tp", "act_bytes"),
                          lambda a, s, c=ckpt, q=seq_par, m=moe:
                              act.saved_bytes_per_token_layer(a, s.tp, q, c, m,
                                                              _dtype(s.act_bytes)),
                          f"Bytes one token's {'MoE' if moe else 'dense'} layer keeps for the "
                          f"backward on a TP rank, checkpointing {ckpt.value}, sequence "
                          f"parallelism {'on' if seq_par else 'off'} "
                          "(parallel.activations.saved_bytes_per_token_layer) [bytes].",
                          (("tp", 1), ("act_bytes", 2)))
                )  # fmt: skip
    return out


# --------------------------------------------------------------------------------------------
# Evaluation at the corners of the flags
# --------------------------------------------------------------------------------------------


class Compiler:
    """Evaluates blocks on symbolic or exact-number ``Arch`` corners."""

    N_POINTS = 2

    def __init__(self) -> None:
        import sympy as sp

        self.fields = arch_fields()
        self.int_syms = _symbols(self.fields.ints, positive=True)
        self.flag_syms = _symbols(self.fields.flags, nonnegative=True)
        self.size_syms = _symbols((*SIZES, "vocab_tp"), positive=True)
        rng = random.Random(20240611)
        names = (*self.fields.ints, *SIZES, "vocab_tp")
        self.points = [
            {n: sp.Integer(rng.randint(2, 2 ** rng.randint(2, 40))) for n in names}
            for _ in range(self.N_POINTS)
        ]
        for point, window in zip(self.points, (1, 2**30), strict=True):
            # a window below every size (min(x, W) = W) and one above most, and some sliding
            # layers: where min(x, W) = x or no layer slides, the window's terms vanish
            point["sliding_window"] = sp.Integer(window)
            point["full_attention_layers"] = point["n_layers"] // 2
        self.traced = _traced_class()
        self.sym_values = {**self.int_syms, **self.size_syms}
        self._cache: dict[tuple[str, int, frozenset[str]], Any] = {}
        _Reads.watched = frozenset((*self.fields.bools, *(f for _, f, _ in self.fields.enums)))

    def arch(self, values: dict[str, Any], on: frozenset[str], traced: bool = False) -> Any:
        """The ``Arch`` at corner ``on`` (the flags set) with integer fields ``values``."""
        from rlmcost.arch import Arch

        kw: dict[str, Any] = {"name": "generated"}
        kw.update({n: values[n] for n in self.fields.ints})
        for flag, parent in (("moe", None), ("shared", "moe"), ("mla", None), ("qlora", "mla"),
                             ("swa", None)):  # fmt: skip
            if flag not in on and (parent is None or parent in on):
                kw.update(
                    {f: None if f in NONE_WHEN_OFF else 0 for f in STRUCTURAL[flag]}
                )
        kw.update({b: b in on for b in self.fields.bools})
        defaults: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(Arch)}
        for flag, field, member in self.fields.enums:
            if flag in on:
                kw[field] = type(defaults[field])(member)
        return (self.traced if traced else Arch)(**kw)

    def evaluate(self, block: Block, values: dict[str, Any], on: frozenset[str],
                 traced: bool = False) -> Any:  # fmt: skip
        import sympy as sp

        if "shared" in on and "moe" not in on:  # shared experts need experts
            on = on - {"shared"}
        if "qlora" in on and "mla" not in on:  # a query latent needs MLA
            on = on - {"qlora"}
        key = (block.name, id(values), on)
        if not traced and key in self._cache:
            return self._cache[key]
        sizes = SimpleNamespace(**{n: values[n] for n in (*SIZES, "vocab_tp")})
        value = sp.expand(block.build(self.arch(values, on, traced), sizes))
        self._cache[key] = value
        return value

    def _valid(self, subset: Iterable[str]) -> bool:
        groups = [self.fields.group(f) for f in subset]
        return len(groups) == len(set(groups))

    def corners(self, flags: tuple[str, ...]) -> list[frozenset[str]]:
        """Every valid subset of ``flags`` (at most one member of each enum)."""
        out = []
        for r in range(len(flags) + 1):
            out += [frozenset(c) for c in combinations(flags, r) if self._valid(c)]
        return out

    def read_flags(self, block: Block) -> tuple[str, ...]:
        """Flags ``block`` depends on: the structural ones and every switch it reads at any
        corner of them (to a fixpoint, since a switch may guard the read of another)."""
        flags: tuple[str, ...] = tuple(STRUCTURAL)
        while True:
            _Reads.fields = set()
            with _zero_tests() as tested:
                for corner in self.corners(flags):
                    self.evaluate(block, self.points[0], corner, traced=True)
            fields = {n for n in self.fields.ints if self.points[0][n] in tested}
            if fields - set(TRIGGERS.values()):
                raise RuntimeError(
                    f"{block.name} zero-tests {sorted(fields - set(TRIGGERS.values()))}; add a "
                    "structural flag for it to STRUCTURAL and TRIGGERS in " + __name__
                )
            read = {f for field in _Reads.fields for f in self.fields.flags_of(field)}
            if read <= set(flags):
                return tuple(f for f in self.fields.flags if f in flags)
            flags = tuple(dict.fromkeys((*flags, *sorted(read))))

    def compile(self, block: Block) -> Any:
        """The block as an exact multilinear expression in its flags."""
        import sympy as sp

        flags = self.read_flags(block)
        corners = self.corners(flags)
        support: set[frozenset[str]] = {frozenset()}
        for point in self.points:
            f = {c: self.evaluate(block, point, c) for c in corners}
            for s in corners:
                if s and _moebius(s, f) != 0:
                    support.add(s)
        sym_values = self.sym_values
        cache: dict[frozenset[str], Any] = {}

        def f_sym(c: frozenset[str]) -> Any:
            if c not in cache:
                cache[c] = self.evaluate(block, sym_values, c)
            return cache[c]

        total = sp.Integer(0)
        for s in sorted(support, key=lambda s: (len(s), sorted(s))):
            coeff = sp.expand(_moebius(s, {t: f_sym(t) for t in _subsets(s)}))
            if coeff != 0:
                total += coeff * sp.Mul(*(self.flag_syms[x] for x in sorted(s)))
        return total


@contextmanager
def _zero_tests() -> Iterator[set[Any]]:
    """Record the arguments of ``rlmcost.arch.is_zero`` wherever the symbolic core calls it."""
    import rlmcost.arch

    original = rlmcost.arch.is_zero
    tested: set[Any] = set()

    def traced(x: Any) -> bool:
        tested.add(x)
        return original(x)

    patched = [m for m in list(sys.modules.values())
               if getattr(m, "is_zero", None) is original]  # fmt: skip
    for m in patched:
        m.is_zero = traced  # type: ignore[attr-defined]
    try:
        yield tested
    finally:
        for m in patched:
            m.is_zero = original  # type: ignore[attr-defined]


def _subsets(s: frozenset[str]) -> list[frozenset[str]]:
    items = sorted(s)
    return [frozenset(c) for r in range(len(items) + 1) for c in combinations(items, r)]


def _moebius(s: frozenset[str], f: dict[frozenset[str], Any]) -> Any:
    """a_S = sum over T subset S of (-1)^{|S| - |T|} f(T)."""
    return sum((f[t] if (len(s) - len(t)) % 2 == 0 else -f[t]) for t in _subsets(s))


# --------------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------------


def _printer(fields: ArchFields) -> Any:
    from sympy.printing.str import StrPrinter

    names = {n: f"a.{n}" for n in (*fields.ints, *fields.flags)}

    class PyPrinter(StrPrinter):
        """Python source of an integer-coefficient expression in ``a.<field>`` and sizes."""

        printmethod = "_rlmcost_python"

        def _print_Symbol(self, expr: Any) -> str:
            return names.get(expr.name, expr.name)

        def _print_Rational(self, expr: Any) -> str:
            if expr.q != 1:
                raise ValueError(f"non-integer coefficient {expr} left in a numerator")
            return str(expr.p)

        def _print_Pow(self, expr: Any, rational: bool = False) -> str:
            if expr.exp.is_number and expr.exp < 0:
                raise ValueError(f"negative power {expr} left in a numerator")
            return super()._print_Pow(expr, rational)

        def _print_Function(self, expr: Any) -> str:
            if type(expr).__name__ == "clog2":
                return f"clog2({code(expr.args[0], (), self)})"
            raise ValueError(f"no Python form for {expr.func}")

        def _print_Max(self, expr: Any) -> str:
            return "maximum(" + ", ".join(code(a, (), self) for a in expr.args) + ")"

        def _print_Min(self, expr: Any) -> str:
            return "minimum(" + ", ".join(code(a, (), self) for a in expr.args) + ")"

    printer = PyPrinter()
    printer.flags = fields.flags
    return printer


def code(expr: Any, sizes: tuple[str, ...], printer: Any) -> str:
    """``expr`` as one exact quotient ``div(num, den)`` (or ``num``), the numerator collected
    by the powers of the ``sizes`` that occur in it."""
    import sympy as sp

    num, den = sp.fraction(sp.together(sp.expand(expr)))
    num = sp.expand(num)
    flags = [sp.Symbol(n, integer=True, nonnegative=True) for n in printer.flags]
    present = [sp.Symbol(n, integer=True, positive=True) for n in sizes]
    present = [s for s in num.free_symbols if s in present]
    present.sort(key=lambda s: sizes.index(s.name))
    if present:
        parts = sp.collect(num, present, evaluate=False)
        keys = sorted(parts, key=lambda k: (-sp.Poly(k, *present).total_degree(), str(k)))
        terms = []
        for k in keys:
            coeff = printer.doprint(sp.collect(parts[k], flags))
            if k == 1:
                terms.append(coeff)
            else:
                term = printer.doprint(k)
                terms.append(term if parts[k] == 1 else f"{term}*({coeff})")
        text = " + ".join(terms).replace("+ -", "- ")
    else:
        text = printer.doprint(sp.collect(num, flags))
    if den == 1:
        return text
    return f"div({text}, {printer.doprint(den)})"


# --------------------------------------------------------------------------------------------
# The module
# --------------------------------------------------------------------------------------------

_HEADER = '''"""The Table III building blocks as exact Python functions (generated, do not edit).

Generated by `{command}` from rlmcost/blocks.py,
rlmcost/parallel/activations.py and rlmcost/parallel/shard.py; tests/test_compiled_blocks.py
fails when this file is stale.

Every function takes ``a``, an :class:`ArchNumbers` (build one with
``rlmcost.compiled.arch_numbers``), and sizes. With Python ints the result is exact: an ``int``
(a ``Fraction`` only where the symbolic core gives a fraction, e.g. bytes per token under
sequence parallelism). With numpy arrays it is elementwise, in the arrays' dtype and float64
after a division: pass float64 arrays where a count can pass 2^63 (FLOPs of large runs) and
read the result as a float64 approximation (exact integers below 2^53). Flags such as
``a.moe`` or ``a.qkv_bias`` are 0 or 1; each expression is the exact multilinear form of the
symbolic block over the flags it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from rlmcost.compiled.runtime import ceil_div, clog2, div, maximum, minimum

__all__ = ["ArchNumbers", "INT_FIELDS", "BOOL_FIELDS", "ENUM_FLAGS", "STRUCTURAL", "FUNCTIONS"]

Num = Any  # an int, a Fraction or a numpy array

INT_FIELDS = {ints}
"""Integer fields of ``rlmcost.arch.Arch``, in order."""

BOOL_FIELDS = {bools}
"""Bool fields of ``Arch``: one 0/1 flag each."""

ENUM_FLAGS = {enums}
"""(flag, field, member value): flag = 1 when the enum field is that (non-default) member."""

STRUCTURAL = {structural}
"""Structural flags and the fields that are 0 when the flag is 0 (``shared`` implies ``moe``)."""


class ArchNumbers(NamedTuple):
    """An ``Arch`` as integers and 0/1 flags (fields may be numpy arrays of equal length)."""

    name: str
{fields}

    @property
    def is_moe(self) -> bool:
        return bool(self.moe)

    @property
    def n_moe_layers(self) -> Num:
        return (self.n_layers - self.first_dense_layers) * self.moe

    @property
    def n_dense_layers(self) -> Num:
        return self.n_layers - self.n_moe_layers
'''


def _function(block: Block, expr: Any, printer: Any) -> str:
    used = {s.name for s in expr.free_symbols}
    defaults = dict(block.defaults)
    params = ["a: ArchNumbers"]
    for s in block.sizes:
        params.append(f"{s}: Num = {defaults[s]}" if s in defaults else f"{s}: Num")
    doc = textwrap.fill(block.doc, 95, initial_indent="    ", subsequent_indent="    ")
    args = "; ".join(f"{s}: {SIZE_DOCS[s]}" for s in block.sizes)
    unused = [s for s in block.sizes if s not in used and s != "tp"]
    if unused:
        args += f"{'. ' if args else ''}Independent of {', '.join(unused)}"
    if args:
        doc += "\n\n" + textwrap.fill(args + ".", 95, initial_indent="    ",
                                        subsequent_indent="    ")  # fmt: skip
    signature = f"def {block.name}({', '.join(params)}) -> Num:"
    if len(signature) > 100:
        signature = f"def {block.name}(\n" + "".join(f"    {p},\n" for p in params) + ") -> Num:"
    lines = [signature, f'    """{doc.lstrip()}', '    """']
    if "vocab_tp" in used:
        lines.append("    vocab_tp = ceil_div(a.vocab, tp)")
    lines.append(_wrap("    return ", code(expr, (*block.sizes, "vocab_tp"), printer)))
    return "\n".join(lines)


def _wrap(prefix: str, text: str, width: int = 100) -> str:
    """``prefix + text``, broken inside parentheses before ``+``/``-`` or at ``, `` when long."""
    if len(prefix) + len(text) <= width:
        return prefix + text
    words: list[str] = []
    for token in text.split(" "):
        if words and words[-1] in ("+", "-"):
            words[-1] += " " + token
        else:
            words.append(token)
    room = width - len(prefix) - 4
    words = [piece for w in words for piece in _split_product(w, room)]
    lines, cur = [], prefix + "("
    indent = " " * (len(prefix) + 4)
    for w in words:
        if len(cur) + 2 + len(w) > width and cur.strip() not in ("", prefix.strip() + " ("):
            lines.append(cur)
            cur = indent + w
        else:
            cur += ("" if cur.endswith("(") else " ") + w
    lines.append(cur + ")")
    return "\n".join(lines)


def _split_product(word: str, room: int) -> list[str]:
    """A product longer than ``room`` cut after single ``*`` signs (a line may end in ``*``)."""
    if len(word) <= room:
        return [word]
    pieces, cur, i = [], "", 0
    while i < len(word):
        ch = word[i]
        cur += ch
        single = ch == "*" and word[i + 1 : i + 2] != "*" and word[i - 1 : i] != "*"
        if single and len(cur) >= room - 30:
            pieces.append(cur)
            cur = ""
        i += 1
    return [*pieces, cur] if cur else pieces


def _literal(value: Any, indent: str = "") -> str:
    """A tuple or dict literal, one item per line when it does not fit on one."""
    flat = repr(value)
    if len(indent) + len(flat) <= 80:
        return flat
    inner = indent + "    "
    if isinstance(value, dict):
        items = [f"{inner}{k!r}: {_literal(v, inner)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{indent}}}"
    items = [f"{inner}{_literal(v, inner)}," for v in value]
    return "(\n" + "\n".join(items) + f"\n{indent})"


def render() -> str:
    """The text of ``blocks_gen.py``."""
    comp = Compiler()
    printer = _printer(comp.fields)
    f = comp.fields
    field_lines = [f"    {n}: Num" for n in (*f.ints, *f.flags)]
    head = _HEADER.format(
        command=COMMAND,
        ints=_literal(f.ints),
        bools=_literal(f.bools),
        enums=_literal(f.enums),
        structural=_literal(STRUCTURAL),
        fields="\n".join(field_lines),
    )
    parts = [head]
    names = []
    for block in blocks():
        parts.append("\n\n" + _function(block, comp.compile(block), printer) + "\n")
        names.append(block.name)
    table = "\n".join(f"    {n}," for n in names)
    parts.append(
        "\n\nFUNCTIONS: dict[str, Callable[..., Num]] = {f.__name__: f for f in (\n"
        f"{table}\n)}}\n"
    )
    parts.append('"""Every generated function by name."""\n')
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--output", type=Path, default=OUTPUT, help="file to write")
    ap.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale; run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
