"""Megatron-LM's training loop outside the layers (rlmcost.perf.megatron_loop; issue 18).

Sources (NVIDIA/Megatron-LM @f2e5db402, the README's H100 weak-scaling runs):
megatron/core/datasets/gpt_dataset.py ``_get_ltor_masks_and_position_ids`` (the [1, s, s] bool
mask, fp32 loss mask, int64 position ids), megatron/training/utils.py
``get_batch_on_this_tp_rank`` (``.cuda(non_blocking=True)`` then TP broadcasts), pretrain_gpt.py
``loss_func`` (a DP all-reduce of two fp32 values per micro-batch),
megatron/core/distributed/param_and_grad_buffer.py ``Bucket.start_grad_sync`` (the NaN-check
``grad_data.norm`` and ``grad_data *= gradient_scaling_factor``) and
distributed_data_parallel.py (bucket size ``max(4e7, 1e6 x DP)``)."""

from __future__ import annotations

import pytest

from rlmcost.arch import Arch
from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.shard import stages
from rlmcost.perf.efficiency import Device
from rlmcost.perf.megatron_loop import (
    batch_bytes,
    bucket_kernels_s,
    embedding_bucket_params,
    grad_zero_s,
    loop_per_micro_batch,
)
from rlmcost.perf.step_pass import StagePass, StepContext, StepOptions, stage_param_counts
from rlmcost.perf.train_step import train_step_time
from rlmcost.perf.validate import gpt_arch
from rlmcost.specs import Workload, get_hardware

H100 = get_hardware("h100-sxm")
# Megatron-Core's H100 rows (README @f2e5db402, images/model_table.png): 1.7B and 32B
ARCH_1_7B = gpt_arch(24, 2048, 16, 131072, 4096, tie_embeddings=False)
ARCH_32B = gpt_arch(48, 7168, 56, 131072, 4096, tie_embeddings=False)
ON = StepOptions(megatron_loop=True, grad_reduce_bytes=4, tp_comm_overlap=True)


def _context(arch: Arch, layout: Layout, options: StepOptions = ON) -> StepContext:
    share = data_share(layout, 4 * layout.dp, 4096)
    return StepContext.of(arch, layout, 4096, share, Device(H100), options, Workload())


def test_batch_bytes_of_one_4096_token_sequence() -> None:
    c = _context(ARCH_1_7B, Layout(dp=48, zero=ZeroStage.OS))
    # tokens, labels, position ids int64 + fp32 loss mask + the [1, 1, s, s] bool mask
    copied = 3 * 4096 * 8 + 4096 * 4 + 4096 * 4096
    assert batch_bytes(c, stages(ARCH_1_7B, 1)[0]) == (copied, copied)


def test_pipeline_stages_broadcast_what_they_need_and_middle_stages_load_nothing() -> None:
    c = _context(ARCH_1_7B, Layout(tp=2, pp=4, dp=2, sp=True))
    first, middle, _, last = stages(ARCH_1_7B, 4)
    mask = 4096 * 4096
    assert batch_bytes(c, first)[1] == 2 * 4096 * 8 + mask  # tokens, position ids, mask
    assert batch_bytes(c, last)[1] == 4096 * 8 + 4096 * 4 + mask  # labels, loss mask, mask
    assert batch_bytes(c, middle) == (0, 0)


def test_loss_report_is_a_dp_all_reduce_on_the_last_stage_only() -> None:
    lay = Layout(pp=2, dp=8, zero=ZeroStage.OS)
    c = _context(ARCH_1_7B, lay)
    first, last = stages(ARCH_1_7B, 2)
    p_first, p_last = StagePass(), StagePass()
    loop_per_micro_batch(c, first, p_first)
    loop_per_micro_batch(c, last, p_last)
    assert p_first.fwd["dp"] == 0.0 < p_last.fwd["dp"]
    # the copy of 16.9 MB over PCIe Gen5 (64 GB/s per direction, the h100-sxm spec)
    assert p_first.fwd["elementwise"] == pytest.approx(16_891_904 / 64e9, rel=0.01)
    single = _context(ARCH_1_7B, Layout(pp=2))
    p = StagePass()
    loop_per_micro_batch(single, last, p)
    assert p.fwd["dp"] == 0.0  # one data-parallel rank: nothing to reduce


