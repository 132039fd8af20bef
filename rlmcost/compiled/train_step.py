"""One training step of one layout: peak memory per device, fit and roofline time bound.

The scalar reference of :mod:`rlmcost.compiled.sweep` (which evaluates arrays of layouts) and
what a planner reports for a chosen candidate: exact ints for memory and FLOPs, floats for
seconds. The step is one optimizer step over ``sequences`` sequences of ``seq_len`` tokens
(the global batch), as the Training invocation of ``reports.estimate`` with one mini-batch:

* memory: :func:`rlmcost.compiled.memory.memory_per_rank` in ``Mode.TRAIN`` (the stage with the
  largest total); it fits when the total is at most ``hardware.hbm_capacity_bytes`` (what
  the device gives programs, as the RL evaluation checks);
* work: ``blocks.work_train`` (3 x forward, attention counted ``counting``) of all sequences,
  plus ``parallel.activations.work_recompute`` under checkpointing when ``recompute``;
* time: ``max(compute, memory)`` stretched by the pipeline bubble (``rlmcost.timing``'s
  roofline; Williams et al. 2009), where compute = busiest data rank's share of the FLOPs
  (P_d ceil(n / P_d) / n of the total; EP is folded inside P_t P_c P_d) / (N x peak x
  compute_efficiency) and memory = (2 x weights read (gathered under ZeRO-3) + 2 x
  gradients + 2 x optimizer states) / (HBM bandwidth x bandwidth_efficiency) per device;
  bubble per :func:`rlmcost.parallel.pipeline.bubble_fraction`. Communication is not included.

With ``recompute=False`` and unit efficiencies the bound is the estimate's Training phase for
one step (``reports.estimate._Context.time``), which leaves recomputation out.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from rlmcost.choices import AttnCounting, Head
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import Dtypes, MemoryBreakdown, Mode, memory_per_stage
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.pipeline import bubble_fraction


@dataclass(frozen=True)
class TrainStep:
    """One training step of one layout: exact bytes and FLOPs, float seconds."""

    memory: MemoryBreakdown  # the most loaded rank (its stage: ``peak_stage``)
    peak_stage: int
    hbm_bytes: int
    work_flops: int  # all ranks, recomputation included when asked
    busy_flops: Fraction  # work as the busiest data rank sees it (x load imbalance)
    bubble: Fraction
    compute_s: float
    memory_s: float
    time_bound_s: float

    @property
    def fits(self) -> bool:
        return self.memory.total <= self.hbm_bytes


def work_train_step(
    arch: Any,
    ckpt: Checkpointing,
    sequences: Any,
    seq_len: Any,
    head: Head = Head.LM,
    counting: AttnCounting = AttnCounting.FULL,
    recompute: bool = True,
) -> Any:
    """FLOPs of one step: ``blocks.work_train`` + ``activations.work_recompute`` (if asked)."""
    a = arch_numbers(arch)
    c, h = AttnCounting(counting).value, Head(head).value
    work = g.FUNCTIONS[f"work_train_{c}_{h}"](a, sequences, seq_len)
    ckpt = Checkpointing(ckpt)
    if recompute and ckpt is not Checkpointing.NONE:
        work = work + g.FUNCTIONS[f"work_recompute_{ckpt.value}_{c}"](a, sequences, seq_len)
    return work


def work_per_stage_rank(
    arch: Any,
    layout: Layout,
    sequences: int,
    seq_len: int,
    counting: AttnCounting = AttnCounting.FULL,
) -> list[int | Fraction]:
    """FLOPs of one rank of each pipeline stage in one training step (LM head, router
    counted): the numeric ``parallel.cost.training_cost(...).ranks`` with ``omit_router=False``
    (the most loaded rank is their max; the global work their sum times P_d P_t P_c).

    Per pipeline stage, on its TP shard: 3 x (the rank's dense projections over its
    n / P_d sequences' tokens, attention / P_c, the LM head on the last stage, and its share of
    the routed experts: the stage's n m k token copies spread evenly over its P_t P_c P_d ranks
    on Megatron-core's expert grid, the same FLOPs as the n m / (P_d P_c) tokens through a
    TP-split expert, whatever ETP and P_e are), plus the recomputed forward under
    checkpointing (attention for selective, the body for full). ``arch``: a numeric ``Arch``.
    The paper's 5D degrees (P_d, P_e) are this layout's (P_d P_e, P_e) with ETP = P_t.
    """
    from rlmcost.parallel.shard import stages, tp_shard

    t, c = layout.tp, layout.cp
    cnt = AttnCounting(counting).value
    seqs_rank = Fraction(sequences, layout.dp)
    tokens_rank = seqs_rank * seq_len / c
    tokens_expert = tokens_rank
    shard = tp_shard(arch, t)
    out: list[int | Fraction] = []
    for stage in stages(arch, layout):
        dense_first = stage.dense_layers if arch.is_moe else 0
        free = arch.ffn_free_layers_of(stage.layers)  # Nemotron-H's mixer-only layers
        a = arch_numbers(shard.with_(n_layers=stage.layers, first_dense_layers=dense_first,
                                     linear_layers=arch.linear_layers_of(stage.layers),
                                     ffn_free_layers=free))
        routed = stage.moe_layers - (free if arch.is_moe else 0)
        expert = 2 * routed * a.top_k * g.params_expert(a)
        dense_per_token = g.work_linear_per_token(a) - expert
        per_token = g.work_linear_per_token(a) + g.work_head_per_token_lm(a)
        forward = g.FUNCTIONS[f"work_forward_{cnt}_lm"](a, seqs_rank, seq_len)
        attention = (forward - seqs_rank * seq_len * per_token) / c
        body = tokens_rank * dense_per_token + attention + tokens_expert * expert
        head = tokens_rank * g.work_head_per_token_lm(a) if stage.last else 0
        recompute = {
            Checkpointing.NONE: 0,
            Checkpointing.SELECTIVE: attention,
            Checkpointing.FULL: body,
        }[layout.ckpt]
        work = 3 * (body + head) + recompute
        out.append(work.numerator if isinstance(work, Fraction) and work.denominator == 1 else work)
    return out


def train_step(
    arch: Any,
    hardware: Any,
    layout: Layout,
    sequences: int,
    seq_len: int,
    workload: Any | None = None,
    head: Head = Head.LM,
    counting: AttnCounting = AttnCounting.FULL,
    recompute: bool = True,
    compute_efficiency: float = 1.0,
    bandwidth_efficiency: float = 1.0,
) -> TrainStep:
    """Memory, fit and roofline bound of one training step (module docstring).

    ``hardware``: a ``specs.HardwareSpec`` (``peak``, ``hbm_bytes``,
    ``hbm_bandwidth_bytes_per_s``); ``workload``: a ``specs.Workload`` for the dtypes (default
    bf16 weights and activations, fp32 logits, bf16 compute).
    """
    per_stage = memory_per_stage(arch, layout, Mode.TRAIN, sequences, seq_len, workload, head)
    peak = max(range(len(per_stage)), key=lambda s: per_stage[s].total)
    own = per_stage[peak]
    weights = own.weights
    if layout.zero is ZeroStage.OS_G_P:  # a step computes with every gathered layer
        whole = memory_per_stage(
            arch, layout.with_(zero=ZeroStage.NONE), Mode.TRAIN, sequences, seq_len, workload,
            head,
        )  # fmt: skip
        weights = max(whole, key=lambda b: b.total).weights
    work = work_train_step(arch, layout.ckpt, sequences, seq_len, head, counting, recompute)
    shards = layout.dp
    per_shard = -(-sequences // shards)
    busy = work * Fraction(shards * per_shard, sequences)
    micro_batches = -(-per_shard // min(layout.micro_batch, per_shard))
    bubble = bubble_fraction(layout.schedule, layout.pp, micro_batches, layout.virtual_stages)
    dt = workload if isinstance(workload, Dtypes) else Dtypes.of(workload)
    peak_flops = hardware.peak(dt.compute) * compute_efficiency
    compute_s = float(busy) / (layout.n_gpus * peak_flops)
    step_bytes = 2 * weights + 2 * own.gradients + 2 * own.optimizer
    memory_s = step_bytes / (hardware.hbm_bandwidth_bytes_per_s * bandwidth_efficiency)
    return TrainStep(
        memory=own,
        peak_stage=peak,
        hbm_bytes=hardware.hbm_capacity_bytes,
        work_flops=work,
        busy_flops=busy,
        bubble=bubble,
        compute_s=compute_s,
        memory_s=memory_s,
        time_bound_s=max(compute_s, memory_s) * float(1 + bubble),
    )
