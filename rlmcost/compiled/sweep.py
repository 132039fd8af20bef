"""Vectorized training-step evaluation: memory per device, fit and time bound of many layouts.

:func:`sweep_train_steps` is :func:`rlmcost.compiled.train_step.train_step` for numpy arrays of
candidates: every layout field, the micro-batch, the sequences and the sequence length may be
an array, and all broadcast against each other. Shape the inputs as a grid to share work, e.g.
layouts along axis 0, micro-batches along axis 1, lengths along axis 2: what depends on the
layout alone (the TP shard's parameters and saved bytes per token) is then computed once per
layout, not once per candidate.

Numbers are float64: memory bytes are exact below 2^53 (9 PB) up to the final ``ceil`` of the
activation bytes, which may differ from the exact int by one byte where the fraction rounds;
FLOPs are float64 approximations (they pass 2^63 for large runs). The exact scalar
counterpart, for the rows a planner reports, is ``train_step``; ``tests/test_compiled_sweep.py``
checks the two elementwise on random candidates.

Peak stage: the symbolic model takes the largest of all P_p stages. Only stage 0, the stages
that hold a MoE model's leading dense layers, the next one and the last stage can be it: past
those, a middle stage's layers, in-flight micro-batches and ZeRO shards never grow with its
index, so its total is at most that of the first pure middle stage. The sweep evaluates those
candidates only (three for a model without leading dense layers).

Enum fields take integer codes, the position of the member in its enum (:func:`codes`):
``ZeroStage`` 0..3, ``Checkpointing`` none/selective/full = 0/1/2, ``PipelineSchedule``
gpipe/1f1b/interleaved/zero-bubble = 0/1/2/3; scalars may be members.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from rlmcost.choices import AttnCounting, Head
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import Dtypes, saved_bytes
from rlmcost.parallel.layout import Checkpointing, PipelineSchedule, ZeroStage

if TYPE_CHECKING:
    import numpy as np

_GPIPE, _ONE_F_ONE_B, _INTERLEAVED, _ZERO_BUBBLE = (
    list(PipelineSchedule).index(s)
    for s in (PipelineSchedule.GPIPE, PipelineSchedule.ONE_F_ONE_B, PipelineSchedule.INTERLEAVED,
              PipelineSchedule.ZERO_BUBBLE)
)  # fmt: skip


def codes(enum_type: type[Enum], values: Any) -> np.ndarray:
    """Integer codes of ``values`` (members or their CLI spellings) in ``enum_type``."""
    import numpy as np

    members = list(enum_type)
    return np.array([members.index(enum_type(v)) for v in np.atleast_1d(values)], dtype=np.int64)


def _code(enum_type: type[Enum], value: Any) -> Any:
    import numpy as np

    if isinstance(value, (Enum, str)):
        return list(enum_type).index(enum_type(value))
    return np.asarray(value)


@dataclass(frozen=True)
class TrainSweep:
    """Per candidate (arrays of the broadcast shape, float64 unless said): the most loaded
    stage's bytes by component, whether the layout is valid and fits, and the time bound."""

    valid: np.ndarray  # bool: validate.check_layout would accept the layout
    fits: np.ndarray  # bool: valid and memory_bytes <= hbm_bytes
    memory_bytes: np.ndarray  # total of the peak stage
    weights: np.ndarray
    gradients: np.ndarray
    optimizer: np.ndarray
    activations: np.ndarray
    logits: np.ndarray
    buffers: np.ndarray
    peak_stage: np.ndarray  # int64
    work_flops: np.ndarray
    bubble: np.ndarray
    compute_s: np.ndarray
    memory_s: np.ndarray
    time_bound_s: np.ndarray

    @property
    def size(self) -> int:
        return int(self.memory_bytes.size)


