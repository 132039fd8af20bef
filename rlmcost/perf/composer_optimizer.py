"""Composer's optimizer step under FSDP1: DecoupledAdamW's unfused kernels and the norm clip.

rlmcost prices a rank's optimizer step as one fused Adam pass over its parameter shard
(:func:`~rlmcost.perf.data_parallel.optimizer_step_s`: ``26 + 2 g`` bytes per parameter, 3
kernels). llm-foundry's MPT benchmark runs step with Composer's ``DecoupledAdamW`` and clip
the gradient norm every step (``scripts/train/yamls/pretrain/mpt-*.yaml`` on crinard/llm-foundry
branch add_attns, the runs' code: ``optimizer: decoupled_adamw``, ``weight_decay: 0.0``;
``algorithms: gradient_clipping: clipping_type: norm``), which run other kernels:

* ``DecoupledAdamW.adamw`` (``composer/optim/decoupled_weight_decay.py`` @v0.16.1 lines
  236-263; the runs' Composer, mvpatel2000/composer@784f50be, predates v0.16.2) loops over the
  original parameters (FSDP1 ``use_orig_params``, Composer's default) and runs, per parameter
  tensor, eight unfused ATen kernels over fp32 tensors of the shard (4 bytes each):
  ``exp_avg.mul_`` (read + write 8), ``.add_(grad)`` (12), ``exp_avg_sq.mul_`` (8),
  ``.addcmul_(grad, grad)`` (12: the grad read once), ``exp_avg_sq.sqrt()`` (8, a new tensor),
  ``/ sqrt(bias_correction2)`` (8), ``.add_(eps)`` (8), ``param.addcdiv_(exp_avg, denom)``
  (16): :data:`DECOUPLED_ADAMW_BYTES_PER_PARAM` = 80 (``weight_decay`` 0 skips
  ``param.mul_``);
* Composer's ``gradient_clipping`` with FSDP (``composer/algorithms/gradient_clipping/
  gradient_clipping.py`` @v0.16.1 ``apply_gradient_clipping``) calls the root's
  ``FullyShardedDataParallel.clip_grad_norm_`` (torch 2.1
  ``torch/distributed/fsdp/fully_sharded_data_parallel.py``): a ``vector_norm`` of each
  gradient (read 4) and, always ("multiplying by the clamped coefficient ... avoids the
  host-device sync"), ``grad.mul_(clip_coef_clamped)`` (8): :data:`CLIP_BYTES_PER_PARAM` = 12,
  two kernels per tensor.

So the step moves 92 bytes per parameter of the shard in 10 kernels per original parameter
tensor the rank holds a slice of (:func:`tensors_on_rank`: under FSDP1 ``use_orig_params`` a
tensor outside the rank's slice of its unit's flat parameter has its gradient set to None,
torch/distributed/fsdp/flat_param.py ``FlatParamHandle._use_sharded_grad_views``, and
``DecoupledAdamW.step`` @v0.16.1 skips ``p.grad is None``, as does the clip's gradient list),
priced at the HBM streaming rate with the per-kernel gap, in place of rlmcost's
fused pass. Not priced: the per-tensor host sync of ``DecoupledAdamW``
(``state_steps[i].item()``, no measured figure for it) and the norm's scalar all-reduce.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import NormKind
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import ZeroStage
from rlmcost.perf.step_pass import stage_param_counts

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.step_pass import StepContext

DECOUPLED_ADAMW_BYTES_PER_PARAM = 80
"""Composer DecoupledAdamW's fp32 bytes per parameter at weight_decay 0 (module docstring)."""
DECOUPLED_ADAMW_KERNELS = 8
CLIP_BYTES_PER_PARAM = 12
"""FSDP1 clip_grad_norm_'s fp32 bytes per parameter: the norm's read, the multiply's read and
write (module docstring)."""
CLIP_KERNELS = 2
FUSED_ADAM_KERNELS = 3  # rlmcost's fused optimizer pass (perf.data_parallel.optimizer_step_s)

COMPOSER_OPTIMIZER_NOTE = (
    "Composer optimizer step: DecoupledAdamW's eight unfused fp32 kernels per parameter tensor "
    "and FSDP1's gradient-norm clip, 92 B per parameter of the shard (weight_decay 0; "
    "perf.composer_optimizer); its per-tensor host sync not priced"
)