def test_bucket_kernels_read_and_write_the_fp32_gradients_three_times() -> None:
    lay = Layout(dp=48, zero=ZeroStage.OS)
    c = _context(ARCH_1_7B, lay)
    st = stages(ARCH_1_7B, 1)[0]
    params = sum(stage_param_counts(ARCH_1_7B, lay, st))
    assert params == pytest.approx(1.75e9, rel=0.01)  # the README's untied 1.7B
    buckets = -(-params // 48_000_000)  # max(4e7, 1e6 x 48) elements each
    # norm (read 4) + pre-division (read 4, write 4) per fp32 element, two kernels a bucket
    expected = c.device.elementwise_s(12 * params, 2 * buckets)
    assert bucket_kernels_s(c, st) == pytest.approx(expected)
    assert 6e-3 < bucket_kernels_s(c, st) < 8e-3  # 21 GB at 0.9 x 3.35 TB/s


def test_off_by_default_and_not_under_zero3() -> None:
    st = stages(ARCH_1_7B, 1)[0]
    for c in (_context(ARCH_1_7B, Layout(dp=48), StepOptions()),
              _context(ARCH_1_7B, Layout(dp=48, zero=ZeroStage.OS_G_P))):  # fmt: skip
        assert bucket_kernels_s(c, st) == grad_zero_s(c, st) == 0.0


def test_one_rank_checks_for_nan_without_the_pre_division() -> None:
    st = stages(ARCH_1_7B, 1)[0]
    one, many = _context(ARCH_1_7B, Layout()), _context(ARCH_1_7B, Layout(dp=48))
    params = sum(stage_param_counts(ARCH_1_7B, Layout(), st))
    # gradient_scaling_factor 1 / 1: only the norm reads the fp32 buffer, 40e6 per bucket
    assert bucket_kernels_s(one, st) == pytest.approx(
        one.device.elementwise_s(4 * params, -(-params // 40_000_000)))
    assert bucket_kernels_s(one, st) < bucket_kernels_s(many, st) / 2


def test_grad_buffer_reset_writes_the_fp32_buffer_once_a_step() -> None:
    lay = Layout(dp=48, zero=ZeroStage.OS)
    c = _context(ARCH_1_7B, lay)
    st = stages(ARCH_1_7B, 1)[0]
    params = sum(stage_param_counts(ARCH_1_7B, lay, st))
    # ParamAndGradBuffer.reset: grad_data.zero_() over fp32 main grads, 4 bytes each
    assert grad_zero_s(c, st) == pytest.approx(c.device.elementwise_s(4 * params))


def _step(arch: Arch, layout: Layout, options: StepOptions) -> float:
    return train_step_time(arch, layout, 4 * layout.dp, 4096, H100, options=options).step_s


def test_compute_bound_step_pays_the_buckets_a_comm_bound_one_hides_them() -> None:
    off = StepOptions(grad_reduce_bytes=4, tp_comm_overlap=True)
    small = Layout(dp=48, zero=ZeroStage.OS)
    c = _context(ARCH_1_7B, small)
    buckets = bucket_kernels_s(c, stages(ARCH_1_7B, 1)[0])
    # 1.7B: its reduce-scatter hides behind the last backward, so the kernels add in full
    zero = grad_zero_s(c, stages(ARCH_1_7B, 1)[0])
    assert _step(ARCH_1_7B, small, ON) - _step(ARCH_1_7B, small, off) >= buckets + zero
    # 32B (t8, one rank per node): the fp32 reduce-scatter outlasts the last backward, so
    # the kernels on the compute stream lengthen what it hides behind, not the step
    big = Layout(tp=8, dp=48, sp=True, zero=ZeroStage.OS)
    c32 = _context(ARCH_32B, big)
    buckets32 = bucket_kernels_s(c32, stages(ARCH_32B, 1)[0])
    zero32 = grad_zero_s(c32, stages(ARCH_32B, 1)[0])
    grown = _step(ARCH_32B, big, ON) - _step(ARCH_32B, big, off) - zero32
    assert 0 < grown < 0.5 * buckets32


def test_embedding_bucket_is_the_token_and_position_embeddings_of_the_first_stage() -> None:
    # param_and_grad_buffer.py cuts buckets from the model's end (params[::-1]): the first
    # stage's last bucket holds the rank's V / t token-embedding rows and the positions
    c = _context(ARCH_1_7B, Layout(tp=2, pp=2, dp=4, sp=True))
    first, last = stages(ARCH_1_7B, 2)
    assert embedding_bucket_params(c, first) == (131072 // 2 + 4096) * 2048
    assert embedding_bucket_params(c, last) == 0
    off = _context(ARCH_1_7B, Layout(dp=4), StepOptions())
    assert embedding_bucket_params(off, first) == 0


def test_embedding_bucket_reduce_and_gather_stay_exposed_when_compute_bound() -> None:
    # 1.7B: the reduce-scatter (fp32) and the all-gather (bf16) hide behind one backward and
    # one forward but for the embedding bucket, the backward's last and the forward's first
    from rlmcost.parallel.comm import Collective
    from rlmcost.perf.data_parallel import dp_after_flush
    from rlmcost.perf.step_pass import stage_pass

    lay = Layout(dp=48, zero=ZeroStage.OS)
    st = stages(ARCH_1_7B, 1)[0]
    on, off = _context(ARCH_1_7B, lay), _context(ARCH_1_7B, lay, StepOptions(grad_reduce_bytes=4))
    edge = embedding_bucket_params(on, st)
    rs = on.comm(Collective.REDUCE_SCATTER, edge * 4, 48, ("dp", "cp"))
    ag = on.comm(Collective.ALL_GATHER, edge * 2, 48, ("dp", "cp"))
    p = stage_pass(on, st)
    assert dp_after_flush(on, st, p) >= rs + ag
    assert dp_after_flush(on, st, p) > dp_after_flush(off, st, stage_pass(off, st))
    # 32B: its fp32 reduce-scatter outlasts the backward, so the bucket order changes nothing
    big = Layout(tp=8, dp=48, sp=True, zero=ZeroStage.OS)
    on32 = _context(ARCH_32B, big)
    off32 = _context(ARCH_32B, big, StepOptions(grad_reduce_bytes=4, tp_comm_overlap=True))
    st32 = stages(ARCH_32B, 1)[0]
    p32 = stage_pass(off32, st32)
    assert dp_after_flush(on32, st32, p32) == pytest.approx(dp_after_flush(off32, st32, p32))
