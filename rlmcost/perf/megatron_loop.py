"""Megatron-LM's GPT training loop outside the layers: batch loading, loss report, DDP buckets.

Beside the layers :mod:`~rlmcost.perf.step_pass` prices, Megatron-LM's ``pretrain_gpt.py`` with
Megatron-core's DDP runs, on the compute stream (NVIDIA/Megatron-LM @f2e5db402, the README's
H100 weak-scaling runs; the same code at ``core_v0.8.0``):

* **The micro-batch's inputs** (``get_batch_on_this_tp_rank``, megatron/training/utils.py):
  TP rank 0 of the first and the last pipeline stage copies the whole batch from the data
  loader's pinned memory (``DataLoader(pin_memory=True)``, megatron/legacy/data/
  data_samplers.py) with ``.cuda(non_blocking=True)`` on the current stream, so in stream
  order between the previous backward and this forward: tokens, labels and position ids
  (int64, 8 bytes per position), the loss mask (fp32, 4) and, with
  ``--create-attention-mask-in-dataloader`` on (its default: ``--no-create-attention-mask-in-
  dataloader`` is ``store_false``, megatron/training/arguments.py), the [b, 1, s, s] bool
  attention mask (``_get_ltor_masks_and_position_ids``, megatron/core/datasets/gpt_dataset.py:
  ``torch.tril(torch.ones((s, s))) < 0.5``): 28 b s + b s^2 bytes at the host link's rate
  (:func:`~rlmcost.perf.collectives.host_link_bytes_per_s`). With TP > 1 it then
  ``torch.distributed.broadcast``-s to the other TP ranks what the stage needs (all five with
  one stage; the first stage tokens, mask and position ids; the last labels, loss mask and
  mask), a blocking call: NCCL's pipelined ring broadcast streams the bytes once over each
  link, priced as one transfer of them (``alpha + M / B``) over the TP group's link. Middle
  stages load nothing (``get_batch`` returns ``None`` there).
* **The loss report** (``loss_func``, pretrain_gpt.py): every micro-batch on the last stage
  all-reduces ``[loss sum, tokens]`` (2 fp32) over the data-parallel group with a blocking
  ``torch.distributed.all_reduce``: exposed.
* **The gradient buckets** (``Bucket.start_grad_sync``, megatron/core/distributed/
  param_and_grad_buffer.py): once per step, in the last micro-batch's backward, before each
  bucket's reduce-scatter (all-reduce without the distributed optimizer),
  ``--check-for-nan-in-loss-and-grad`` (default on: ``--no-check-for-nan-in-loss-and-grad`` is
  ``store_false``) takes ``self.grad_data.norm(p=2)`` (reads g bytes per element) and the
  gradients are pre-divided by the data-parallel size, ``self.grad_data *=
  self.gradient_scaling_factor`` (``1 / DP`` unless ``--ddp-average-in-collective``,
  distributed_data_parallel.py; reads and writes g): 3 g bytes per parameter of the rank, g
  the gradient buffer's element size (fp32 under ``accumulate_allreduce_grads_in_fp32``), two
  kernels per bucket of ``max(4e7, 1e6 x DP)`` elements (``bucket_size``,
  distributed_data_parallel.py). They run on the compute stream between the backward's
  kernels, so they lengthen the last backward, and the reduce-scatter that overlaps it has
  that much more compute to hide behind (:func:`rlmcost.perf.data_parallel.dp_after_flush`).

* **The gradient buffer's reset** (``DistributedDataParallel.zero_grad_buffer`` ->
  ``ParamAndGradBuffer.reset``: ``self.grad_data.zero_()``), called by ``train_step``
  (megatron/training/training.py) before the first forward of every step, and before the
  distributed optimizer's ``zero_grad`` launches its first parameter all-gather: writes g
  bytes per parameter of the rank, serial.

* **The embedding's bucket** (param_and_grad_buffer.py: buckets are cut from the end of the
  model, ``for param in params[::-1]``, closing at ``bucket_size`` elements; the distributed
  optimizer gathers them in forward order, dispatching the first in ``zero_grad`` and each
  next one from the forward pre-hook that waits for its predecessor,
  ``_finish_param_sync_helper``, distrib_optimizer.py): the token embedding (V / P_t x d) and
  the learned positions sit in the first stage's last-cut bucket. Its gradients are the
  backward's last, so its reduce-scatter starts after the backward has ended; its
  parameters are the forward's first, so their all-gather ends before the forward can begin:
  neither hides (:func:`rlmcost.perf.data_parallel.dp_after_flush`).

Not priced: the host syncs (``assert not loss[0].isnan()`` and ``num_tokens.item()`` each
micro-batch, the bucket norm's assert), which drain the launch queue for a few tens of
microseconds each (no measured figure); the position embedding's add and backward.
Megatron-LM of 2021-22 (the A100 rows) made its mask on the GPU and had no NaN check, so the
terms are Megatron-core's (``StepOptions.megatron_loop``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.comm import Collective, group_ranks
from rlmcost.parallel.layout import ZeroStage
from rlmcost.parallel.shard import tp_shard
from rlmcost.perf.collectives import host_link_bytes_per_s
from rlmcost.perf.linear_mixer import rank_param_counts

if TYPE_CHECKING:
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.step_pass import StagePass, StepContext

BATCH_INT64_FIELDS = 3
"""tokens, labels, position ids: int64 [b, s] (megatron/core/datasets/gpt_dataset.py)."""
LOSS_MASK_BYTES = 4
"""The loss mask: fp32 [b, s] (``torch.ones(seq_length, dtype=torch.float)``)."""
LOSS_REPORT_BYTES = 2 * 4
"""``loss_func``'s reported ``[loss sum, tokens]``: two fp32 values (pretrain_gpt.py)."""
BUCKET_MIN_ELEMENTS = 40_000_000
BUCKET_ELEMENTS_PER_DP_RANK = 1_000_000
"""Megatron-core DDP's default bucket: ``max(40000000, 1000000 x DP)`` elements
(distributed_data_parallel.py @f2e5db402)."""


