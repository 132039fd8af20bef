"""Enumerating candidate layouts: parallel degrees that respect the model's divisibility.

Rules (those of :func:`rlmcost.parallel.validate.check_layout`, applied while enumerating so
the search never builds an invalid layout): TP divides the query heads, the KV heads and the
FFN widths (Megatron-LM's split) and stays inside one node (``gpus_per_node``: TP's
all-reduces sit on the critical path and need NVLink); PP is at most the layer count;
interleaving needs L divisible by P_p v; EP divides the experts (MoE only) and, with expert
TP (= TP), is folded inside dp x tp x cp (Megatron-core: etp x ep divides tp x cp x dp); dp x
tp x pp x cp is the GPU count (data parallelism fills the rest). The training batch adds the
rules of `rlmcost train` (``reports.train._check_batch``): the global batch is a multiple of
dp x micro-batch, CP (and TP under SP) divide the sequence, and an interleaved schedule
runs a multiple of P_p micro-batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Checkpointing, PipelineSchedule, ZeroStage

if TYPE_CHECKING:
    import numpy as np

    from rlmcost.compiled.blocks_gen import ArchNumbers
    from rlmcost.run.spec import Run


def powers_of_two(limit: int) -> list[int]:
    """1, 2, 4, ... up to ``limit``."""
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return out


def tp_degrees(a: ArchNumbers, limit: int, kv_subshard: bool = False) -> list[int]:
    """TP degrees up to ``limit`` (the node) that divide the heads, KV heads and FFN widths
    (``compiled.sweep.valid_layouts``' TP rules); with ``kv_subshard`` also the multiples of the
    KV heads that divide the heads (Megatron-core's QKV sub-sharding,
    :mod:`rlmcost.placement.kv_subshard`; the RL plan's trainers)."""
    out = []
    for t in range(1, limit + 1):
        kv = a.n_kv_heads % t == 0 or (kv_subshard and t % a.n_kv_heads == 0)
        ok = a.n_heads % t == 0 and kv
        if not a.moe or a.first_dense_layers:
            ok = ok and a.d_ff % t == 0
        if a.moe:
            ok = ok and a.d_expert % t == 0
            ok = ok and (not a.n_shared_experts or a.d_shared_expert % t == 0)
        if ok:
            out.append(t)
    return out


def engine_tp_degrees(a: ArchNumbers, limit: int) -> list[int]:
    """Generation-engine TP degrees up to ``limit``: powers of two dividing the query heads
    (vLLM's rule; a TP above the KV heads replicates them, ``check_layout(replicate_kv)``)."""
    return [t for t in powers_of_two(limit) if a.n_heads % t == 0]


def check_given_tp(base: Run, tps: tuple[int, ...] | None, etps: tuple[int, ...] | None,
                   groups: str | None = None) -> None:  # fmt: skip
    """SpecError, before any search, for a given trainer TP (``--tp``, a ``--groups`` bracket's
    ``tp=`` on a group that trains) or engine TP (``--rollout-tp``, ``rollout=?[tp=3]``) the
    actor's shape rules out, naming those it allows (the rules of :func:`tp_degrees` and
    :func:`engine_tp_degrees`, as `rlmcost ppo --tp 3` refuses them:
    :func:`rlmcost.parallel.validate.check_layout`); the search would otherwise evaluate none
    of its candidates and report only that nothing fits."""
    from rlmcost.compiled import arch_numbers
    from rlmcost.errors import SpecError
    from rlmcost.specs import get_model

    spec = get_model(base.models.actor)
    a = arch_numbers(spec)
    shape = f"{spec.name}'s heads={a.n_heads}"
    given = [(f"--tp {t}", t, False) for t in tps or ()]
    given += [(f"--rollout-tp {t}", t, True) for t in etps or ()]
    given += _bracket_tps(groups)
    for label, t, engine in given:
        if engine and a.n_heads % t:
            ok = [str(v) for v in range(1, 17) if a.n_heads % v == 0]
            raise SpecError(f"{label}: the engine's TP must divide {shape} (vLLM); try one "
                            f"of {', '.join(ok)}")  # fmt: skip
        if not engine and t not in tp_degrees(a, t, kv_subshard=True):
            raise SpecError(f"{label}: the trainer's TP must divide {shape} and the FFN "
                            f"widths, and divide kv heads={a.n_kv_heads} or be a multiple of it "
                            "(Megatron-LM's split; a multiple: Megatron-core's QKV "
                            "sub-sharding); try one of "
                            f"{', '.join(map(str, tp_degrees(a, 16, True)))}")  # fmt: skip


def _bracket_tps(groups: str | None) -> list[tuple[str, int, bool]]:
    """The ``tp=`` of each ``--groups`` bracket on the engines (``rollout``) or a group of the
    actor: (how to name it, TP, whether it is the engines'); a malformed value is left to the
    groups' own parser, another model's group to the evaluation."""
    from rlmcost.placement.groups import _split_top

    out = []
    for chunk in _split_top(groups or ""):
        head, _, keys = chunk.strip().rstrip("]").partition("[")
        for kv in keys.split(";") if keys else ():
            k, _, v = kv.partition("=")
            member = head.partition("=")[0].strip()
            roles = {w.partition(":")[0].strip() for w in member.split("+")}
            if k.strip() == "tp" and v.strip().isdigit() and int(v) > 0 and (
                    member == "rollout" or "actor" in roles):  # the actor's shape decides
                out.append((f"--groups {head}[tp={int(v)}]", int(v), member == "rollout"))
    return out


def ep_degrees(a: ArchNumbers, limit: int) -> list[int]:
    """EP degrees up to ``limit`` dividing the experts (1 for a dense model)."""
    if not a.moe:
        return [1]
    return [e for e in range(1, limit + 1) if a.n_experts % e == 0]


@dataclass(frozen=True)
class TrainSpace:
    """The intra-model search space of `rlmcost plan train` (each field a list of values)."""

    gpus: tuple[int, ...]
    tp: tuple[int, ...] | None = None  # None: every valid degree within a node
    pp: tuple[int, ...] | None = None  # None: powers of two up to min(L, gpus)
    cp: tuple[int, ...] = (1,)
    ep: tuple[int, ...] | None = None  # None: 1 for dense, powers of two dividing E for MoE
    micro_batch: tuple[int, ...] = (1, 2, 4, 8)
    ckpt: tuple[Checkpointing, ...] = tuple(Checkpointing)
    zero: tuple[ZeroStage, ...] = tuple(ZeroStage)
    sp: tuple[bool, ...] = (False, True)
    virtual_stages: tuple[int, ...] = (1, 2, 3, 4, 6, 8)  # > 1: interleaved 1F1B


@dataclass(frozen=True)
class TrainCandidates:
    """Flat numpy arrays, one element per valid candidate (schedule as integer codes)."""

    gpus: np.ndarray
    dp: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    sp: np.ndarray
    zero: np.ndarray
    ckpt: np.ndarray
    micro_batch: np.ndarray
    schedule: np.ndarray
    virtual_stages: np.ndarray
    enumerated: int  # the full product before the validity rules

    @property
    def size(self) -> int:
        return int(self.dp.size)

    def take(self, index: Any) -> TrainCandidates:
        """The candidates at ``index`` (an int array or a slice)."""
        f = {k: getattr(self, k)[index] for k in _FIELDS}
        return TrainCandidates(**f, enumerated=self.enumerated)

    def layout(self, i: int) -> Any:
        """Candidate ``i`` as a :class:`~rlmcost.parallel.layout.Layout`."""
        from rlmcost.parallel.layout import Layout

        return Layout(
            dp=int(self.dp[i]), tp=int(self.tp[i]), pp=int(self.pp[i]), cp=int(self.cp[i]),
            ep=int(self.ep[i]), sp=bool(self.sp[i]), zero=list(ZeroStage)[int(self.zero[i])],
            ckpt=list(Checkpointing)[int(self.ckpt[i])], micro_batch=int(self.micro_batch[i]),
            schedule=list(PipelineSchedule)[int(self.schedule[i])],
            virtual_stages=int(self.virtual_stages[i]),
        )  # fmt: skip


_FIELDS = ("gpus", "dp", "tp", "pp", "cp", "ep", "sp", "zero", "ckpt", "micro_batch",
           "schedule", "virtual_stages")  # fmt: skip


def train_candidates(
    a: ArchNumbers, space: TrainSpace, batch: int, seq: int, gpus_per_node: int
) -> TrainCandidates:
    """Every valid training layout of ``space`` for ``batch`` sequences of ``seq`` tokens
    (module docstring's rules), built as a numpy grid and masked (no Python loop over
    candidates)."""
    import numpy as np

    from rlmcost.compiled.sweep import valid_layouts

    one_f_one_b = list(PipelineSchedule).index(PipelineSchedule.ONE_F_ONE_B)
    interleaved = list(PipelineSchedule).index(PipelineSchedule.INTERLEAVED)
    top = max(space.gpus)
    tps = space.tp or tuple(tp_degrees(a, min(gpus_per_node, top)))
    pps = space.pp or tuple(p for p in powers_of_two(top) if p <= a.n_layers)
    eps = space.ep or tuple(e for e in powers_of_two(top) if e in ep_degrees(a, top))
    axes = [
        np.asarray(space.gpus), np.asarray(tps), np.asarray(pps), np.asarray(space.cp),
        np.asarray(eps), np.asarray(space.sp, dtype=bool),
        np.asarray([list(ZeroStage).index(ZeroStage(z)) for z in space.zero]),
        np.asarray([list(Checkpointing).index(Checkpointing(c)) for c in space.ckpt]),
        np.asarray(space.micro_batch), np.asarray(space.virtual_stages),
    ]  # fmt: skip
    grids = np.meshgrid(*axes, indexing="ij", sparse=False)
    gpus, tp, pp, cp, ep, sp, zero, ckpt, mb, v = (g.ravel() for g in grids)
    enumerated = int(gpus.size)
    split = tp * pp * cp  # EP is folded inside dp*tp*cp (valid_layouts: etp*ep | tp*cp*dp)
    ok = (np.mod(gpus, split) == 0) & (tp <= gpus_per_node)
    dp = np.where(ok, gpus // np.maximum(split, 1), 1)
    ok &= ~(sp & (tp == 1))  # SP is a TP option: one spelling of "off"
    schedule = np.where(v > 1, interleaved, one_f_one_b)
    ok &= (v == 1) | (pp > 1)
    ok &= valid_layouts(a, dp, tp, pp, cp, ep, mb, schedule, v)
    unit = dp * mb
    ok &= np.mod(batch, unit) == 0
    ok &= (np.mod(seq, cp) == 0) & (~sp | (np.mod(seq, tp) == 0))
    n_mb = batch // np.maximum(unit, 1)
    ok &= (v == 1) | (np.mod(n_mb, pp) == 0)
    idx = np.flatnonzero(ok)
    return TrainCandidates(
        gpus=gpus[idx], dp=dp[idx], tp=tp[idx], pp=pp[idx], cp=cp[idx], ep=ep[idx],
        sp=sp[idx], zero=zero[idx], ckpt=ckpt[idx], micro_batch=mb[idx],
        schedule=schedule[idx], virtual_stages=v[idx], enumerated=enumerated,
    )  # fmt: skip
