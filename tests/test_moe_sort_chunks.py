"""The all-to-all dispatcher's sort by local expert (rlmcost.perf.moe_sort_chunks).

Sources: Megatron-core's ``MoEAlltoAllTokenDispatcher`` sorts the received tokens by local
expert and back whenever a rank holds more than one expert (megatron/core/transformer/moe/
token_dispatcher.py @cba6b0ed, "Permutation 2" / "Unpermutation 2"); TransformerEngine's fused
sort (transformer_engine/pytorch/permutation.py @v2.9, ``_moe_chunk_sort``) writes an int32 row
map and moves the rows by it, its backward moves the gradient back by the same map."""

from __future__ import annotations

from typing import Any

import pytest

from rlmcost.parallel.layout import Layout
from rlmcost.perf.ep_dispatch import EpDispatcher
from rlmcost.perf.moe_permute import PROBS_BYTES
from rlmcost.perf.moe_sort_chunks import local_sort_s, sort_chunks_bytes


def _context(model: str, layout: Layout, dispatcher: EpDispatcher, tokens: int = 4096) -> Any:
    from rlmcost.parallel.breakdown import DataShare
    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.step_pass import StepContext, StepOptions
    from rlmcost.specs import get_hardware, get_model
    from rlmcost.specs.workload import Workload

    arch = get_model(model).arch()
    share = DataShare(sequences=1, micro_batch=1, micro_batches=1, tokens_per_sequence=tokens)
    opt = StepOptions(moe_layer_host_s=0.0, ep_dispatcher=dispatcher)
    return StepContext.of(arch, layout, tokens, share, Device(get_hardware("h100-sxm")), opt,
                          Workload())  # fmt: skip


def test_the_bytes_are_two_row_moves_each_way_plus_the_map_and_probabilities() -> None:
    # GPT-OSS 120B on GB200 (EP 64, two local experts): 8192 tokens x top-4 = 32,768 rows of
    # 2880 bf16 values received per rank; forward: sort (rows, probabilities, map written and
    # read) and un-sort (rows, map written and read); backward: the two inverse moves, map read
    rows, d, x = 32_768, 2880, 2
    fwd, fk, bwd, bk = sort_chunks_bytes(rows, d, x, PROBS_BYTES)
    assert fwd == 2 * (2 * rows * d * x) + 2 * rows * 4 + 2 * (4 + 4) * rows
    assert bwd == 2 * (2 * rows * d * x) + 2 * rows * 4 + 2 * 4 * rows
    assert (fwd, fk, bwd, bk) == (755_761_152, 4, 755_499_008, 2)
    assert all(type(v) is int for v in (fwd, fk, bwd, bk))


@pytest.mark.parametrize(
    ("model", "layout", "dispatcher"),
    [
        ("qwen3-30b-a3b", Layout(dp=8, ep=8), EpDispatcher.DEEPEP),  # flex: one permutation
        ("qwen3-30b-a3b", Layout(dp=8, ep=8), EpDispatcher.ALLGATHER),  # local map: one
        ("qwen3-30b-a3b", Layout(dp=8), EpDispatcher.ALLTOALL),  # EP 1: not priced (choice)
    ],
)
def test_no_sort_where_the_dispatcher_does_not_sort(
    model: str, layout: Layout, dispatcher: EpDispatcher
) -> None:
    assert local_sort_s(_context(model, layout, dispatcher), True, 32_768) == (0.0, 0.0)


def test_no_sort_on_a_dense_layer_or_one_local_expert() -> None:
    c = _context("qwen3-30b-a3b", Layout(dp=8, ep=8), EpDispatcher.ALLTOALL)
    assert local_sort_s(c, False, 0) == (0.0, 0.0)
    one = _context("qwen3-30b-a3b", Layout(dp=128, ep=128), EpDispatcher.ALLTOALL)
    assert local_sort_s(one, True, 32_768) == (0.0, 0.0)  # 128 experts over EP 128


def test_the_step_pass_adds_the_sort_to_an_all_to_all_layer() -> None:
    # inside one node DeepEP's dispatch is priced as the NVLink all-to-all (perf.ep_dispatch),
    # so an EP-8 layer's all-to-all and DeepEP passes differ by the sort alone: Qwen3-30B-A3B,
    # 4096 tokens x top-8 = 32,768 rows received per rank under even routing
    from rlmcost.perf.step_pass import _layer

    a2a = _context("qwen3-30b-a3b", Layout(dp=8, ep=8), EpDispatcher.ALLTOALL)
    deepep = _context("qwen3-30b-a3b", Layout(dp=8, ep=8), EpDispatcher.DEEPEP)
    fwd, bwd = local_sort_s(a2a, True, 32_768)
    la, ld = _layer(a2a, True), _layer(deepep, True)
    assert la.fwd["elementwise"] - ld.fwd["elementwise"] == pytest.approx(fwd, rel=1e-9)
    assert la.bwd["elementwise"] - ld.bwd["elementwise"] == pytest.approx(bwd, rel=1e-9)
    assert la.fwd["ep"] == ld.fwd["ep"]
    # the sort is the MoE layer's forward: Megatron-core's --recompute-modules moe reruns it
    assert la.modules["moe"] - ld.modules["moe"] == pytest.approx(fwd, rel=1e-9)
    # the time is the bytes at the device's memory-bound rate, plus the launch gaps
    fb, fk, bb, bk = sort_chunks_bytes(32_768, 2048, 2, PROBS_BYTES)
    assert fwd == a2a.device.elementwise_s(fb, fk)
    assert bwd == a2a.device.elementwise_s(bb, bk)