def batch_bytes(c: StepContext, stage: PipelineStage) -> tuple[int, int]:
    """(bytes TP rank 0 copies to the device, bytes the stage broadcasts over TP) of one
    micro-batch (module docstring); (0, 0) on a middle stage."""
    if not (stage.first or stage.last):
        return 0, 0
    b, s = c.micro_batch, c.seq
    per_field = b * s * 8
    loss_mask, mask = b * s * LOSS_MASK_BYTES, b * s * s
    copied = BATCH_INT64_FIELDS * per_field + loss_mask + mask
    if stage.first and stage.last:
        sent = copied
    elif stage.first:  # tokens, attention mask, position ids
        sent = 2 * per_field + mask
    else:  # labels, loss mask, attention mask
        sent = per_field + loss_mask + mask
    return copied, sent


def loop_per_micro_batch(c: StepContext, stage: PipelineStage, p: StagePass) -> None:
    """Add one micro-batch's input copy, its TP broadcast and the loss report (module
    docstring) to the stage's forward, where ``StepOptions.megatron_loop`` is on."""
    if not c.options.megatron_loop:
        return
    lay = c.layout
    copied, sent = batch_bytes(c, stage)
    if copied:
        host = host_link_bytes_per_s(c.device.hardware, c.options.host_link_bytes_per_s)
        p.fwd["elementwise"] += copied / host + c.device.defaults.kernel_gap_s
    if sent and lay.tp > 1:
        p.fwd["sp" if lay.sp else "tp"] += c.comm(Collective.P2P, sent, 2, ("tp",))
    dp = group_ranks(lay, ("dp", "cp"))
    if stage.last and dp > 1:
        p.fwd["dp"] += c.comm(Collective.ALL_REDUCE, LOSS_REPORT_BYTES, dp, ("dp", "cp"))


def _grad_buffer(c: StepContext, stage: PipelineStage) -> tuple[int, int]:
    """(elements, bytes per element) of the rank's Megatron-core gradient buffer; (0, 0)
    without ``megatron_loop`` or under ZeRO-3 (not Megatron-core's DDP)."""
    if not c.options.megatron_loop or c.layout.zero is ZeroStage.OS_G_P:
        return 0, 0
    dense, expert = rank_param_counts(c, stage)
    return dense + expert, c.options.grad_reduce_bytes or c.workload.weight_dtype.bytes


def bucket_kernels_s(c: StepContext, stage: PipelineStage) -> float:
    """Seconds of the NaN-check norm and the pre-division over the rank's gradient buckets,
    once per step in the last backward (module docstring); the norm alone with one
    data-parallel rank (a scaling factor of 1 skips the pre-division)."""
    params, g = _grad_buffer(c, stage)
    if not params:
        return 0.0
    dp = group_ranks(c.layout, ("dp", "cp"))
    passes = 3 if dp > 1 else 1  # norm: read g; pre-division: read g, write g
    bucket = max(BUCKET_MIN_ELEMENTS, BUCKET_ELEMENTS_PER_DP_RANK * dp)
    kernels = (2 if dp > 1 else 1) * -(-params // bucket)
    return c.device.elementwise_s(passes * g * params, kernels)


def grad_zero_s(c: StepContext, stage: PipelineStage) -> float:
    """Seconds of ``grad_data.zero_()`` over the rank's gradient buffer, once per step before
    the first forward (module docstring)."""
    params, g = _grad_buffer(c, stage)
    return c.device.elementwise_s(g * params) if params else 0.0


def embedding_bucket_params(c: StepContext, stage: PipelineStage) -> int:
    """Parameter elements of the first stage's embedding bucket (module docstring): the rank's
    V / P_t rows of the token embedding and the learned positions; 0 elsewhere or without
    ``megatron_loop``."""
    if not c.options.megatron_loop or not stage.first:
        return 0
    d = int(c.arch.d_model)
    positions = int(c.arch.n_positions) if c.arch.n_positions else 0
    return (int(tp_shard(c.arch, c.layout.tp).vocab) + positions) * d
