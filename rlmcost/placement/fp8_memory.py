"""The FP8 weights a Megatron-core trainer holds through a training step under Transformer
Engine's FP8 recipes (``TrainLayout.fp8``, ``fp8_param``; the time side:
:mod:`rlmcost.perf.fp8_train`).

TE's Linear modules cast each weight to FP8 on a step's first micro-batch and keep the casts
for the rest of it (Megatron-core passes ``is_first_microbatch``, TELinear.forward in
megatron/core/extensions/transformer_engine.py @d98e8a64dd; TE reuses the cached FP8 weight
after it): a row-wise copy (the forward's operand) and a column-wise one (the data gradient's:
transposed on Hopper, scaled along the other side for MXFP8), 1 B an element each plus the
copy's scales (blockwise: an fp32 per 128 x 128 weight block, ``Float8BlockScaling``
``w_block_scaling_dim`` 2; mxfp8: an E8M0 byte per 32 elements; delayed and tensorwise: one
fp32 per tensor, left out). Under ``fp8_param`` the primary weights are the row-wise FP8 copy
(``fp8_model_init``): the 16-bit weights of the Linear layers are not held, their 1 B copy
is, and TE keeps the column-wise copy beside it.

Counted over the rank's Linear parameters: its stage's stored parameters (the weights term
over the stored dtype's bytes) less the embedding (first stage) and the output layer (last
stage), an upper bound by the norms and the MoE router (16-bit, a small share). Training
tasks only (a forward casts layer by layer, transiently); the copies in ``buffers``, a
``fp8_param`` weights term reduced by the 16-bit bytes it does not hold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmcost.algorithms.kinds import Kind
from rlmcost.choices import Fp8Recipe
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.placement.breakdown_ops import with_terms

if TYPE_CHECKING:
    from rlmcost.placement.device_groups import Task
    from rlmcost.specs.workload import Workload

def weight_copy_bytes(linear: int, recipe: Fp8Recipe) -> int:
    """Bytes of one FP8 copy of ``linear`` weight elements with its scales (module docstring;
    the scale layout of :func:`rlmcost.perf.fp8_train.copy_bytes` over the rank's weights as
    one block grid: each matrix's own rounding up to whole blocks left out).

    >>> weight_copy_bytes(128 * 128, Fp8Recipe.BLOCKWISE), weight_copy_bytes(64, Fp8Recipe.MXFP8)
    (16388, 66)
    """
    from rlmcost.perf.fp8_train import BLOCK, MX_BLOCK, SCALE_BYTES

    if recipe is Fp8Recipe.BLOCKWISE:
        return linear + SCALE_BYTES * -(-linear // (BLOCK * BLOCK))
    if recipe is Fp8Recipe.MXFP8:
        return linear + -(-linear // MX_BLOCK)
    return linear


def with_fp8_weights(g: Any, task: Task, per_stage: list[MemoryBreakdown], tp: int,
                     workload: Workload) -> list[MemoryBreakdown]:  # fmt: skip
    """``per_stage`` (a training task's bytes per stage, first to last) with its trainer's FP8
    weight copies (module docstring); itself without FP8 training."""
    train = g.train_layout()
    if task.kind is not Kind.TRAIN or train.fp8 is None:
        return per_stage
    recipe = Fp8Recipe(train.fp8)
    stored = (workload.param_dtype or workload.weight_dtype).bytes
    arch = g.s.arch(task.role)
    table = -(-int(arch.vocab) // tp) * int(arch.d_model)  # a vocabulary-parallel shard
    out = []
    for i, m in enumerate(per_stage):
        first, last = i == 0, i == len(per_stage) - 1
        tables = first + (last and not (first and arch.tie_embeddings))
        linear = max(0, m.weights // stored - tables * table)
        if train.fp8_param:  # the row-wise copy is the weight; the column-wise one beside it
            out.append(with_terms(m, weights=m.weights - linear * stored
                                  + weight_copy_bytes(linear, recipe),
                                  buffers=m.buffers + weight_copy_bytes(linear, recipe)))
        else:
            out.append(with_terms(m, buffers=m.buffers + 2 * weight_copy_bytes(linear, recipe)))
    return out