def unit_tensor_sizes(arch: Arch) -> tuple[list[int], list[int]]:
    """Element counts of an MPT-style model's original parameters in FSDP1's flattening order
    (``named_parameters``: registration order), per unit: (one block, the root). A block
    (``MPTBlock.__init__``): norm_1, attn.Wqkv (MPT's fused q, k, v: one tensor), attn.out_proj,
    norm_2, ffn.up_proj, ffn.down_proj, each weight then its bias where the arch has one (a
    LayerNorm's too); the root: the token embedding, a learned position embedding, the final norm
    and an untied head.

    >>> from rlmcost.perf.validate import gpt_arch
    >>> block, root = unit_tensor_sizes(gpt_arch(40, 5120, 40, 50368, 2048))  # MPT-13b
    >>> len(block), len(root), sum(block) == 12 * 5120**2 + 13 * 5120
    (12, 4, True)
    """
    d, ff = int(arch.d_model), int(arch.d_ff)
    qkv = int(arch.q_width) + 2 * int(arch.kv_width)
    norm = [d, d] if arch.norm is NormKind.LAYERNORM else [d]
    block = [*norm, qkv * d, *([qkv] if arch.qkv_bias else []), d * d,
             *([d] if arch.out_bias else []), *norm, ff * d, *([ff] if arch.mlp_bias else []),
             d * ff, *([d] if arch.mlp_bias else [])]  # fmt: skip
    vocab = int(arch.vocab) * d
    root = [vocab, *([int(arch.n_positions) * d] if arch.n_positions else []), *norm,
            *([] if arch.tie_embeddings else [vocab])]  # fmt: skip
    return block, root


def tensors_on_rank(sizes: list[int], ranks: int) -> int:
    """Most original tensors one rank's contiguous 1 / ``ranks`` slice of a unit's flat
    parameter meets (FSDP1 ``use_orig_params``: a tensor outside the slice has no gradient on
    the rank, and the optimizer and the clip skip it).

    >>> tensors_on_rank([4, 4, 4], 1), tensors_on_rank([4, 4, 4], 3), tensors_on_rank([6, 6], 4)
    (3, 1, 1)
    """
    shard = -(-sum(sizes) // ranks)
    counts = [0] * ranks
    start = 0
    for size in sizes:
        for r in range(start // shard, (start + size - 1) // shard + 1):
            counts[r] += 1
        start += size
    return max(counts)


def composer_optimizer_s(c: StepContext, stage: PipelineStage) -> float:
    """Seconds the Composer step adds over rlmcost's fused Adam for ``stage``'s shard
    (``StepOptions.composer_optimizer``; module docstring). FSDP over data parallelism only."""
    if not c.options.composer_optimizer:
        return 0.0
    lay = c.layout
    if c.options.offload_optimizer:
        raise SpecError("composer_optimizer prices the GPU step; with offload_optimizer drop it")
    if lay.tp > 1 or lay.pp > 1 or c.arch.is_moe:
        raise SpecError(
            f"composer_optimizer prices Composer + FSDP1 on a dense model over data parallelism; "
            f"tp={lay.tp}, pp={lay.pp}, MoE={c.arch.is_moe}: drop the option"
        )
    dense, _ = stage_param_counts(c.arch, lay, stage)
    z = lay.dp if lay.zero_shard is None else lay.zero_group  # a hybrid shard's P_z
    shard = -(-dense // z) if lay.zero is not ZeroStage.NONE else dense
    ranks = z if lay.zero is not ZeroStage.NONE else 1
    block, root = unit_tensor_sizes(c.arch)  # one FSDP unit per block, as llm-foundry wraps
    tensors = int(c.arch.n_layers) * tensors_on_rank(block, ranks) + tensors_on_rank(root, ranks)
    composer = (DECOUPLED_ADAMW_BYTES_PER_PARAM + CLIP_BYTES_PER_PARAM) * shard
    fused = (26 + 2 * c.options.main_grad_bytes) * shard
    dev = c.device
    return dev.elementwise_s(composer, tensors * (DECOUPLED_ADAMW_KERNELS + CLIP_KERNELS)) - (
        dev.elementwise_s(fused, FUSED_ADAM_KERNELS)
    )
