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
candidates only (three for a model without leading dense layers). EP is folded inside P_t P_c
P_d (``parallel.layout``); ``etp`` None is expert TP = TP.

Enum fields take integer codes, the position of the member in its enum (:func:`codes`):
``ZeroStage`` 0..3, ``Checkpointing`` none/selective/full = 0/1/2, ``PipelineSchedule``
gpipe/1f1b/interleaved/zero-bubble = 0/1/2/3; scalars may be members."""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import TYPE_CHECKING, Any

from rlmcost.choices import AttnCounting, Head
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import Dtypes, moe_layer_dense, per_kv_arch, saved_bytes
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Checkpointing, PipelineSchedule, ZeroStage

if TYPE_CHECKING:
    import numpy as np

_GPIPE, _ONE_F_ONE_B, _INTERLEAVED, _ZERO_BUBBLE = (
    list(PipelineSchedule).index(s)
    for s in (PipelineSchedule.GPIPE, PipelineSchedule.ONE_F_ONE_B, PipelineSchedule.INTERLEAVED,
              PipelineSchedule.ZERO_BUBBLE)
)  # fmt: skip


_NO_ZERO, _OS_G, _OS_G_P = (
    list(ZeroStage).index(z) for z in (ZeroStage.NONE, ZeroStage.OS_G, ZeroStage.OS_G_P)
)


def codes(enum_type: type[Enum], values: Any) -> np.ndarray:
    """Integer codes of ``values`` (members or their CLI spellings) in ``enum_type``."""
    import numpy as np

    members = list(enum_type)
    return np.array([members.index(enum_type(v)) for v in np.atleast_1d(values)], dtype=np.int64)


def _code(enum_type: type[Enum], value: Any) -> Any:
    """A member (or spelling) as its code; an array of codes checked to be in range."""
    import numpy as np

    if isinstance(value, (Enum, str)):
        return list(enum_type).index(enum_type(value))
    arr = np.asarray(value, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= len(enum_type)):
        raise SpecError(
            f"{enum_type.__name__} codes must be 0..{len(enum_type) - 1} "
            f"({', '.join(str(m) for m in enum_type)}); use codes({enum_type.__name__}, ...)"
        )
    return arr


@dataclass(frozen=True)
class TrainSweep:
    """Per candidate (arrays of the broadcast shape, float64 unless said): whether the layout
    is valid and fits, the most loaded stage's total bytes and the time bound. The peak
    stage's bytes by component are picked when read (``weights``, ``gradients``,
    ``optimizer``, ``activations``, ``logits``, ``buffers``, ``peak_stage``)."""

    valid: np.ndarray  # bool: validate.check_layout would accept the layout
    fits: np.ndarray  # bool: valid and memory_bytes <= the usable capacity (hbm_capacity_bytes)
    memory_bytes: np.ndarray  # total of the peak stage
    work_flops: np.ndarray
    bubble: np.ndarray
    compute_s: np.ndarray
    memory_s: np.ndarray
    time_bound_s: np.ndarray
    _peak: np.ndarray = field(repr=False)  # index into the stage candidates
    _parts: dict[str, list[Any]] = field(repr=False)  # component -> value per candidate stage

    @property
    def size(self) -> int:
        return int(self.memory_bytes.size)

    def _pick(self, name: str, dtype: Any = None) -> np.ndarray:
        import numpy as np

        value = _choose(self._peak, self._parts[name])
        return np.broadcast_to(np.asarray(value, dtype=dtype or np.float64), self._peak.shape)

    weights = property(lambda self: self._pick("weights"))
    gradients = property(lambda self: self._pick("gradients"))
    optimizer = property(lambda self: self._pick("optimizer"))
    activations = property(lambda self: self._pick("activations"))
    logits = property(lambda self: self._pick("logits"))
    buffers = property(lambda self: self._pick("buffers"))
    peak_stage = property(lambda self: self._pick("stage", "int64"))


def valid_layouts(a: g.ArchNumbers, dp: Any, tp: Any, pp: Any, cp: Any, ep: Any,
                  micro_batch: Any, schedule: Any, virtual_stages: Any,
                  etp: Any = None) -> Any:  # fmt: skip
    """``compiled.memory.layout_ok`` elementwise (``validate.check_layout``'s rules)."""
    import numpy as np

    etp = tp if etp is None else etp  # Megatron-core's default expert TP
    kv = (np.mod(a.n_kv_heads, tp) == 0) | (np.mod(tp, a.n_kv_heads) == 0)  # or sub-sharded
    ok = (dp >= 1) & (tp >= 1) & (pp >= 1) & (cp >= 1) & (ep >= 1) & (micro_batch >= 1) & kv
    ok = ok & (virtual_stages >= 1) & (np.mod(a.n_heads, tp) == 0) & (pp <= a.n_layers)
    if not a.moe or a.first_dense_layers:
        ok = ok & (np.mod(a.d_ff, tp) == 0)
    if a.moe:
        ok = ok & (np.mod(a.d_expert, tp) == 0)
        if a.n_shared_experts:
            ok = ok & (np.mod(a.d_shared_expert, tp) == 0)
        ok = ok & (np.mod(a.n_experts, ep) == 0) & (etp >= 1) & (np.mod(a.d_expert, etp) == 0)
        ok = ok & (np.mod(tp * cp * dp, etp * ep) == 0)  # the expert grid fits
    else:
        ok = ok & (ep == 1)
    interleaved_ok = (schedule == _INTERLEAVED) & (pp > 1)  # Megatron-core: v > 1 needs pp > 1
    interleaved_ok = interleaved_ok & (np.mod(a.n_layers, pp * virtual_stages) == 0)
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
    code = np.asarray(code, dtype=np.int64)
    out = np.asarray(options[0])
    for i, o in enumerate(options[1:], 1):
        out = np.where(code == i, o, out)
    return out


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
    etp: Any = None,
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

    etp = tp if etp is None else np.asarray(etp, dtype=f64)
    valid = valid_layouts(a, dp, tp, pp, cp, ep, mbs, schedule, v, etp)
    valid = valid & (seqs >= 1) & (seq_len >= 1)
    # data split: the busiest data rank's sequences, micro-batches and tokens
    shards = dp
    per_shard = -(-seqs // shards)
    mb = np.minimum(mbs, per_shard)
    n_mb = -(-per_shard // mb)
    mb_tokens = mb * -(-seq_len // cp)

    # per layout: the TP shard's parameters and saved activation bytes per token, evaluated
    # once per distinct TP degree and gathered (a table lookup per quantity)
    tp_values, tp_index = _distinct(tp)
    none = list(Checkpointing).index(Checkpointing.NONE)
    full_code = list(Checkpointing).index(Checkpointing.FULL)
    full = ckpt == full_code
    any_full = bool(np.any(full))
    x = dt.activation

    def per_tp(value: Any) -> Any:
        return _along(value, tp_values)[tp_index]

    by_tp = per_kv_arch(a, tp_values)  # one KV head per rank above the KV heads
    layer_dense = by_tp(g.params_layer_dense)[tp_index]
    moe_dense = by_tp(moe_layer_dense)[tp_index]
    routed_here = g.params_routed_experts(a, etp) // ep
    embedding = per_tp(g.params_embedding(a, tp_values))
    vocab_tp = per_tp(-(-a.vocab // tp_values))
    out_head = per_tp(g.params_head_lm(a, tp_values) if lm else g.params_head_value(a, tp_values))
    tied_copy = vocab_tp * a.d_model if lm and a.tie_embeddings else out_head
    final_norm = g.params_norm(a)
    vocab_per_rank = vocab_tp if lm else 1.0

    sp_index = sp.astype(np.int64)

    def saved(kind_moe: bool, mode: Any) -> Any:
        """Saved bytes per token of one layer kind: a (TP degree, checkpointing, sp) table."""
        table = np.stack([
            np.stack([by_tp(lambda b, t, q=q, c=c: saved_bytes(b, t, q, c, kind_moe, x))
                      for c in Checkpointing], axis=-1)
            for q in (False, True)
        ], axis=-1)  # fmt: skip
        return table[tp_index, mode, sp_index]

    saved_d = saved(False, ckpt)
    saved_m = saved(True, ckpt) if a.moe else 0.0
    rebuilt_d = saved(False, none) if any_full else 0.0
    rebuilt_m = saved(True, none) if a.moe and any_full else 0.0
    norm_input = x * a.d_model / np.where(sp, tp, 1.0)

    k_opt = 8 if dt.weight == 4 else 12
    w = dt.weight
    d_shards, e_shards = dp * cp, np.maximum(tp * cp * dp // (etp * ep), 1)
    z3, z2, z0 = zero == _OS_G_P, zero >= _OS_G, zero == _NO_ZERO

    def states(p_dense: Any, p_expert: Any) -> tuple[Any, Any, Any]:
        sd, se = np.ceil(p_dense / d_shards), np.ceil(p_expert / e_shards)
        weights = w * (np.where(z3, sd, p_dense) + np.where(z3, se, p_expert))
        grads = (dt.grad or w) * (np.where(z2, sd, p_dense) + np.where(z2, se, p_expert))
        opt = k_opt * (np.where(z0, p_dense, sd) + np.where(z0, p_expert, se))
        return weights, grads, opt

    base, extra = np.floor_divide(a.n_layers, pp), np.mod(a.n_layers, pp)
    n_dense_total = a.first_dense_layers if a.moe else a.n_layers
    last_index = pp - 1
    candidates: list[Any] = list(range(max(n_dense_total if a.moe else 0, 1) + 1))
    candidates.append(last_index)
    logits_per_token = vocab_per_rank * dt.logits
    any_z3 = bool(np.any(z3))
    parts: dict[str, list[Any]] = {k: [] for k in ("weights", "gradients", "optimizer",
                                                   "buffers", "activations", "logits", "stage")}
    best: tuple[Any, ...] | None = None
    best_none: tuple[Any, ...] | None = None
    for i, s in enumerate(candidates):
        s = np.asarray(s, dtype=f64)
        # what depends on the layout alone (no micro-batch, no length)
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
        base_total = np.where(s < pp, weights + grads + opt + buffers, -np.inf)
        step_bytes = 2 * (np.where(z3, 0.0, weights) + grads + opt)  # + gathered weights, below
        # activation bytes per token of a micro-batch, then per candidate
        fl = _in_flight(schedule, s, pp, n_mb, v)  # head input once if interleaved (head_in_flight)
        head_fl = np.where((schedule == _INTERLEAVED) & (v > 1), np.minimum(1.0, fl), fl)
        per_token = fl * (n_dense * saved_d + n_moe * saved_m) + last * head_fl * norm_input
        if any_full:
            rebuilt = np.maximum(np.where(n_dense > 0, rebuilt_d, 0.0),
                                 np.where(n_moe > 0, rebuilt_m, 0.0))  # fmt: skip
            per_token = per_token + np.where(full, rebuilt, 0.0)
        act = np.ceil(per_token * mb_tokens)
        logits = last * logits_per_token * mb_tokens
        rest = act + logits
        total = base_total + rest
        for k, val in (("weights", weights), ("gradients", grads), ("optimizer", opt),
                       ("buffers", buffers), ("activations", act), ("logits", logits),
                       ("stage", s)):  # fmt: skip
            parts[k].append(val)
        best = _keep_max(best, i, total, step_bytes)
        if any_z3:  # the same stage with unsharded states: the weights a ZeRO-3 step reads
            p_all = p_dense + p_expert
            total_none = np.where(s < pp, (2 * w + k_opt) * p_all, -np.inf) + rest
            best_none = _keep_max(best_none, i, total_none, 2 * w * p_all)

    assert best is not None  # candidates is never empty
    peak_total, peak, step_bytes = best
    if best_none is not None:  # any_z3
        step_bytes = step_bytes + np.where(z3, best_none[2], 0.0)
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
    compute_s = busy / (dp * tp * pp * cp * peak_flops)
    memory_s = step_bytes / (hardware.hbm_bandwidth_bytes_per_s * bandwidth_efficiency)
    interleaved = schedule == _INTERLEAVED
    no_bubble = (pp == 1) | (schedule == _ZERO_BUBBLE)
    bubble = np.where(no_bubble, 0.0, (pp - 1) / (np.where(interleaved, v, 1.0) * n_mb))
    time_bound = np.maximum(compute_s, memory_s) * (1 + bubble)

    shape = np.broadcast_shapes(np.shape(peak_total), np.shape(valid), np.shape(time_bound))

    def out(arr: Any, dtype: Any = f64) -> Any:
        return np.broadcast_to(np.asarray(arr, dtype=dtype), shape)

    total, valid = out(peak_total), out(valid, bool)
    return TrainSweep(
        valid=valid,
        fits=valid & (total <= hardware.hbm_capacity_bytes),
        memory_bytes=total,
        work_flops=out(work),
        bubble=out(bubble),
        compute_s=out(compute_s),
        memory_s=out(memory_s),
        time_bound_s=out(time_bound),
        _peak=out(peak, np.int64),
        _parts=parts,
    )


def _keep_max(best: tuple[Any, ...] | None, index: int, total: Any, *carried: Any) -> tuple:
    """(largest total so far, its stage candidate's index, the values ``carried`` with it),
    elementwise; the earliest of equals wins, as ``max`` over the stages does."""
    import numpy as np

    if best is None:
        return (total, np.zeros(np.shape(total), dtype=np.int64), *carried)
    better = total > best[0]
    return (np.where(better, total, best[0]), np.where(better, index, best[1]),
            *(np.where(better, c, b) for c, b in zip(carried, best[2:], strict=True)))  # fmt: skip


def _along(value: Any, values: Any) -> Any:
    """``value`` (a scalar or an array over ``values``) as a float64 array over ``values``."""
    import numpy as np

    return np.broadcast_to(np.asarray(value, dtype=np.float64), np.shape(values))


def _distinct(values: Any) -> tuple[Any, Any]:
    """(table keys, index of each element's key): integer degrees 1..max index a table
    directly; anything else through ``np.unique``."""
    import numpy as np

    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0:
        return arr.reshape(1), np.zeros((), dtype=np.int64)
    ints = arr.astype(np.int64)
    if arr.size and ints.min() >= 1 and ints.max() <= 1 << 16 and np.array_equal(ints, arr):
        return np.arange(1, ints.max() + 1, dtype=np.float64), ints - 1
    keys, index = np.unique(arr, return_inverse=True)
    return keys, index.reshape(arr.shape)