def valid_layouts(a: g.ArchNumbers, dp: Any, tp: Any, pp: Any, cp: Any, ep: Any,
                  micro_batch: Any, schedule: Any, virtual_stages: Any) -> Any:  # fmt: skip
    """``compiled.memory.layout_ok`` elementwise (the rules of ``validate.check_layout``)."""
    import numpy as np

    ok = (dp >= 1) & (tp >= 1) & (pp >= 1) & (cp >= 1) & (ep >= 1) & (micro_batch >= 1)
    ok = ok & (virtual_stages >= 1) & (np.mod(a.n_heads, tp) == 0)
    ok = ok & (np.mod(a.n_kv_heads, tp) == 0) & (pp <= a.n_layers)
    if not a.moe or a.first_dense_layers:
        ok = ok & (np.mod(a.d_ff, tp) == 0)
    if a.moe:
        ok = ok & (np.mod(a.d_expert, tp) == 0)
        if a.n_shared_experts:
            ok = ok & (np.mod(a.d_shared_expert, tp) == 0)
        ok = ok & (np.mod(a.n_experts, ep) == 0)
    else:
        ok = ok & (ep == 1)
    interleaved_ok = (schedule == _INTERLEAVED) & (np.mod(a.n_layers, pp * virtual_stages) == 0)
    return ok & ((virtual_stages == 1) | interleaved_ok)


def _in_flight(schedule: Any, s: Any, p: Any, m: Any, v: Any) -> Any:
    """``parallel.pipeline.in_flight_layer_microbatches`` elementwise."""
    import numpy as np

    interleaved = np.minimum(2 * (p - s - 1) + (v - 1) * p + 1, m * v) / v
    return np.select(
        [p == 1, schedule == _GPIPE, schedule == _ZERO_BUBBLE,
         (schedule == _INTERLEAVED) & (v > 1)],
        [1.0, m, np.minimum(2 * (p - s) - 1, m), interleaved],
        default=np.minimum(p - s, m),
    )  # fmt: skip


def _choose(code: Any, options: list[Any]) -> Any:
    """options[code] elementwise; the options may be arrays or scalars."""
    import numpy as np

    if np.ndim(code) == 0:
        return options[int(code)]
    return np.choose(np.asarray(code, dtype=np.int64), [np.asarray(o) for o in options])


def sweep_train_steps(
    arch: Any,
    hardware: Any,
    *,
    sequences: Any,
    seq_len: Any,
    dp: Any = 1,
    tp: Any = 1,
    pp: Any = 1,
    cp: Any = 1,
    ep: Any = 1,
    sp: Any = False,
    zero: Any = ZeroStage.NONE,
    ckpt: Any = Checkpointing.NONE,
    micro_batch: Any = 1,
    schedule: Any = PipelineSchedule.ONE_F_ONE_B,
    virtual_stages: Any = 1,
    workload: Any | None = None,
    head: Head = Head.LM,
    counting: AttnCounting = AttnCounting.FULL,
    recompute: bool = True,
    compute_efficiency: float = 1.0,
    bandwidth_efficiency: float = 1.0,
) -> TrainSweep:
    """Memory, fit and time bound of one training step for every candidate (module docstring).

    Same meaning and defaults as ``train_step``'s arguments, with the ``Layout`` fields spread
    out as arrays. Invalid candidates (a TP degree that does not divide the heads, ...) have
    ``valid`` False and ``fits`` False; their other numbers are meaningless.
    """
    import numpy as np

    f64 = np.float64
    a = arch_numbers(arch)
    dt = workload if isinstance(workload, Dtypes) else Dtypes.of(workload)
    dp, tp, pp, cp, ep = (np.asarray(x, dtype=f64) for x in (dp, tp, pp, cp, ep))
    mbs, v = np.asarray(micro_batch, dtype=f64), np.asarray(virtual_stages, dtype=f64)
    seqs, seq_len = np.asarray(sequences, dtype=f64), np.asarray(seq_len, dtype=f64)
    sp = np.asarray(sp, dtype=bool)
    zero = _code(ZeroStage, zero)
    ckpt = _code(Checkpointing, ckpt)
    schedule = _code(PipelineSchedule, schedule)
    lm = Head(head) is Head.LM

    valid = valid_layouts(a, dp, tp, pp, cp, ep, mbs, schedule, v)
    valid = valid & (seqs >= 1) & (seq_len >= 1)
    # data split: the busiest data rank's sequences, micro-batches and tokens
    shards = dp * ep
    per_shard = -(-seqs // shards)
    mb = np.minimum(mbs, per_shard)
    n_mb = -(-per_shard // mb)
    mb_tokens = mb * -(-seq_len // cp)

    # per layout: the TP shard's parameters and saved activation bytes per token
    layer_dense = g.params_layer_dense(a, tp)
    routed = g.params_routed_experts(a, tp)
    moe_dense = g.params_layer_moe(a, tp) - routed
    routed_here = routed // ep
    embedding = g.params_embedding(a, tp)
    vocab_tp = -(-a.vocab // tp)
    out_head = g.params_head_lm(a, tp) if lm else g.params_head_value(a, tp)
    tied_copy = vocab_tp * a.d_model if lm and a.tie_embeddings else out_head
    final_norm = g.params_norm(a)
    vocab_per_rank = vocab_tp if lm else 1.0
    x = dt.activation

    def saved(kind_moe: bool, mode: Any) -> Any:
        """Saved bytes per token of one layer kind under checkpointing ``mode`` and ``sp``."""

        def one(q: bool) -> Any:
            if np.ndim(mode) == 0:
                return saved_bytes(a, tp, q, list(Checkpointing)[int(mode)], kind_moe, x)
            return _choose(mode, [saved_bytes(a, tp, q, c, kind_moe, x) for c in Checkpointing])

        if np.ndim(sp) == 0:
            return one(bool(sp))
        return np.where(sp, one(True), one(False))

    saved_d, saved_m = saved(False, ckpt), (saved(True, ckpt) if a.moe else 0.0)
    full = ckpt == list(Checkpointing).index(Checkpointing.FULL)
    none = list(Checkpointing).index(Checkpointing.NONE)
    rebuilt_d = saved(False, none) if np.any(full) else 0.0
    rebuilt_m = saved(True, none) if a.moe and np.any(full) else 0.0
    norm_input = x * a.d_model / np.where(sp, tp, 1.0)

    k_opt = 8 if dt.weight == 4 else 12
    w = dt.weight
    d_shards, e_shards = dp * cp * ep, dp * cp
    z3, z2, z0 = zero == 3, zero >= 2, zero == 0

    def states(p_dense: Any, p_expert: Any) -> tuple[Any, Any, Any]:
        sd, se = -(-p_dense // d_shards), -(-p_expert // e_shards)
        weights = w * (np.where(z3, sd, p_dense) + np.where(z3, se, p_expert))
        grads = w * (np.where(z2, sd, p_dense) + np.where(z2, se, p_expert))
        opt = k_opt * (np.where(z0, p_dense, sd) + np.where(z0, p_expert, se))
        return weights, grads, opt

    base, extra = np.floor_divide(a.n_layers, pp), np.mod(a.n_layers, pp)
    n_dense_total = a.first_dense_layers if a.moe else a.n_layers
    last_index = pp - 1
    candidates: list[Any] = list(range(max(n_dense_total if a.moe else 0, 1) + 1))
    candidates.append(last_index)
    best: dict[str, Any] = {}
    best_none: dict[str, Any] = {}
    any_z3 = bool(np.any(z3))
    for i, s in enumerate(candidates):
        s = np.asarray(s, dtype=f64)
        exists = s < pp
        count = base + (s < extra)
        start = s * base + np.minimum(s, extra)
        n_dense = np.clip(np.minimum(start + count, n_dense_total) - start, 0, None)
        n_moe = count - n_dense
        first, last = s == 0, s == last_index
        o = np.where(first, out_head, tied_copy)
        p_dense = n_dense * layer_dense + n_moe * moe_dense + first * embedding
        p_dense = p_dense + last * (o + final_norm)
        p_expert = n_moe * routed_here
        weights, grads, opt = states(p_dense, p_expert)
        unit = np.maximum(
            np.maximum(np.where(n_dense > 0, layer_dense, 0.0),
                       np.where(n_moe > 0, moe_dense + routed_here, 0.0)),
            np.maximum(np.where(first, embedding, 0.0), np.where(last, o, 0.0)),
        )  # fmt: skip
        buffers = np.where(z3, 2 * w * unit, 0.0)
        kept = n_dense * saved_d + n_moe * saved_m + last * norm_input
        act = _in_flight(schedule, s, pp, n_mb, v) * mb_tokens * kept
        if np.any(full):
            rebuilt = np.maximum(np.where(n_dense > 0, rebuilt_d, 0.0),
                                 np.where(n_moe > 0, rebuilt_m, 0.0))  # fmt: skip
            act = act + np.where(full, mb_tokens * rebuilt, 0.0)
        act = np.ceil(act)
        logits = last * mb_tokens * vocab_per_rank * dt.logits
        rest = act + logits
        total = np.where(exists, weights + grads + opt + rest + buffers, -np.inf)
        parts = {"total": total, "weights": weights, "gradients": grads, "optimizer": opt,
                 "activations": act, "logits": logits, "buffers": buffers,
                 "peak_stage": s}  # fmt: skip
        _keep_max(best, parts, i == 0)
        if any_z3:  # the same stage with unsharded states: the weights a ZeRO-3 step reads
            p_all = p_dense + p_expert
            total_none = np.where(exists, (2 * w + k_opt) * p_all + rest, -np.inf)
            _keep_max(best_none, {"total": total_none, "weights": w * p_all}, i == 0)

    weights_read = best["weights"]
    if any_z3:
        weights_read = np.where(z3, best_none["weights"], weights_read)
    c, h = AttnCounting(counting).value, Head(head).value
    work = g.FUNCTIONS[f"work_train_{c}_{h}"](a, seqs, seq_len)
    if recompute and np.any(ckpt != none):
        extra_work = [0.0] + [
            g.FUNCTIONS[f"work_recompute_{m.value}_{c}"](a, seqs, seq_len)
            for m in (Checkpointing.SELECTIVE, Checkpointing.FULL)
        ]
        work = work + _choose(ckpt, extra_work)
    busy = work * (shards * per_shard / seqs)
    peak_flops = hardware.peak(dt.compute) * compute_efficiency
    compute_s = busy / (dp * tp * pp * cp * ep * peak_flops)
    step_bytes = 2 * weights_read + 2 * best["gradients"] + 2 * best["optimizer"]
    memory_s = step_bytes / (hardware.hbm_bandwidth_bytes_per_s * bandwidth_efficiency)
    interleaved = schedule == _INTERLEAVED
    no_bubble = (pp == 1) | (schedule == _ZERO_BUBBLE)
    bubble = np.where(no_bubble, 0.0, (pp - 1) / (np.where(interleaved, v, 1.0) * n_mb))
    time_bound = np.maximum(compute_s, memory_s) * (1 + bubble)

    shape = np.broadcast_shapes(*(np.shape(b) for b in (*best.values(), valid, time_bound)))

    def full_shape(arr: Any, dtype: Any = f64) -> Any:
        return np.broadcast_to(np.asarray(arr, dtype=dtype), shape)

    total = full_shape(best["total"])
    valid = full_shape(valid, bool)
    return TrainSweep(
        valid=valid,
        fits=valid & (total <= hardware.hbm_bytes),
        memory_bytes=total,
        weights=full_shape(best["weights"]),
        gradients=full_shape(best["gradients"]),
        optimizer=full_shape(best["optimizer"]),
        activations=full_shape(best["activations"]),
        logits=full_shape(best["logits"]),
        buffers=full_shape(best["buffers"]),
        peak_stage=full_shape(best["peak_stage"], np.int64),
        work_flops=full_shape(work),
        bubble=full_shape(bubble),
        compute_s=full_shape(compute_s),
        memory_s=full_shape(memory_s),
        time_bound_s=full_shape(time_bound),
    )


def _keep_max(best: dict[str, Any], parts: dict[str, Any], first: bool) -> None:
    """Keep, elementwise, the parts of the stage with the largest total (the earliest of
    equals, as ``max`` over the stages does)."""
    import numpy as np

    if first:
        best.update(parts)
        return
    better = parts["total"] > best["total"]
    for k, val in parts.items():
        best[k] = np.where(better, val, best[k])
